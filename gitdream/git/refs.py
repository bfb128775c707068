"""gitdream's own refs (`refs/gitdream/*`), moved only by compare-and-swap."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import pygit2

from gitdream.errors import GitdreamError, RepoStateError

if TYPE_CHECKING:
    from gitdream.git.repo import Repo

T = TypeVar("T")
LOCK_TIMEOUT_SECONDS = 2.0
"""How long a ref move waits for a ref another git process holds locked (`<ref>.lock`:
a commit, checkout or `git gc` of the user's holds it for milliseconds) before refusing
as for a lock file git left behind (`gitdream.git.lockfiles`)."""


class RefMoved(GitdreamError):
    """A ref did not hold the value a compare-and-swap expected (`ref` names it)."""

    kind = "ref_moved"
    ref: str | None = None


class _Busy(Exception):
    def __init__(self, ref: str, error: BaseException) -> None:
        super().__init__(f"{ref}: {error}")
        self.ref = ref
        self.error = error


def lock(txn: Any, ref: str) -> None:
    """Lock `ref` in transaction `txn` (inside `transaction`'s body)."""

    try:
        txn.lock_ref(ref)
    except (pygit2.GitError, OSError) as exc:  # <ref>.lock exists (pygit2 raises either)
        raise _Busy(ref, exc) from exc


def transaction(repo: Repo, body: Callable[[Any], T]) -> T:
    """Run `body(txn)` in a reference transaction, committed when `body` returns. `body`
    locks its refs with `lock`; when one is held by another process the transaction is
    dropped (releasing the locks it took) and tried again, for up to LOCK_TIMEOUT_SECONDS;
    a lock that stays is refused as `lockfiles.held` does (a RepoStateError naming the file).
    An exception raised by `body` drops the transaction: nothing moves."""
    from gitdream.git import lockfiles  # idle path: only where it is used

    deadline = time.monotonic() + LOCK_TIMEOUT_SECONDS
    while True:
        try:
            with repo.raw.transaction() as txn:
                return body(txn)
        except _Busy as busy:
            from gitdream.git.environment import translate  # idle path: only where it is used

            problem = translate(busy.error)
            if problem is not None and not lockfiles.lock_path(repo, busy.ref).exists():
                # not a lock someone holds: the lock file could not even be created (a
                # read-only `.git/refs`, a full disk) — no lock to remove
                raise problem from busy.error
            if time.monotonic() > deadline:
                refusal = lockfiles.from_git_error(busy.error)
                raise refusal or lockfiles.held(lockfiles.lock_path(repo, busy.ref), busy.ref) from busy.error
            time.sleep(0.02)


def compare_and_swap(repo: Repo, ref: str, expected: str | None, new: str | None, message: str) -> None:
    """Set `ref` to `new` (hex; None deletes it) if it currently holds `expected` (None:
    absent), under a reference transaction (lock, re-read, compare, set).

    Raises RefMoved (nothing changed) when the ref holds something else, and the
    RepoStateError of `lockfiles.held` when the ref's lock file stays (git left it behind).
    """
    compare_and_swap_all(repo, [(ref, expected, new)], message)


def compare_and_swap_all(
    repo: Repo, moves: Sequence[tuple[str, str | None, str | None]], message: str
) -> None:
    """Move every `(ref, expected, new)` of `moves` as `compare_and_swap` does, all in one
    reference transaction: every ref is locked and compared before any is set, so either
    all move or none does (RefMoved, naming the first ref that held something else; the
    refusal of `lockfiles.held` when a ref's lock file stays)."""

    def body(txn: Any) -> None:
        for ref, expected, _new in moves:
            lock(txn, ref)
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

    transaction(repo, body)


def _short(value: str | None) -> str:
    return value[:12] if value else "nothing"


def target(repo: Repo, ref: str) -> str | None:
    """The commit id (hex) `ref` points at, or None when it does not exist. Raises the
    RepoStateError of `broken` when the ref cannot be read (a corrupt ref file)."""

    try:
        found = repo.raw.references.get(ref)
    except (pygit2.GitError, ValueError) as exc:
        raise broken(repo, ref, exc) from None
    return str(found.target) if found is not None else None


def broken(repo: Repo, ref: str, exc: BaseException) -> RepoStateError:
    """The refusal for a ref git cannot read (issue 16: one corrupt watermark stopped every
    agent): it names the ref, and the fix — git itself cannot delete a corrupt loose ref
    (`git update-ref -d` fails to read it), so the file is removed; what that costs is said
    for gitdream's own refs."""
    import shlex  # idle path: only where it is used

    from gitdream.git import notes  # idle path: only where it is used

    loose = repo.common_dir / ref
    fix = f"remove the file with `rm {shlex.quote(str(loose))}`" if loose.is_file() else "repair it"
    if ref.startswith("refs/gitdream/watermark/"):
        fix += (
            f", then fetch it again: `{notes.fetch_refs_command()}` (without it, "
            "`gitdream run --agent <id> --full` reads that agent's material again, recognising what was read)"
        )
    elif ref == "refs/notes/gitdream":
        fix += f", then fetch the receipts again: `{notes.fetch_command()}`"
    return RepoStateError(f"the ref {ref} is corrupt, so git cannot read it ({exc})", hint=fix)


def branch_reflog_mentions(repo: Repo, prefix: str) -> bool:
    """True when an entry of a branch's reflog (`refs/heads/*`) has a message starting
    with `prefix` (a branch without a reflog has none)."""
    for name in repo.raw.references:
        if not name.startswith("refs/heads/"):
            continue
        try:
            entries = repo.raw.references[name].log()
            if any((entry.message or "").startswith(prefix) for entry in entries):
                return True
        except (KeyError, ValueError, OSError):  # no reflog for this branch
            continue
    return False
