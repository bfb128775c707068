"""The commit builder: the one way gitdream writes to a repository (DESIGN §6).

A commit is built from HEAD's tree plus the dream's own blobs, never from the user's
index, in these steps:

1. gate: every path passes the write gate (`writegate.require`);
2. blobs, as `git add` would store them (`convert.to_repository`), then the tree, changing
   only the tree levels along the dream's paths (cost grows with depth, not repository
   size), then the commit object (signed when `commit.gpgsign` is on), with no ref moved;
3. re-check: every path is still what the gate saw (working-tree bytes, index entry);
4. journal: `<git-common-dir>/gitdream/journal/<worktree>.json` records the intent;
5. compare-and-swap: under a reference transaction that locks HEAD and the branch, the
   branch moves only if it still points at the commit the dream built on. If it moved
   and none of the dream's paths changed there, the commit is rebuilt on the new tip;
   otherwise HeadMoved is raised with nothing changed;
6. sync: each path's working-tree file is re-checked and atomically replaced, then the
   index entries of those paths only are updated by `git update-index --index-info`,
   which re-reads the index from disk under git's own `index.lock` — so a `git add` the
   user made meanwhile is kept;
7. the journal is removed. A crash between 5 and 7 is repaired by `repair()` at the
   start of the next write: paths still at their pre-dream state are brought to the
   new commit; anything else is the user's and is left alone. So is a sync that could
   not finish (an `index.lock` another git command held past `INDEX_LOCK_WAIT_SECONDS`):
   the commit stands, with a warning, and the journal stays for the next command.

A lock file git left behind (`index.lock`, `HEAD.lock`, the branch's `.lock`) refuses the
commit before anything is written (`gitdream.git.lockfiles`); gitdream never removes it.

In review-branch mode (`Destination.review`) only steps 1-2 run: the commit is built on the
commit it continues, and no ref moves. The caller chains a run's review commits and then
`publish()`es the branch once, with its other refs (the watermark) in the same reference
transaction, so a review branch appears whole or not at all — a process killed midway
leaves only unreachable objects, and the same command can simply run again. The current
branch, the index and the working tree are never touched.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitdream import clock, faults, paths
from gitdream.config import Config
from gitdream.errors import ConfigError, GitdreamError, HeadMoved, RepoStateError, WriteRefused
from gitdream.git import convert, lockfiles, signing, writegate
from gitdream.git.repo import write_object

if TYPE_CHECKING:
    import pygit2

    from gitdream.agents import Agent
    from gitdream.git.repo import Repo

REGULAR = 0o100644
_ZERO = "0" * 40
MAX_REBUILDS = 5
INDEX_LOCK_WAIT_SECONDS = 10.0  # after the branch moved: wait this long for a live index.lock


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
    import pygit2

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
    import pygit2

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
    import pygit2

    base_tree = repo.raw[base].peel(pygit2.Tree) if base else None
    items = {
        path: ((blob.oid if blob is not None else None), prepared.modes[path])
        for path, blob in prepared.blobs.items()
    }
    return _build_tree(repo, base_tree, items)


def _create_commit(repo: Repo, ident: Identity, message: str, tree: str, parent: str | None) -> str:
    import pygit2

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
    """The record that lets `repair()` finish an interrupted sync."""

    git_dir: str
    ref: str
    base: str | None
    new: str
    paths: dict[str, dict[str, Any]] = field(default_factory=dict)


def journal_path(repo: Repo) -> Path:
    """This worktree's journal file under `<git-common-dir>/gitdream/journal/`."""
    key = hashlib.sha1(str(repo.git_dir).encode()).hexdigest()[:16]
    return paths.state_dir(repo.common_dir) / "journal" / f"{key}.json"


def _write_journal(repo: Repo, journal: Journal) -> None:
    path = journal_path(repo)
    paths.ensure_dir(path.parent)
    atomic_write(path, json.dumps(asdict(journal), indent=1).encode())


def _drop_journal(repo: Repo) -> None:
    try:
        journal_path(repo).unlink()
    except FileNotFoundError:
        pass


# --- working tree and index -------------------------------------------------------------


_ANY = "*"


def atomic_write(path: Path, data: bytes, mode: int = 0o666, expect: str | None = _ANY) -> bool:
    """Write `data` to `path` through a temporary file in the same folder, fsync and
    `os.replace`, so readers see the old bytes or the new, never a mix. `mode` is masked
    by the umask, as git's checkout does.

    With `expect` (the SHA-256 the file must still have, None: it must not exist), the
    file is checked once the new bytes are safely on disk, right before the replace, and
    left alone (False) when it changed meanwhile — someone else's write is never replaced
    by one that took longer. Returns True when written. (`paths.atomic_write` underneath.)"""
    keep = None if expect == _ANY else (lambda: _worktree_sha(path) == expect)
    return paths.atomic_write(path, data, mode, keep)


def _worktree_sha(path: Path) -> str | None:
    return writegate.file_sha256(path) if not path.is_symlink() else "symlink"


