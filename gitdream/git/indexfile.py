"""Read staged content from an index file, for `gitdream check --staged`.

Inside a commit hook git names the index being committed in `GIT_INDEX_FILE` (githooks(5),
builtin/commit.c `prepare_index`): the real index for `git commit`, the locked
`index.lock` for `git commit -a`, a temporary `next-index-*.lock` for `git commit <paths>`.
`pygit2.Index(path)` opens any of them without touching the repository's own index, the
working tree or the lock (libgit2 only reads the file), so this is how the pre-commit
guard sees exactly what is about to be committed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pygit2

from gitdream.errors import RepoStateError
from gitdream.git import indexmodel
from gitdream.git.repo import Repo, index_format_error
from gitdream.git.trees import blob_data

# Regular files only: 100644 and 100755. Symlinks (120000) and gitlinks (160000) are not
# text a planner reads.
_REGULAR = (0o100644, 0o100755)


def staged_paths(repo: Repo, index_path: Path | None = None) -> list[str]:
    """Repository-relative paths of the regular files (stage 0) in the index at
    `index_path` (default: this worktree's own index)."""
    return sorted(_read(repo, index_path, None))


def read_staged(
    repo: Repo, index_path: Path | None = None, want: Callable[[str], bool] | None = None
) -> dict[str, bytes]:
    """`{path: blob bytes}` of the regular files in the index at `index_path` (default:
    this worktree's own index) for which `want(path)` is true (all when None).

    Raises RepoStateError when the index file is missing or cannot be read (for example a
    split index, which libgit2 does not support), with the next step.
    """
    return _read(repo, index_path, want or (lambda _p: True))


class _Index(pygit2.Index):
    # pygit2's Index.__del__ fails (and prints a traceback at garbage collection) when
    # opening the file failed and the object was never initialised.
    def __del__(self) -> None:
        if hasattr(self, "_index"):
            super().__del__()


REREADS = 20
"""How many times `_open` reads an index that keeps being replaced while libgit2 reads it."""


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return (found.st_ino, found.st_size, found.st_mtime_ns)


def _open(path: Path) -> pygit2.Index:
    """`pygit2.Index(path)`, read again when another process replaced the file while
    libgit2 read it. libgit2 takes the file's size from a `stat` of the path and its bytes
    from a later `open` of the path: a `git add` or `git commit` renaming a new index over
    it in between hands libgit2 the first bytes of a larger index ("invalid data in index -
    extension is truncated", "invalid entry") or too few bytes of a smaller one ("could not
    read (expected N bytes, read M)") — a suite run failed that way once. git replaces the
    index only by rename, so a file whose inode, size and modification time are unchanged
    across a failed read was read whole: its error stands. Raises what pygit2 raises."""
    for _attempt in range(REREADS - 1):
        before = _stamp(path)
        try:
            return _Index(str(path))
        except (pygit2.GitError, OSError, ValueError):
            if _stamp(path) == before:
                raise
    return _Index(str(path))


def _read(repo: Repo, index_path: Path | None, want: Callable[[str], bool] | None) -> dict[str, bytes]:

    path = index_path if index_path is not None else repo.index_path()
    if not path.exists():
        if index_path is None:
            return {}  # a repository with nothing staged yet has no index file
        raise RepoStateError(
            f"the index file {path} does not exist",
            hint="pass the index git is committing (GIT_INDEX_FILE inside a hook), or omit --index-file",
        )

    try:
        index = _open(path)
    except (pygit2.GitError, OSError, ValueError) as exc:
        known = index_format_error(exc)
        if known is not None:
            raise known from exc
        raise RepoStateError(
            f"cannot read the index file {path}: {exc}",
            hint="if core.splitIndex is on, turn it off (git config core.splitIndex false; git update-index --no-split-index)",
        ) from exc
    conflicted: set[str] = set()
    if index.conflicts is not None:
        for stages in index.conflicts:
            conflicted.update(e.path for e in stages if e is not None)
    out: dict[str, bytes] = {}
    for entry in index:
        # pygit2 lists conflict stages 1-3 as ordinary entries; an unmerged path has no
        # staged content to judge (and git refuses to commit it).
        if entry.mode not in _REGULAR or entry.path in conflicted:
            continue
        if want is None:
            out[entry.path] = b""
            continue
        if not want(entry.path):
            continue
        try:
            out[entry.path] = blob_data(repo, str(entry.id))
        except KeyError as exc:
            raise RepoStateError(
                f"the index names a blob that is not in the repository: {entry.path} ({entry.id})",
                hint="run `git fsck`; re-add the file with `git add`",
            ) from exc
    return out


def head_blobs(repo: Repo, paths: list[str] | set[str]) -> dict[str, bytes | None]:
    """`{path: bytes of the blob at HEAD, or None}` for each of `paths` (None when HEAD
    is unborn or has no regular file there)."""

    out: dict[str, bytes | None] = dict.fromkeys(paths)
    try:
        tree = repo.raw.head.peel(pygit2.Commit).tree
    except (pygit2.GitError, KeyError):
        return out
    for path in paths:
        try:
            entry = tree[path]
        except KeyError:
            continue
        if entry.filemode in _REGULAR:
            out[path] = blob_data(repo, str(entry.id))
    return out


@dataclass(frozen=True)
class Entry:
    """One index entry as git reads it: blob id (hex), mode, stage (0 unless conflicted)
    and `tag` from `git ls-files -v` ("H" cached; lower case: assume-unchanged; "S":
    skip-worktree; others per git-ls-files(1))."""

    oid: str
    mode: int
    stage: int
    tag: str

    @property
    def assume_unchanged(self) -> bool:
        return self.tag.islower()

    @property
    def skip_worktree(self) -> bool:
        return self.tag.upper() == "S"


def entries(repo: Repo, paths: list[str] | set[str]) -> dict[str, list[Entry]]:
    """`{path: [entries]}` of `paths` in this worktree's own index; a path not in the
    index has no key. From the index this process keeps in memory (`indexmodel`) when it
    has one that is current, else read by git itself (`git ls-files -s -v`: flags libgit2
    does not expose), one call for all of them. Raises GitCommandError when git cannot
    read it."""
    if not paths:
        return {}
    try:
        snapshot = indexmodel.current(repo)
    except indexmodel.Unsupported:
        pass
    else:
        return {p: [_entry(e) for e in listed] for p in paths if (listed := snapshot.entries(p))}
    out = repo.git("ls-files", "-s", "-v", "-z", "--", *(f":(literal){p}" for p in sorted(paths))).stdout
    found: dict[str, list[Entry]] = {}
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, name = record.partition(b"\t")
        tag, mode, oid, stage = meta.decode("ascii").split(" ")
        found.setdefault(os.fsdecode(name), []).append(Entry(oid, int(mode, 8), int(stage), tag))
    return found


def _entry(entry: indexmodel.Entry) -> Entry:
    """An entry of `indexmodel` as `git ls-files -s -v` shows it (its tag)."""
    tag = "S" if entry.skip_worktree else "H"
    return Entry(entry.oid, entry.mode, entry.stage, tag.lower() if entry.assume_unchanged else tag)


@dataclass(frozen=True)
class Listing:
    """What git's index says of some paths: `entries` as `entries` returns them, and the
    paths whose working-tree file git finds `modified` (content or mode differ from the
    index entry, through the repository's filters, as `git status`) or `deleted`."""

    entries: dict[str, list[Entry]]
    modified: frozenset[str]
    deleted: frozenset[str]


def listing(repo: Repo, paths: list[str] | set[str]) -> Listing:
    """The index entries of `paths` and which of them differ in the working tree, limited
    to those paths (a whole-tree status per commit made a run over 10 000 agents
    quadratic, issue 16): from the index this process keeps in memory when it has a
    current one (`indexmodel.look`, no git process), else one `git ls-files -c -m -d -s
    -v` call — git reads the index once and compares only them. Entries with the
    skip-worktree or assume-unchanged bit are never reported modified (git does not
    look). Raises GitCommandError when git cannot read the index."""
    if not paths:
        return Listing({}, frozenset(), frozenset())
    try:
        looked = indexmodel.look(repo, paths)
    except indexmodel.Unsupported:
        pass
    else:
        seen = {p: [_entry(e) for e in entries] for p, entries in looked.entries.items()}
        return Listing(seen, looked.modified, looked.deleted)
    specs = (f":(literal){p}" for p in sorted(paths))
    out = repo.git("ls-files", "-c", "-m", "-d", "-s", "-v", "-z", "--", *specs).stdout
    found: dict[str, list[Entry]] = {}
    modified: set[str] = set()
    deleted: set[str] = set()
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, raw = record.partition(b"\t")
        tag, mode, oid, stage = meta.decode("ascii").split(" ")
        name = os.fsdecode(raw)
        if tag.upper() == "C":
            modified.add(name)
        elif tag.upper() == "R":
            deleted.add(name)
        else:
            found.setdefault(name, []).append(Entry(oid, int(mode, 8), int(stage), tag))
    return Listing(found, frozenset(modified), frozenset(deleted))
