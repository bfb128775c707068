"""A dream writes the same memory whatever Python's hash seed: no iteration over a set or
a dict of sets whose order reaches a topic file, MEMORY.md or the index (issue #14; the
integrate output once differed between two runs without a fixed PYTHONHASHSEED).

The real repository (`../shared/tools/make-real-repo`) is built once and cloned, so both
dreams read the same commits; each is dreamed to convergence by the real CLI in a
subprocess under its own PYTHONHASHSEED, and every file of their memory must be the same
byte for byte once the commit a source was read at is taken out (`@1a2b3c4d5e6f`: the
input commit of a later run is an earlier dream's commit, whose id holds its time)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.helpers import PACKAGE_ROOT, SHARED, git, run_gitdream

SHARED_DIR = next((p for p in (SHARED, PACKAGE_ROOT.parent.parent / "shared") if p.is_dir()), SHARED)
MAKE_REPO = SHARED_DIR / "tools" / "make-real-repo"
pytestmark = pytest.mark.skipif(
    not MAKE_REPO.is_file(), reason=f"needs the shared real-data corpus ({MAKE_REPO} is absent)"
)
RUNS = 8
"""Enough runs for the real repository to converge (it takes five)."""


_AT_COMMIT = re.compile(r"@[0-9a-f]{12}\b")


def _dreamed_memory(source: Path, clone: Path, seed: str) -> dict[str, str]:
    """The memory files (not the logs) of a clone of `source` dreamed under hash seed
    `seed`, by repository path, without the commits their sources were read at."""
    git(source.parent, "clone", "-q", "--no-hardlinks", str(source), str(clone))
    for _ in range(RUNS):
        proc = run_gitdream(clone, "run", "--engine", "offline", "-q", env={"PYTHONHASHSEED": seed})
        assert proc.returncode == 0, proc.stderr
    return {
        path.relative_to(clone).as_posix(): _AT_COMMIT.sub("@", path.read_text(encoding="utf-8"))
        for path in sorted(clone.glob("agents/*/memory/**/*.md"))
        if "logs" not in path.relative_to(clone).parts
    }


def test_the_dream_of_the_real_repository_does_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    source = tmp_path / "real"
    subprocess.run([str(MAKE_REPO), str(source)], check=True, capture_output=True)
    first = _dreamed_memory(source, tmp_path / "seed-1", "1")
    second = _dreamed_memory(source, tmp_path / "seed-2", "2")
    assert any("gitdream:begin facts" in text for text in first.values())  # it dreamed
    assert first.keys() == second.keys()
    differ = [path for path in first if first[path] != second[path]]
    assert not differ, differ