def _index_entry(repo: Repo, path: str) -> tuple[str, int] | None:
    index = repo.raw.index
    index.read(False)
    try:
        entry = index[path]
    except KeyError:
        return None
    return str(entry.id), int(entry.mode)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _update_index(repo: Repo, lines: list[str]) -> None:
    """Apply `--index-info` lines; retries while another git process holds index.lock."""
    if not lines:
        return
    payload = ("\n".join(lines) + "\n").encode("utf-8")
    deadline = time.monotonic() + INDEX_LOCK_WAIT_SECONDS
    while True:
        proc = repo.git("update-index", "--index-info", input=payload, check=False)
        if proc.returncode == 0:
            return
        locked = b"index.lock" in proc.stderr
        if locked and time.monotonic() > deadline:
            raise lockfiles.held(lockfiles.lock_path(repo, lockfiles.INDEX), lockfiles.INDEX)
        if not locked:
            first = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise GitdreamError(
                "the index entries could not be updated: "
                + (first[0] if first else "git update-index failed"),
                hint="the next gitdream command finishes the update",
            )
        time.sleep(0.05)


def _sync(repo: Repo, journal: Journal) -> list[str]:
    """Bring each journaled path that is still at its pre-dream state to the new commit:
    the working-tree files first (each re-checked right before its atomic replace), then
    the index entries, each compared with a fresh read of the index right before
    `git update-index`. Returns warnings for paths left alone because the user changed
    them. Only paths for which HEAD *now* has the dream's version are brought over: after
    a checkout of another branch, or a commit made meanwhile from the index, the working
    tree and index already agree with HEAD there and are left alone."""
    stale = _not_at_head(repo, journal)
    journal = Journal(
        journal.git_dir,
        journal.ref,
        journal.base,
        journal.new,
        {p: i for p, i in journal.paths.items() if p not in stale},
    )
    warnings: list[str] = []
    if stale:
        warnings.append(
            f"HEAD no longer has the dream's version of {', '.join(stale)} (a checkout or a commit "
            f"made while the dream ran); the working tree and index were left as they are there"
        )
    changed = (
        "{} was changed in the working tree while the dream ran; your bytes were kept, and they "
        "differ from the dream's commit"
    )
    first = True
    for path, info in journal.paths.items():
        if not first:
            faults.point("mid-worktree-update")
        first = False
        file_path = repo.workdir / path
        current_sha = _worktree_sha(file_path)
        if current_sha == info["new_worktree_sha256"]:
            continue
        if current_sha != info["old_worktree_sha256"]:
            warnings.append(changed.format(path))
        elif info["new_oid"] is None:
            file_path.unlink()
        else:
            file_path.parent.mkdir(parents=True, exist_ok=True)
            data = convert.to_worktree(repo, path, info["new_oid"])
            mode = 0o777 if info["mode"] == 0o100755 else 0o666
            if not atomic_write(file_path, data, mode, expect=info["old_worktree_sha256"]):
                warnings.append(changed.format(path))
    faults.point("before-index-update")
    lines: list[str] = []
    for path, info in journal.paths.items():
        entry = _index_entry(repo, path)
        old = (info["old_oid"], info["old_mode"]) if info["old_oid"] else None
        new = (info["new_oid"], info["mode"]) if info["new_oid"] else None
        if entry == old and entry != new:
            if new is None:
                lines.append(f"0 {_ZERO}\t{path}")
            else:
                lines.append(f"{info['mode']:o} {info['new_oid']}\t{path}")
        elif entry != new:
            warnings.append(f"{path} was staged while the dream ran; your index entry was kept")
    _update_index(repo, lines)
    return warnings


def _not_at_head(repo: Repo, journal: Journal) -> list[str]:
    """The journal's paths whose version in HEAD's tree is not the dream's."""
    import pygit2

    head = repo.head()
    tree = repo.raw[head.oid].peel(pygit2.Tree) if head.oid else None
    out = []
    for path, info in journal.paths.items():
        entry = tree[path] if tree is not None and path in tree else None
        at_head = (str(entry.id), int(entry.filemode)) if entry is not None else None
        if at_head != ((info["new_oid"], info["mode"]) if info["new_oid"] else None):
            out.append(path)
    return out


def repair(repo: Repo) -> list[str]:
    """Finish a sync that a crash interrupted (see the module docstring).

    Returns warnings (empty when there was nothing to do). Safe to call at any time:
    a journal whose branch never moved, or whose worktree is now on another branch, is
    dropped without touching anything.
    """
    path = journal_path(repo)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        journal = Journal(**data)
    except FileNotFoundError:
        return []
    except (ValueError, TypeError):
        _drop_journal(repo)
        return [f"dropped an unreadable commit journal at {path}"]
    head = repo.head()
    ref = repo.raw.references.get(journal.ref)
    if ref is None or str(ref.target) == journal.base or head.branch != journal.ref:
        _drop_journal(repo)
        return []
    if not repo.raw.descendant_of(ref.target, journal.new) and str(ref.target) != journal.new:
        _drop_journal(repo)
        return [f"dropped the journal of commit {journal.new[:12]}: {journal.ref} no longer contains it"]
    lockfiles.require_free(repo, [lockfiles.INDEX])
    _remove_temp_files(repo, journal)
    warnings = _sync(repo, journal)
    _drop_journal(repo)
    return [f"finished updating the working tree for dream commit {journal.new[:12]}", *warnings]


