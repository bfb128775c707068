"""Working-tree files, written through no symbolic link (DESIGN §6, the write gate's rule 4).

The write gate checks every component of a path for links before a dream, but a folder
can be swapped for a link to somewhere else while the dream runs (issue 16: topic files
landed outside the repository). So the commit builder never writes by path: each write
walks from the working-tree root one component at a time with
`open(…, O_DIRECTORY | O_NOFOLLOW)` relative to the folder opened before (`dir_fd`),
and creates, replaces or removes the file relative to the last folder's descriptor. A
component that is a link, or not a folder, stops the write with `LinkInPath`; nothing is
ever written through a link, whenever it was made. Replacing is atomic (temporary file in
the same folder, rename), and checked against the bytes the caller expects right before
the rename, so a file someone changed meanwhile is left alone. Like git's checkout (whose
`core.fsync` default leaves working-tree files out), the file is not fsynced: a process
killed at any point leaves the old bytes or the new, and what makes a commit recoverable
after a crash — the journal and the index staged in index.lock — is fsynced by the commit
builder (issue 16, case 14: five fsyncs per commit were a third of its cost).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

SYMLINK = "symlink"
DIRECTORY = "directory"
SPECIAL = "special"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class LinkInPath(OSError):
    """A component of the path is a symbolic link or not a folder (`shown`: the path up to
    and including it)."""

    def __init__(self, shown: str, what: str) -> None:
        super().__init__(f"{shown} is {what}")
        self.shown = shown
        self.what = what


@contextlib.contextmanager
def folder(workdir: Path, rel: str, create: bool = False) -> Iterator[int]:
    """A descriptor of the folder holding `rel` (a repository-relative POSIX path), reached
    from `workdir` through no link; missing folders are created when `create`. Raises
    LinkInPath, or FileNotFoundError for a missing folder without `create`."""
    parts = rel.split("/")[:-1]
    fd = os.open(workdir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for index, part in enumerate(parts):
            shown = "/".join(parts[: index + 1])
            try:
                info = os.lstat(part, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                info = os.lstat(part, dir_fd=fd)
            if stat.S_ISLNK(info.st_mode):
                raise LinkInPath(shown, "a symbolic link")
            if not stat.S_ISDIR(info.st_mode):
                raise LinkInPath(shown, "not a folder")
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:  # swapped for a link between lstat and open (ELOOP/ENOTDIR)
                raise LinkInPath(shown, "a symbolic link") from exc
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def sha256_at(fd: int, name: str) -> str | None:
    """SHA-256 of the regular file `name` in folder `fd`; None when absent, `SYMLINK`,
    `DIRECTORY` or `SPECIAL` (anything else: a FIFO, a device) for those (never followed
    or opened)."""
    try:
        info = os.lstat(name, dir_fd=fd)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        return SYMLINK
    if stat.S_ISDIR(info.st_mode):
        return DIRECTORY
    if not stat.S_ISREG(info.st_mode):
        return SPECIAL  # a FIFO or a device: opening it could block, reading it never end
    handle = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
    digest = hashlib.sha256()
    with os.fdopen(handle, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def sha256(workdir: Path, rel: str) -> str | None:
    """`sha256_at` for `rel`, reached through no link; `SYMLINK` when a folder on the way
    is one (or not a folder), None when a folder on the way is missing."""
    try:
        with folder(workdir, rel) as fd:
            return sha256_at(fd, rel.rsplit("/", 1)[-1])
    except FileNotFoundError:
        return None
    except LinkInPath:
        return SYMLINK


def temp_name(name: str) -> str:
    """The temporary file of a write of `name` by this process (in the same folder)."""
    return f".{name}.gitdream-{os.getpid()}.tmp"


def write(workdir: Path, rel: str, data: bytes, mode: int, expect: str | None) -> bool:
    """Replace `rel` with `data` atomically, reached through no link, unless it no longer
    has the SHA-256 `expect` (None: it must not exist) once the new bytes are on disk.
    Returns True when written, False when left alone. Raises LinkInPath, OSError (disk
    full, read-only file system)."""
    name = rel.rsplit("/", 1)[-1]
    with folder(workdir, rel, create=True) as fd:
        tmp = temp_name(name)
        handle = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=fd
        )
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
            if sha256_at(fd, name) != expect:
                os.unlink(tmp, dir_fd=fd)
                return False
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=fd)
            raise
    return True


def remove(workdir: Path, rel: str, expect: str | None) -> bool:
    """Remove `rel`, reached through no link, if it still has the SHA-256 `expect`; True
    when removed (or already absent). Raises LinkInPath, OSError."""
    name = rel.rsplit("/", 1)[-1]
    try:
        with folder(workdir, rel) as fd:
            current = sha256_at(fd, name)
            if current is None:
                return True
            if current != expect:
                return False
            os.unlink(name, dir_fd=fd)
            return True
    except FileNotFoundError:
        return True


def remove_temp_files(workdir: Path, rel: str, alive: set[int] | None = None) -> None:
    """Remove the temporary files of writes of `rel` that a killed process left
    (`.<name>.gitdream-<pid>.tmp`), except those of the pids in `alive`; the real file was
    never touched. Through no link; a missing folder is nothing to do."""
    name = rel.rsplit("/", 1)[-1]
    prefix, suffix = f".{name}.gitdream-", ".tmp"
    try:
        with folder(workdir, rel) as fd:
            for entry in os.listdir(fd):
                if not (entry.startswith(prefix) and entry.endswith(suffix)):
                    continue
                pid = entry[len(prefix) : -len(suffix)]
                if pid.isdigit() and int(pid) in (alive or set()):
                    continue
                with contextlib.suppress(OSError):
                    os.unlink(entry, dir_fd=fd)
    except (FileNotFoundError, LinkInPath):
        return
