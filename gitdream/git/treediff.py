"""Tree-to-tree diffs of one folder between two commits: what was added or changed.

libgit2 skips subtrees whose ids are equal, so a diff costs O(changed files), not
O(history). Deleted files, and files that were only renamed (similarity 100), are not
changes here. Patches (the added lines) are computed only for modified files that the
caller wants: an added file's blob is not read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pygit2
from pygit2.enums import DeltaStatus, DiffFind

from gitdream.git import subtrees

if TYPE_CHECKING:
    import pygit2

    from gitdream.git.repo import Repo

REGULAR_MODES = (0o100644, 0o100755)


class TreeChange:
    """One added or modified path (repository-relative). `regular`: a regular file (not a
    symlink or submodule); `blob`: its id at the new commit; `added_lines`: 1-based line
    numbers added (None for an added file, for a binary one, and with `lines=False`).
    A plain class, not a dataclass: the sessions gate of the idle path imports this module."""

    __slots__ = ("added", "added_lines", "binary", "blob", "path", "regular")

    def __init__(
        self,
        path: str,
        added: bool,
        regular: bool,
        blob: str,
        added_lines: frozenset[int] | None = None,
        binary: bool = False,
    ) -> None:
        self.path, self.added, self.regular, self.blob = path, added, regular, blob
        self.added_lines, self.binary = added_lines, binary


def _subtree(
    repo: Repo, commit: str | None, folder: str, *, cached: bool = False, remember: bool = False
) -> pygit2.Tree | None:
    """`folder`'s tree at `commit` (None: no commit, or no such folder), through
    `gitdream.git.subtrees` (its parent folder's tree is loaded once per commit)."""
    if commit is None:
        return None
    return subtrees.for_repo(repo).tree(commit, folder, cached=cached, remember=remember)


def _diff(old: pygit2.Tree | None, new: pygit2.Tree) -> pygit2.Diff:
    """Tree-to-tree diff with no context lines and rename detection (a file that was
    only renamed then shows as RENAMED with similarity 100)."""

    if old is None:
        diff = new.diff_to_tree(context_lines=0, swap=True)
    else:
        diff = old.diff_to_tree(new, context_lines=0)
    diff.find_similar(flags=DiffFind.FIND_RENAMES)
    return diff


def changes(
    repo: Repo,
    old: str | None,
    new: str,
    folder: str,
    wanted: Callable[[str], bool],
    *,
    lines: bool = True,
    cached_old: bool = False,
    remember_new: bool = False,
) -> list[TreeChange]:
    """The paths under `folder` ("" for the root) added or changed from commit `old`
    (None: from nothing) to `new`, for which `wanted(path)` holds, in diff order. With
    `lines`, a modified regular file carries its added line numbers (no patch is computed
    without). A folder missing at `new` has no changes. `cached_old`: find the folder's
    tree at `old` through the disk cache of `gitdream.git.subtrees` (counting only);
    `remember_new`: record it at `new` there (a dream's input commit, the next watermark).
    Equal trees at both commits have no changes, and are not diffed."""

    new_tree = _subtree(repo, new, folder, remember=remember_new)
    if new_tree is None:
        return []
    old_tree = _subtree(repo, old, folder, cached=cached_old)
    if old_tree is not None and old_tree.id == new_tree.id:
        return []
    diff = _diff(old_tree, new_tree)
    out: list[TreeChange] = []
    for index, delta in enumerate(diff.deltas):
        status = delta.status
        if status in (DeltaStatus.DELETED, DeltaStatus.UNMODIFIED, DeltaStatus.IGNORED):
            continue
        if status == DeltaStatus.RENAMED and delta.similarity == 100:
            continue
        rel = delta.new_file.path
        path = f"{folder}/{rel}" if folder else rel
        if not wanted(path):
            continue
        regular = delta.new_file.mode in REGULAR_MODES
        blob = str(delta.new_file.id)
        added = status == DeltaStatus.ADDED
        if added or not regular or not lines:
            out.append(TreeChange(path, added, regular, blob))
            continue
        patch = diff[index]
        if patch is None:  # pragma: no cover - libgit2 gives a patch for every delta
            continue
        binary = bool(patch.delta.is_binary)
        found = {
            line.new_lineno
            for hunk in patch.hunks
            for line in hunk.lines
            if line.origin == "+" and line.new_lineno > 0
        }
        out.append(TreeChange(path, False, True, blob, None if binary else frozenset(found), binary))
    return out