def _remove_temp_files(repo: Repo, journal: Journal) -> None:
    """Remove the temporary files an `atomic_write` killed mid-way left beside the
    journaled paths (`.<name>.gitdream-<pid>.tmp`); the real files were never touched."""
    for path in journal.paths:
        file_path = repo.workdir / path
        for leftover in file_path.parent.glob(f".{glob.escape(file_path.name)}.gitdream-*.tmp"):
            try:
                leftover.unlink()
            except OSError:
                pass


# --- the whole commit ----------------------------------------------------------------


def _recheck(repo: Repo, verdicts: dict[str, writegate.Verdict]) -> None:
    """Before moving the branch: every path must still be what the gate saw."""
    changed = []
    for path, verdict in verdicts.items():
        seen = verdict.seen
        assert seen is not None
        file_path = repo.workdir / path
        if seen.status == "absent":
            ok = not os.path.lexists(file_path) and _index_entry(repo, path) is None
        else:
            ok = (
                not file_path.is_symlink()
                and writegate.file_sha256(file_path) == seen.worktree_sha256
                and _index_entry(repo, path) == (seen.head_oid, seen.head_mode)
            )
        if not ok:
            changed.append(path)
    if changed:
        raise WriteRefused(
            "refusing to commit: " + ", ".join(changed) + " changed while the dream ran",
            hint="nothing was written; commit or stash your change, then run again",
            paths=changed,
        )


def _changed_between(repo: Repo, old: str, new: str, wanted: Sequence[str]) -> list[str]:
    import pygit2

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
    import pygit2

    from gitdream.git import refs

    def body(txn: Any) -> str | None:
        if lock_head:
            refs.lock(txn, "HEAD")
            head_target = repo.raw.references["HEAD"].target
            if head_target != ref:
                raise HeadMoved(
                    f"HEAD switched from {ref} to {head_target} while the dream ran",
                    hint="nothing was written; run again on the branch you want to dream on",
                )
        refs.lock(txn, ref)
        current = repo.raw.references.get(ref)
        actual = str(current.target) if current is not None else None
        if actual != expected:
            return actual or ""
        txn.set_target(ref, pygit2.Oid(hex=new), message=message)
        return None

    return refs.transaction(repo, body)


def _branch_ref(name: str) -> str:
    import pygit2

    ref = f"refs/heads/{name}"
    if not pygit2.reference_is_valid_name(ref):
        raise ConfigError(
            f"'{name}' is not a valid branch name",
            hint="choose a name git accepts (see `git check-ref-format --branch`)",
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
    from gitdream.git.refs import RefMoved, compare_and_swap_all

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
    # A leftover lock of git's refuses before anything is written (see locks).
    lockfiles.require_free(repo, [lockfiles.INDEX, "HEAD", *([branch] if branch else [])])
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
    expected = base

    verdicts = writegate.require(repo, agent, paths_, kind)
    prepared = _prepare(repo, changes, verdicts)
    faults.point("after-blobs")
    tree = _tree_for(repo, base, prepared)
    faults.point("after-tree")
    new = _create_commit(repo, ident, message, tree, base)
    faults.point("after-commit-object")
    subject = message.splitlines()[0]

    rebuilt = False
    for _attempt in range(MAX_REBUILDS + 1):
        _recheck(repo, verdicts)
        lockfiles.require_free(repo, [lockfiles.INDEX, "HEAD", ref])
        journal = Journal(str(repo.git_dir), ref, base, new)
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
        _write_journal(repo, journal)
        faults.point("before-ref-move")
        try:
            _restore(repo)
            actual = _move_ref(repo, ref, expected, new, f"commit: {subject}", lock_head=True)
        except BaseException:
            _drop_journal(repo)
            raise
        if actual is None:
            _reachable(repo)
            break
        _drop_journal(repo)
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
        tree = _tree_for(repo, base, prepared)
        new = _create_commit(repo, ident, message, tree, base)
        rebuilt = True
    else:
        raise HeadMoved(f"{ref} kept moving while the dream ran", hint="nothing was written; run again later")
    faults.point("after-ref-move")

    try:
        sync_warnings = _sync(repo, journal)
    except GitdreamError as exc:
        # The commit is on the branch; the journal stays, and the next gitdream command
        # (its repair()) finishes the working tree and the index.
        late = (
            f"commit {new[:12]} is on {ref}, but its working-tree and index update did not "
            f"finish: {exc.message}; the next gitdream command finishes it"
        )
        return CommitResult(new, base, ref, rebuilt, tuple(paths_), tuple([*warnings, late]))
    _drop_journal(repo)
    return CommitResult(new, base, ref, rebuilt, tuple(paths_), tuple(warnings + sync_warnings))
