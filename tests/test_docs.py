"""The documentation stays true: generated references match the code, links resolve, every
page is reachable from the README and back, and the README's commands are CI's."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner

from gitdream import config
from gitdream.cli import cli as group
from scripts import gendocs
from tests.helpers import PACKAGE_ROOT

DOCS = PACKAGE_ROOT / "docs"
README = PACKAGE_ROOT / "README.md"
PAGES = sorted(DOCS.glob("*.md"))
MARKDOWN = [README, PACKAGE_ROOT / "CHANGELOG.md", PACKAGE_ROOT / "bench" / "RESULTS.md", *PAGES]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def _prose(text: str) -> str:
    """The text outside fenced code blocks (links and headings in examples do not count).
    A fence closes on a line of at least as many of the same character (CommonMark)."""
    out, fence = [], ""
    for line in text.splitlines():
        match = FENCE.match(line)
        if match and not fence:
            fence = match.group(1)
        elif match and match.group(1).startswith(fence) and not match.group(2).strip():
            fence = ""
        elif not fence:
            out.append(line)
    return "\n".join(out)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").strip().lower()
    return "".join(c for c in text if c in "-_ " or unicodedata.category(c)[0] in "LMN").replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    for line in _prose(path.read_text(encoding="utf-8")).splitlines():
        match = re.match(r"#{1,6} (.+?)\s*#*\s*$", line)
        if not match:
            continue
        slug = _slug(match.group(1))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def _links(path: Path) -> list[str]:
    prose = re.sub(r"(`+).*?\1", "", _prose(path.read_text(encoding="utf-8")))  # code spans
    return [m.group(1) for m in LINK.finditer(prose)]


def test_generated_references_are_current() -> None:
    stale = gendocs.stale_pages(PACKAGE_ROOT)
    assert not stale, f"{', '.join(stale)}: run `python scripts/gendocs.py` and commit the result"


@pytest.mark.parametrize("path", [p for p, _ in gendocs.commands()], ids=lambda p: " ".join(p) or "gitdream")
def test_cli_reference_is_the_help_gitdream_prints(path: list[str]) -> None:
    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    title = " ".join(["gitdream", *path])
    section = text.split(f"### `{title}`\n\n```text\n", 1)
    assert len(section) == 2, f"docs/cli.md has no section for `{title}`"
    documented = section[1].split("\n```\n", 1)[0] + "\n"
    result = CliRunner().invoke(
        group, [*path, "--help"], prog_name="gitdream", terminal_width=gendocs.HELP_WIDTH
    )
    assert result.exit_code == 0
    assert documented == result.stdout


def test_configuration_reference_has_every_key_with_its_default() -> None:
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    for key in config.KEYS:
        bare = key.name.split(".", 1)[-1]
        default = "(not set)" if key.secret else f"`{config._toml_value(key.default)}`"
        row = f"| `{bare}` | {default} |"
        assert row in text, f"docs/configuration.md lacks `{key.name}` with its default ({row})"


@pytest.mark.parametrize("page", MARKDOWN, ids=lambda p: p.relative_to(PACKAGE_ROOT).as_posix())
def test_links_resolve_inside_the_repository(page: Path) -> None:
    for link in _links(page):
        if re.match(r"[a-z]+:", link):
            continue  # https:, mailto:
        target, _, anchor = link.partition("#")
        resolved = (page.parent / target).resolve() if target else page
        assert resolved.is_relative_to(PACKAGE_ROOT), f"{page.name}: {link} points outside the repository"
        assert resolved.exists(), f"{page.name}: {link}: no such file"
        if anchor and resolved.suffix == ".md":
            assert anchor in _anchors(resolved), f"{page.name}: {link}: no such heading in {resolved.name}"


def test_every_page_is_linked_from_the_readme_and_links_back() -> None:
    linked = {(README.parent / link.partition("#")[0]).resolve() for link in _links(README)}
    for page in PAGES:
        assert page.resolve() in linked, f"README.md does not link to docs/{page.name}"
        back = [link for link in _links(page) if link.partition("#")[0] == "../README.md"]
        assert back, f"docs/{page.name} does not link back to README.md"


def test_every_page_links_to_a_related_page() -> None:
    # Linked both ways: a reader who lands on one page finds the pages next to it.
    for page in PAGES:
        related = {
            (page.parent / target).resolve()
            for target in (link.partition("#")[0] for link in _links(page))
            if target.endswith(".md") and not re.match(r"[a-z]+:", target)
        }
        others = {p.resolve() for p in PAGES} - {page.resolve()}
        assert related & others, f"docs/{page.name} links to no other page of docs/ (add a 'See also' line)"


def test_every_command_is_explained_on_a_task_page() -> None:
    # The CLI reference lists every command by construction; a user also needs prose.
    prose = "\n".join(p.read_text(encoding="utf-8") for p in [README, *PAGES] if p.name != "cli.md")
    for path, _command in gendocs.commands():
        name = " ".join(["gitdream", *path])
        assert name in prose, f"`{name}` is explained on no page of docs/ but the CLI reference"


def test_readme_is_short_and_its_test_command_is_what_ci_runs() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250, "README.md is for a start; move details into docs/"
    blocks = re.findall(r"```sh\n(.*?)\n```", text, re.S)
    ci = (PACKAGE_ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert "gitdream demo" in blocks[0]
    assert blocks[1] == ci, "the README's second command must be exactly the last line of .ci/run"


def test_readme_commands_install_into_separate_venvs() -> None:
    # The test command's dev extra brings the anthropic SDK: in the demo's venv it made the
    # "default install" one with the SDK, and its missing-SDK message could not be seen.
    blocks = re.findall(r"```sh\n(.*?)\n```", README.read_text(encoding="utf-8"), re.S)
    venvs = [re.fullmatch(r"python3 -m venv (\S+) && \. \1/bin/activate && .*", b) for b in blocks[:2]]
    assert venvs[0] and venvs[1], "each of the README's first two commands makes and activates a venv"
    assert venvs[0][1] != venvs[1][1], "the demo's venv and the test venv must be different folders"
    ignored = (PACKAGE_ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert {f"{m[1]}/" for m in venvs if m} <= set(ignored), "both venvs are in .gitignore"


def test_readme_figures_are_those_of_bench_results() -> None:
    # bench/RESULTS.md is the only source of measured figures; the README cites them.
    text = README.read_text(encoding="utf-8")
    figures = text.split("## Figures", 1)[1].split("\n## ", 1)[0]
    results = (PACKAGE_ROOT / "bench" / "RESULTS.md").read_text(encoding="utf-8")
    cited = re.findall(r"\+?\d+(?:\.\d+)?(?: ?(?:ms|s|MB)\b|×|k tokens| calls\b)", figures)
    assert cited, "the README's Figures section cites no figure"
    for figure in cited:
        assert figure in results, f"README.md cites {figure!r}, which bench/RESULTS.md does not state"


def test_developing_names_every_module_in_its_layout() -> None:
    # docs/DEVELOPING.md's layout is the map of the code; a module it does not name is lost.
    text = (DOCS / "DEVELOPING.md").read_text(encoding="utf-8")
    layout = text.split("## Layout", 1)[1].split("\n```\n", 2)[1]
    words = set(re.findall(r"[a-z_]+", layout))
    for path in sorted((PACKAGE_ROOT / "gitdream").rglob("*.py")):
        stem = path.stem
        if stem in {"__init__", "__main__"} or stem in words:
            continue
        if stem.startswith(("salience_", "screen_")) and stem.split("_", 1)[0] in words:
            continue  # generated tables, named with their module ("+ weights", "+ the gitleaks table")
        raise AssertionError(f"docs/DEVELOPING.md's layout does not name {path.relative_to(PACKAGE_ROOT)}")
