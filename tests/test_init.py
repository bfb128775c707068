"""`gitdream init`: creates only new files, refuses to overwrite, commits only its own files."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from gitdream import config
from tests.helpers import cli, git, head, init_repo, snapshot, write


def test_init_writes_config_and_skeleton_without_committing(git_repo: Path) -> None:
    before = head(git_repo)
    result = cli(git_repo, "init", "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["agent"] == "assistant" and doc["commit"] is None
    assert sorted(doc["created"]) == [
        "agents/assistant/SKILL.md",
        "agents/assistant/agent.md",
        "agents/assistant/memory/MEMORY.md",
        "agents/assistant/soul.md",
        "gitdream.toml",
    ]
    assert head(git_repo) == before
    data = tomllib.loads((git_repo / "gitdream.toml").read_text())
    assert data["agents"] == ["agents/*"]
    assert "assistant" in (git_repo / "agents/assistant/agent.md").read_text()


def test_generated_toml_documents_every_key(git_repo: Path) -> None:
    cli(git_repo, "init")
    text = (git_repo / "gitdream.toml").read_text()
    cfg = config.load(git_repo, env={})
    for key in config.KEYS:
        assert key.name.split(".")[-1] in text, key.name
        assert cfg.value(key.name) == key.default


def test_agent_md_prefix_holds_a_complete_role_section(git_repo: Path) -> None:
    cli(git_repo, "init", "--agent", "ops")
    text = (git_repo / "agents/ops/agent.md").read_text()
    role_end = text.index("## How it works")
    assert text.startswith("# ops\n")
    assert "## Role" in text[:role_end]
    assert role_end <= 2000, "the whole role section must lie within the first 2000 characters"


def test_init_refuses_to_overwrite_and_writes_nothing(git_repo: Path) -> None:
    write(git_repo, "agents/ops/soul.md", "my soul\n")
    before = snapshot(git_repo)
    result = cli(git_repo, "init", "--agent", "ops")
    assert result.exit_code == 1
    assert "refusing to overwrite existing files: agents/ops/soul.md" in result.stderr
    assert snapshot(git_repo) == before


def test_second_agent_keeps_existing_config(git_repo: Path) -> None:
    assert cli(git_repo, "init", "--agent", "one").exit_code == 0
    config_before = (git_repo / "gitdream.toml").read_bytes()
    result = cli(git_repo, "init", "--agent", "two", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["kept"] == ["gitdream.toml"]
    assert (git_repo / "gitdream.toml").read_bytes() == config_before


def test_commit_commits_only_the_created_files(git_repo: Path) -> None:
    write(git_repo, "README.md", "staged by the user\n")
    git(git_repo, "add", "README.md")
    write(git_repo, "scratch.txt", "untracked\n")
    result = cli(git_repo, "init", "--agent", "ops", "--commit", "--json")
    assert result.exit_code == 0, result.stderr
    files = git(git_repo, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(files) == sorted(json.loads(result.stdout)["created"])
    status = git(git_repo, "status", "--porcelain", "--untracked-files=all")
    assert sorted(status.splitlines()) == ["?? scratch.txt", "M  README.md"]


def test_commit_in_a_repository_without_commits(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "fresh")
    result = cli(root, "init", "--single", "--commit")
    assert result.exit_code == 0, result.stderr
    assert git(root, "ls-files").split() == [
        "SKILL.md",
        "agent.md",
        "gitdream.toml",
        "memory/MEMORY.md",
        "soul.md",
    ]
    assert tomllib.loads((root / "gitdream.toml").read_text())["agents"] == ["."]
    assert git(root, "status", "--porcelain") == ""


def test_invalid_agent_id(git_repo: Path) -> None:
    for bad in ("a/b", "x..y", "has space", "", "wat$(id)", "-x", ".hidden"):
        result = cli(git_repo, "init", "--agent", bad)
        assert result.exit_code == 1, bad
        assert "cannot be an agent id" in result.stderr


def test_agent_outside_the_configured_globs_warns(git_repo: Path) -> None:
    write(git_repo, "gitdream.toml", 'agents = ["bots/*"]\n')
    result = cli(git_repo, "init", "--agent", "ops")
    assert result.exit_code == 0
    assert "is not matched by agents" in result.stderr


def test_new_agent_passes_check(git_repo: Path) -> None:
    """Regression test: the agent.md template failed gitdream's own managed-block check."""
    assert cli(git_repo, "init", "--commit").exit_code == 0
    result = cli(git_repo, "check")
    assert result.exit_code == 0, result.stdout + result.stderr


def test_init_from_a_sub_folder_writes_at_the_root_and_prints_paths_from_there(git_repo: Path) -> None:
    sub = git_repo / "tools" / "ai"
    sub.mkdir(parents=True)
    result = cli(sub, "init", "--agent", "ops")
    assert result.exit_code == 0, result.stderr
    assert (git_repo / "agents/ops/agent.md").is_file() and (git_repo / "gitdream.toml").is_file()
    assert "Created  ../../agents/ops/agent.md" in result.stdout
    assert "Created  ../../gitdream.toml" in result.stdout
    document = json.loads(cli(sub, "init", "--agent", "dev", "--json").stdout)
    assert "agents/dev/agent.md" in document["created"]
