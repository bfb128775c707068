"""`gitdream check`: finding agent files in the working tree or an index, the CLI's
output, JSON shape and exit codes, and the verdicts on a real agent repository."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gitdream import config
from gitdream.commands.check import check_agents
from gitdream.git.repo import Repo
from tests.conftest import AGENT_MD
from tests.helpers import SHARED, cli, commit_all, git, gitdream_env, run_gitdream, write

BAD_AGENT_MD = "# ops\n\n" + "a" * 2100 + "\n\n## Notes\n"


def _check(root: Path, *paths: str, **kwargs: object):
    repo = Repo.open(root)
    return check_agents(repo, config.load(repo.workdir), list(paths), **kwargs)  # type: ignore[arg-type]


def test_agent_repo_passes_and_lists_every_file(agent_repo: Path) -> None:
    result = _check(agent_repo)
    assert result.ok
    assert [(f.path, f.kind) for f in result.files] == [
        ("agents/ops/SKILL.md", "definition"),
        ("agents/ops/agent.md", "agent"),
        ("agents/ops/memory/MEMORY.md", "index"),
        ("agents/ops/memory/human.md", "topic"),
        ("agents/ops/soul.md", "definition"),
    ]
    assert result.mode == "worktree"


def test_cli_prints_problem_lines_and_exits_1(agent_repo: Path) -> None:
    write(agent_repo, "agents/ops/agent.md", BAD_AGENT_MD)
    result = cli(agent_repo, "check")
    assert result.exit_code == 1
    assert result.stdout == (
        "agents/ops/agent.md:1: prefix-section: section '# ops' ends at character 2107, past 2000: "
        "move it up or shorten what comes before it\n"
        "gitdream check: 1 problem in 1 of 5 files\n"
    )


def test_cli_ok_and_quiet(agent_repo: Path) -> None:
    result = cli(agent_repo, "check")
    assert (result.exit_code, result.stdout) == (0, "gitdream check: 5 files ok\n")
    quiet = cli(agent_repo, "check", "--quiet")
    assert (quiet.exit_code, quiet.stdout) == (0, "")


def test_cli_json_shape(agent_repo: Path) -> None:
    write(agent_repo, "agents/ops/agent.md", BAD_AGENT_MD)
    result = cli(agent_repo, "check", "--json", "agents/ops/agent.md")
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document == {
        "ok": False,
        "mode": "worktree",
        "index_file": None,
        "unit": "chars",
        "prefix_chars": 2000,
        "counts": {"files": 1, "failed": 1, "problems": 1, "warnings": 0},
        "files": [
            {
                "path": "agents/ops/agent.md",
                "agent": "ops",
                "kind": "agent",
                "ok": False,
                "problems": [
                    {
                        "rule": "prefix-section",
                        "message": "section '# ops' ends at character 2107, past 2000",
                        "hint": "move it up or shorten what comes before it",
                        "line": 1,
                        "start": 0,
                        "end": 2107,
                    }
                ],
                "warnings": [],
                "prefix": {
                    "length": 2118,
                    "sections": [
                        {"name": "# ops", "start": 0, "end": 2107, "line": 1, "requirement": "default"}
                    ],
                },
            }
        ],
        "warnings": [],
    }


def test_config_from_gitdream_toml_is_used(agent_repo: Path) -> None:
    write(agent_repo, "gitdream.toml", 'prefix_chars = 10\nrequired_sections = ["## Role"]\n')
    result = cli(agent_repo, "check", "agents/ops/agent.md")
    assert result.exit_code == 1
    assert "section '## Role' ends at character 161, past 10" in result.stdout


def test_paths_filter_by_folder_and_file(agent_repo: Path) -> None:
    assert [f.path for f in _check(agent_repo, "agents/ops/memory").files] == [
        "agents/ops/memory/MEMORY.md",
        "agents/ops/memory/human.md",
    ]
    write(agent_repo, "docs/agent.md", BAD_AGENT_MD)
    (other,) = _check(agent_repo, "docs/agent.md").files
    assert (other.kind, other.agent, other.ok) == ("agent", None, False)


def test_path_relative_to_current_directory(agent_repo: Path) -> None:
    result = cli(agent_repo / "agents" / "ops", "check", "--json", "agent.md")
    assert [f["path"] for f in json.loads(result.stdout)["files"]] == ["agents/ops/agent.md"]


def test_missing_path_is_an_error(agent_repo: Path) -> None:
    result = run_gitdream(agent_repo, "check", "agents/nope/agent.md")
    assert result.returncode == 1
    assert result.stderr.startswith("error: agents/nope/agent.md: no such file in the working tree\nhint: ")


def test_path_outside_repository_is_a_usage_error(agent_repo: Path, tmp_path: Path) -> None:
    result = run_gitdream(agent_repo, "check", str(tmp_path))
    assert result.returncode == 2


def test_memory_index_over_limit_fails(agent_repo: Path) -> None:
    write(agent_repo, "agents/ops/memory/MEMORY.md", "# index\n" + "- [x](x.md)\n" * 250)
    result = _check(agent_repo)
    (failed,) = result.failed
    assert failed.path == "agents/ops/memory/MEMORY.md"
    assert [p.rule for p in failed.problems] == ["memory-lines"]


def test_raw_logs_and_archive_are_not_checked(agent_repo: Path) -> None:
    write(agent_repo, "agents/ops/memory/logs/2026/03/2026-03-01.md", "<!-- gitdream:begin x -->\n")
    write(agent_repo, "agents/ops/memory/archive/2026-01.md", "<!-- gitdream:begin x -->\n")
    assert _check(agent_repo).ok


def test_symlinked_definition_is_skipped_with_a_warning(agent_repo: Path) -> None:
    target = agent_repo / "elsewhere.md"
    target.write_text(BAD_AGENT_MD)
    (agent_repo / "agents/ops/soul.md").unlink()
    (agent_repo / "agents/ops/soul.md").symlink_to(target)
    result = _check(agent_repo)
    assert result.ok
    assert result.warnings == ["agents/ops/soul.md: a symbolic link, not checked"]


def test_staged_reads_the_index_not_the_working_tree(agent_repo: Path) -> None:
    write(agent_repo, "agents/ops/agent.md", BAD_AGENT_MD)
    git(agent_repo, "add", "agents/ops/agent.md")
    write(agent_repo, "agents/ops/agent.md", AGENT_MD)
    assert _check(agent_repo).ok
    staged = _check(agent_repo, staged=True)
    assert not staged.ok
    assert staged.mode == "staged"
    assert staged.index_file == str(agent_repo / ".git" / "index")
    # and the other way round
    git(agent_repo, "add", "agents/ops/agent.md")
    write(agent_repo, "agents/ops/agent.md", BAD_AGENT_MD)
    assert _check(agent_repo, staged=True).ok
    assert not _check(agent_repo).ok


def test_staged_finds_agents_from_the_index(agent_repo: Path) -> None:
    write(agent_repo, "agents/new/agent.md", BAD_AGENT_MD)
    git(agent_repo, "add", "agents/new/agent.md")
    (agent_repo / "agents/new/agent.md").unlink()
    (agent_repo / "agents/new").rmdir()
    (failed,) = _check(agent_repo, staged=True).failed
    assert (failed.path, failed.agent) == ("agents/new/agent.md", "new")


def test_staged_uses_inherited_git_index_file(agent_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = agent_repo / ".git" / "other-index"
    write(agent_repo, "agents/ops/agent.md", BAD_AGENT_MD)
    git(agent_repo, "add", "agents/ops/agent.md", env={"GIT_INDEX_FILE": str(other)})
    write(agent_repo, "agents/ops/agent.md", AGENT_MD)
    assert _check(agent_repo, staged=True).ok  # the repository's own index is fine
    monkeypatch.setenv("GIT_INDEX_FILE", ".git/other-index")
    assert not _check(agent_repo, staged=True).ok
    monkeypatch.delenv("GIT_INDEX_FILE")
    result = cli(agent_repo, "check", "--json", "--index-file", str(other))
    assert result.exit_code == 1
    assert json.loads(result.stdout)["index_file"] == str(other)


def test_missing_index_file_is_an_error(agent_repo: Path) -> None:
    result = run_gitdream(agent_repo, "check", "--index-file", "nope")
    assert result.returncode == 1
    assert "error: the index file" in result.stderr


def test_changed_judges_only_what_differs_from_head(agent_repo: Path) -> None:
    write(agent_repo, "agents/ops/agent.md", BAD_AGENT_MD)
    commit_all(agent_repo, "bad agent.md committed earlier (e.g. with --no-verify)")
    assert not _check(agent_repo, staged=True).ok
    assert _check(agent_repo, staged=True, changed=True).files == []
    write(agent_repo, "agents/ops/soul.md", "# soul\n<!-- gitdream:end x -->\n")
    git(agent_repo, "add", "-A")
    result = _check(agent_repo, staged=True, changed=True)
    assert [(f.path, f.ok) for f in result.files] == [("agents/ops/soul.md", False)]


def test_check_never_imports_anthropic(agent_repo: Path) -> None:
    code = (
        "import sys\nfrom gitdream.cli import cli\n"
        "try:\n    cli(['check', '--quiet'], prog_name='gitdream')\nexcept SystemExit:\n    pass\n"
        "print('anthropic' in sys.modules, 'pygit2' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=agent_repo, env=gitdream_env(), capture_output=True, text=True
    )
    assert proc.stdout.strip() == "False True", proc.stderr


# --- real data -----------------------------------------------------------------------------

# Verdicts by the documented rules (docs/readme/guard.md) on the definitions and memory of
# `make-real-repo`: path -> rules broken. Every other file passes.
REAL_EXPECTED = {
    # subagents whose opening prose runs past 2000 characters
    "agents/backend-node-expert/agent.md": ["prefix-section"],
    "agents/critic/agent.md": ["prefix-section"],
    "agents/docker-expert/agent.md": ["prefix-section"],
    "agents/embedded-systems/agent.md": ["prefix-section"],
    "agents/frontend-craftsman/agent.md": ["prefix-section"],
    "agents/playwright-test-healer/agent.md": ["prefix-section"],
    "agents/playwright-test-planner/agent.md": ["prefix-section"],
    # its "## Your Role" section runs to character 2327: the role is guarded by default
    "agents/product-owner/agent.md": ["prefix-section"],
    # OpenClaw's long-term memory: 543 lines, 51 KB
    "agents/kit/memory/MEMORY.md": ["memory-lines", "memory-bytes"],
}
# Unquoted ': ' in a description: invalid YAML, a warning only (Claude Code reads them).
REAL_WARNINGS = {
    "agents/ab-test-analysis/agent.md",
    "agents/growth-loops/agent.md",
    # their published MEMORY.md lists topic files that were not published (index-link)
    "agents/code-quality-reviewer/memory/MEMORY.md",
    "agents/docstring-author/memory/MEMORY.md",
    "agents/spec-planner/memory/MEMORY.md",
}


@pytest.fixture(scope="module")
def real_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tool = SHARED / "tools" / "make-real-repo"
    if not tool.is_file():
        pytest.skip(f"real-data tool not found at {tool} (../shared is absent)")
    dest = tmp_path_factory.mktemp("real") / "repo"
    subprocess.run([sys.executable, str(tool), str(dest)], check=True, capture_output=True)
    return dest


def test_real_repository_verdicts_follow_the_rules(real_repo: Path) -> None:
    proc = run_gitdream(real_repo, "check", "--json")
    document = json.loads(proc.stdout)
    assert proc.returncode == 1
    verdicts = {f["path"]: [p["rule"] for p in f["problems"]] for f in document["files"]}
    assert {p: r for p, r in verdicts.items() if r} == {
        p: r for p, r in REAL_EXPECTED.items() if p in verdicts
    }
    warned = {f["path"] for f in document["files"] if f["warnings"]}
    assert warned == REAL_WARNINGS & set(verdicts)
    # every agent.md present was judged; the ones that pass end their sections in time
    agents = [f for f in document["files"] if f["kind"] == "agent"]
    assert len(agents) >= 20
    for item in agents:
        ends = [s["end"] for s in item["prefix"]["sections"]]
        assert (max(ends) <= 2000) == item["ok"], item["path"]


def test_real_subagent_without_h1_needs_front_matter_and_first_body_section(real_repo: Path) -> None:
    """A Claude Code subagent from ../shared/realdata: front matter, then prose, no H1."""
    text = (real_repo / "agents/claude-dev/agent.md").read_text(encoding="utf-8")
    assert "\n# " not in text and text.startswith("---\n")
    (checked,) = _check(real_repo, "agents/claude-dev/agent.md").files
    assert checked.ok
    sections = checked.prefix.sections if checked.prefix else ()
    assert [s.name for s in sections] == ["front matter", "first body section"]
    body_start = text.index("\n---\n") + 5
    assert text[sections[1].start :].startswith("You are an expert debugger")
    assert sections[1].start > body_start
    # the first body section ends at the first heading; this file has none: at its end
    assert sections[1].end == len(text.rstrip())


def test_an_index_line_linking_to_a_deleted_topic_is_a_warning(agent_repo: Path) -> None:
    """A topic file deleted by hand leaves its MEMORY.md line pointing nowhere: check says
    so (a warning: it blocks no commit), in the working tree and in the staged index."""
    write(
        agent_repo,
        "agents/ops/memory/MEMORY.md",
        "# ops — memory index\n\n- [Human topic](human.md)\n- [Notes](notes/today.md)\n"
        "<!-- gitdream:begin index -->\n- [Deploys](deploys.md) — Rollbacks need the tag.\n"
        "<!-- gitdream:end index -->\n",
    )
    write(agent_repo, "agents/ops/memory/deploys.md", "# Deploys\n")
    commit_all(agent_repo, "index")
    assert _check(agent_repo).files[2].warnings == []

    git(agent_repo, "rm", "-q", "agents/ops/memory/deploys.md")
    for staged in (False, True):
        result = _check(agent_repo, staged=staged)
        assert result.ok
        index = next(f for f in result.files if f.kind == "index")
        assert [(w.rule, w.line) for w in index.warnings] == [("index-link", 6)]
    printed = cli(agent_repo, "check")
    assert printed.exit_code == 0
    assert (
        "agents/ops/memory/MEMORY.md:6: index-link: links to deploys.md, which is not in the memory folder"
        in (printed.stdout + printed.stderr)
    )
    # The summary counts the warning apart from the problems (none here).
    assert printed.stdout.rstrip().endswith("files ok, 1 warning")


ROLE_LATE = (
    "# ops\n\nops keeps the deployment pipeline healthy.\n\n## Background\n\n"
    + "The pipeline has a long history. " * 66
    + "\n\n## Role\n\n"
    + "- Watch the pipeline, fix what breaks, and write down what it learned.\n" * 8
    + "\n## Notes\n\nFree text.\n"
)


def test_check_fails_when_the_role_moved_past_the_window(agent_repo: Path) -> None:
    """Acceptance of #17: `## Role` moved to characters 2280-2882 of agent.md; with the
    default configuration `gitdream check` fails."""
    start = ROLE_LATE.index("## Role")
    assert 2200 < start < 2300
    write(agent_repo, "agents/ops/agent.md", ROLE_LATE)
    result = cli(agent_repo, "check", "agents/ops/agent.md")
    assert result.exit_code == 1
    end = ROLE_LATE.index("\n\n## Notes")
    assert result.stdout.splitlines()[0] == (
        f"agents/ops/agent.md:{ROLE_LATE.count(chr(10), 0, start) + 1}: prefix-section: section '## Role' "
        f"ends at character {end}, past 2000: move it up or shorten what comes before it: it says what "
        "the agent does, and planners read only the window (a heading that names the role or purpose is "
        'required by default; required_sections = ["opening"] leaves it out)'
    )
    write(agent_repo, "gitdream.toml", 'required_sections = ["opening"]\n')
    assert cli(agent_repo, "check", "agents/ops/agent.md").exit_code == 0  # configurable as before
