"""git notes: read the note on a commit, list a notes ref, append a line to a note.

A note is appended to, never rewritten: its new text is the old text plus one line.
libgit2 builds the notes commit on the ref's current tip, but writes the note's whole new
text: two processes that read the same old text would each drop the other's line. So the
read and the write happen under an exclusive `flock` of `<git-common-dir>/gitdream/
notes.flock` (released by the kernel if the process dies); the notes ref still moves by
compare-and-swap, and the append is tried again when something else (a `git fetch`)
moved it meanwhile.
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
    already there is replaced where it is, at whatever fan-out depth git put it; a new
    one goes to the root of a small tree and into its fan-out folder (`FANOUT_AT`)
    otherwise, where the root's notes of the same prefix move with it.

    The ref always moves through `refs.compare_and_swap`, never through libgit2's
    `create_note`: its lock file is then recorded while held, so a gitdream killed while
    it writes a receipt leaves a `refs/notes/gitdream.lock` the next gitdream command
    removes (`refs.drop_dead_locks`), where libgit2's own ref update left one every later
    write refused. Fault point `note-locked` is crossed with the lock taken."""
    raw = repo.raw
    tip = refs.target(repo, ref)
    root = raw[tip].peel(pygit2.Tree) if tip else None
    blob = raw.create_blob(text.encode("utf-8"))
    where = _located(raw, root, commit) if root is not None else None
    tree = (
        _replaced(raw, root, where, blob) if root is not None and where else _added(raw, root, commit, blob)
    )
    message = "Notes added by gitdream\n"
    new = raw.create_commit(None, author, committer, message, tree, [tip] if tip else [])
    refs.compare_and_swap(repo, ref, tip, str(new), "notes: gitdream receipt", point="note-locked")


def _located(raw: pygit2.Repository, tree: pygit2.Tree, name: str) -> list[str] | None:
    """The path (its components) of the note on `name` in notes tree `tree`: the name
    itself at this level, else inside the folder of its first two hex digits, as git and
    libgit2 look it up (`ab/cdef…`, `ab/cd/ef…`); None when there is none."""
    if name in tree and tree[name].type == pygit2.enums.ObjectType.BLOB:
        return [name]
    head = name[:2]
    if len(name) > 2 and head in tree and tree[head].type == pygit2.enums.ObjectType.TREE:
        inner = _located(raw, raw[tree[head].id].peel(pygit2.Tree), name[2:])
        if inner is not None:
            return [head, *inner]
    return None


def _replaced(raw: pygit2.Repository, tree: pygit2.Tree, where: list[str], blob: pygit2.Oid) -> pygit2.Oid:
    """`tree` with the blob at path `where` (see `_located`) replaced by `blob`."""
    builder = raw.TreeBuilder(tree)
    first, *rest = where
    if not rest:
        builder.insert(first, blob, pygit2.enums.FileMode.BLOB)
    else:
        inner = _replaced(raw, raw[tree[first].id].peel(pygit2.Tree), rest, blob)
        builder.insert(first, inner, pygit2.enums.FileMode.TREE)
    return builder.write()


def _added(raw: pygit2.Repository, root: pygit2.Tree | None, commit: str, blob: pygit2.Oid) -> pygit2.Oid:
    """The notes tree `root` (None: no notes yet) with a new note on `commit`: at the root
    of a small tree, in its fan-out folder past `FANOUT_AT` notes or once that folder
    exists."""
    head, tail = commit[:2], commit[2:]
    folder = root[head] if root is not None and head in root else None
    if folder is not None and folder.type != pygit2.enums.ObjectType.TREE:
        folder = None
    builder = raw.TreeBuilder(root) if root is not None else raw.TreeBuilder()
    if folder is None and (root is None or len(root) < FANOUT_AT):
        builder.insert(commit, blob, pygit2.enums.FileMode.BLOB)
        return builder.write()
    inner = raw.TreeBuilder(raw[folder.id].peel(pygit2.Tree)) if folder is not None else raw.TreeBuilder()
    if folder is None and root is not None:
        # libgit2 looks in folder `ab` alone for a note on ab…: flat notes of that
        # prefix move in with it (git reads either layout)
        for entry in root:
            name = entry.name or ""
            if len(name) == 40 and name.startswith(head):
                inner.insert(name[2:], entry.id, entry.filemode)
                builder.remove(name)
    inner.insert(tail, blob, pygit2.enums.FileMode.BLOB)
    builder.insert(head, inner.write(), pygit2.enums.FileMode.TREE)
    return builder.write()


MAX_NOTE_BYTES = 32_000_000
"""A note larger than this is not read (notes are fetched from other people; gitdream's own
receipts are bounded far below it): read as if absent."""


def _text(repo: Repo, note: object) -> str | None:
    size = int(repo.raw.odb.read_header(note.id)[1])  # type: ignore[attr-defined]
    if size > MAX_NOTE_BYTES:
        return None
    return str(note.message)  # type: ignore[attr-defined]


def read(repo: Repo, ref: str, commit: str) -> str | None:
    """The text of the note on `commit` under notes ref `ref`, or None without one (or
    when it is larger than MAX_NOTE_BYTES)."""

    try:
        note = repo.raw.lookup_note(commit, ref)
    except KeyError:
        return None
    except pygit2.GitError as exc:
        raise refs.broken(repo, ref, exc) from None
    return _text(repo, note)


def iter_notes(repo: Repo, ref: str) -> Iterator[tuple[str, str]]:
    """Every `(annotated commit id, note text)` under `ref`, in no particular order
    (nothing when the ref does not exist)."""
    try:
        notes = list(repo.raw.notes(ref))  # type: ignore[call-arg]  # the stub omits `ref`
    except KeyError:
        return
    except Exception:  # pygit2 raises GitError when the ref does not exist
        return
    for note in notes:
        text = _text(repo, note)
        if text is not None:
            yield str(note.annotated_id), text


LOCK_FILE = "notes.flock"


@contextmanager
def _appending(repo: Repo) -> Iterator[None]:
    """Hold the exclusive lock of note appends in this repository (all worktrees)."""
    folder = paths.ensure_dir(paths.state_dir(repo.common_dir))
    fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o666)
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
