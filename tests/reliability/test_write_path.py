"""The write path under attack (issue 16, cases 3 and 5).

Case 3: the memory folder (or the agent's folder, or `agents/` above it) is replaced by a
symbolic link to a folder outside the repository while a run is paused — before its re-check, and after it, right before the
branch move. Before, the re-checks looked at the last path component only and the topic
files and MEMORY.md were written outside, exit 0. Now nothing is ever written through a
link, whenever it appears: the re-check refuses, or the working-tree update leaves the
path alone with a warning.

Case 5: `git update-index --skip-worktree` or `--assume-unchanged` on MEMORY.md, with a
local edit git no longer shows. Before, the dream overwrote the edit and cleared the bit.
Now the write gate refuses the path, naming the bit and the fix.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from tests.helpers import git, resume, run_gitdream, start_paused
from tests.reliability.support import MEMORY, agent_repo, fsck, leftovers, material, prepared


def _ops(root: Path) -> dict[str, object]:
    agent_repo(root)
    material(root)
    return {}


def _tree_digest(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("swapped", ["agents", "agents/ops", MEMORY])
@pytest.mark.parametrize("point", ["after-commit-object", "before-ref-move", "after-ref-move"])
def test_a_folder_swapped_for_a_link_mid_run_is_never_written_through(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, point: str, swapped: str
) -> None:
    """The memory folder, the agent's folder or the folder of all agents: a link at any
    depth of the path is never written through (not only at its last component)."""
    root, _meta = prepared(tmp_path_factory, "ops", _ops, tmp_path / "repo")
    outside = tmp_path / "outside"
    folder = tmp_path / "faults"
    proc = start_paused(root, folder, f"{point}@1", "run", "--json")
    # the attacker: the folder moves out of the repository, a link takes its place
    shutil.move(str(root / swapped), str(outside))
    (root / swapped).symlink_to(outside, target_is_directory=True)
    before = _tree_digest(outside)
    out, err = resume(proc, folder, f"{point}@1")
    assert "Traceback" not in err, err
    assert _tree_digest(outside) == before, "the dream wrote outside the repository"
    assert proc.returncode in (0, 1), err
    receipt = json.loads(out)["runs"][0]
    if point == "after-commit-object":  # the re-check sees the link: nothing is written
        assert receipt["commits"]["experience"] is None, receipt
        assert "changed while the dream ran" in err or "symbolic link" in err, err
    else:  # the branch moves (or just moved); the working tree is left alone, with a warning
        assert "gitdream writes nothing through links" in err, err
    assert fsck(root) == "" and leftovers(root) == []
    assert not (root / ".git" / "index.lock").exists()


@pytest.mark.parametrize("bit", ["skip-worktree", "assume-unchanged"])
def test_a_hidden_local_edit_is_never_overwritten(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, bit: str
) -> None:
    root, _meta = prepared(tmp_path_factory, "ops", _ops, tmp_path / "repo")
    index = root / MEMORY / "MEMORY.md"
    edit = index.read_text() + "- a line the user added, hidden by the bit\n"
    index.write_text(edit)
    git(root, "update-index", f"--{bit}", f"{MEMORY}/MEMORY.md")
    assert git(root, "status", "--porcelain") == "", "git hides the edit"
    done = run_gitdream(root, "run", "--json")
    assert done.returncode == 1, done.stderr
    assert f"MEMORY.md is marked {bit} in the index" in done.stderr
    assert f"git update-index --no-{bit}" in done.stderr
    assert index.read_text() == edit, "the hidden edit was overwritten"
    tag = git(root, "ls-files", "-v", f"{MEMORY}/MEMORY.md")[0]
    assert tag == ("S" if bit == "skip-worktree" else "h"), "the bit was cleared"
    assert git(root, "rev-parse", "HEAD") == git(root, "rev-parse", "HEAD@{0}")
