"""Sparse checkouts: the paths git keeps out of the working tree.

With `core.sparseCheckout` on, git checks out only the paths its patterns select; every
other tracked file stays in the index with the skip-worktree bit and is absent from disk.
gitdream writes nothing there (the write gate refuses with the fix, `git sparse-checkout
add <folder>`), because every other choice goes wrong:

- libgit2's status reports a skip-worktree file as deleted, so it would look like the
  user's deletion;
- writing the file would check it out behind git's back, and `git update-index
  --index-info` drops the skip-worktree bit (git status then shows it staged and deleted);
- committing without writing the working tree would need a second index update to set
  the bit again, which is not atomic with the first.

Tracked paths are judged by their skip-worktree bit (`git ls-files -t`). A new path is
judged by the patterns: exactly in cone mode (`git sparse-checkout list` names the
recursive folders; their ancestors' own files are in too), and in non-cone mode by the
files around it — the nearest folder above it that holds tracked files must have at
least one of them checked out. Nothing here runs unless `core.sparseCheckout` is true.
"""

from __future__ import annotations

import os
import posixpath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gitdream.git.repo import Repo


def enabled(repo: Repo) -> bool:
    """True when this worktree has a sparse checkout (`core.sparseCheckout`)."""
    return repo.config_bool("core.sparseCheckout", False)


def _tagged(repo: Repo, pathspec: str) -> list[tuple[str, str]]:
    """`(tag, path)` of the index entries under `pathspec` (`git ls-files -t`: "H" checked
    out, "S" skip-worktree, ...)."""
    out = repo.git("ls-files", "-t", "-z", "--", f":(literal){pathspec}").stdout
    found = []
    for item in out.split(b"\0"):
        if item:
            tag, _, path = item.partition(b" ")
            found.append((tag.decode("ascii", "replace"), os.fsdecode(path)))
    return found


def _in_cone(repo: Repo, folder: str) -> bool:
    """Cone mode: files directly in `folder` are checked out when it is the root, inside
    a recursive folder, or an ancestor of one (gitdocs sparse-checkout, "cone mode")."""
    if not folder:
        return True
    listed = repo.git("sparse-checkout", "list").stdout.decode("utf-8", "surrogateescape")
    for recursive in (line.strip().strip("/") for line in listed.splitlines()):
        if not recursive:
            continue
        if folder == recursive or folder.startswith(recursive + "/") or recursive.startswith(folder + "/"):
            return True
    return False


def _around_checked_out(repo: Repo, folder: str) -> bool:
    """Non-cone mode: the nearest folder at or above `folder` holding tracked files has at
    least one of them checked out (the root counts as checked out)."""
    while folder:
        tags = [tag for tag, _ in _tagged(repo, folder + "/")]
        if tags:
            return any(tag != "S" for tag in tags)
        folder = posixpath.dirname(folder)
    return True


def problem(repo: Repo, path: str, tracked: bool) -> tuple[str, str] | None:
    """`(reason, hint)` when `path` lies outside the sparse checkout, else None.

    `tracked`: the path is in HEAD (its index entry decides); otherwise it is new (the
    patterns decide, see module docstring). Call only when `enabled(repo)`.
    """
    folder = posixpath.dirname(path)
    if tracked:
        outside = any(tag == "S" and found == path for tag, found in _tagged(repo, path))
    elif repo.config_bool("core.sparseCheckoutCone", False):
        outside = not _in_cone(repo, folder)
    else:
        outside = not _around_checked_out(repo, folder)
    if not outside:
        return None
    where = (
        "is kept out of the working tree by the sparse checkout (skip-worktree)"
        if tracked
        else ("would be created outside the sparse checkout")
    )
    import shlex  # idle path: only for a refusal's hint

    return (
        f"{path} {where}; gitdream writes only where git checks files out",
        f"add its folder to the sparse checkout (git sparse-checkout add {shlex.quote(folder or '.')}), "
        "then run again",
    )
