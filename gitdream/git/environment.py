"""Problems of the environment, not of gitdream: a full disk, a read-only file system, a
permission, an object a partial clone does not have.

They used to escape as "gitdream failed unexpectedly … this is a bug" (exit 3) or as a
hint to remove a lock file that did not exist (issue 16). `translate` turns the errors
they raise — OSError with its errno from Python, libgit2's messages through pygit2 — into
an `EnvironmentProblem` that says which problem it is and what to do, so the run of the
agent it concerns is refused with that message (exit 1) and nothing else stops.
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

import pygit2

from gitdream.errors import GitdreamError
from gitdream.git.repo import Repo


class EnvironmentProblem(GitdreamError):
    """The machine or the repository's storage refused what gitdream needed to do."""

    kind = "environment"


_BY_ERRNO = {
    errno.ENOSPC: "disk-full",
    errno.EDQUOT: "quota",
    errno.EROFS: "read-only",
    errno.EACCES: "permission",
    errno.EPERM: "permission",
}
_BY_TEXT = (
    ("No space left on device", "disk-full"),
    ("Disk quota exceeded", "quota"),
    ("Read-only file system", "read-only"),
    ("Permission denied", "permission"),
    ("Operation not permitted", "permission"),
)
_WHAT = {
    "disk-full": (
        "the disk is full (no space left on device)",
        "free some space on that disk, then run again",
    ),
    "quota": ("the disk quota is exceeded", "free some space within your quota, then run again"),
    "read-only": (
        "the file system is read-only",
        "dream in a writable clone, or remount it writable; reading commands (`status`, `log`) still work",
    ),
    "permission": (
        "permission denied",
        "check that you own the repository's files and folders (`ls -l`), then run again",
    ),
}


FETCH_MISSING = (
    "git rev-list --objects --all --missing=print | sed -n 's/^?//p' | git cat-file --batch-check >/dev/null"
)
"""The command that has git fetch every object a partial clone lacks, as it fetches one on
demand: from the promisor remote, through no filter. (`git fetch --refetch <remote>`
fetches again through the clone's configured filter, so it brings no missing blob, and
not the objects of refs it does not fetch, such as `refs/notes/gitdream`.)"""


def kind_of(exc: BaseException) -> str | None:
    """ "disk-full", "quota", "read-only" or "permission" when `exc` is one of those."""
    if isinstance(exc, OSError) and exc.errno in _BY_ERRNO:
        return _BY_ERRNO[exc.errno]
    text = str(exc)
    return next((kind for needle, kind in _BY_TEXT if needle in text), None)


def _missing_object(exc: BaseException) -> bool:
    text = str(exc)
    return type(exc).__name__ == "NotFoundError" or "object not found" in text or "odb: cannot read" in text


def _partial_clone(repo: Repo | None) -> str | None:
    """The promisor remote when the repository is a partial clone, else None."""
    if repo is None:
        return None
    remote = repo.config_value("extensions.partialClone")
    if remote:
        return remote
    for entry in repo.raw.config:
        if entry.name.startswith("remote.") and entry.name.endswith(".promisor") and entry.value == "true":
            return entry.name.split(".")[1]
    return None


def _libgit2_where(message: str) -> str:
    """` (in FOLDER)` for a libgit2 message quoting the file it failed on ("failed to make
    directory '/r/.git/refs/heads/x.lock': …"), else "". The folder, not the file: what
    libgit2 failed to create is often a lock file that never came to exist."""
    found = re.search(r"'(/[^']+)'", message)
    return f" (in {os.path.dirname(found.group(1))})" if found else ""


def translate(exc: BaseException, repo: Repo | None = None) -> EnvironmentProblem | None:
    """The EnvironmentProblem `exc` stands for, or None when it is not one (a bug)."""
    kind = kind_of(exc)
    if kind is not None:
        what, fix = _WHAT[kind]
        where = getattr(exc, "filename", None)
        detail = f" ({where})" if where else _libgit2_where(str(exc))
        return EnvironmentProblem(f"{what}{detail}; nothing was left half-written", hint=fix)
    if _missing_object(exc):
        remote = _partial_clone(repo)
        if remote is not None:
            return EnvironmentProblem(
                f"an object this dream needs is not in this partial clone ({exc}); libgit2, which "
                f"gitdream reads with, cannot fetch it from the promisor remote {remote}",
                hint=f"have git fetch what the clone lacks: `{FETCH_MISSING}` (one request to {remote} "
                "per object; for many, clone again without --filter), then run again",
            )
        return EnvironmentProblem(
            f"an object this dream needs is missing from the repository ({exc})",
            hint="check the repository with `git fsck`; fetch again what is missing, then run again",
        )
    return None


def repository_at(start: Path) -> Repo | None:
    """The repository containing `start`, opened to tell what an error met elsewhere means
    (`translate` needs it to recognise a partial clone), or None when it cannot be opened."""
    try:
        return Repo.open(start)
    except (GitdreamError, pygit2.GitError, OSError, ValueError):
        return None
