"""The inverse of one commit, applied to a later tree: the content side of `gitdream revert`.

This is what `git revert` computes, file by file, for the paths the commit changed: a
three-way merge whose base is the commit itself, "ours" the tree we revert on (HEAD
now), and "theirs" the commit's parent. For each path (blob ids compared, never texts):

- ours equals the commit's version → the parent's version (file restored, changed back,
  or deleted when the commit created it);
- ours equals the parent's version → nothing to do (already undone);
- both sides present and changed → libgit2's line merge (`git_merge_file_from_index`,
  git's xdiff rules: changes to the same or adjacent lines conflict);
- otherwise (a file the commit created was changed since, a file it changed was deleted
  since, a file it deleted was created again) → conflict.

Unlike `git revert`, renames are not detected (dream commits never rename) and nothing is
written: no blob, no index, no file. A conflict is reported, never resolved.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pygit2

if TYPE_CHECKING:
    import pygit2

    from gitdream.git.repo import Repo


@dataclass(frozen=True)
class Conflict:
    """A path the inverse cannot be applied to, and why (one sentence)."""

    path: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason}


@dataclass(frozen=True)
class NewContent:
    """The reverted content of one path: `data` in repository form (None: delete it),
    and `old` the bytes it has in the tree reverted on (None: absent there)."""

    path: str
    data: bytes | None
    old: bytes | None


@dataclass
class Inverse:
    """The inverse of `commit` on `onto`: `changes` to make, `conflicts` (each blocks the
    whole revert), `unchanged` (paths already back at the parent's version)."""

    commit: str
    onto: str
    changes: list[NewContent] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)

    @property
    def paths(self) -> list[str]:
        return [c.path for c in self.changes]


def _entry(tree: pygit2.Tree, path: str) -> tuple[str, int] | None:
    """(blob id, mode) of a regular file or link at `path`, None when absent."""

    try:
        obj = tree[path]
    except KeyError:
        return None
    if isinstance(obj, pygit2.Tree):
        return None
    return str(obj.id), int(obj.filemode)


def _blob_bytes(raw: pygit2.Repository, oid: str) -> bytes:

    blob = raw[oid]
    assert isinstance(blob, pygit2.Blob), oid
    return bytes(blob.data)


def inverse(repo: Repo, commit_oid: str, onto_oid: str) -> Inverse:
    """Compute the inverse of commit `commit_oid` on the tree of commit `onto_oid`
    (see the module docstring). Reads objects only.

    Raises ValueError when `commit_oid` is a merge or root commit (dream commits have
    exactly one parent).
    """

    raw = repo.raw
    commit = raw[commit_oid].peel(pygit2.Commit)
    if len(commit.parents) != 1:
        raise ValueError(f"commit {commit_oid[:12]} has {len(commit.parents)} parents, not one")
    parent = commit.parents[0]
    onto = raw[onto_oid].peel(pygit2.Commit)
    result = Inverse(str(commit.id), str(onto.id))
    diff = parent.tree.diff_to_tree(commit.tree)
    paths: set[str] = set()
    for delta in diff.deltas:
        paths.add(delta.old_file.path)
        paths.add(delta.new_file.path)
    for path in sorted(paths):
        base = _entry(commit.tree, path)  # what the commit wrote
        theirs = _entry(parent.tree, path)  # what was there before it
        ours = _entry(onto.tree, path)  # what is there now
        if ours == theirs:
            result.unchanged.append(path)
            continue
        old = _blob_bytes(raw, ours[0]) if ours is not None else None
        if ours == base:
            data = _blob_bytes(raw, theirs[0]) if theirs is not None else None
            result.changes.append(NewContent(path, data, old))
            continue
        if base is None:
            result.conflicts.append(Conflict(path, "deleted by the run, and created again since"))
            continue
        if ours is None:
            result.conflicts.append(Conflict(path, "changed by the run, and deleted since"))
            continue
        if theirs is None:
            result.conflicts.append(Conflict(path, "created by the run, and changed since"))
            continue
        merged = _merge(repo, path, base, ours, theirs)
        if merged is None:
            result.conflicts.append(Conflict(path, "the same lines were changed since the run"))
        else:
            result.changes.append(NewContent(path, merged, old))
    return result


def _merge(
    repo: Repo, path: str, base: tuple[str, int], ours: tuple[str, int], theirs: tuple[str, int]
) -> bytes | None:
    """libgit2's three-way line merge of three blobs; None on a conflict (or content
    libgit2 hands back undecodable)."""

    def entry(value: tuple[str, int]) -> pygit2.IndexEntry:
        return pygit2.IndexEntry(path, pygit2.Oid(hex=value[0]), pygit2.enums.FileMode(value[1]))

    try:
        merged = repo.raw.merge_file_from_index(entry(base), entry(ours), entry(theirs))
    except UnicodeDecodeError:  # pygit2 decodes the result as UTF-8; binary is a conflict
        return None
    if merged is None or not merged.automergeable:
        return None
    return merged.contents.encode("utf-8")


def patch_text(path: str, old: bytes | None, new: bytes | None) -> str:
    """A git-style unified diff of one file from `old` to `new` (None: absent), as
    `git diff` prints it; writes no objects."""

    patch = pygit2.Patch.create_from(old, new, old_as_path=path, new_as_path=path)
    return patch.text or ""
