"""git's own lock files: `index.lock`, `HEAD.lock`, `refs/…/<name>.lock`.

git (and libgit2) take a lock by creating `<file>.lock` exclusively and renaming it over
the file when done. A git process killed at the wrong moment leaves the lock behind, and
every later writer refuses to take it again. gitdream never removes such a file: it cannot
tell a leftover lock from the live lock of a git command running right now. It waits a
moment (git holds a lock for milliseconds) and then refuses, naming the file and how to
check and remove it — before it writes anything, so nothing is half-applied.
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from gitdream.errors import RepoStateError

if TYPE_CHECKING:
    from gitdream.git.repo import Repo

WAIT_SECONDS = 0.2  # git waits 100 ms for a ref lock (core.filesRefLockTimeout)
INDEX = "index"
_PER_WORKTREE = ("HEAD", "refs/bisect/", "refs/worktree/", "refs/rewritten/")
_LIBGIT2_LOCK = re.compile(r"'([^']+\.lock)'")


def lock_path(repo: Repo, name: str) -> Path:
    """The lock file of `name`: "index" (this worktree's index), "HEAD", or a full ref name
    (loose refs live in the common dir, per-worktree refs in the worktree's git dir)."""
    if name == INDEX:
        return repo.git_dir / "index.lock"
    folder = repo.git_dir if name.startswith(_PER_WORKTREE) else repo.common_dir
    return folder / f"{name}.lock"


def held(path: Path, name: str | None = None) -> RepoStateError:
    """The refusal for a lock file that exists at `path` (the lock of `name`, see
    `lock_path`; default: guessed from the file name)."""
    name = name or path.name.removesuffix(".lock")
    what = "the index" if name == INDEX else name
    return RepoStateError(
        f"{path} exists: another git command is updating {what}, or one was killed and left "
        "its lock file behind; nothing was written",
        hint="if no git command is running in this repository (check with `ps -ef | grep git`), "
        f"remove the stale lock with `rm {shlex.quote(str(path))}`, then run again "
        "(gitdream never removes git's lock files itself)",
    )


def require_free(repo: Repo, names: Iterable[str], wait: float = WAIT_SECONDS) -> None:
    """Return once none of the lock files of `names` (see `lock_path`) exists; raise the
    RepoStateError of `held` when one still exists after `wait` seconds."""
    paths = {name: lock_path(repo, name) for name in names}
    deadline = time.monotonic() + wait
    while True:
        present = [(name, path) for name, path in paths.items() if path.exists()]
        if not present:
            return
        if time.monotonic() >= deadline:
            name, path = present[0]
            raise held(path, name)
        time.sleep(0.02)


def from_git_error(exc: BaseException) -> RepoStateError | None:
    """libgit2's "failed to lock file '<path>.lock' for writing" (a lock file that exists)
    as the refusal of `held`; None for any other error."""
    found = _LIBGIT2_LOCK.search(str(exc))
    if found is None or "lock" not in str(exc).split("'")[0]:
        return None
    path = Path(found.group(1))
    return held(path) if path.exists() else None
