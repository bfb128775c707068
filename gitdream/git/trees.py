"""Reading a commit's tree: the text of files under a folder, blob sizes and bytes, dates.

What the dream reads at its input commit (DESIGN §4: committed content only).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

import pygit2

from gitdream.git import subtrees

if TYPE_CHECKING:
    import pygit2

    from gitdream.git.repo import Repo

_REGULAR = (0o100644, 0o100755)


def files_under(repo: Repo, commit: str, folder: str, keep: Callable[[str], bool]) -> dict[str, str]:
    """Text of the regular files under `folder` ("" for the root) at `commit` for which
    `keep(path)` holds, as `{repository-relative path: text}` (UTF-8, invalid bytes
    replaced). A missing folder, or one that is a file, gives nothing."""

    out: dict[str, str] = {}
    top = subtrees.for_repo(repo).tree(commit, folder)
    if top is None:
        return out
    stack: list[tuple[str, pygit2.Tree]] = [(folder, top)]
    while stack:
        prefix, node = stack.pop()
        for item in node:
            path = f"{prefix}/{item.name}" if prefix else str(item.name)
            if isinstance(item, pygit2.Tree):
                stack.append((path, item))
            elif isinstance(item, pygit2.Blob) and item.filemode in _REGULAR and keep(path):
                out[path] = item.data.decode("utf-8", "replace")
    return out


def commit_date(repo: Repo, commit: str) -> date:
    """The committer date of `commit` (UTC)."""

    obj: pygit2.Commit = repo.raw[commit].peel(pygit2.Commit)
    return datetime.fromtimestamp(obj.commit_time, UTC).date()


def blob_size(repo: Repo, oid: str) -> int:
    """The size of blob `oid` in bytes, from the object header: the blob is not loaded."""
    return int(repo.raw.odb.read_header(oid)[1])


def blob_data(repo: Repo, oid: str) -> bytes:
    """The bytes of blob `oid`."""

    blob = repo.raw[oid]
    assert isinstance(blob, pygit2.Blob), oid
    return bytes(blob.data)


def blob_at(repo: Repo, commit: str, path: str) -> bytes | None:
    """The bytes of the file at `path` in `commit`, or None when it is not a file there."""

    folder, _, name = path.rpartition("/")
    tree = subtrees.for_repo(repo).tree(commit, folder)
    try:
        blob = tree[name] if tree is not None and name else None
    except KeyError:
        return None
    return bytes(blob.data) if isinstance(blob, pygit2.Blob) else None
