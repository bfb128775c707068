"""A folder's tree at a commit, without loading its parent folder's tree once per agent.

Finding `agents/a1` at commit C loads C's `agents` tree, which holds one entry per agent:
with 10 000 agents, each dreamed at its own watermark commit, `status` and the sessions
gate loaded 10 000 trees of 10 000 entries (issue 16; DESIGN §11: gate checks cost
O(changed files), not O(history)). Two things keep that cost per agent constant:

- in process, the trees last asked about are kept (`LOADED`, least recently used out),
  so the folders of N agents at HEAD cost one load of HEAD's `agents` tree;
- on disk, `<git-common-dir>/gitdream/subtrees` remembers a folder's tree id at a commit
  (the input commit of a dream, which becomes the agent's watermark): a pure cache of a
  deterministic function of immutable objects, one line per entry,

      <commit id> <tree id> <tag> <folder>

  appended (`O_APPEND`), rewritten keeping the newest `KEEP` commits of each folder once
  it holds more than `COMPACT_FACTOR` lines per folder. `tag` is a keyed BLAKE2b of the
  other three fields; the key lives in the user's gitdream home (`key_path`), not in the
  repository, so a file that came with a copied repository, or was edited, does not
  verify and is not used. Losing the file only costs the loads it saved; an entry whose
  tag is wrong, whose tree is missing or is not a tree, is ignored and found again.

Only counting reads the disk cache (`Subtrees.tree(..., cached=True)`: the sessions gate
and `status`); a dream's material is always read from the commit itself.
"""

from __future__ import annotations

import os
import re
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2

from gitdream import paths

try:
    from _blake2 import blake2b  # CPython's C module: `hashlib` costs ~6 ms on the idle path
except ImportError:  # pragma: no cover - other Pythons
    from hashlib import blake2b  # optional: a Python without CPython's `_blake2`

if TYPE_CHECKING:
    from gitdream.git.repo import Repo

CACHE_FILE = "subtrees"
KEY_FILE = "subtrees.key"
LOADED = 32
"""How many (commit, folder) trees one process keeps loaded, least recently used out."""
KEEP = 2
"""Commits kept per folder when the file is compacted (the watermark's and the next)."""
COMPACT_FACTOR = 4
MIN_LINES = 256
"""The file is compacted once it holds more than max(MIN_LINES, COMPACT_FACTOR × KEEP ×
folders) lines."""
_LINE = re.compile(r"([0-9a-f]{40}|[0-9a-f]{64}) ([0-9a-f]{40}|[0-9a-f]{64}) ([0-9a-f]{32}) (.+)")


def cache_path(common_dir: Path) -> Path:
    """`<git-common-dir>/gitdream/subtrees`."""
    return paths.state_dir(common_dir) / CACHE_FILE


def key_path() -> Path:
    """The key the cache lines are tagged with: beside the user config (`$GITDREAM_HOME/`
    when set), outside every repository."""
    return paths.user_config_file().parent / KEY_FILE


