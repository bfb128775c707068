"""gitdream's own refs (`refs/gitdream/*`), moved only by compare-and-swap."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import stat
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pygit2

from gitdream import faults, paths
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


class _Held:
    """The lock files this process's open reference transaction holds, recorded beside the
    state (`<git-common-dir>/gitdream/reflocks/<pid>`: the process, and each lock file's
    path, inode and change time) from the moment each is taken until the transaction ends.

    git cannot tell a lock file a killed process left from the live lock of a running
    command, and refuses to write until someone removes it; libgit2's lock files hold
    nothing that names their writer. The record lets the next gitdream command remove
    exactly the files a killed gitdream took (`drop_dead_locks`): the same file (inode and
    change time), of a process that is provably gone — never a lock a git command took
    since, even at the same path.

    Each lock is announced in the record before libgit2 creates it (its path and the time,
    `announced_ns`), and named by inode once it exists: a kill between the two (libgit2
    has created the file, the record does not name it yet) leaves an announced lock, which
    `drop_dead_locks` removes only when the file is empty (as libgit2's is until it
    commits; git writes the new id into its own), was created within ANNOUNCED_SECONDS of
    the announcement and has stayed unchanged for longer than any git command holds a ref
    lock (LOCK_TIMEOUT_SECONDS) — before, such a kill left a lock every later write refused
    (a random kill of the reliability suite hit it)."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self.locks: list[dict[str, object]] = []
        self.path = paths.state_dir(repo.common_dir) / REFLOCKS / str(os.getpid())

    def announce(self, ref: str) -> None:
        from gitdream.git import lockfiles  # idle path: only where it is used

        path = lockfiles.lock_path(self.repo, ref)
        self._save([*self.locks, {"path": str(path), "announced_ns": time.time_ns()}])

    def took(self, ref: str) -> None:
        from gitdream.git import lockfiles  # idle path: only where it is used

        path = lockfiles.lock_path(self.repo, ref)
        try:
            found = path.stat()
        except OSError:
            self._save(self.locks)  # no file to leave behind (a packed-refs-only backend, say)
            return
        self.locks.append({"path": str(path), "ino": found.st_ino, "ctime_ns": found.st_ctime_ns})
        self._save(self.locks)

    def failed(self) -> None:
        """The announced lock was not taken (held by another process): forget it."""
        self._save(self.locks)

    def _save(self, locks: list[dict[str, object]]) -> None:
        if not locks:
            self.path.unlink(missing_ok=True)
            return
        data = json.dumps({**_me(), "locks": locks}).encode()
        paths.state_folder(self.repo.common_dir, REFLOCKS)  # a real folder, never a link
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        fd = paths.open_state_file(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)  # no fsync: it guards against a kill, and locks die with power
        os.replace(tmp, self.path)

    def release(self) -> None:
        self.path.unlink(missing_ok=True)
        self.locks = []


ANNOUNCED_SECONDS = 1.0
"""An announced lock (see `_Held`) is the killed process's own only when its file was
created within this long after the announcement (libgit2 creates it microseconds after)."""


REFLOCKS = "reflocks"
_holding: _Held | None = None


@functools.cache
def _me() -> dict[str, object]:
    from gitdream import processes  # idle path: only where it is used

    return processes.identity()


def lock(txn: Any, ref: str) -> None:
    """Lock `ref` in transaction `txn` (inside `transaction`'s body)."""

    if _holding is not None:
        _holding.announce(ref)
    try:
        txn.lock_ref(ref)
    except (pygit2.GitError, OSError) as exc:  # <ref>.lock exists (pygit2 raises either)
        if _holding is not None:
            _holding.failed()
        raise _Busy(ref, exc) from exc
    faults.point("ref-lock-created")
    if _holding is not None:
        _holding.took(ref)


def transaction(repo: Repo, body: Callable[[Any], T], point: str | None = None) -> T:
    """Run `body(txn)` in a reference transaction, committed when `body` returns. `body`
    locks its refs with `lock`; when one is held by another process the transaction is
    dropped (releasing the locks it took) and tried again, for up to LOCK_TIMEOUT_SECONDS;
    a lock that stays is refused as `lockfiles.held` does (a RepoStateError naming the file).
    An exception raised by `body` drops the transaction: nothing moves. The lock files
    taken are recorded while held (see `_Held`); fault point `refs-locked` is crossed with
    every lock taken, right before the transaction commits, and then fault point `point`
    when one is named (`note-locked`: a receipt note's ref move)."""
    from gitdream.git import lockfiles  # idle path: only where it is used

    global _holding
    deadline = time.monotonic() + LOCK_TIMEOUT_SECONDS
    while True:
        held = _holding = _Held(repo)
        try:
            with repo.raw.transaction() as txn:
                result = body(txn)
                faults.point("refs-locked")
                if point is not None:
                    faults.point(point)
            return result
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
        finally:
            _holding = None
            held.release()


