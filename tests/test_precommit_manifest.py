"""`.pre-commit-hooks.yaml`: the hook offered to users of the pre-commit framework."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

import pytest
import yaml

from tests.helpers import PACKAGE_ROOT

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
    assert hook["entry"] == "gitdream check --staged"
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
