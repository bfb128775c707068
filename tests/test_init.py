"""`gitdream init`: creates only what is missing, never overwrites, adopts existing agents,
writes a gitdream.toml that sets only what the user chose, commits only its own files."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

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
    assert tomllib.loads((git_repo / "gitdream.toml").read_text()) == {}  # every key commented out
    assert '# agents = ["agents/*"]' in (git_repo / "gitdream.toml").read_text()
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


def test_init_adopts_an_existing_agent_and_overwrites_nothing(git_repo: Path) -> None:
    write(git_repo, "agents/ops/soul.md", "my soul\n")
    write(git_repo, "agents/ops/agent.md", "# ops\n\nMine.\n")
    before = {p: (git_repo / p).read_bytes() for p in ("agents/ops/soul.md", "agents/ops/agent.md")}
    result = cli(git_repo, "init", "--agent", "ops", "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["adopted"] == ["ops"]
    assert sorted(doc["created"]) == ["agents/ops/memory/MEMORY.md", "gitdream.toml"]
    assert sorted(doc["kept"]) == ["agents/ops/agent.md", "agents/ops/soul.md"]
    assert {p: (git_repo / p).read_bytes() for p in before} == before
    assert not (git_repo / "agents/ops/SKILL.md").exists()  # definitions are the user's
    again = cli(git_repo, "init", "--agent", "ops", "--commit", "--json")
    assert again.exit_code == 0, again.stderr
    assert json.loads(again.stdout)["created"] == [] and json.loads(again.stdout)["commit"] is None


def test_init_without_agent_adopts_an_agents_repository(git_repo: Path) -> None:
    write(git_repo, "agents/kit/agent.md", "# kit\n")
    write(git_repo, "agents/critic/agent.md", "# critic\n")
    before = snapshot(git_repo)
    result = cli(git_repo, "init")
    assert result.exit_code == 0, result.stderr
    assert "Adopted 2 agents: critic, kit (their files are kept as they are)" in result.stdout
    assert not (git_repo / "agents/assistant").exists()
    after = snapshot(git_repo)
    assert {k: v for k, v in after["files"].items() if k != "gitdream.toml"} == before["files"]


def test_init_sets_only_what_the_user_chose(git_repo: Path, isolate: Path) -> None:
    """Regression test for #17: every key was set explicitly, so the repository file
    shadowed the user config and pinned today's model id."""
    write(isolate / "gitdream-home", "config.toml", '[anthropic]\nmodel = "my-gateway-model"\n')
    assert cli(git_repo, "init", "--single").exit_code == 0
    text = (git_repo / "gitdream.toml").read_text()
    assert tomllib.loads(text) == {"agents": ["."]}
    shown = json.loads(cli(git_repo, "config", "show", "--json").stdout)["keys"]
    assert shown["anthropic.model"]["value"] == "my-gateway-model"
    assert shown["anthropic.model"]["source"].startswith("user config ")
    assert shown["agents"] == {"value": ["."], "source": "gitdream.toml"}


def test_init_agent_kit_in_a_real_agents_repository(tmp_path: Path, isolate: Path) -> None:
    """Acceptance of #17 on the real Kit agent (../shared/realdata): `gitdream init --agent
    kit` succeeds in an existing agents repository and `gitdream config show` still shows
    the user config's `anthropic.model`."""
    import subprocess
    import sys

    from tests.helpers import SHARED

    tool = SHARED / "tools" / "make-real-repo"
    if not tool.is_file():
        pytest.skip(f"real-data tool not found at {tool} (../shared is absent)")
    root = tmp_path / "real"
    subprocess.run([sys.executable, str(tool), str(root)], check=True, capture_output=True)
    write(isolate / "gitdream-home", "config.toml", '[anthropic]\nmodel = "claude-via-gateway"\n')
    before = snapshot(root)
    result = cli(root, "init", "--agent", "kit", "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["adopted"] == ["kit"] and doc["created"] == ["gitdream.toml"]
    assert "agents/kit/agent.md" in doc["kept"] and "agents/kit/memory/MEMORY.md" in doc["kept"]
    assert {k: v for k, v in snapshot(root)["files"].items() if k != "gitdream.toml"} == before["files"]
    shown = json.loads(cli(root, "config", "show", "--json").stdout)["keys"]
    assert shown["anthropic.model"]["value"] == "claude-via-gateway"
    assert cli(root, "run", "--agent", "kit", "--dry-run").exit_code == 0


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
    """A malformed --agent is a usage error (exit 2), whichever check (the ref rule every
    command applies, or init's stricter one) refuses it; nothing is created."""
    for bad in ("a/b", "x..y", "has space", "", "wat$(id)", "-x", ".hidden"):
        result = cli(git_repo, "init", "--agent", bad)
        assert result.exit_code == 2, bad
        assert "cannot be an agent id" in result.stderr
        assert "Traceback" not in result.stderr
    assert not (git_repo / "gitdream.toml").exists()


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


def test_init_names_the_kept_files_git_does_not_track_yet(tmp_path: Path) -> None:
    """`init` then `init --commit` (the hint `status` gives for a repository without commits)
    committed nothing and said "Nothing to create", leaving the repository without a commit;
    now it names the untracked files and says a dream reads only committed ones."""
    root = init_repo(tmp_path / "fresh")
    assert cli(root, "init", "--agent", "ops").exit_code == 0
    again = cli(root, "init", "--agent", "ops", "--commit")
    assert again.exit_code == 0, again.stderr
    assert "Nothing to create" in again.stdout
    assert "Not tracked by git yet (5 files kept above: gitdream.toml, agents/ops/" in again.stdout
    assert "`git add` and `git commit` them" in again.stdout
    document = json.loads(cli(root, "init", "--agent", "ops", "--json").stdout)
    assert sorted(document["untracked"]) == sorted(document["kept"])
    git(root, "add", "gitdream.toml")
    staged = json.loads(cli(root, "init", "--agent", "ops", "--json").stdout)
    assert "gitdream.toml" not in staged["untracked"] and len(staged["untracked"]) == 4
    git(root, "add", "agents")
    git(root, "commit", "-qm", "init")
    done = cli(root, "init", "--agent", "ops")
    assert "Not tracked" not in done.stdout
    assert json.loads(cli(root, "init", "--agent", "ops", "--json").stdout)["untracked"] == []
