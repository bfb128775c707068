"""Definition integration: `learned` blocks in SKILL.md/soul.md/agent.md (DESIGN §5 phase 8, §6, §7)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from gitdream.agents import make_agent
from gitdream.config import defaults
from gitdream.dream import facts as factfmt
from gitdream.dream.integrate import DefinitionResult, integrate_definitions
from gitdream.text import blocks
from gitdream.units import Unit
from tests.helpers import commit_all, run_gitdream, write

AGENT = make_agent("agents/ops", defaults())
SKILL = "agents/ops/SKILL.md"
SOUL = "agents/ops/soul.md"
AGENT_MD = "agents/ops/agent.md"
LOG = "agents/ops/memory/logs/2026/03/2026-03-02.md"
COMMIT = "abcdef012345" + "7" * 28
DAY = date(2026, 3, 2)
SKILL_TEXT = (
    "---\nname: ops\n---\n\n# Ops skill\n\nDeploys and rolls back services.\n\n## Steps\n\n1. Build\n2. Ship"
)


def unit(target: str, body: str, line: int = 1, **kw: object) -> Unit:
    return Unit(
        title=target,
        body=body,
        target=target,
        action=str(kw.get("action", "create")),
        topic=target,
        sources=(f"{LOG}#L{line}-L{line}",),
        date=DAY,
        corroborates=kw.get("corroborates"),  # type: ignore[arg-type]
    )


def no_problems(path: str, text: str) -> list[str]:
    return []


def prefix_check(path: str, text: str) -> list[str]:
    """A small stand-in for the agent.md prefix guard: a managed block must not begin within
    the first 200 characters of agent.md."""
    if not path.endswith("agent.md"):
        return []
    found = blocks.parse(text, path)
    return [
        f"{path}: block '{b.name}' begins at character {b.start}, inside the prefix"
        for b in found
        if b.start < 200
    ]


def integrate(files: dict[str, str], units: list[Unit], check=no_problems) -> DefinitionResult:  # type: ignore[no-untyped-def]
    return integrate_definitions(AGENT, files, units, input_commit=COMMIT, check=check)


def test_units_go_into_the_learned_block_and_keep_every_other_byte() -> None:
    result = integrate(
        {SKILL: SKILL_TEXT, SOUL: "# Soul\r\n\r\nCalm.\r\n"},
        [unit("skill", "Always run the linter first"), unit("soul", "Speak plainly", 2)],
    )
    new_skill = result.changes[SKILL]
    assert new_skill.encode().startswith(SKILL_TEXT.encode())
    assert new_skill[len(SKILL_TEXT) :].startswith(
        "\n\n<!-- gitdream:begin learned -->\n- Always run the linter first\n"
    )
    (fact,) = factfmt.parse(blocks.get(new_skill, "learned") or "")
    assert fact.sources == [f"{LOG}#L1-L1@abcdef012345"] and fact.first == DAY
    new_soul = result.changes[SOUL]
    assert new_soul.startswith("# Soul\r\n\r\nCalm.\r\n\r\n<!-- gitdream:begin learned -->\r\n")
    assert result.created == 2 and [f.path for f in result.facts_written] == [SKILL, SOUL]
    assert result.to_json()["changes"] == [SKILL, SOUL]


def test_corroboration_and_idempotence_in_the_learned_block() -> None:
    first = integrate({SKILL: SKILL_TEXT}, [unit("skill", "Always run the linter first")])
    files = {SKILL: first.changes[SKILL]}
    units = [
        unit(
            "skill",
            "always run the linter first",
            5,
            action="corroborate",
            corroborates="Always run the linter first",
        ),
        unit("skill", "Always run the linter first"),
    ]
    second = integrate(files, units)
    (fact,) = factfmt.parse(blocks.get(second.changes[SKILL], "learned") or "")
    assert fact.seen == 2 and len(fact.sources) == 2  # the entry cited already is not counted again
    assert second.corroborated == 2 and second.created == 0
    assert blocks.outside(second.changes[SKILL]) == blocks.outside(files[SKILL])
    assert integrate(files, []).changes == {}


def test_a_missing_definition_file_is_not_created() -> None:
    result = integrate({SKILL: SKILL_TEXT}, [unit("soul", "Speak plainly"), unit("skill", "Lint first", 2)])
    assert list(result.changes) == [SKILL]
    (refusal,) = result.refused
    assert refusal.path == SOUL and refusal.target == "soul"
    assert "does not exist at the input commit" in refusal.reason
    assert refusal.hint == f"create {SOUL}, commit it, and run gitdream again"
    assert refusal.units == ["soul"]


def test_a_new_check_problem_refuses_and_leaves_the_file_unchanged() -> None:
    short_agent = "# Agent\n\nDo the job.\n"
    result = integrate({AGENT_MD: short_agent}, [unit("agent", "Never push to main")], check=prefix_check)
    assert result.changes == {}
    (refusal,) = result.refused
    assert refusal.path == AGENT_MD and "would fail `gitdream check`" in refusal.reason
    assert "inside the prefix" in refusal.reason and refusal.units == ["agent"]
    assert result.facts_written == [] and result.created == 0


def test_problems_the_old_text_already_had_do_not_block_the_write() -> None:
    def always_one(path: str, text: str) -> list[str]:
        return ["required section '## Role' is missing"]

    long_agent = "# Agent\n\n" + "Rules.\n" * 60
    result = integrate({AGENT_MD: long_agent}, [unit("agent", "Never push to main")], check=always_one)
    assert AGENT_MD in result.changes and result.refused == []
    ok = integrate({AGENT_MD: long_agent}, [unit("agent", "Never push to main")], check=prefix_check)
    assert AGENT_MD in ok.changes


def test_malformed_markers_refuse_the_file() -> None:
    broken = SKILL_TEXT + "\n<!-- gitdream:begin learned -->\n- dangling\n"
    result = integrate({SKILL: broken}, [unit("skill", "Lint first")])
    assert result.changes == {}
    (refusal,) = result.refused
    assert "never ends" in refusal.reason


def test_other_targets_and_missing_sources_are_rejected() -> None:
    experience = Unit("t", "b", "experience", "create", "x", (f"{LOG}#L1-L1",))
    sourceless = Unit("skill", "b", "skill", "create", "skill", ())
    result = integrate({SKILL: SKILL_TEXT}, [experience, sourceless])
    assert result.changes == {}
    assert [r.reason for r in result.rejected] == [
        "target 'experience' is not a definition",
        "no usable source",
    ]
    assert result.to_json()["rejected"][0]["stage"] == "integrate"


def test_a_tag_for_a_definition_file_the_agent_does_not_configure_becomes_memory(git_repo: Path) -> None:
    """A Claude Code folder adopted as docs/getting-started.md shows (`definition_files =
    ["CLAUDE.md"]`): a `#skill` entry has no file it could ever be written to, so it is
    kept as memory with a warning instead of leaving every run `partial` for good."""
    write(
        git_repo,
        "gitdream.toml",
        'agents = ["."]\nmemory_dir = ".claude/memory"\ndefinition_files = ["CLAUDE.md"]\n'
        'log_globs = [".claude/logs/**/*.md"]\n',
    )
    write(git_repo, "CLAUDE.md", "# project\n\nInstructions for Claude.\n")
    write(git_repo, ".claude/memory/MEMORY.md", "# Memory\n")
    write(
        git_repo,
        ".claude/logs/2026-03-02.md",
        "# 2026-03-02\n\n- Always run the smoke tests on staging before promoting a build. #skill\n",
    )
    commit_all(git_repo, "a Claude Code project with a log")
    first = run_gitdream(git_repo, "run", "--engine", "offline", "--json")
    assert first.returncode == 0, first.stderr
    (record,) = json.loads(first.stdout)["runs"]
    assert record["status"] == "ok" and not record["pending"]
    assert any("no definition file for target 'skill'" in w for w in record["warnings"])
    topic = (git_repo / ".claude" / "memory" / "skills.md").read_text()
    assert "name: Skills\n" in topic and "Always run the smoke tests on staging" in topic
    assert "[Skills](skills.md)" in (git_repo / ".claude" / "memory" / "MEMORY.md").read_text()
    assert "smoke tests" not in (git_repo / "CLAUDE.md").read_text()
    again = run_gitdream(git_repo, "run", "--engine", "offline", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["runs"][0]["status"] == "noop"
