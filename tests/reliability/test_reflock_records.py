"""The records of held ref locks (`<git-common-dir>/gitdream/reflocks/<pid>`, see
`gitdream.git.refs._Held`) are files anyone who can write `.git` can forge or leave, and
the lock files they name may since be another process's (issue 16): the next gitdream
command removes only a ref lock file of this repository that a killed gitdream created —
never a file outside the ref locks, never through a link, never a live git lock."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers import git, run_gitdream, write
from tests.reliability.support import agent_repo

DEAD = {"pid": 4_000_000, "pid_start": "1", "host": socket.gethostname()}  # above pid_max


def _record(root: Path, locks: list[dict[str, object]]) -> Path:
    folder = root / ".git" / "gitdream" / "reflocks"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / str(DEAD["pid"])
    path.write_text(json.dumps({**DEAD, "locks": locks}))
    return path


def _named(path: Path) -> dict[str, object]:
    found = os.stat(path)
    return {"path": str(path), "ino": found.st_ino, "ctime_ns": found.st_ctime_ns}


def test_a_forged_record_never_removes_a_file_that_is_not_a_ref_lock(tmp_path: Path) -> None:
    """Regression test: a record of a dead process naming any file by its inode and
    change time — outside the repository, the user's README.md through `.git/refs/../..`,
    the target of a `.lock` link, the index — had the next `gitdream status` delete each."""
    root = agent_repo(tmp_path / "repo")
    outside = write(tmp_path, "precious.txt", "the user's\n")
    outside_lock = write(tmp_path, "elsewhere/main.lock", "")
    link = root / ".git" / "refs" / "heads" / "linked.lock"
    link.symlink_to(outside_lock)
    dotted = root / ".git" / "refs" / ".." / ".." / "README.md"
    victims = [outside, outside_lock, root / "README.md", root / ".git" / "index", link]
    entries = [_named(p) for p in (outside, outside_lock, root / ".git" / "index")]
    entries += [
        {**_named(root / "README.md"), "path": str(dotted)},
        {**_named(outside_lock), "path": str(link)},
    ]
    entries += [{"path": str(outside_lock), "announced_ns": time.time_ns()}]
    record = _record(root, entries)
    shown = run_gitdream(root, "status")
    assert shown.returncode == 0, shown.stderr
    assert "removed" not in shown.stderr, shown.stderr
    for victim in victims:
        assert os.path.lexists(victim), f"{victim} was removed"
    assert not record.exists(), "the dead process's record goes"
    assert git(root, "status", "--porcelain") == ""


def test_an_announced_lock_a_live_git_transaction_holds_is_kept(tmp_path: Path) -> None:
    """Regression test: a gitdream killed between announcing `refs/heads/main.lock` and
    creating it, then a `git update-ref --stdin` transaction that takes the lock within
    the second and holds it prepared: the next gitdream command took it for the dead
    process's (created right after the announcement, unchanged for 2 s) and removed it,
    and git's commit failed ("couldn't set 'refs/heads/main'"). libgit2's lock stays empty
    until it commits; git's holds the new id: a lock with content is never removed."""
    root = agent_repo(tmp_path / "repo")
    write(root, "more.txt", "more\n")
    git(root, "add", "more.txt")
    git(root, "commit", "-q", "-m", "more")
    lock = root / ".git" / "refs" / "heads" / "main.lock"
    _record(root, [{"path": str(lock), "announced_ns": time.time_ns()}])
    previous = git(root, "rev-parse", "HEAD~1").strip()
    user = subprocess.Popen(
        ["git", "update-ref", "--stdin"], cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert user.stdin is not None and user.stdout is not None
    try:
        user.stdin.write(f"start\nupdate refs/heads/main {previous}\nprepare\n")
        user.stdin.flush()
        assert user.stdout.readline().strip() == "start: ok"
        assert user.stdout.readline().strip() == "prepare: ok"
        assert lock.exists()
        shown = run_gitdream(root, "status")
        assert shown.returncode == 0, shown.stderr
        assert f"removed {lock}" not in shown.stderr, shown.stderr
        assert lock.exists(), "git's live lock was removed"
        user.stdin.write("commit\n")
        user.stdin.close()
        assert user.wait(timeout=30) == 0, user.stdout.read()
    finally:
        if user.poll() is None:
            user.kill()
            user.wait()
    assert git(root, "rev-parse", "HEAD").strip() == previous


@pytest.mark.parametrize("where", ["HEAD.lock", "refs/heads/main.lock"])
def test_a_record_still_removes_the_dead_processs_own_lock(tmp_path: Path, where: str) -> None:
    """What the record is for keeps working: a recorded lock file of a dead process, the
    very file (inode and change time), empty as libgit2 leaves it, is removed."""
    root = agent_repo(tmp_path / "repo")
    lock = root / ".git" / where
    lock.write_text("")
    _record(root, [_named(lock)])
    shown = run_gitdream(root, "status")
    assert shown.returncode == 0, shown.stderr
    assert f"removed {lock}" in shown.stderr and not lock.exists()
