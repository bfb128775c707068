"""The commit builder: the one way gitdream writes to a repository (DESIGN §6).

A commit is built from HEAD's tree plus the dream's own blobs, never from the user's
index, and lands the way git's own commands land one: under `index.lock`.

1. gate: every path passes the write gate (`writegate.require`);
2. blobs, as `git add` would store them (`convert.to_repository`), then the tree, changing
   only the tree levels along the dream's paths (cost grows with depth, not repository
   size), then the commit object (signed when `commit.gpgsign` is on), with no ref moved;
3. lock: `index.lock` is taken as git takes it (`indexlock`): from here on no `git
   commit`, `git add`, `git checkout` or `git stash` can write the index — they fail as
   they fail against each other — until step 7;
4. re-check: every path is still what the gate saw (working-tree bytes reached through no
   link, index entry and its flags, read under the lock);
5. stage and journal: the new index (the current one with the dream's entries) goes into
   the lock, and `<git-common-dir>/gitdream/journal/<worktree>.json` records the intent,
   the writer and the staged index's SHA-256;
6. compare-and-swap: under a reference transaction that locks HEAD and the branch, the
   branch moves only if it still points at the commit the dream built on. If it moved
   and none of the dream's paths changed there, the commit is rebuilt on the new tip;
   otherwise HeadMoved is raised, the lock removed, nothing changed;
7. working tree, then index: each path's file is re-checked and atomically replaced
   through no symbolic link (`worktree`), then the lock is renamed over the index;
8. the journal is removed.

A crash or kill anywhere leaves something `repair()` — run by the next gitdream command,
whichever it is — completes or undoes: before 6, the lock is removed and nothing else
changed; after 6, the working tree is finished (paths still at their pre-dream bytes
only) and the staged index installed. Meanwhile the lock keeps git from recording the old
index over the dream. If the working tree cannot be written after 6 (disk full, read-only
file system), the commit stands, with a warning, and the lock and journal stay for the
next command.

A lock file git left behind (`HEAD.lock`, the branch's `.lock`) refuses the commit before
anything is written (`gitdream.git.lockfiles`); `index.lock` is waited for briefly, then
refused too. gitdream removes only the index.lock it can prove is its own.

In review-branch mode (`Destination.review`) only steps 1-2 run: the commit is built on the
commit it continues, and no ref moves. The caller chains a run's review commits and then
`publish()`es the branch once, with its other refs (the watermark) in the same reference
transaction, so a review branch appears whole or not at all — a process killed midway
leaves only unreachable objects, and the same command can simply run again. The current
branch, the index and the working tree are never touched.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pygit2

from gitdream import clock, faults, paths, processes
from gitdream.config import Config
from gitdream.errors import GitdreamError, HeadMoved, RepoStateError, UsageError, WriteRefused
from gitdream.git import (
    convert,
    indexfile,
    indexlock,
    indexmodel,
    lockfiles,
    refs,
    signing,
    worktree,
    writegate,
)
from gitdream.git.refs import RefMoved, compare_and_swap_all
from gitdream.git.repo import write_object

if TYPE_CHECKING:
    import pygit2

    from gitdream.agents import Agent
    from gitdream.git.repo import Repo

REGULAR = 0o100644
_ZERO = "0" * 40
MAX_REBUILDS = 5


@dataclass(frozen=True)
class Change:
    """New content for one path, in repository form; `data=None` deletes the path."""

    path: str
    data: bytes | None


@dataclass(frozen=True)
class Identity:
    """Author and committer as (name, email)."""

    author: tuple[str, str]
    committer: tuple[str, str]


@dataclass(frozen=True)
class Destination:
    """Where a commit goes.

    `Destination.head()`: onto the checked-out branch, then sync index and working tree.
    `Destination.head(base)`: the same, for changes computed from commit `base`: when the
    branch has moved past it, the commit is rebuilt on the new tip only if none of the
    changed paths differ between `base` and that tip (else HeadMoved, nothing changed).
    `Destination.review(name, start, create)`: a commit for review branch `name`, built on
    commit `start` (default: the branch's tip); `create` refuses when the branch exists
    already. No ref moves (see `publish`); nothing else is touched.
    """

    review_branch: str | None = None
    create: bool = False
    start: str | None = None

    @classmethod
    def head(cls, base: str | None = None) -> Destination:
        return cls(start=base)

    @classmethod
    def review(cls, name: str, start: str | None, create: bool) -> Destination:
        return cls(name, create, start)


@dataclass(frozen=True)
class CommitResult:
    """What `commit()` did: the new commit, its parent, the ref it moved, whether it was
    rebuilt on a moved branch, and warnings (paths the user changed mid-sync)."""

    oid: str
    parent: str | None
    ref: str
    rebuilt: bool
    paths: tuple[str, ...]
    warnings: tuple[str, ...] = ()


@dataclass
class _Prepared:
    blobs: dict[str, convert.Converted | None]  # None: delete
    modes: dict[str, int]


def identity(repo: Repo, cfg: Config) -> Identity:
    """The dream's identity: author from config `author_name`/`author_email` (default
    "gitdream <gitdream@gitdream.invalid>"); committer as `git commit` finds it —
    GIT_COMMITTER_NAME/EMAIL, else `committer.name`/`committer.email`, else
    `user.name`/`user.email` (read as git reads them: `gitdream.git.gitconfig`), else the
    EMAIL variable for the address — else the author. Dates always come from
    `clock.now()` (GIT_*_DATE are not read). Raises ConfigError when git cannot read its
    configuration."""
    author = (cfg.str("author_name"), cfg.str("author_email"))
    config = repo.git_config()
    name = os.environ.get("GIT_COMMITTER_NAME") or config.get("committer.name") or config.get("user.name")
    email = (
        os.environ.get("GIT_COMMITTER_EMAIL")
        or config.get("committer.email")
        or config.get("user.email")
        or os.environ.get("EMAIL")
    )
    committer = (name, email) if name and email else author
    return Identity(author, committer)


def format_message(subject: str, body: str, trailers: Sequence[tuple[str, str]]) -> str:
    """A commit message: subject, blank line, body (if any), blank line, trailers."""
    parts = [subject.strip()]
    if body.strip():
        parts.append(body.strip())
    if trailers:
        parts.append("\n".join(f"{k}: {v}" for k, v in trailers))
    return "\n\n".join(parts) + "\n"


# --- objects not reachable yet -----------------------------------------------------------

# Objects this process wrote that no ref reaches yet, per object directory: `{oid: (type,
# raw bytes)}`. Until a ref reaches them, `git gc --prune=now` (or `git prune`) running
# meanwhile may delete them; `_restore` writes back any that went missing, right before
# and right after a ref starts pointing at them, so a ref never stays on a pruned object.
_UNREACHABLE: dict[str, dict[str, tuple[int, bytes]]] = {}


def _objects_dir(repo: Repo) -> str:
    return os.environ.get("GIT_OBJECT_DIRECTORY") or str(repo.common_dir / "objects")


def _remember(repo: Repo, oid: str) -> None:
    kind, data = repo.raw.odb.read(oid)[:2]
    _UNREACHABLE.setdefault(_objects_dir(repo), {})[oid] = (int(kind), bytes(data))


def _restore(repo: Repo) -> None:
    """Write back every remembered object that is no longer in the object database (a
    fresh handle: libgit2's object cache would still answer for a pruned object)."""

    kept = _UNREACHABLE.get(_objects_dir(repo))
    if not kept:
        return
    on_disk = pygit2.Odb(_objects_dir(repo))
    for oid, (kind, data) in kept.items():
        if not on_disk.exists(oid):
            write_object(partial(repo.raw.odb.write, kind, data))


def _reachable(repo: Repo) -> None:
    """A ref reaches the remembered objects now: make sure they exist, then forget them."""
    _restore(repo)
    _UNREACHABLE.pop(_objects_dir(repo), None)


# --- tree building ---------------------------------------------------------------------


def _build_tree(repo: Repo, base_tree: pygit2.Tree | None, items: dict[str, tuple[str | None, int]]) -> str:
    """Write a tree: `base_tree` with `items` `{relative path: (blob oid | None, mode)}`
    applied. Only the subtrees along the changed paths are rewritten."""

    raw = repo.raw
    builder = raw.TreeBuilder(base_tree) if base_tree is not None else raw.TreeBuilder()
    here: dict[str, tuple[str | None, int]] = {}
    below: dict[str, dict[str, tuple[str | None, int]]] = {}
    for path, value in items.items():
        head, sep, rest = path.partition("/")
        if sep:
            below.setdefault(head, {})[rest] = value
        else:
            here[head] = value
    for name, (oid, mode) in here.items():
        if oid is None:
            if builder.get(name) is not None:
                builder.remove(name)
        else:
            builder.insert(name, pygit2.Oid(hex=oid), mode)
    for name, sub_items in below.items():
        existing = base_tree[name] if base_tree is not None and name in base_tree else None
        sub_base = existing if isinstance(existing, pygit2.Tree) else None
        sub_oid = _build_tree(repo, sub_base, sub_items)
        if len(raw[sub_oid].peel(pygit2.Tree)) == 0:  # git stores no empty trees
            if builder.get(name) is not None:
                builder.remove(name)
        else:
            builder.insert(name, pygit2.Oid(hex=sub_oid), 0o040000)
    oid = str(write_object(builder.write))
    _remember(repo, oid)
    return oid


def _prepare(repo: Repo, changes: Sequence[Change], verdicts: dict[str, writegate.Verdict]) -> _Prepared:
    blobs: dict[str, convert.Converted | None] = {}
    modes: dict[str, int] = {}
    for change in changes:
        seen = verdicts[change.path].seen
        modes[change.path] = seen.head_mode if seen and seen.head_mode else REGULAR
        if change.data is None:
            blobs[change.path] = None
        else:
            blobs[change.path] = convert.to_repository(repo, change.path, change.data)
            _remember(repo, blobs[change.path].oid)  # type: ignore[union-attr]
    return _Prepared(blobs, modes)


def _tree_for(repo: Repo, base: str | None, prepared: _Prepared) -> str:

    base_tree = repo.raw[base].peel(pygit2.Tree) if base else None
    items = {
        path: ((blob.oid if blob is not None else None), prepared.modes[path])
        for path, blob in prepared.blobs.items()
    }
    return _build_tree(repo, base_tree, items)


def _create_commit(repo: Repo, ident: Identity, message: str, tree: str, parent: str | None) -> str:

    when, offset = clock.git_time()
    author = pygit2.Signature(ident.author[0], ident.author[1], when, offset)
    committer = pygit2.Signature(ident.committer[0], ident.committer[1], when, offset)
    parents: list[str | pygit2.Oid] = [pygit2.Oid(hex=parent)] if parent else []
    tree_oid = pygit2.Oid(hex=tree)
    if signing.signing_enabled(repo):
        payload = str(repo.raw.create_commit_string(author, committer, message, tree_oid, parents))
        signature = signing.sign(repo, payload, f"{ident.committer[0]} <{ident.committer[1]}>")
        oid = str(write_object(lambda: repo.raw.create_commit_with_signature(payload, signature)))
    else:
        oid = str(
            write_object(lambda: repo.raw.create_commit(None, author, committer, message, tree_oid, parents))
        )
    _remember(repo, oid)
    return oid


# --- journal ---------------------------------------------------------------------------


@dataclass
class Journal:
    """The record that lets `repair()` finish a commit a crash interrupted: the branch, the
    commit it was built on and the new one, each path's before and after (`paths`), the
    process that wrote it (`writer`, `processes.identity()`), the token of its index.lock
    marker and the SHA-256 of the index it staged into that lock (`indexlock`)."""

    git_dir: str
    ref: str
    base: str | None
    new: str
    paths: dict[str, dict[str, Any]] = field(default_factory=dict)
    writer: dict[str, Any] = field(default_factory=dict)
    lock_token: str | None = None
    index_sha256: str | None = None


def journal_path(repo: Repo) -> Path:
    """This worktree's journal file under `<git-common-dir>/gitdream/journal/`. Raises the
    RepoStateError of `paths.linked_state` when that folder is a symbolic link."""
    key = hashlib.sha1(str(repo.git_dir).encode()).hexdigest()[:16]
    return paths.state_folder(repo.common_dir, "journal", create=False) / f"{key}.json"  # refuses a link


def _write_journal(repo: Repo, journal: Journal) -> None:
    path = journal_path(repo)
    paths.state_folder(repo.common_dir, path.parent.name)  # a real folder, never a link
    paths.atomic_write(path, json.dumps(asdict(journal), indent=1).encode())


def _drop_journal(repo: Repo) -> None:
    try:
        journal_path(repo).unlink()
    except FileNotFoundError:
        pass


def _read_journal(repo: Repo) -> Journal | str | None:
    """The journal, None when there is none, or a warning when it was unreadable (and is
    dropped)."""
    path = journal_path(repo)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Journal(**data)
    except FileNotFoundError:
        return None
    except (ValueError, TypeError):
        _drop_journal(repo)
        return f"dropped an unreadable commit journal at {path}"


# --- working tree and index -------------------------------------------------------------


def atomic_write(path: Path, data: bytes, mode: int = 0o666) -> None:
    """Write `data` to `path` through a temporary file in the same folder, fsync and
    `os.replace`, so readers see the old bytes or the new, never a mix (for gitdream's own
    files; working-tree files go through `gitdream.git.worktree`)."""
    paths.atomic_write(path, data, mode)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _index_records(journal: Journal, only: Sequence[str] | None = None) -> list[bytes]:
    """`git update-index -z --index-info` records that give the journal's paths (or
    `only` those) their new entries: `mode sha\tpath`, mode 0 to remove one."""
    records = []
    for path, info in journal.paths.items():
        if only is not None and path not in only:
            continue
        entry = f"0 {_ZERO}" if info["new_oid"] is None else f"{info['mode']:o} {info['new_oid']}"
        records.append(entry.encode("ascii") + b"\t" + os.fsencode(path))
    return records


_CHANGED = (
    "{} was changed in the working tree while the dream ran; your bytes were kept, and they "
    "differ from the dream's commit"
)


def _write_worktree(repo: Repo, journal: Journal, only: Sequence[str] | None = None) -> list[str]:
    """Bring each journaled path (or `only` those) that still has its pre-dream bytes in
    the working tree to the dream's version, through no symbolic link
    (`gitdream.git.worktree`), each re-checked right before its atomic replace. Returns
    warnings for paths left alone: changed by the user, or reached through a link now.
    Raises OSError when the file system refuses (disk full, read-only)."""
    warnings: list[str] = []
    first = True
    for path, info in journal.paths.items():
        if only is not None and path not in only:
            continue
        if not first:
            faults.point("mid-worktree-update")
        first = False
        current = worktree.sha256(repo.workdir, path)
        if current == info["new_worktree_sha256"]:
            continue
        if current == worktree.SYMLINK:
            warnings.append(_link_warning(path))
            continue
        if current != info["old_worktree_sha256"]:
            warnings.append(_CHANGED.format(path))
            continue
        try:
            if info["new_oid"] is None:
                done = worktree.remove(repo.workdir, path, expect=info["old_worktree_sha256"])
            else:
                data = convert.to_worktree(repo, path, info["new_oid"])
                mode = 0o777 if info["mode"] == 0o100755 else 0o666
                done = worktree.write(repo.workdir, path, data, mode, expect=info["old_worktree_sha256"])
        except worktree.LinkInPath:
            warnings.append(_link_warning(path))
            continue
        if not done:
            warnings.append(_CHANGED.format(path))
    return warnings


def _link_warning(path: str) -> str:
    return (
        f"{path} is reached through a symbolic link now (made while the dream ran); gitdream writes "
        "nothing through links, so the working tree does not have the dream's version of it"
    )


def _not_at_head(repo: Repo, journal: Journal) -> list[str]:
    """The journal's paths whose version in HEAD's tree is not the dream's."""

    head = repo.head()
    tree = repo.raw[head.oid].peel(pygit2.Tree) if head.oid else None
    out = []
    for path, info in journal.paths.items():
        entry = tree[path] if tree is not None and path in tree else None
        at_head = (str(entry.id), int(entry.filemode)) if entry is not None else None
        if at_head != ((info["new_oid"], info["mode"]) if info["new_oid"] else None):
            out.append(path)
    return out


def _lock_state(repo: Repo, journal: Journal) -> str:
    """What index.lock is for this journal: "staged" (the index it staged, to install),
    "marker" (its lock, nothing staged yet), "absent", or "foreign" (another process's)."""
    path = lockfiles.lock_path(repo, lockfiles.INDEX)
    found = indexlock.owner(path)
    if found is not None:
        return "marker" if found.get("token") == journal.lock_token else "foreign"
    digest = indexlock.sha256_file(path)
    if digest is None:
        return "absent"
    return "staged" if digest == journal.index_sha256 else "foreign"


def repair(repo: Repo) -> list[str]:
    """Finish a commit that a crash interrupted (see the module docstring); the next
    gitdream command calls it, whichever it is.

    - the ref lock files (`HEAD.lock`, `refs/heads/<branch>.lock`) a killed gitdream
      held are removed (`refs.drop_dead_locks`);
    - an index.lock a killed gitdream left before it wrote anything is removed;
    - a journal whose branch never got the commit (or is no longer checked out, or no
      longer contains it) is dropped, and its index.lock removed;
    - otherwise the working tree is brought to the dream's commit (paths still at their
      pre-dream bytes only) and the index it staged is installed; if that index.lock was
      removed meanwhile, the index entries still at their pre-dream state are updated
      under a fresh lock, and anything the user changed is left alone, with a warning;
      where a commit of the old index undid the dream meanwhile, the files that still hold
      exactly the dream's bytes are put back to HEAD's version (`_give_back`).

    Returns warnings (empty when there was nothing to do). Never runs inside a git hook
    (an inherited GIT_INDEX_FILE), and never touches what a live gitdream process is
    writing. Raises the RepoStateError of `lockfiles.held` when another git command holds
    index.lock, OSError when the file system refuses.
    """
    if repo.inherited_index is not None:
        return []
    return [*refs.drop_dead_locks(repo), *_repair_commit(repo)]


def _repair_commit(repo: Repo) -> list[str]:
    """`repair`'s part for the index and working tree (see there)."""
    journal = _read_journal(repo)
    if isinstance(journal, str):
        return [journal]
    if journal is None:
        return _drop_dead_lock(repo)
    if journal.writer and not processes.is_me(journal.writer) and not processes.gone(journal.writer):
        return []  # a gitdream process is writing this commit right now
    lock_file = lockfiles.lock_path(repo, lockfiles.INDEX)
    state = _lock_state(repo, journal)
    _remove_leftovers(repo, journal)
    if state == "foreign":
        _drop_dead_lock(repo)  # the temporary files of killed writers, at least
    head = repo.head()
    ref = repo.raw.references.get(journal.ref)
    target = str(ref.target) if ref is not None else None
    holds = target is not None and (target == journal.new or repo.raw.descendant_of(target, journal.new))
    if not holds or head.branch != journal.ref:
        if state in ("staged", "marker"):
            lock_file.unlink()
        _drop_journal(repo)
        if target is not None and target != journal.base and not holds:
            return [f"dropped the journal of commit {journal.new[:12]}: {journal.ref} no longer contains it"]
        return []
    if state == "staged":
        warnings = _write_worktree(repo, journal)
        os.replace(lock_file, repo.index_path())
    else:
        if state == "marker":  # defensive: the lock is staged before the branch moves
            lock_file.unlink()
        warnings = _finish_without_lock(repo, journal)
    _drop_journal(repo)
    return [f"finished updating the working tree and index for dream commit {journal.new[:12]}", *warnings]


def _finish_without_lock(repo: Repo, journal: Journal) -> list[str]:
    """The index.lock of an interrupted commit was removed (by hand, as git's message
    suggests): under a fresh lock, bring over only what is still at its pre-dream state,
    and only where HEAD still has the dream's version; where it no longer has (a commit of
    the old index undid the dream), put back HEAD's version of the files that still hold
    exactly the dream's bytes (`_give_back`)."""
    lock = indexlock.IndexLock.acquire(repo)
    try:
        stale = _not_at_head(repo, journal)
        warnings = _give_back(repo, journal, stale)
        keep = [p for p in journal.paths if p not in stale]
        warnings += _write_worktree(repo, journal, keep)
        found = indexfile.entries(repo, keep)
        update = []
        for path in keep:
            info = journal.paths[path]
            entry = found.get(path, [])
            current: tuple[str, int] | str | None = None
            if entry:
                current = (
                    (entry[0].oid, entry[0].mode) if len(entry) == 1 and entry[0].stage == 0 else "other"
                )
            old = (info["old_oid"], info["old_mode"]) if info["old_oid"] else None
            new = (info["new_oid"], info["mode"]) if info["new_oid"] else None
            if current == old and current != new:
                update.append(path)
            elif current != new:
                warnings.append(
                    f"{path} was staged after gitdream was interrupted; your index entry was kept"
                )
        lock.stage(_index_records(journal, update))
        lock.put()
        lock.commit()
    except BaseException:
        lock.release()
        raise
    return warnings


_FILE_MODES = (0o100644, 0o100755)


def _give_back(repo: Repo, journal: Journal, stale: list[str]) -> list[str]:
    """The journal's paths whose dream version HEAD no longer has (`stale`: a commit of
    the old index, made after the lock was removed by hand, undid them): where the working
    tree still holds exactly the bytes the dream wrote there (absent, for a path it
    removed) and the index agrees with HEAD, those bytes are gitdream's own — kept in the
    dream's commit, which HEAD contains — and the file is put back to HEAD's version, so
    the user is not left with gitdream's files to commit by hand (issue 16, case 6). Any
    other file (changed by the user, or staged) is left alone. Returns warnings."""
    head = repo.head()
    head_tree = repo.raw[head.oid].peel(pygit2.Tree) if head.oid else None
    found = indexfile.entries(repo, stale)
    given_back: list[str] = []
    left: list[str] = []
    for path in stale:
        info = journal.paths[path]
        entry = head_tree[path] if head_tree is not None and path in head_tree else None
        at_head = (str(entry.id), int(entry.filemode)) if entry is not None else None
        listed = found.get(path, [])
        staged = (listed[0].oid, listed[0].mode) if len(listed) == 1 and listed[0].stage == 0 else None
        hidden = any(e.skip_worktree or e.assume_unchanged for e in listed)
        if (
            (listed and staged is None)
            or staged != at_head
            or hidden
            or (at_head and at_head[1] not in _FILE_MODES)
        ):
            left.append(path)
            continue
        try:
            if worktree.sha256(repo.workdir, path) != info["new_worktree_sha256"]:
                done = False
            elif at_head is None:
                done = worktree.remove(repo.workdir, path, expect=info["new_worktree_sha256"])
            else:
                data = convert.to_worktree(repo, path, at_head[0])
                mode = 0o777 if at_head[1] == 0o100755 else 0o666
                done = worktree.write(repo.workdir, path, data, mode, expect=info["new_worktree_sha256"])
        except worktree.LinkInPath:
            done = False
        (given_back if done else left).append(path)
    warnings = []
    if given_back:
        warnings.append(
            f"HEAD no longer has the dream's version of {', '.join(given_back)} (a commit or checkout made "
            f"after gitdream was interrupted and its index.lock removed): as the working tree still "
            f"held exactly the dream's bytes there, gitdream put HEAD's version back; the dream's version "
            f"stays in commit {journal.new[:12]}"
        )
    if left:
        warnings.append(
            f"HEAD no longer has the dream's version of {', '.join(left)} (a commit or checkout made "
            f"after gitdream was interrupted); your working tree and index were left as they are there"
        )
    return warnings


def _drop_dead_lock(repo: Repo) -> list[str]:
    """Without a journal: remove an index.lock whose marker names a gitdream process that
    is gone (killed after taking the lock, before it wrote anything else), and the
    temporary files of the index such processes left in the git dir."""
    for leftover in repo.git_dir.glob("index*.gitdream-*.tmp"):
        pid = leftover.name.rsplit("gitdream-", 1)[-1].removesuffix(".tmp")
        if pid.isdigit() and int(pid) != os.getpid() and processes.process_start(int(pid)) is None:
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()
    lock_file = lockfiles.lock_path(repo, lockfiles.INDEX)
    found = indexlock.owner(lock_file)
    if found is None or not processes.gone(found):
        return []
    lock_file.unlink()
    return [
        f"removed {lock_file}, left by gitdream process {found.get('pid')} that was killed before it changed anything"
    ]


def _remove_leftovers(repo: Repo, journal: Journal) -> None:
    """Remove what a killed writer left beside the journaled paths (`.<name>.gitdream-<pid>.tmp`)
    and its staging copy of the index; the real files were never touched."""
    pid = journal.writer.get("pid") if journal.writer else None
    alive = {os.getpid()}
    for path in journal.paths:
        worktree.remove_temp_files(repo.workdir, path, alive)
    if isinstance(pid, int) and pid != os.getpid():
        with contextlib.suppress(FileNotFoundError):
            indexlock.staging_path(repo, pid).unlink()


# --- the whole commit ----------------------------------------------------------------


def _recheck(
    repo: Repo, verdicts: dict[str, writegate.Verdict], seen_index: tuple[object, ...] | None
) -> None:
    """Right before the branch moves, with index.lock held: every path must still be what
    the gate saw — its working-tree bytes reached through no link, its index entry (read
    by git: flags included) — or WriteRefused, nothing written. When the index is still
    the very file the gate read (`seen_index`, see `indexmodel.identity`), its entries are
    what the gate allowed and are not read again: the re-check then costs what the dream's
    paths cost, not what the index does."""
    if seen_index is not None and indexmodel.identity(repo) == seen_index:
        found = _as_gated(verdicts)
    else:
        found = indexfile.entries(repo, list(verdicts))
    changed = []
    for path, verdict in verdicts.items():
        seen = verdict.seen
        assert seen is not None
        current = worktree.sha256(repo.workdir, path)
        entry = found.get(path, [])
        if seen.status == "absent":
            ok = current is None and not entry
        else:
            ok = (
                current == seen.worktree_sha256
                and len(entry) == 1
                and (entry[0].oid, entry[0].mode, entry[0].stage) == (seen.head_oid, seen.head_mode, 0)
                and not (entry[0].assume_unchanged or entry[0].skip_worktree)
            )
        if not ok:
            changed.append(path)
    if changed:
        raise WriteRefused(
            "refusing to commit: " + ", ".join(changed) + " changed while the dream ran",
            hint="nothing was written; commit or stash your change, then run again",
            paths=changed,
        )


def _as_gated(verdicts: dict[str, writegate.Verdict]) -> dict[str, list[indexfile.Entry]]:
    """The index entries the write gate allowed: stage 0 at HEAD's blob and mode, no
    hiding bit, for a clean path; none for an absent one."""
    out = {}
    for path, verdict in verdicts.items():
        seen = verdict.seen
        if seen is not None and seen.status != "absent" and seen.head_oid and seen.head_mode:
            out[path] = [indexfile.Entry(seen.head_oid, seen.head_mode, 0, "H")]
    return out


def _changed_between(repo: Repo, old: str, new: str, wanted: Sequence[str]) -> list[str]:

    old_tree = repo.raw[old].peel(pygit2.Tree)
    new_tree = repo.raw[new].peel(pygit2.Tree)
    changed = []
    for path in wanted:
        a = old_tree[path].id if path in old_tree else None
        b = new_tree[path].id if path in new_tree else None
        if a != b:
            changed.append(path)
    return changed


def _move_ref(
    repo: Repo, ref: str, expected: str | None, new: str, message: str, lock_head: bool
) -> str | None:
    """Compare-and-swap `ref` from `expected` to `new`. Returns None on success, else the
    ref's actual target (hex, or "" when it does not exist). Locks HEAD too when the
    branch is checked out, so a concurrent checkout cannot switch it meanwhile; waits for
    refs another git process holds locked (`refs.transaction`)."""

    def body(txn: Any) -> str | None:
        if lock_head:
            refs.lock(txn, "HEAD")
            head_target = repo.raw.references["HEAD"].target
            if head_target != ref:
                raise HeadMoved(
                    f"HEAD switched from {ref} to {head_target} while the dream ran",
                    hint="nothing was written; run again on the branch you want to dream on",
                )
            # A rebase (or merge, cherry-pick…) that started meanwhile has written its
            # state before it detaches HEAD: moving the branch now would be undone when
            # it finishes or is aborted.
            if repo.in_progress() is not None:
                problem = repo.state_problem()
                assert problem is not None
                problem.message = f"{problem.message} (it started while the dream ran; nothing was written)"
                raise problem
        refs.lock(txn, ref)
        current = repo.raw.references.get(ref)
        actual = str(current.target) if current is not None else None
        if actual != expected:
            return actual or ""
        txn.set_target(ref, pygit2.Oid(hex=new), message=message)
        return None

    return refs.transaction(repo, body)


_ROOT_REF = re.compile(
    r"(?:[A-Z_-]*_)?HEAD|AUTO_MERGE|BISECT_EXPECTED_REV|NOTES_MERGE_PARTIAL|NOTES_MERGE_REF|MERGE_AUTOSTASH"
)
"""Names git reads as a file at the top of the git dir before any branch (HEAD,
FETCH_HEAD, ORIG_HEAD, MERGE_HEAD …: `is_root_ref` in git's refs.c)."""

_BRANCH_HINT = (
    "give a new branch name that `git check-ref-format --branch` accepts and that git reads as "
    "refs/heads/NAME and as nothing else, such as "
    "dream/review: not HEAD, @ or another *_HEAD name, not refs/…, and not the name of a tag or "
    "of a remote's branch (origin/main)"
)


def review_branch_ref(repo: Repo, name: str) -> str:
    """`refs/heads/NAME` for `--branch NAME`, refused (UsageError, exit 2) unless git reads
    NAME as exactly that branch: valid for `git check-ref-format --branch`, and none of the
    rules by which git turns a name into a ref (`ref_rev_parse_rules` in git's refs.c:
    `NAME`, `refs/NAME`, `refs/tags/NAME`, then `refs/heads/NAME`, then
    `refs/remotes/NAME[/HEAD]`) finds another ref first, nor would once a fetch, merge or
    rebase writes its `*_HEAD` or a remote's branch arrives (issue 16: `--branch @`,
    `FETCH_HEAD`, `refs/…`, `origin/main` made branches every later `git` command read as
    something else)."""
    ref = _branch_ref(name)
    first = name.split("/", 1)[0]
    why = None
    if name == "@" or "@{" in name:
        why = "git reads @ as HEAD"
    elif _ROOT_REF.fullmatch(name):
        why = f"git reads {name} as the file .git/{name}, not as a branch"
    elif first == "refs":
        why = f"git reads {name} as the full ref name {name}, not as refs/heads/{name}"
    else:
        names = [f"refs/{name}", f"refs/tags/{name}", f"refs/remotes/{name}", f"refs/remotes/{name}/HEAD"]
        found = next((n for n in names if repo.raw.references.get(n) is not None), None)
        if found is not None:
            why = f"git would read {name} as {found}"
        elif first in set(repo.raw.remotes.names()):
            why = f"{first} is a remote, so git reads {name} as that remote's branch refs/remotes/{name}"
    if why is not None:
        raise UsageError(f"--branch {name!r} is not a name for a new review branch: {why}", hint=_BRANCH_HINT)
    return ref


def _unless_a_rebase_began(repo: Repo, ref: str, base: str | None, new: str) -> None:
    """Right after the branch moved: a rebase that read the branch's old tip before the
    move and wrote its state after the check inside the ref transaction would, when it ends
    or is aborted, put the branch back on that old tip — undoing the dream. Its state
    names that tip (`orig-head`); if it does, the branch goes back at once and the commit is
    refused with nothing written (the rest of the window is stated in docs/reliability.md)."""
    for folder in ("rebase-merge", "rebase-apply"):
        try:
            orig = (repo.git_dir / folder / "orig-head").read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            continue
        if base is not None and orig == base:
            refs.compare_and_swap(repo, ref, new, base, "gitdream: a rebase started meanwhile")
            raise RepoStateError(
                "a rebase started while the dream committed (it began from the branch's old tip); "
                "the branch was put back and nothing was written",
                hint="finish or abort the rebase, then run again",
            )


def _branch_ref(name: str) -> str:

    ref = f"refs/heads/{name}"
    # git refuses these as branch names too (strbuf_check_branch_ref): `refs/heads/HEAD`
    # is a valid ref, but a branch called HEAD makes every `HEAD` ambiguous (issue 16).
    if name == "HEAD" or name.startswith("-") or not pygit2.reference_is_valid_name(ref):
        raise UsageError(
            f"'{name}' is not a valid branch name",
            hint=_BRANCH_HINT,
        )
    return ref


def _branch_exists(name: str) -> WriteRefused:
    return WriteRefused(
        f"branch {name} already exists",
        hint="choose another --branch name, or delete that branch first",
    )


def _review_commit(
    repo: Repo,
    agent: Agent | None,
    kind: str,
    changes: Sequence[Change],
    message: str,
    ident: Identity,
    dest: Destination,
) -> CommitResult:
    """A commit for a review branch: gate (tree only), blobs, tree and commit object on
    `dest.start`, no ref moved (see `publish`)."""
    assert dest.review_branch is not None
    ref = _branch_ref(dest.review_branch)
    lockfiles.require_free(repo, [ref])
    existing = repo.raw.references.get(ref)
    if dest.create and existing is not None:
        raise _branch_exists(dest.review_branch)
    base = dest.start if dest.start is not None else str(existing.target) if existing else None
    if base is None:
        raise RepoStateError("the repository has no commits yet", hint="commit something first")
    paths_ = [c.path for c in changes]
    verdicts = writegate.require(repo, agent, paths_, kind, tree_only=True)
    prepared = _prepare(repo, changes, verdicts)
    faults.point("after-blobs")
    tree = _tree_for(repo, base, prepared)
    faults.point("after-tree")
    new = _create_commit(repo, ident, message, tree, base)
    faults.point("after-commit-object")
    return CommitResult(new, base, ref, False, tuple(paths_))


def publish(
    repo: Repo,
    branch: str,
    expected: str | None,
    new: str,
    message: str,
    also: Sequence[tuple[str, str | None, str | None]] = (),
) -> None:
    """Move review branch `branch` from `expected` (None: create it) to `new`, the last of
    the commits `commit()` built for it, together with the gitdream refs in `also`
    (`(ref, expected, new)`, e.g. the watermark) in one reference transaction: all of them
    move, or none does. Raises WriteRefused when the branch was created or moved by someone
    else meanwhile, RefMoved when one of `also` was; nothing changed then."""

    ref = _branch_ref(branch)
    faults.point("before-ref-move")
    try:
        _restore(repo)
        compare_and_swap_all(repo, [(ref, expected, new), *also], message)
        _reachable(repo)
    except RefMoved as exc:
        if exc.ref != ref:
            raise
        if expected is None:
            raise _branch_exists(branch) from exc
        raise WriteRefused(
            f"branch {branch} was moved by someone else while gitdream wrote to it; nothing was published",
            hint="run again onto another --branch name",
        ) from exc
    faults.point("after-ref-move")


def commit(
    repo: Repo,
    agent: Agent | None,
    kind: str,
    changes: Sequence[Change],
    message: str,
    ident: Identity,
    dest: Destination | None = None,
) -> CommitResult:
    """Commit `changes` for `agent` as a `kind` ("experience"/"definition") commit.

    Returns a CommitResult. Raises RepoStateError (repository not writable),
    WriteRefused (gate refusal, or a path it writes changed during the run), HeadMoved (the
    branch moved and touched one of the paths, or HEAD switched branch) and
    SigningError; in each of those cases nothing was changed. Raises ValueError for an
    empty change list. With a review destination the commit is only built: `publish` moves
    the branch.
    """
    if not changes:
        raise ValueError("commit() needs at least one change")
    dest = dest or Destination.head()
    review = dest.review_branch is not None
    paths_ = [c.path for c in changes]
    if len(set(paths_)) != len(paths_):
        raise ValueError("duplicate paths in one commit")

    if review:
        return _review_commit(repo, agent, kind, changes, message, ident, dest)
    repo.require_own_index()
    branch = repo.head().branch
    # A leftover lock of git's refuses before anything is written (see lockfiles);
    # index.lock is taken below, as git takes it.
    lockfiles.require_free(repo, ["HEAD", *([branch] if branch else [])])
    warnings = repair(repo)
    head = repo.head()
    if head.detached:
        raise repo.state_problem() or RepoStateError("HEAD is detached")
    if repo.in_progress():
        raise repo.state_problem()  # type: ignore[misc]
    ref = head.branch
    assert ref is not None
    # Changes computed from an older commit are built on it; the compare-and-swap
    # below then moves them onto the branch's tip only if their paths are unchanged.
    base = dest.start or head.oid

    seen_index = indexmodel.identity(repo)
    verdicts = writegate.require(repo, agent, paths_, kind)
    if indexmodel.identity(repo) != seen_index:
        seen_index = None  # the index changed while the gate read it: re-read it under the lock
    prepared = _prepare(repo, changes, verdicts)
    faults.point("after-blobs")
    tree = _tree_for(repo, base, prepared)
    faults.point("after-tree")
    new = _create_commit(repo, ident, message, tree, base)
    faults.point("after-commit-object")

    lock = indexlock.IndexLock.acquire(repo)
    faults.point("after-index-lock")
    try:
        journal, rebuilt = _land(repo, lock, ref, base, new, prepared, verdicts, ident, message, seen_index)
    except BaseException:
        # the branch did not move: nothing was written (the lock goes first, then the
        # journal that identifies it)
        lock.release()
        _drop_journal(repo)
        raise
    faults.point("after-ref-move")
    return _finish(repo, lock, journal, rebuilt, paths_, warnings)


def _land(
    repo: Repo,
    lock: indexlock.IndexLock,
    ref: str,
    base: str | None,
    new: str,
    prepared: _Prepared,
    verdicts: dict[str, writegate.Verdict],
    ident: Identity,
    message: str,
    seen_index: tuple[object, ...] | None = None,
) -> tuple[Journal, bool]:
    """Steps 4-6 of the module docstring, with index.lock held: re-check, stage the new
    index and the journal, compare-and-swap the branch (rebuilding on a tip that moved
    without touching the paths). `seen_index` is the `indexmodel.identity` of the index
    the write gate read (None: unknown). Returns the journal of the commit that landed and
    whether it was rebuilt. Raises WriteRefused/HeadMoved (nothing moved)."""
    expected = base
    subject = message.splitlines()[0]
    paths_ = list(prepared.blobs)
    rebuilt = False
    for _attempt in range(MAX_REBUILDS + 1):
        _recheck(repo, verdicts, seen_index)
        lockfiles.require_free(repo, ["HEAD", ref])
        journal = Journal(
            str(repo.git_dir), ref, base, new, writer=processes.identity(), lock_token=lock.token
        )
        for path, blob in prepared.blobs.items():
            seen = verdicts[path].seen
            assert seen is not None
            journal.paths[path] = {
                "old_oid": seen.head_oid,
                "old_mode": seen.head_mode,
                "old_worktree_sha256": seen.worktree_sha256,
                "new_oid": blob.oid if blob else None,
                "new_worktree_sha256": _sha(blob.worktree) if blob else None,
                "mode": prepared.modes[path],
            }
        if lock.pending is None:
            lock.stage(_index_records(journal))
        journal.index_sha256 = lock.pending
        _write_journal(repo, journal)
        if lock.staged is None:
            lock.put()
        faults.point("before-ref-move")
        _restore(repo)
        actual = _move_ref(repo, ref, expected, new, f"commit: {subject}", lock_head=True)
        if actual is None:
            _reachable(repo)
            _unless_a_rebase_began(repo, ref, base, new)
            return journal, rebuilt
        # (the journal stays until it is rewritten or the lock is released: it is what
        # identifies the index in the lock)
        if not actual or base is None:
            raise HeadMoved(
                f"{ref} was created, deleted or moved by someone else while the dream ran",
                hint="nothing was written; run again",
            )
        clash = _changed_between(repo, base, actual, paths_)
        if clash:
            raise HeadMoved(
                f"{ref} moved while the dream ran and changed its own paths: " + ", ".join(clash),
                hint="nothing was written; run again to dream on top of the new commits",
                paths=clash,
            )
        base = expected = actual
        new = _create_commit(repo, ident, message, _tree_for(repo, base, prepared), base)
        rebuilt = True
    raise HeadMoved(f"{ref} kept moving while the dream ran", hint="nothing was written; run again later")


def _finish(
    repo: Repo,
    lock: indexlock.IndexLock,
    journal: Journal,
    rebuilt: bool,
    paths_: list[str],
    warnings: list[str],
) -> CommitResult:
    """Step 7: the branch has the dream; index.lock, holding the new index, keeps every git
    command that writes the index out until the working tree and the index are done."""
    new, base, ref = journal.new, journal.base, journal.ref
    try:
        sync_warnings = _write_worktree(repo, journal)
        faults.point("before-index-update")
        lock.commit()
    except (OSError, GitdreamError) as exc:
        # The commit is on the branch; the journal and index.lock stay, so no git
        # command can record the old index over it, and the next gitdream command
        # finishes the update (`repair`).
        reason = exc.message if isinstance(exc, GitdreamError) else environment_reason(exc)
        late = (
            f"commit {new[:12]} is on {ref}, but the working tree and index are not updated yet: {reason}; "
            f"gitdream keeps {lock.path} until they are (git commands that write the index refuse "
            "meanwhile: do not remove it), and the next gitdream command finishes the update"
        )
        return CommitResult(new, base, ref, rebuilt, tuple(paths_), tuple([*warnings, late]))
    _drop_journal(repo)
    return CommitResult(new, base, ref, rebuilt, tuple(paths_), tuple(warnings + sync_warnings))


def environment_reason(exc: OSError) -> str:
    """An OSError of the file system in words that name the environment's problem."""

    names = {
        errno.ENOSPC: "the disk is full (no space left on device)",
        errno.EDQUOT: "the disk quota is exceeded",
        errno.EROFS: "the file system is read-only",
        errno.EACCES: "permission denied",
        errno.EPERM: "the operation is not permitted",
    }
    where = f" ({exc.filename})" if exc.filename else ""
    return names.get(exc.errno or 0, exc.strerror or str(exc)) + where
