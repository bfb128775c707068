"""gitdream's own refs (`refs/gitdream/*`), moved only by compare-and-swap."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gitdream.errors import GitdreamError

if TYPE_CHECKING:
    from gitdream.git.repo import Repo


class RefMoved(GitdreamError):
    """A ref did not hold the value a compare-and-swap expected (`ref` names it)."""

    kind = "ref_moved"
    ref: str | None = None


def compare_and_swap(repo: Repo, ref: str, expected: str | None, new: str | None, message: str) -> None:
    """Set `ref` to `new` (hex; None deletes it) if it currently holds `expected` (None:
    absent), under a reference transaction (lock, re-read, compare, set).

    Raises RefMoved (nothing changed) when the ref holds something else.
    """
    compare_and_swap_all(repo, [(ref, expected, new)], message)


def compare_and_swap_all(
    repo: Repo, moves: Sequence[tuple[str, str | None, str | None]], message: str
) -> None:
    """Move every `(ref, expected, new)` of `moves` as `compare_and_swap` does, all in one
    reference transaction: every ref is locked and compared before any is set, so either
    all move or none does (RefMoved, naming the first ref that held something else)."""
    import pygit2

    with repo.raw.transaction() as txn:
        for ref, expected, _new in moves:
            txn.lock_ref(ref)
            current = repo.raw.references.get(ref)
            actual = str(current.target) if current is not None else None
            if actual != expected:
                error = RefMoved(
                    f"{ref} changed while gitdream ran (expected {_short(expected)}, found {_short(actual)})",
                    hint="another gitdream process on this repository moved it; run again",
                )
                error.ref = ref
                raise error
        for ref, expected, new in moves:
            if new is None:
                if expected is not None:
                    txn.remove(ref)
            else:
                txn.set_target(ref, pygit2.Oid(hex=new), message=message)


def _short(value: str | None) -> str:
    return value[:12] if value else "nothing"
