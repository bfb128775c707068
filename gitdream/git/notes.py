"""git notes: read the note on a commit, list a notes ref, append a line to a note.

A note is appended to, never rewritten: its new text is the old text plus one line.
gitdream builds the notes tree itself, as git reads one (`_write`: a note at any fan-out
depth, its copies joined, entries that are not notes kept), commits it on the ref's
current tip and moves the ref through `refs.compare_and_swap` (never libgit2's
`create_note`, whose ref lock a kill left unrecorded). Each write holds the note's whole
new text, so two processes that read the same old text would each drop the other's line:
the read and the write happen under an exclusive `flock` of `<git-common-dir>/gitdream/
notes.flock` (released by the kernel if the process dies), and the append is tried again
when something else (a `git fetch`) moved the ref meanwhile.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pygit2

from gitdream import clock, paths
from gitdream.errors import GitdreamError
from gitdream.git import refs

if TYPE_CHECKING:
    from gitdream.git.commitbuilder import Identity
    from gitdream.git.repo import Repo

ATTEMPTS = 20


def fetch_command(remote: str = "origin") -> str:
    """The commands that fetch `refs/notes/gitdream` from `remote` and merge it into the
    local one — line by line, keeping receipts written here and never pushed (a forced
    fetch into `refs/notes/gitdream` would drop them; issue 16). Receipts are JSON Lines,
    so git's `cat_sort_uniq` strategy is their merge."""
    return (
        f"git fetch {remote} '+refs/notes/gitdream:refs/notes/gitdream-fetched' && "
        "git notes --ref gitdream merge -s cat_sort_uniq refs/notes/gitdream-fetched"
    )


def fetch_refs_command(remote: str = "origin", unshallow: bool = False) -> str:
    """The command that fetches gitdream's watermarks without forcing them: a local one
    that moved on is kept (git refuses to move it back)."""
    return f"git fetch {'--unshallow ' if unshallow else ''}{remote} 'refs/gitdream/*:refs/gitdream/*'"


FANOUT_AT = 256
"""A notes tree with this many entries at its root gets new notes fanned out, as git's own
`git notes` does (`ab/cdef…`: a folder per first two hex digits). libgit2 writes every
note at the root, so each append rewrote a tree of every receipt: 10 000 agents' receipts
cost O(agents²) (issue 16)."""


_NOTE_MODES = (pygit2.enums.FileMode.BLOB, pygit2.enums.FileMode.BLOB_EXECUTABLE)
_TREE = pygit2.enums.ObjectType.TREE
_HEX = frozenset("0123456789abcdef")


def _write(
    repo: Repo,
    ref: str,
    commit: str,
    text: str,
    author: pygit2.Signature,
    committer: pygit2.Signature,
) -> None:
    """Set the note on `commit` under `ref` to `text` in one new notes commit on the ref's
    tip, moved by compare-and-swap (refs.RefMoved when something else moved it). A note
    already there is replaced where it is, at whatever fan-out depth git put it (and its
    other copies, which `read` joined into `text`, removed, as `git notes` writes one); a
    new one goes to the root of a small tree and into its fan-out folder (`FANOUT_AT`)
    otherwise, where the root's notes of the same prefix move with it.

    The ref always moves through `refs.compare_and_swap`, never through libgit2's
    `create_note`: its lock file is then recorded while held, so a gitdream killed while
    it writes a receipt leaves a `refs/notes/gitdream.lock` the next gitdream command
    removes (`refs.drop_dead_locks`), where libgit2's own ref update left one every later
    write refused. Fault point `note-locked` is crossed with the lock taken."""
    raw = repo.raw
    tip, root = _root(repo, ref)
    blob = raw.create_blob(text.encode("utf-8"))
    copies = _copies(raw, root, commit) if root is not None else []
    if root is not None and copies:
        tree = _set(raw, root, copies[0][0], blob)
        for path, _blob in copies[1:]:
            tree = _set(raw, raw[tree].peel(pygit2.Tree), path, None)
    else:
        tree = _added(raw, root, commit, blob, ref)
    message = "Notes added by gitdream\n"
    new = raw.create_commit(None, author, committer, message, tree, [tip] if tip else [])
    refs.compare_and_swap(repo, ref, tip, str(new), "notes: gitdream receipt", point="note-locked")


def tip(repo: Repo, ref: str) -> str | None:
    """The commit id (hex) notes ref `ref` points at, or None without the ref: it changes
    whenever a note under `ref` is added, appended to or removed, so it keys what was read
    from the notes. Raises the RepoStateError of `refs.broken` for a ref that cannot be
    read."""
    return refs.target(repo, ref)


def _root(repo: Repo, ref: str) -> tuple[str | None, pygit2.Tree | None]:
    """The tip of notes ref `ref` and its tree ((None, None) without the ref); the
    RepoStateError of `refs.broken` when the ref or its commit cannot be read."""
    tip = refs.commit_target(repo, ref)
    if tip is None:
        return None, None
    try:
        return tip, repo.raw[tip].peel(pygit2.Tree)
    except (pygit2.GitError, KeyError, ValueError) as exc:
        raise refs.broken(repo, ref, exc) from None