def drop_dead_locks(repo: Repo) -> list[str]:
    """Remove the ref lock files (`HEAD.lock`, `refs/…/<name>.lock`) that a gitdream process
    took and was killed holding, as its record (see `_Held`) names them: only files that
    are still the very files it created, of a process provably gone; then the record.
    Returns a warning per file removed. Records of live processes are left alone, and so
    is anything in the records' folder that is not a regular file. Raises the
    RepoStateError of `paths.linked_state` when that folder (or `gitdream/`) is a link."""
    from gitdream import processes  # idle path: only where it is used

    warnings: list[str] = []
    folder = paths.state_folder(repo.common_dir, REFLOCKS, create=False)  # never through a link
    try:
        records = [p for p in folder.iterdir() if p.name.isdigit()]
    except OSError:
        return warnings
    for record_path in records:
        try:
            if not stat.S_ISREG(record_path.lstat().st_mode):
                continue  # not a record gitdream wrote (a link, a folder): never followed
            record = json.loads(record_path.read_bytes())
        except (OSError, ValueError):
            continue  # a record being written right now, or damaged: leave the locks
        if not isinstance(record, dict) or not processes.gone(record):
            continue
        for entry in record.get("locks") or []:
            if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
                continue
            path = Path(entry["path"])
            if _a_ref_lock(repo, path) and _its_own(path, entry):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                warnings.append(
                    f"removed {path}, left by gitdream process {record.get('pid')} that was killed "
                    "while it moved a ref (nothing had moved)"
                )
        record_path.unlink(missing_ok=True)
    return warnings


def _a_ref_lock(repo: Repo, path: Path) -> bool:
    """True when `path`, as a record names it, is a ref lock file of this repository a
    gitdream transaction can take: a regular file (not a link) `HEAD.lock` or
    `refs/….lock` in the common dir or in a worktree's git dir (`worktrees/<name>/`),
    reached through no `..` and no symbolic link. A record is a file anyone who can write
    `.git` can forge: without this, one naming `../../README.md` (or any file of the
    user's, with its inode and change time) had the next gitdream command delete it."""
    if not path.is_absolute() or ".." in path.parts or path.suffix != ".lock":
        return False
    try:
        if not stat.S_ISREG(path.lstat().st_mode):
            return False
        real = Path(os.path.realpath(path))
        common = Path(os.path.realpath(repo.common_dir))
        if real != Path(os.path.realpath(path.parent)) / path.name:
            return False
        parts = real.relative_to(common).parts
    except (OSError, ValueError):
        return False
    if len(parts) >= 2 and parts[0] == "worktrees":
        parts = parts[2:]
    return parts == ("HEAD.lock",) or (len(parts) >= 2 and parts[0] == "refs")


_CLOCK_SLACK_NS = 50_000_000
"""File times come from the kernel's coarse clock, which can lag `time.time_ns()` by a
tick: an announced lock's file may seem created up to this long before its announcement."""


def _its_own(path: Path, entry: dict[str, Any]) -> bool:
    """True when the lock file at `path` is the one a dead process's record `entry` names:
    the very file (inode and change time), or — for a lock only announced (see `_Held`) — an
    empty file (as libgit2's lock is until it commits) created within ANNOUNCED_SECONDS of the announcement that stays unchanged until
    it is older than LOCK_TIMEOUT_SECONDS (waiting for that, at most that long: a git
    command that took the lock since would have released it)."""
    try:
        found = path.stat()
    except OSError:
        return False
    if "announced_ns" not in entry:
        return (found.st_ino, found.st_ctime_ns) == (entry.get("ino"), entry.get("ctime_ns"))
    announced = entry.get("announced_ns")
    if not isinstance(announced, int):
        return False
    if found.st_size:
        # libgit2 leaves its lock file empty until the transaction commits; git writes
        # the new id into its lock as soon as it takes it (a `git update-ref --stdin`
        # transaction prepared and held): a lock with content is never an announced one
        return False
    created = found.st_ctime_ns
    if not announced - _CLOCK_SLACK_NS <= created <= announced + int(ANNOUNCED_SECONDS * 1e9):
        return False
    age = (time.time_ns() - created) / 1e9
    if age < LOCK_TIMEOUT_SECONDS:
        time.sleep(LOCK_TIMEOUT_SECONDS - age)
    try:
        again = path.stat()
    except OSError:
        return False
    return (again.st_ino, again.st_ctime_ns) == (found.st_ino, found.st_ctime_ns)


def compare_and_swap(
    repo: Repo, ref: str, expected: str | None, new: str | None, message: str, point: str | None = None
) -> None:
    """Set `ref` to `new` (hex; None deletes it) if it currently holds `expected` (None:
    absent), under a reference transaction (lock, re-read, compare, set; fault point
    `point` crossed with the lock held, see `transaction`).

    Raises RefMoved (nothing changed) when the ref holds something else, and the
    RepoStateError of `lockfiles.held` when the ref's lock file stays (git left it behind).
    """
    compare_and_swap_all(repo, [(ref, expected, new)], message, point)


