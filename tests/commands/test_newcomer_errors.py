"""What a newcomer meets first: errors and warnings that keep their advice readable.

Each test is a surprise found by trying gitdream on a real agent repository: a warning cut
off before its fix, a hint that named a command failing the same way, and an unknown-agent
error that listed every agent of a large repository.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import cli, commit_all, git, init_repo, write

LOG = "agents/ops/memory/logs/2026/03/2026-03-02.md"


def test_show_wraps_a_warning_instead_of_cutting_off_its_fix(agent_repo: Path) -> None:
    """A MEMORY.md over its limits makes the run warn; `show` printed the warning clipped
    to the terminal, so the file it names and what to do were lost after an ellipsis."""
    write(agent_repo, "gitdream.toml", "memory_max_lines = 2\n")
    write(agent_repo, LOG, "# 2026-03-02\n\n- [deploy] Rollbacks need the previous image tag.\n")
    commit_all(agent_repo, "ops: log")
    ran = cli(agent_repo, "run")
    assert ran.exit_code == 0, ran.stderr
    shown = cli(agent_repo, "show", "last", env={"COLUMNS": "60"})
    assert shown.exit_code == 0, shown.stderr
    section = shown.stdout.split("\nwarnings\n", 1)[1]
    assert "…" not in section
    assert all(len(line) <= 60 or " " not in line.strip() for line in section.splitlines())
    joined = " ".join(line.strip() for line in section.splitlines())
    assert "over its limits" in joined and "memory_max_lines" in joined
    assert "agents/ops/memory/gitdream-topics.md" in joined  # a path is never broken


def test_an_unknown_key_hint_does_not_send_the_user_to_a_command_that_fails_too(
    agent_repo: Path,
) -> None:
    """`config show` loads the same gitdream.toml and fails with the same error, so the hint
    names where the keys are listed instead."""
    write(agent_repo, "gitdream.toml", "frobnicate = 3\n")
    status = cli(agent_repo, "status")
    assert status.exit_code == 1
    assert "error: gitdream.toml: unknown key 'frobnicate'" in status.stderr
    assert "config show" not in status.stderr
    assert "docs/configuration.md" in status.stderr
    assert cli(agent_repo, "config", "show").exit_code == 1  # why it must not be the hint
    assert (Path(__file__).parents[2] / "docs" / "configuration.md").is_file()


def test_an_unknown_agent_lists_ten_agents_and_guesses_the_closest(agent_repo: Path) -> None:
    for i in range(25):
        write(agent_repo, f"agents/worker-{i:02d}/agent.md", f"# worker {i}\n\nWorks.\n")
    commit_all(agent_repo, "25 more agents")
    result = cli(agent_repo, "audit", "wroker-07")
    assert result.exit_code == 1
    assert "no agent with id 'wroker-07'" in result.stderr
    assert "… and 16 more" in result.stderr
    assert "worker-24" not in result.stderr
    assert "did you mean 'worker-07'?" in result.stderr
    assert "Traceback" not in result.stderr


def _dream_refused_by_a_dirty_index(repo: Path) -> str:
    """A run that distils units and then is refused (MEMORY.md edited, not committed);
    returns its run id."""
    write(repo, LOG, "# 2026-03-02\n\n- [deploy] Rollbacks need the previous image tag.\n")
    commit_all(repo, "ops: log")
    index = repo / "agents/ops/memory/MEMORY.md"
    index.write_text(index.read_text() + "- edited by hand, not committed\n")
    ran = cli(repo, "run")
    assert ran.exit_code == 1 and "uncommitted changes" in ran.stderr, ran.stderr
    runs = json.loads(cli(repo, "log", "--all", "--json").stdout)["runs"]
    assert runs[0]["status"] == "failed" and not any(runs[0]["commits"].values())
    return str(runs[0]["run"])


def test_show_of_a_refused_run_says_its_units_were_not_written(agent_repo: Path) -> None:
    """`show` of a failed run listed its units as "created" and counted "1 created",
    though the write gate refused and nothing was committed."""
    run = _dream_refused_by_a_dirty_index(agent_repo)
    assert not (agent_repo / "agents/ops/memory/deploy.md").exists()
    shown = cli(agent_repo, "show", run)
    assert shown.exit_code == 0, shown.stderr
    counts = next(line for line in shown.stdout.splitlines() if line.startswith("counts"))
    assert "not written: 1 created" in counts and counts.index("not written") < counts.index("created")
    assert "units (1, not written)" in shown.stdout
    assert "  would have created  agents/ops/memory/deploy.md" in shown.stdout
    assert "\n  created  " not in shown.stdout
    document = json.loads(cli(agent_repo, "show", run, "--json").stdout)
    assert document["not_written"] == ["experience"]
    assert [(u["action"], u["written"]) for u in document["units"]] == [("created", False)]


def test_show_of_a_committed_run_says_its_units_were_written(agent_repo: Path) -> None:
    write(agent_repo, LOG, "# 2026-03-02\n\n- [deploy] Rollbacks need the previous image tag.\n")
    commit_all(agent_repo, "ops: log")
    assert cli(agent_repo, "run").exit_code == 0
    shown = cli(agent_repo, "show", "last")
    assert "  created  agents/ops/memory/deploy.md" in shown.stdout
    assert "not written" not in shown.stdout and "would have" not in shown.stdout
    document = json.loads(cli(agent_repo, "show", "last", "--json").stdout)
    assert document["not_written"] == []
    assert [(u["action"], u["written"]) for u in document["units"]] == [("created", True)]


def test_status_before_the_first_commit_says_to_commit(tmp_path: Path) -> None:
    """NEXT read "after the repository is fixed" in a new repository, as if it were broken."""
    repo = init_repo(tmp_path / "new")
    assert cli(repo, "init").exit_code == 0  # files written, not committed
    status = cli(repo, "status")
    assert status.exit_code == 0, status.stderr
    row = next(line for line in status.stdout.splitlines() if line.startswith("assistant "))
    assert "after the first commit" in row and "fixed" not in row
    assert "gitdream init --commit" in status.stdout
    (agent,) = json.loads(cli(repo, "status", "--json").stdout)["agents"]
    assert agent["next"] == "after the first commit"
    commit_all(repo, "the agent files")  # what the repository line's `next:` says to do
    assert "after the first commit" not in cli(repo, "status").stdout


def test_status_help_lists_every_next_value() -> None:
    """Every NEXT that `status` can print is named in `status --help`."""
    from gitdream.commands import status
    from gitdream.trigger import gates

    helped = " ".join(cli(Path.cwd(), "status", "--help").stdout.split())
    blocked = [status.BLOCKED_UNBORN, status.BLOCKED_STATE, status.BLOCKED_LOCK, gates.UNCOUNTABLE_NEXT]
    for value in ["now", "never (disabled)", "in 3.5 h", "at 5 sessions", *(f"after {b}" for b in blocked)]:
        assert f'"{value}"' in helped, value


@pytest.mark.parametrize(
    "args",
    [
        ("show", "nope"),
        ("revert", "nope"),
        ("audit", "--run", "last~x"),
        ("show", "--agent", "Bad Name"),
        ("revert", "last", "--agent", "a/b"),
        ("log", "--agent", "Bad Name"),
        ("run", "--agent", "ops", "--agent", "x..y"),
        ("audit", "Bad Name"),
        ("init", "--agent", "Bad Name"),
    ],
)
def test_a_malformed_agent_or_run_argument_is_a_usage_error(agent_repo: Path, args: tuple[str, ...]) -> None:
    """A malformed argument exits 2 (click's code for a bad parameter), with the error in
    gitdream's form (and in JSON with --json), before anything is read or written."""
    before = git(agent_repo, "status", "--porcelain")
    result = cli(agent_repo, *args, "--json")
    assert result.exit_code == 2, result.stderr
    assert json.loads(result.stdout)["error"]["type"] == "usage"
    assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr
    assert git(agent_repo, "status", "--porcelain") == before


def test_a_well_formed_unknown_run_or_agent_is_still_a_failure(agent_repo: Path) -> None:
    """exit 1, not 2: the argument is fine, the repository has no such run or agent."""
    assert cli(agent_repo, "show", "zzzz").exit_code == 1
    assert cli(agent_repo, "show", "last~3").exit_code == 1
    assert cli(agent_repo, "log", "--agent", "nobody").exit_code == 1


def test_the_malformed_run_message_names_every_accepted_form(agent_repo: Path) -> None:
    run = _dream_refused_by_a_dirty_index(agent_repo)
    message = " ".join(cli(agent_repo, "show", "nope").stderr.split())
    assert "'nope' is not a run" in message
    for form in ("12 characters", "unique prefix", "`last`", "`last~N`"):
        assert form in message, form
    for accepted in (run, run[:4], run.upper(), "last~0"):  # what the message promises is accepted
        assert cli(agent_repo, "show", accepted).exit_code != 2, accepted
    assert cli(agent_repo, "show", run[:4]).exit_code == 0
