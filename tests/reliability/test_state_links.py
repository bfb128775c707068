"""gitdream's own state under the git dir (`<git-common-dir>/gitdream/`: the lock, the
stamp, state.json, the run plans, the commit journals, the ref-lock records) is never
written, read or removed through a symbolic link (issue 16): a link in place of the
folder, of a folder in it or of one of its files (someone's, or a careless `ln -s`) had
gitdream write its records wherever the link pointed — and the next command remove files
there. Every such link is refused, naming the path and the fix, with nothing written
behind it."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

import pytest

from gitdream.errors import RepoStateError
from gitdream.git import refs
from gitdream.git.repo import Repo
from tests.helpers import git, popen, run_gitdream
from tests.reliability.support import agent_repo, material

LINKS = {
    "state folder": ".git/gitdream",
    "reflocks folder": ".git/gitdream/reflocks",
    "run plans folder": ".git/gitdream/runs",
    "journal folder": ".git/gitdream/journal",
    "lock file": ".git/gitdream/lock",
    "notes lock file": ".git/gitdream/notes.flock",
}


def _outside_contents(outside: Path) -> list[str]:
    return sorted(str(p.relative_to(outside)) for p in outside.rglob("*"))


@pytest.mark.parametrize("what", sorted(LINKS))
def test_a_link_in_gitdreams_state_is_never_written_through(tmp_path: Path, what: str) -> None:
    """Regression test: `.git/gitdream/reflocks` (or the state folder, the run plans', the
    journals' folder, the lock file …) as a symbolic link to a folder outside had a run
    write its records there — caught here while the run holds its ref locks, since the
    records are removed when it ends."""
    root = agent_repo(tmp_path / "repo")
    material(root)
    outside = tmp_path / "outside"
    outside.mkdir()
    link = root / LINKS[what]
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside if what.endswith("folder") else outside / "target")
    faults = tmp_path / "faults"
    faults.mkdir()
    proc = popen(root, "run", env={"GITDREAM_FAULT": "refs-locked:pause", "GITDREAM_FAULT_DIR": str(faults)})
    seen: list[str] = []
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        seen += _outside_contents(outside)
        if (faults / "refs-locked.reached").exists():
            seen += _outside_contents(outside)
            (faults / "refs-locked.continue").write_text("")
        time.sleep(0.005)
    _out, err = proc.communicate(timeout=60)
    seen += _outside_contents(outside)
    assert not seen, f"written through the link {link}: {sorted(set(seen))}\n{err}"
    assert proc.returncode == 1, err
    assert f"refusing to write gitdream's state through {link}: it is a symbolic link" in err, err
    assert f"rm {link}" in err, err
    assert link.is_symlink(), "the link is the user's to remove"


def test_the_next_command_never_removes_files_through_a_linked_reflocks_folder(tmp_path: Path) -> None:
    """Regression test: with `.git/gitdream/reflocks` a link to a folder of the user's, a
    file there named like a process id holding a dead process's record was read and
    removed by the next `gitdream status` (and the lock files it named)."""
    root = agent_repo(tmp_path / "repo")
    outside = tmp_path / "outside"
    outside.mkdir()
    dead = {"pid": 4_000_000, "pid_start": "1", "host": socket.gethostname(), "locks": []}
    precious = outside / "4000000"
    precious.write_text(json.dumps(dead))
    (root / ".git" / "gitdream").mkdir()
    (root / ".git" / "gitdream" / "reflocks").symlink_to(outside)
    shown = run_gitdream(root, "status")
    assert precious.exists(), f"removed through the link: {shown.stderr}"
    assert "reflocks: it is a symbolic link" in shown.stderr, shown.stderr


def test_a_record_or_its_temporary_file_that_is_a_link_is_never_written_through(tmp_path: Path) -> None:
    """Regression test: the ref-lock record of this process (`reflocks/<pid>`) and its
    temporary file (`reflocks/.<pid>.tmp`) planted as links to files outside: a ref move
    wrote the record through the temporary file's link. Now the temporary file is opened
    without following a link (refused, naming it, nothing moves) and the record itself is
    only ever replaced by rename."""
    root = agent_repo(tmp_path / "repo")
    outside = tmp_path / "outside"
    outside.mkdir()
    folder = root / ".git" / "gitdream" / "reflocks"
    folder.mkdir(parents=True)
    record = folder / str(os.getpid())
    record.symlink_to(outside / "record")
    repo = Repo.open(root)
    tip = git(root, "rev-parse", "HEAD").strip()
    refs.compare_and_swap(repo, "refs/gitdream/probe", None, tip, "probe")
    assert _outside_contents(outside) == []
    assert git(root, "rev-parse", "refs/gitdream/probe").strip() == tip
    temporary = folder / f".{os.getpid()}.tmp"
    temporary.symlink_to(outside / "temporary")
    with pytest.raises(RepoStateError) as refused:
        refs.compare_and_swap(repo, "refs/gitdream/probe", tip, None, "probe")
    assert f"refusing to write gitdream's state through {temporary}" in refused.value.message
    assert _outside_contents(outside) == []
    assert git(root, "rev-parse", "refs/gitdream/probe").strip() == tip, "nothing moves"