def compare_and_swap_all(
    repo: Repo, moves: Sequence[tuple[str, str | None, str | None]], message: str, point: str | None = None
) -> None:
    """Move every `(ref, expected, new)` of `moves` as `compare_and_swap` does, all in one
    reference transaction: every ref is locked and compared before any is set, so either
    all move or none does (RefMoved, naming the first ref that held something else; the
    refusal of `lockfiles.held` when a ref's lock file stays)."""

    def body(txn: Any) -> None:
        for ref, expected, _new in moves:
            lock(txn, ref)
            current = repo.raw.references.get(ref)
            if current is not None and current.type != pygit2.enums.ReferenceType.DIRECT:
                raise symbolic(repo, ref, str(current.target))  # never moved through
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

    transaction(repo, body, point)


def _short(value: str | None) -> str:
    return value[:12] if value else "nothing"


def target(repo: Repo, ref: str) -> str | None:
    """The commit id (hex) `ref` points at, or None when it does not exist. Raises the
    RepoStateError of `broken` when the ref cannot be read (a corrupt ref file)."""

    try:
        found = repo.raw.references.get(ref)
    except (pygit2.GitError, ValueError) as exc:
        raise broken(repo, ref, exc) from None
    if found is None:
        return None
    if found.type != pygit2.enums.ReferenceType.DIRECT:
        raise symbolic(repo, ref, str(found.target))
    return str(found.target)


def commit_target(repo: Repo, ref: str) -> str | None:
    """`target(repo, ref)`, for a ref that must name a commit (a watermark, the receipts'
    notes ref): also raises a RepoStateError naming the ref, what it names and the fix when
    the object is there but is no commit (a blob, a tree, a tag: a fetched ref is anyone's,
    and one naming a blob crashed `run` and `status`, issue 16). An id whose object is not
    in this repository (a shallow or partial clone) is returned: the caller says so."""
    oid = target(repo, ref)
    if oid is None:
        return None
    try:
        kind, _size = repo.raw.odb.read_header(oid)
    except (KeyError, ValueError, pygit2.GitError):
        return oid  # not here: the caller names it (fetch, unshallow)
    if kind != pygit2.enums.ObjectType.COMMIT:
        import shlex  # idle path: only where it is used

        name = pygit2.enums.ObjectType(kind).name.lower()
        raise RepoStateError(
            f"the ref {ref} names a {name} ({oid[:12]}), not a commit, so gitdream cannot read it",
            hint=f"delete it with `git update-ref -d {shlex.quote(ref)}`" + _refetch(ref),
        )
    return oid


def symbolic(repo: Repo, ref: str, points_at: str) -> RepoStateError:
    """The refusal for one of gitdream's refs that is a symbolic ref (`git symbolic-ref
    refs/gitdream/watermark/ops refs/heads/main`): gitdream's refs each name a commit, and
    one that names another ref is never read as that ref nor moved through it (issue 16: a
    symbolic watermark crashed the run, exit 3). It names the ref, where it points, and the
    fix — delete the symbolic ref itself (`--no-deref`), never what it points at."""
    import shlex  # idle path: only where it is used

    fix = f"delete it (not {points_at}) with `git update-ref --no-deref -d {shlex.quote(ref)}`"
    return RepoStateError(
        f"the ref {ref} is a symbolic ref (to {points_at}), but gitdream's refs each name a commit",
        hint=fix + _refetch(ref),
    )


def broken(repo: Repo, ref: str, exc: BaseException) -> RepoStateError:
    """The refusal for a ref git cannot read (issue 16: one corrupt watermark stopped every
    agent): it names the ref, and the fix — git itself cannot delete a corrupt loose ref
    (`git update-ref -d` fails to read it), so the file is removed; what that costs is said
    for gitdream's own refs."""
    import shlex  # idle path: only where it is used

    loose = repo.common_dir / ref
    fix = f"remove the file with `rm {shlex.quote(str(loose))}`" if loose.is_file() else "repair it"
    return RepoStateError(
        f"the ref {ref} is corrupt, so git cannot read it ({exc})", hint=fix + _refetch(ref)
    )


def _refetch(ref: str) -> str:
    """How to get one of gitdream's refs back once a broken one is removed ("" for another ref)."""
    from gitdream.git import notes  # idle path: only where it is used

    if ref.startswith("refs/gitdream/watermark/"):
        return (
            f", then fetch it again: `{notes.fetch_refs_command()}` (without it, "
            "`gitdream run --agent <id> --full` reads that agent's material again, recognising what was read)"
        )
    if ref == "refs/notes/gitdream":
        return f", then fetch the receipts again: `{notes.fetch_command()}`"
    return ""


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