class Subtrees:
    """One process's view of a repository's folder trees (`for_repo`). `writable`: misses
    of `tree(..., cached=True)` are appended to the disk cache (set by the sessions gate,
    and by `status` only when gitdream is enabled: disabled, it writes nothing)."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self.writable = False
        self._trees: OrderedDict[tuple[str, str], pygit2.Tree | None] = OrderedDict()
        self._disk: dict[tuple[str, str], str] | None = None
        self._lines = 0
        self._folders: set[str] = set()
        self._key: bytes | None = None
        self._key_read = False

    def tree(
        self, commit: str, folder: str, *, cached: bool = False, remember: bool = False
    ) -> pygit2.Tree | None:
        """The tree of `folder` ("" for the root) at `commit`, or None when it is missing
        or not a folder there. `cached`: ask the disk cache first (and record a miss when
        `writable`); `remember`: record the answer (a dream's input commit)."""
        if cached and folder:
            found = self._cached(commit, folder)
            if found is not None:
                return found
        tree = self._folder(commit, folder)
        if tree is not None and (remember or (cached and self.writable)):
            self._record(commit, folder, str(tree.id))
        return tree

    def _folder(self, commit: str, folder: str) -> pygit2.Tree | None:
        """`folder`'s tree at `commit`, one level at a time through the LRU of loaded
        trees: the parent folders shared by every agent stay loaded."""
        key = (commit, folder)
        if key in self._trees:
            self._trees.move_to_end(key)
            return self._trees[key]
        if not folder:
            tree: pygit2.Tree | None = self.repo.raw[commit].peel(pygit2.Tree)
        else:
            parent, _, name = folder.rpartition("/")
            top = self._folder(commit, parent)
            try:
                entry = top[name] if top is not None else None
            except KeyError:
                entry = None
            tree = entry if isinstance(entry, pygit2.Tree) else None
        self._trees[key] = tree
        if len(self._trees) > LOADED:
            self._trees.popitem(last=False)
        return tree

    def _tag(self, commit: str, tree: str, folder: str) -> str | None:
        key = self._load_key(create=False)
        return None if key is None else tag(key, commit, tree, folder)

    def _load_key(self, *, create: bool) -> bytes | None:
        if not self._key_read:
            self._key_read = True
            try:
                data = key_path().read_bytes()
                self._key = data if len(data) == 32 else None
            except OSError:
                self._key = None
        if self._key is None and create:
            self._key = _create_key()
        return self._key

    def _entries(self) -> dict[tuple[str, str], str]:
        if self._disk is None:
            self._disk = {}
            try:
                text = cache_path(self.repo.common_dir).read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            lines = text.splitlines()
            self._lines = len(lines)
            for line in lines:
                match = _LINE.fullmatch(line)
                if match is None:
                    continue
                commit, tree, tag, folder = match.groups()
                if tag == self._tag(commit, tree, folder):
                    self._disk[(commit, folder)] = tree
                    self._folders.add(folder)
        return self._disk

    def _cached(self, commit: str, folder: str) -> pygit2.Tree | None:
        oid = self._entries().get((commit, folder))
        if oid is None:
            return None
        try:
            found = self.repo.raw.get(oid)
        except (ValueError, pygit2.GitError):
            found = None
        return found if isinstance(found, pygit2.Tree) else None

    def _record(self, commit: str, folder: str, tree: str) -> None:
        """Append one entry (never raises: the cache is only an optimisation)."""
        entries = self._entries()
        if entries.get((commit, folder)) == tree or "\n" in folder or "\r" in folder:
            return
        try:
            if self._load_key(create=True) is None:
                return
            tag = self._tag(commit, tree, folder)
            path = cache_path(self.repo.common_dir)
            paths.state_folder(self.repo.common_dir)  # a real folder, never a link
            entries.pop((commit, folder), None)  # re-inserted last: the newest
            entries[(commit, folder)] = tree
            self._folders.add(folder)
            if self._lines + 1 > max(MIN_LINES, COMPACT_FACTOR * KEEP * len(self._folders)):
                self._compact(path)  # writes this entry too
                return
            fd = paths.open_state_file(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            try:
                os.write(fd, f"{commit} {tree} {tag} {folder}\n".encode())
            finally:
                os.close(fd)
            self._lines += 1
        except (OSError, UnicodeError):
            return

    def _compact(self, path: Path) -> None:
        """Rewrite the file with the newest KEEP commits of each folder (in file order,
        the newest last); a line another process appends meanwhile may be lost: a miss."""
        assert self._disk is not None
        kept: dict[str, list[tuple[str, str]]] = {}
        for (commit, folder), tree in self._disk.items():  # insertion order: file order
            kept.setdefault(folder, []).append((commit, tree))
        lines = []
        self._disk = {}
        for folder, items in kept.items():
            for commit, tree in items[-KEEP:]:
                self._disk[(commit, folder)] = tree
                lines.append(f"{commit} {tree} {self._tag(commit, tree, folder)} {folder}\n")
        paths.atomic_write(path, "".join(lines).encode())
        self._lines = len(lines)


def tag(key: bytes, commit: str, tree: str, folder: str) -> str:
    """The tag of a cache line: BLAKE2b keyed with `key`, 16 bytes, in hex, of
    "<commit> <tree> <folder>"."""
    return blake2b(f"{commit} {tree} {folder}".encode(), key=key, digest_size=16).hexdigest()


def _create_key() -> bytes | None:
    """Create the user's cache key (32 random bytes, mode 0600); None when it cannot be
    written (a read-only home: the disk cache is then not used)."""
    path = key_path()
    try:
        paths.ensure_dir(path.parent)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, os.urandom(32))
        finally:
            os.close(fd)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return data if len(data) == 32 else None


def for_repo(repo: Repo) -> Subtrees:
    """The process's `Subtrees` of `repo` (kept in `repo.memo`)."""
    found = repo.memo.get("subtrees")
    if not isinstance(found, Subtrees):
        found = repo.memo["subtrees"] = Subtrees(repo)
    return found
