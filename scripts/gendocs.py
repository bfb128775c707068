"""Regenerate the generated parts of the documentation.

    python scripts/gendocs.py           rewrite them in place
    python scripts/gendocs.py --check   exit 1 (and name the pages) when any is stale

Two references are generated, so that they cannot drift from the code:

- `docs/configuration.md`: one table per TOML section, rendered from the config schema
  (`gitdream.config.KEYS`: name, type, allowed values, default, environment variables, help);
- `docs/cli.md`: the `--help` text of every click command, exactly as `gitdream ... --help`
  prints it at a terminal width of 80 columns (`HELP_WIDTH`).

Each generated part sits between two marker lines, `<!-- BEGIN GENERATED NAME -->` and
`<!-- END GENERATED NAME -->`; only the text between them is replaced, the prose around it
is written by hand. `tests/test_docs.py` fails when a committed page differs from what this
script would write. The script imports only the schema and the click command tree: it
needs the package installed (`pip install -e '.[dev]'`) and nothing else.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python scripts/gendocs.py` from a clean clone
    sys.path.insert(0, str(ROOT))

HELP_WIDTH = 80
BEGIN = "<!-- BEGIN GENERATED {name} (python scripts/gendocs.py; do not edit by hand) -->"
END = "<!-- END GENERATED {name} -->"


# --- the configuration reference ---------------------------------------------------------


def _toml(value: Any) -> str:
    """A default as it is written in gitdream.toml."""
    from gitdream.config import _toml_value

    return _toml_value(value)


def _cell(text: str) -> str:
    """Text safe inside one Markdown table cell (no pipe, line break or HTML tag)."""
    return text.replace("|", "\\|").replace("\n", " ").replace("<", "&lt;").replace(">", "&gt;")


def config_keys() -> str:
    """Markdown tables of every configuration key, one per TOML section (top level first)."""
    from gitdream.config import KEYS, SECTIONS

    def table(keys: list[Any], strip: str) -> list[str]:
        rows = [
            "| key | default | allowed | environment | meaning |",
            "|---|---|---|---|---|",
        ]
        for key in keys:
            default = "(not set)" if key.secret else f"`{_cell(_toml(key.default))}`"
            env = ", ".join(f"`{var}`" for var in (key.env, *key.env_aliases))
            rows.append(
                f"| `{key.name.removeprefix(strip)}` | {default} | {_cell(key.allowed())} | {env} "
                f"| {_cell(key.help)} |"
            )
        return rows

    lines = ["## Top-level keys", ""]
    lines += table([k for k in KEYS if "." not in k.name], "")
    for section in SECTIONS:
        lines += ["", f"## `[{section}]`", ""]
        lines += table([k for k in KEYS if k.name.startswith(section + ".")], section + ".")
    return "\n".join(lines)


# --- the CLI reference ---------------------------------------------------------------------


def commands() -> Iterator[tuple[list[str], Any]]:
    """Every command as (path of names below `gitdream`, click command), depth first, by name;
    the root group comes first with an empty path."""
    import click

    from gitdream.cli import cli

    def walk(path: list[str], command: click.Command) -> Iterator[tuple[list[str], click.Command]]:
        yield path, command
        if isinstance(command, click.Group):
            for name in sorted(command.commands):
                sub = command.commands[name]
                if not sub.hidden:
                    yield from walk([*path, name], sub)

    yield from walk([], cli)


def help_text(path: list[str]) -> str:
    """What `gitdream PATH... --help` prints, at HELP_WIDTH columns."""
    import click

    from gitdream.cli import cli

    # make_context applies each command's context_settings (help option names, widths) as
    # `gitdream ... --help` does; resilient parsing leaves required arguments unchecked.
    ctx = cli.make_context("gitdream", [], resilient_parsing=True, terminal_width=HELP_WIDTH)
    command: click.Command = cli
    for name in path:
        assert isinstance(command, click.Group)
        command = command.commands[name]
        ctx = command.make_context(name, [], parent=ctx, resilient_parsing=True)
    return command.get_help(ctx).rstrip("\n") + "\n"


def cli_reference() -> str:
    """One section per command, each holding its `--help`."""
    out: list[str] = []
    for path, _command in commands():
        title = " ".join(["gitdream", *path])
        out += [f"### `{title}`", "", "```text", help_text(path).rstrip("\n"), "```", ""]
    return "\n".join(out).rstrip("\n")


# --- pages ------------------------------------------------------------------------------------

GENERATED: dict[str, dict[str, Callable[[], str]]] = {
    "docs/configuration.md": {"config-keys": config_keys},
    "docs/cli.md": {"cli-reference": cli_reference},
}


def render(text: str, parts: dict[str, Callable[[], str]], page: str = "page") -> str:
    """`text` with the inside of each named generated part replaced by a fresh render.

    Raises ValueError when a part's markers are missing or appear more than once.
    """
    for name, make in parts.items():
        begin, end = BEGIN.format(name=name), END.format(name=name)
        pattern = re.compile(re.escape(begin) + r"\n.*?" + re.escape(end), re.S)
        found = list(pattern.finditer(text))
        if len(found) != 1:
            raise ValueError(f"{page}: expected one '{begin}' … '{end}' block")
        text = text[: found[0].start()] + f"{begin}\n{make()}\n{end}" + text[found[0].end() :]
    return text


def stale_pages(root: Path = ROOT) -> list[str]:
    """Pages whose generated parts differ from a fresh render."""
    stale = []
    for page, parts in GENERATED.items():
        text = (root / page).read_text(encoding="utf-8")
        if render(text, parts, page) != text:
            stale.append(page)
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate docs/configuration.md and docs/cli.md.")
    parser.add_argument("--check", action="store_true", help="only report stale pages (exit 1)")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_pages()
        for page in stale:
            print(f"{page} is stale: run `python scripts/gendocs.py`", file=sys.stderr)
        return 1 if stale else 0
    for page, parts in GENERATED.items():
        path = ROOT / page
        text = path.read_text(encoding="utf-8")
        new = render(text, parts, page)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"updated {page}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
