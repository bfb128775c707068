"""`.pre-commit-hooks.yaml`: the hook offered to users of the pre-commit framework."""

from __future__ import annotations

import importlib.util
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers import PACKAGE_ROOT, commit_all, git, run_gitdream, write
from tests.test_check_command import BAD_AGENT_MD

MANIFEST = PACKAGE_ROOT / ".pre-commit-hooks.yaml"


@pytest.mark.skipif(importlib.util.find_spec("pre_commit") is None, reason="pre-commit is not installed")
def test_manifest_validates_with_pre_commit() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-manifest", str(MANIFEST)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_manifest_offers_gitdream_check_on_definition_and_memory_files() -> None:
    (hook,) = yaml.safe_load(MANIFEST.read_text())
    assert hook["id"] == "gitdream-check"
    assert hook["entry"] == "gitdream check --staged --changed"
    assert hook["language"] == "python"
    files = re.compile(hook["files"])
    for path in (
        "agents/ops/agent.md",
        "soul.md",
        "agents/x/SKILL.md",
        "agents/x/memory/MEMORY.md",
        "agents/x/memory/topic.md",
    ):
        assert files.search(path), path
    for path in ("README.md", "agents/x/memory/logs/2026/03/2026-03-01.md", "agents/x/notes.md"):
        assert not files.search(path), path


def test_the_manifests_entry_blocks_a_new_problem_and_lets_an_old_one_pass(agent_repo: Path) -> None:
    """The command the manifest gives pre-commit, run as pre-commit runs it (the staged file
    names appended): an edit that leaves a problem the file had at HEAD passes with a
    warning, as gitdream's own pre-commit hook does; a problem the edit brings in blocks."""
    (hook,) = yaml.safe_load(MANIFEST.read_text())
    entry = shlex.split(hook["entry"])
    assert entry[0] == "gitdream"
    write(agent_repo, "agents/ops/agent.md", BAD_AGENT_MD)
    commit_all(agent_repo, "an agent.md that was already too long")
    write(agent_repo, "agents/ops/agent.md", BAD_AGENT_MD + "one more line\n")
    git(agent_repo, "add", "agents/ops/agent.md")
    old = run_gitdream(agent_repo, *entry[1:], "agents/ops/agent.md")
    assert old.returncode == 0, old.stdout + old.stderr
    assert "prefix-section" in old.stdout + old.stderr
    write(agent_repo, "agents/ops/soul.md", "<!-- gitdream:begin x -->\n")
    git(agent_repo, "add", "agents/ops/soul.md")
    new = run_gitdream(agent_repo, *entry[1:], "agents/ops/agent.md", "agents/ops/soul.md")
    assert new.returncode == 1, new.stdout + new.stderr