def _copies(
    raw: pygit2.Repository, tree: pygit2.Tree, name: str, prefix: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], pygit2.Oid]]:
    """Every copy of the note on `name` in notes tree `tree`, as (path components, blob
    id): in the folder of its first two hex digits (`ab/cdef…`, `ab/cd/ef…`, deepest
    first), then the name itself at this level — as git reads a notes tree: a note is a
    regular file, at any fan-out depth, and several copies of one (a tree fanned out or
    merged by hand) are read as one note, their texts joined. Anything else (a link, a
    gitlink, a folder under a note's name) is not a note, and is kept as git keeps it."""
    found: list[tuple[tuple[str, ...], pygit2.Oid]] = []
    head = name[:2]
    if len(name) > 2 and head in tree and tree[head].type == _TREE:
        found += _copies(raw, raw[tree[head].id].peel(pygit2.Tree), name[2:], (*prefix, head))
    if name in tree and tree[name].filemode in _NOTE_MODES:
        found.append(((*prefix, name), tree[name].id))
    return found


def _set(
    raw: pygit2.Repository, tree: pygit2.Tree, path: tuple[str, ...], blob: pygit2.Oid | None
) -> pygit2.Oid:
    """`tree` with the file at `path` set to `blob`, or removed (None; a folder it leaves
    empty goes too)."""
    builder = raw.TreeBuilder(tree)
    first, *rest = path
    if not rest:
        if blob is None:
            builder.remove(first)
        else:
            builder.insert(first, blob, pygit2.enums.FileMode.BLOB)
    else:
        inner = _set(raw, raw[tree[first].id].peel(pygit2.Tree), tuple(rest), blob)
        if len(raw[inner].peel(pygit2.Tree)):
            builder.insert(first, inner, pygit2.enums.FileMode.TREE)
        else:
            builder.remove(first)
    return builder.write()


def _added(
    raw: pygit2.Repository, root: pygit2.Tree | None, commit: str, blob: pygit2.Oid, ref: str
) -> pygit2.Oid:
    """The notes tree `root` (None: no notes yet) of `ref` with a new note on `commit`: at the root
    of a small tree, in its fan-out folder past `FANOUT_AT` notes or once that folder
    exists.

    A notes ref is fetched from other people and may hold entries that are not notes
    (git keeps them): an entry already at the note's name at the root (a folder, a
    gitlink) or at its folder's name (a file where git expects `ab/`) is never replaced —
    the note goes to the other place, and when both are taken GitdreamError is raised
    with nothing written (before, either entry was overwritten and lost)."""
    head, tail = commit[:2], commit[2:]
    flat_taken = root is not None and commit in root
    folder = root[head] if root is not None and head in root else None
    blocked = folder is not None and folder.type != pygit2.enums.ObjectType.TREE
    if blocked:
        folder = None
    builder = raw.TreeBuilder(root) if root is not None else raw.TreeBuilder()
    small = folder is None and (root is None or len(root) < FANOUT_AT)
    if not flat_taken and (small or blocked):
        builder.insert(commit, blob, pygit2.enums.FileMode.BLOB)
        return builder.write()
    inner_tree = raw[folder.id].peel(pygit2.Tree) if folder is not None else None
    if blocked or (inner_tree is not None and tail in inner_tree):
        raise GitdreamError(
            f"the notes tree of {ref} holds entries that are not notes where the note on "
            f"{commit[:12]} goes ({commit} and {head}/ are both taken): the receipt line was not "
            "written, and nothing was changed",
            hint=f"look at them with `git ls-tree {ref} -- {commit} {head}`",
        )
    inner = raw.TreeBuilder(inner_tree) if inner_tree is not None else raw.TreeBuilder()
    if folder is None and root is not None:
        # libgit2 looks in folder `ab` alone for a note on ab…: flat notes of that
        # prefix move in with it (git reads either layout); entries that are not notes
        # (not files) stay where they are
        for entry in root:
            name = entry.name or ""
            if len(name) == 40 and name.startswith(head) and entry.filemode in _NOTE_MODES:
                inner.insert(name[2:], entry.id, entry.filemode)
                builder.remove(name)
    inner.insert(tail, blob, pygit2.enums.FileMode.BLOB)
    builder.insert(head, inner.write(), pygit2.enums.FileMode.TREE)
    return builder.write()


MAX_NOTE_BYTES = 32_000_000
"""A note larger than this is not read (notes are fetched from other people; gitdream's own
receipts are bounded far below it): read as if absent."""


def _joined(repo: Repo, blobs: list[pygit2.Oid]) -> str | None:
    """The text of the note whose copies are `blobs` (see `_copies`), or None when they
    are larger than MAX_NOTE_BYTES together."""
    if sum(int(repo.raw.odb.read_header(blob)[1]) for blob in blobs) > MAX_NOTE_BYTES:
        return None
    texts = [repo.raw[blob].peel(pygit2.Blob).data.decode("utf-8", "replace") for blob in blobs]
    return "".join(
        text if text.endswith("\n") or n == len(texts) - 1 else text + "\n" for n, text in enumerate(texts)
    )


