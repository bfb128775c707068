"""gitdream's own refs (`refs/gitdream/*`), moved only by compare-and-swap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitdream.errors import GitdreamError

if TYPE_CHECKING:
    from gitdream.git.repo import Repo


class RefMoved(GitdreamError):
    """A ref did not hold the value a compare-and-swap expected."""

    kind = "ref_moved"


def compare_and_swap(repo: Repo, ref: str, expected: str | None, new: str | None, message: str) -> None:
    """Set `ref` to `new` (hex; None deletes it) if it currently holds `expected` (None:
    absent), under a reference transaction (lock, re-read, compare, set).

    Raises RefMoved (nothing changed) when the ref holds something else, and the
    RepoStateError of `locks.held` when git left the ref's lock file behind.
    """
    import pygit2

    from gitdream.git import locks

    try:
        _swap(repo, ref, expected, new, message)
    except (pygit2.GitError, OSError) as exc:  # pygit2 raises either for a held lock
        refusal = locks.from_git_error(exc)
        if refusal is None:
            raise
        raise refusal from exc


def _swap(repo: Repo, ref: str, expected: str | None, new: str | None, message: str) -> None:
    import pygit2

    with repo.raw.transaction() as txn:
        txn.lock_ref(ref)
        current = repo.raw.references.get(ref)
        actual = str(current.target) if current is not None else None
        if actual != expected:
            raise RefMoved(
                f"{ref} changed while gitdream ran (expected {_short(expected)}, found {_short(actual)})",
                hint="another gitdream process on this repository moved it; run again",
            )
        if new is None:
            if current is not None:
                txn.remove(ref)
        else:
            txn.set_target(ref, pygit2.Oid(hex=new), message=message)


def _short(value: str | None) -> str:
    return value[:12] if value else "nothing"
