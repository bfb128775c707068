"""What a newcomer meets first: errors and warnings that keep their advice readable.

Each test is a surprise found by trying gitdream on a real agent repository: a warning cut
off before its fix, a hint that named a command failing the same way, and an unknown-agent
error that listed every agent of a large repository.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers import cli, commit_all, write

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
