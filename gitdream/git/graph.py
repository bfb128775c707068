"""The commit graph: does an object exist, which commit a revision names, merge bases.

Small on purpose: the sessions gate of the idle path uses it (see `dream.material`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pygit2

if TYPE_CHECKING:
    from gitdream.git.repo import Repo


def has_object(repo: Repo, oid: str) -> bool:
    """True when the object database holds `oid` (of any type)."""
    return repo.raw.get(oid) is not None


def resolve_commit(repo: Repo, revision: str) -> str | None:
    """The commit id (hex) that `revision` (a commit, branch, tag, `HEAD~3` …) names, or
    None when it names none."""

    try:
        return str(repo.raw.revparse_single(revision).peel(pygit2.Commit).id)
    except (KeyError, ValueError, pygit2.GitError):
        return None


def merge_base(repo: Repo, one: str, other: str) -> str | None:
    """The best common ancestor of commits `one` and `other`, or None without one."""

    try:
        found = repo.raw.merge_base(one, other)
    except pygit2.GitError:
        return None
    return str(found) if found is not None else None
