"""This worktree's index, read once per process and updated in memory (issue 16, case 14).

A dream commit reads the index entries of the paths it writes and stages a new index with
only those entries replaced. Asking git for that costs a `git` process per question, each
reading the whole index: with N agents committing in one run, N times the index of N
agents — quadratic. Here the index file is parsed once (`Snapshot.load`), kept in
`Repo.memo` together with the `indexfile.identity` of the file it came from, and reused
while the file on disk is still that one — which it is after gitdream's own commit, since
the index gitdream installs is the one this snapshot wrote. Any other writer (git, libgit2)
replaces the file, changes the identity, and the next look parses it again.

What is read, and written back, is git's index format (gitformat-index(5)):

- versions 2 and 3 with SHA-1 object ids; anything else (version 4's compressed paths, a
  SHA-256 repository, a mandatory extension such as a split or sparse index) is
  `Unsupported`, and the caller asks git as before;
- an entry gitdream writes gets git's `update-index --index-info` form: the mode and blob
  id, zero stat data (git compares the file's content the next time it looks), no flags;
  every other entry is kept byte for byte, except
- racily clean entries (modified in the same second as the index file was written): their
  size is zeroed, as git's `ce_smudge_racily_clean_entry` does, so that an edit made in
  that second is never taken for clean once the index is newer than the file;
- the extensions: `REUC` (resolve-undo) is kept; the others describe the old index and
  are dropped, as libgit2 drops those it does not know: `TREE` (git rebuilds the cache
  tree on the next commit), `UNTR` (the untracked cache), `FSMN`, `EOIE`, `IEOT`.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import stat as stat_mod
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pygit2

from gitdream.git import convert

if TYPE_CHECKING:
    from gitdream.git.repo import Repo

TRAILER_BYTES = 32
"""How much of the index file's end `identity` reads: its checksum trailer (SHA-1, 20
bytes; SHA-256 repositories, 32)."""


def identity(repo: Repo) -> tuple[object, ...] | None:
    """What identifies this worktree's index file as one version of it: its stat data
    (device, inode, size, modification time in ns) and its checksum trailer,
    `("absent",)` when there is no index, or None when it cannot be told (unreadable, or
    written with `index.skipHash`, whose trailer is zeros).

    Every writer of the index (git, libgit2, gitdream) writes a new file and renames it
    over the old one, and the trailer is a hash of the content before it: two equal
    identities read at two moments mean the index did not change in between (the inode
    of a replaced file could be reused, but not with the same size, times and content
    hash; the change time is left out, as a rename may change it). The commit builder
    uses it to know, under index.lock, that the index is still the one its write gate
    read, and `current` to know its snapshot still describes the file on disk."""
    path = repo.index_path()
    try:
        with path.open("rb") as handle:
            st = os.fstat(handle.fileno())
            if st.st_size < TRAILER_BYTES:
                return None
            handle.seek(st.st_size - TRAILER_BYTES)
            trailer = handle.read(TRAILER_BYTES)
    except FileNotFoundError:
        return ("absent",)
    except OSError:
        return None
    if not trailer[-20:].strip(b"\0"):
        return None  # index.skipHash: no checksum to go by
    return _identity(st, trailer)


def _identity(st: os.stat_result, trailer: bytes) -> tuple[object, ...]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, trailer)


_MEMO = "index-snapshot"
_STAGED = "index-staged"
_FIXED = 62  # ctime, mtime, dev, ino, mode, uid, gid, size (4 bytes each), SHA-1, flags
_EXTENDED = 0x4000
_ASSUME_VALID = 0x8000
_SKIP_WORKTREE = 0x4000  # in the extended flags
_KEPT_EXTENSIONS = (b"REUC",)


class Unsupported(Exception):
    """The index is in a form this module does not read (see the module docstring)."""


@dataclass(frozen=True)
class Entry:
    """One entry: its mode, blob id (hex), stage and hiding bits, and file mtime (s)."""

    mode: int
    oid: str
    stage: int
    assume_unchanged: bool
    skip_worktree: bool


def _entry_length(fixed: int, name_length: int) -> int:
    # an entry is padded with 1 to 8 NUL bytes to a multiple of 8 bytes
    return (fixed + name_length + 8) & ~7


class Snapshot:
    """The parsed index: sorted paths, the raw bytes of each entry, the kept extensions."""

    def __init__(self, version: int, paths: list[bytes], raw: list[bytes], extensions: list[bytes]) -> None:
        self.version = version
        self.paths = paths
        self.raw = raw
        self.extensions = extensions

    @classmethod
    def parse(cls, data: bytes, index_mtime: int) -> Snapshot:
        """Parse index bytes; entries modified at or after `index_mtime` (seconds: the
        file's own mtime) are smudged as racily clean. Raises Unsupported."""
        if len(data) < 32 or data[:4] != b"DIRC":
            raise Unsupported("not an index file")
        version, count = struct.unpack_from(">II", data, 4)
        if version not in (2, 3):
            raise Unsupported(f"index version {version}")
        if hashlib.sha1(data[:-20]).digest() != data[-20:] and data[-20:] != bytes(20):
            raise Unsupported("index checksum mismatch")
        paths: list[bytes] = []
        raw: list[bytes] = []
        pos = 12
        end = len(data) - 20
        unpack = struct.unpack_from
        for _ in range(count):
            flags = unpack(">H", data, pos + 60)[0]
            fixed = _FIXED + (2 if flags & _EXTENDED else 0)
            length = flags & 0xFFF
            if length == 0xFFF:
                length = data.index(b"\0", pos + fixed) - (pos + fixed)
            size = _entry_length(fixed, length)
            if pos + size > end:
                raise Unsupported("truncated entry")
            entry = data[pos : pos + size]
            if unpack(">I", entry, 8)[0] >= index_mtime:  # racily clean: smudge the size
                entry = entry[:36] + bytes(4) + entry[40:]
            paths.append(data[pos + fixed : pos + fixed + length])
            raw.append(entry)
            pos += size
        extensions = []
        while pos < end:
            if pos + 8 > end:
                raise Unsupported("truncated extension")
            signature = data[pos : pos + 4]
            size = unpack(">I", data, pos + 4)[0]
            if not b"A" <= signature[:1] <= b"Z":
                raise Unsupported(f"mandatory index extension {signature!r}")
            if signature in _KEPT_EXTENSIONS:
                extensions.append(data[pos : pos + 8 + size])
            pos += 8 + size
        if pos != end:
            raise Unsupported("truncated extension")
        return cls(version, paths, raw, extensions)

    def entries(self, path: str) -> list[Entry]:
        """The entries of `path` (several when it is conflicted; none when untracked)."""
        name = os.fsencode(path)
        found = []
        i = bisect.bisect_left(self.paths, name)
        while i < len(self.paths) and self.paths[i] == name:
            found.append(_decode(self.raw[i]))
            i += 1
        return found

    def has_file_or_folder_clash(self, path: str) -> bool:
        """True when an entry is a folder of `path` or lies under `path` as a folder (git
        would remove it to add `path`: the caller lets git decide)."""
        name = os.fsencode(path)
        parts = name.split(b"/")
        for depth in range(1, len(parts)):
            parent = b"/".join(parts[:depth])
            i = bisect.bisect_left(self.paths, parent)
            if i < len(self.paths) and self.paths[i] == parent:
                return True
        below = name + b"/"
        i = bisect.bisect_left(self.paths, below)
        return i < len(self.paths) and self.paths[i].startswith(below)

    def apply(self, changes: Mapping[str, tuple[int, str] | None]) -> Snapshot:
        """A new snapshot with `changes` `{path: (mode, blob hex) | None (remove)}`
        applied, as `git update-index --index-info` applies them (all stages of the
        path replaced by one stage-0 entry with zero stat data)."""
        paths = list(self.paths)
        raw = list(self.raw)
        for path, change in changes.items():
            name = os.fsencode(path)
            i = bisect.bisect_left(paths, name)
            j = i
            while j < len(paths) and paths[j] == name:
                j += 1
            new = [] if change is None else [_encode(name, *change)]
            paths[i:j] = [name] * len(new)
            raw[i:j] = new
        return Snapshot(self.version, paths, raw, self.extensions)

    def serialize(self) -> bytes:
        """The index file's bytes, checksum included."""
        parts = [
            b"DIRC" + struct.pack(">II", self.version, len(self.raw)),
            b"".join(self.raw),
            *self.extensions,
        ]
        checksum = hashlib.sha1()
        for part in parts:
            checksum.update(part)
        parts.append(checksum.digest())
        return b"".join(parts)


def _decode(entry: bytes) -> Entry:
    mode = struct.unpack_from(">I", entry, 24)[0]
    flags = struct.unpack_from(">H", entry, 60)[0]
    extended = struct.unpack_from(">H", entry, 62)[0] if flags & _EXTENDED else 0
    return Entry(
        mode,
        entry[40:60].hex(),
        (flags >> 12) & 3,
        bool(flags & _ASSUME_VALID),
        bool(extended & _SKIP_WORKTREE),
    )


def _encode(name: bytes, mode: int, oid: str) -> bytes:
    flags = min(len(name), 0xFFF)
    head = bytes(24) + struct.pack(">I", mode) + bytes(12) + bytes.fromhex(oid) + struct.pack(">H", flags)
    return head + name + bytes(_entry_length(_FIXED, len(name)) - _FIXED - len(name))


def _sha256_repository(repo: Repo) -> bool:
    return (repo.config_value("extensions.objectformat") or "sha1").lower() != "sha1"


def staged_once(repo: Repo) -> None:
    """Record that this process staged an index for `repo`: from its next commit on, the
    index is worth parsing (see `current`)."""
    repo.memo[_STAGED] = True


def current(repo: Repo) -> Snapshot:
    """The snapshot of this worktree's index as it is on disk now: the one in `Repo.memo`
    while the file is still the one it describes, else the file parsed again — but only
    once this process has staged an index before (`staged_once`): parsing costs more than
    a `git` process for a single commit in a large repository, and pays off only over the
    many commits of one run. Raises Unsupported (the caller asks git instead) and
    OSError."""
    ident = identity(repo)
    kept = repo.memo.get(_MEMO)
    if ident is not None and kept is not None and kept[0] == ident:
        return kept[1]
    if not repo.memo.get(_STAGED):
        raise Unsupported("not worth parsing for one commit")
    if _sha256_repository(repo):
        raise Unsupported("SHA-256 repository")
    path = repo.index_path()
    try:
        with path.open("rb") as handle:
            st = os.fstat(handle.fileno())
            data = handle.read()
    except FileNotFoundError:
        snapshot = Snapshot(2, [], [], [])
    else:
        snapshot = Snapshot.parse(data, int(st.st_mtime))
        if ident is None or identity(repo) != ident:
            raise Unsupported("the index changed while it was read")
    if ident is not None:
        repo.memo[_MEMO] = (ident, snapshot)
    return snapshot


def identity_of(st: os.stat_result, data: bytes) -> tuple[object, ...]:
    """The `identity` a file with stat data `st` holding index bytes `data` has (renames
    keep it: the same inode, size and modification time)."""
    return _identity(st, data[-TRAILER_BYTES:])


def remember(repo: Repo, snapshot: Snapshot, ident: tuple[object, ...]) -> None:
    """After the file of `snapshot` (with identity `ident`, taken when it was written)
    was renamed over the index: keep it as the current one. Should another process have
    replaced the index since, the identities differ and the next `current` reads the
    file again."""
    repo.memo[_MEMO] = (ident, snapshot)


_REGULAR = (0o100644, 0o100755)


@dataclass(frozen=True)
class Looked:
    """What `look` found: the entries of each path, and which tracked ones differ from
    their working-tree file (`modified`) or have none (`deleted`)."""

    entries: dict[str, list[Entry]]
    modified: frozenset[str]
    deleted: frozenset[str]


def look(repo: Repo, paths: Iterable[str]) -> Looked:
    """The index entries of `paths` and how their working-tree files compare, as `git
    ls-files -c -m -d` limited to them answers — without a git process, in time that
    grows with the paths and their sizes, not with the index (once it is parsed).

    A file is compared by content: its blob id (as `git hash-object` computes it) and
    its executable bit (under `core.fileMode`) against the entry — git compares stat data
    first and content only when they differ, so the answers agree except that a change
    stat data cannot see is seen here too. Entries with the assume-unchanged or
    skip-worktree bit are never reported (git does not look either). Raises Unsupported
    when git must answer instead: a path git converts (`core.autocrlf`, `text`/`eol`
    attributes), an entry that is not a regular file, an index this module does not read."""
    snapshot = current(repo)
    file_mode = repo.config_bool("core.filemode", True)
    entries: dict[str, list[Entry]] = {}
    modified: set[str] = set()
    deleted: set[str] = set()
    for path in paths:
        found = snapshot.entries(path)
        if not found:
            continue
        entries[path] = found
        entry = found[0]
        if len(found) != 1 or entry.stage != 0 or entry.assume_unchanged or entry.skip_worktree:
            continue
        if entry.mode not in _REGULAR or convert.needs_conversion(repo, path):
            raise Unsupported(f"{path} needs git to compare it")
        full = repo.workdir / path
        try:
            st = os.lstat(full)
        except (FileNotFoundError, NotADirectoryError):
            deleted.add(path)
            continue
        if not stat_mod.S_ISREG(st.st_mode):
            modified.add(path)
            continue
        executable = bool(st.st_mode & 0o100)
        if file_mode and executable != (entry.mode == 0o100755):
            modified.add(path)
            continue
        with open(full, "rb") as handle:
            data = handle.read()
        if str(pygit2.hash(data)) != entry.oid:
            modified.add(path)
    return Looked(entries, frozenset(modified), frozenset(deleted))
