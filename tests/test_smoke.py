from pathlib import Path

from tests.helpers import cli, git


def test_init_commit_creates_skeleton(git_repo: Path) -> None:
    result = cli(git_repo, "init", "--commit")
    assert result.exit_code == 0, result.stderr
    assert "agents/assistant/agent.md" in git(git_repo, "show", "--stat", "HEAD")
