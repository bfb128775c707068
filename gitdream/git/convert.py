"""Line-ending and filter conversion between repository form and working-tree form.

A dream computes file contents in repository form (what the blob holds). Git stores what
`git add` would store for the working-tree file, and checks the blob out through the
smudge side of the same conversions (`core.autocrlf`, the `text`/`eol`/`crlf`/`ident`
attributes). When any of those apply to a path, gitdream asks git itself, so the result
is exactly git's: the working-tree bytes are `git cat-file --filters --path=P` of the
blob, and the stored blob is `git hash-object -w --stdin --path=P` of those bytes. When
none apply (the common case) both conversions are the identity and no git process starts.
External filter drivers (`filter=<name>`, e.g. Git LFS) never get here: the write gate
refuses such paths because libgit2 cannot run them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gitdream.git.repo import write_object
from gitdream.git.trees import blob_data

if TYPE_CHECKING:
    from gitdream.git.repo import Repo

_ATTRS = ("text", "eol", "crlf", "ident", "filter", "working-tree-encoding")


def needs_conversion(repo: Repo, path: str) -> bool:
    """True when git would convert `path` between working tree and repository."""
    autocrlf = (repo.config_value("core.autocrlf") or "false").lower()
    if autocrlf in ("true", "input", "yes", "on", "1"):
        return True
    return any(repo.raw.get_attr(path, name) not in (None, False) for name in _ATTRS)


@dataclass(frozen=True)
class Converted:
    """A blob ready to commit: its id and the bytes the working-tree file gets."""

    oid: str
    worktree: bytes


def to_repository(repo: Repo, path: str, data: bytes) -> Converted:
    """Store `data` (repository form) for `path` as `git add` would; see module docstring."""

    if not needs_conversion(repo, path):
        return Converted(str(write_object(lambda: repo.raw.create_blob(data))), data)
    draft = write_object(lambda: repo.raw.create_blob(data))
    worktree = repo.git("cat-file", "--filters", f"--path={path}", str(draft)).stdout
    stored = repo.git("hash-object", "-w", "--stdin", f"--path={path}", input=worktree)
    return Converted(stored.stdout.decode().strip(), worktree)


def to_worktree(repo: Repo, path: str, oid: str) -> bytes:
    """The working-tree bytes git's checkout would write for blob `oid` at `path`."""
    if not needs_conversion(repo, path):
        return blob_data(repo, oid)
    return repo.git("cat-file", "--filters", f"--path={path}", oid).stdout