def read(repo: Repo, ref: str, commit: str) -> str | None:
    """The text of the note on `commit` under notes ref `ref`, or None without one (or
    when it is larger than MAX_NOTE_BYTES). Read from the notes tree as git reads it (see
    `_copies`), not through libgit2, which reads one copy and takes links and gitlinks
    for notes (a receipt appended to the other copy was then never read back)."""
    _tip, root = _root(repo, ref)
    copies = _copies(repo.raw, root, commit) if root is not None else []
    return _joined(repo, [blob for _path, blob in copies]) if copies else None


def _require_readable(repo: Repo, ref: str, commit: str) -> None:
    """Refuse (GitdreamError, nothing written) to append to a note on `commit` under `ref`
    that is larger than MAX_NOTE_BYTES: `read` reads it as absent, so the append would
    replace it by the one new line and lose it (a fetched note of someone else's)."""
    _tip, root = _root(repo, ref)
    copies = _copies(repo.raw, root, commit) if root is not None else []
    size = sum(int(repo.raw.odb.read_header(blob)[1]) for _path, blob in copies)
    if size > MAX_NOTE_BYTES:
        name = ref.removeprefix("refs/notes/")
        raise GitdreamError(
            f"the note on {commit[:12]} under {ref} is {size} bytes, more than gitdream reads "
            f"({MAX_NOTE_BYTES}): its receipt line was not written, and the note was kept",
            hint=f"look at it with `git notes --ref {name} show {commit}`; if it is not a receipt "
            f"you need, remove it with `git notes --ref {name} remove {commit}`",
        )


def iter_notes(repo: Repo, ref: str) -> Iterator[tuple[str, str]]:
    """Every `(annotated object id, note text)` under `ref`, in no particular order
    (nothing when the ref does not exist; a note larger than MAX_NOTE_BYTES left out).
    The notes tree is walked as git reads it (see `_copies`): libgit2's iterator failed
    on a gitlink entry and yielded made-up ids for files that are not notes."""
    try:
        _tip, root = _root(repo, ref)
    except GitdreamError:
        return
    if root is None:
        return
    found: dict[str, list[pygit2.Oid]] = {}
    _walk(repo.raw, root, "", found)
    for commit, blobs in found.items():
        text = _joined(repo, blobs)
        if text is not None:
            yield commit, text


def _walk(raw: pygit2.Repository, tree: pygit2.Tree, prefix: str, found: dict[str, list[pygit2.Oid]]) -> None:
    for entry in tree:
        name = entry.name or ""
        full = prefix + name
        if not _HEX.issuperset(name):
            continue
        if entry.filemode in _NOTE_MODES and len(full) == 40:
            found.setdefault(full, []).append(entry.id)
        elif entry.type == _TREE and len(name) == 2 and len(full) < 40:
            _walk(raw, raw[entry.id].peel(pygit2.Tree), full, found)


LOCK_FILE = "notes.flock"


@contextmanager
def _appending(repo: Repo) -> Iterator[None]:
    """Hold the exclusive lock of note appends in this repository (all worktrees)."""
    folder = paths.state_folder(repo.common_dir)  # a real folder, never a link
    fd = paths.open_state_file(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def append_line(repo: Repo, ref: str, commit: str, line: str, ident: Identity) -> None:
    """Append `line` (no newline in it) to the note on `commit` under `ref`, signed by
    `ident` at `clock.now()`.

    Retries when another process moved the notes ref meanwhile; raises the refusal of
    `lockfiles.from_git_error` when a lock file stays (git left it behind), and
    GitdreamError after repeated failures.
    """
    with _appending(repo):
        _append(repo, ref, commit, line, ident)


def _append(repo: Repo, ref: str, commit: str, line: str, ident: Identity) -> None:
    from gitdream.git import lockfiles  # idle path: only where it is used

    last_error: Exception | None = None
    for attempt in range(ATTEMPTS):
        _require_readable(repo, ref, commit)
        existing = read(repo, ref, commit) or ""
        text = existing.rstrip("\n") + ("\n" if existing.strip() else "") + line + "\n"
        when, offset = clock.git_time()
        author = pygit2.Signature(ident.author[0], ident.author[1], when, offset)
        committer = pygit2.Signature(ident.committer[0], ident.committer[1], when, offset)
        try:
            _write(repo, ref, commit, text, author, committer)
            return
        except (pygit2.GitError, OSError, refs.RefMoved) as exc:  # the notes ref moved or is locked, or a
            # fan-out folder vanished under `git gc` (see `write_object`): read again
            refusal = lockfiles.from_git_error(exc)
            if refusal is not None and attempt >= ATTEMPTS // 2:  # a lock that stays: git left it behind
                raise refusal from exc
            last_error = exc
            time.sleep(0.01 * attempt)
    raise GitdreamError(
        f"could not write the note on {commit[:12]} under {ref}: {last_error}",
        hint=f"another process keeps updating {ref}; run again",
    )
