"""Holding `index.lock` the way git does, across the ref update and the index write.

git's own writers take `<git-dir>/index.lock` (created exclusively), write the new index
into it, update the ref, and rename the lock over the index; every other git command that
would write the index fails while it exists. gitdream's commit builder does the same, so
no `git commit`, `git add` or `git checkout` can run between a dream's branch move and its
index update (issue 16: a commit made in that window undid the dream):

1. `IndexLock.acquire` creates `index.lock` exclusively, holding a marker line (`MARKER`,
   then this process's identity and a token as JSON) — so a lock a killed gitdream left
   can be told from git's own and removed safely (`owner`);
2. `stage` writes the new index — the current one with the dream's entries applied, from
   the index this process keeps in memory (`indexmodel`) when it has a current one, else
   by `git update-index --index-info` run on a copy (`GIT_INDEX_FILE`) — beside the lock;
   once the commit journal records its SHA-256, `put` renames it over the lock: from then
   on the lock holds exactly the index to install;
3. `commit` renames the lock over the index (the index write, as git's `commit_lock_file`);
   `release` removes a lock that is still ours without installing it.

What the lock holds always identifies it: the marker, or an index whose SHA-256 the
journal names. A lock that is neither is another process's and is never touched.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitdream import paths, processes
from gitdream.errors import GitdreamError
from gitdream.git import indexmodel, lockfiles

if TYPE_CHECKING:
    from gitdream.git.repo import Repo

MARKER = b"gitdream index lock "
WAIT_SECONDS = 2.0
"""How long `acquire` waits for an index.lock another git command holds (git holds it for
milliseconds, except `git commit` while its editor is open) before refusing."""


def sha256_file(path: Path) -> str | None:
    """SHA-256 of the file at `path`, None when it does not exist."""
    try:
        with path.open("rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except FileNotFoundError:
        return None


def owner(path: Path) -> dict[str, Any] | None:
    """The gitdream process recorded in the marker of the lock at `path` (`pid`,
    `pid_start`, `host`, `token`), or None when the file is missing or not a marker (git's
    lock, or an index staged into it)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return None
    if not head.startswith(MARKER):
        return None
    try:
        record = json.loads(head[len(MARKER) :].split(b"\n", 1)[0])
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def staging_path(repo: Repo, pid: int | None = None) -> Path:
    """Where a process builds the new index before it goes into the lock."""
    return repo.git_dir / f"index.gitdream-{pid or os.getpid()}.tmp"


class IndexLock:
    """`index.lock` held by this process (see the module docstring)."""

    def __init__(self, repo: Repo, token: str) -> None:
        self.repo = repo
        self.path = lockfiles.lock_path(repo, lockfiles.INDEX)
        self.index = repo.index_path()
        self.token = token
        self.pending: str | None = None  # SHA-256 of the index staged beside the lock
        self.staged: str | None = None  # SHA-256 of the index in the lock, once put there
        self.done = False
        # the index `stage` built in memory, and the identity of its file (`indexmodel`)
        self._snapshot: tuple[indexmodel.Snapshot, tuple[object, ...]] | None = None

    @classmethod
    def acquire(cls, repo: Repo, wait: float = WAIT_SECONDS) -> IndexLock:
        """Create `index.lock` exclusively, waiting up to `wait` seconds while another
        git command holds it; then raise the RepoStateError of `lockfiles.held` (nothing
        was written)."""
        token = secrets.token_hex(8)
        record = {**processes.identity(), "token": token}
        payload = MARKER + json.dumps(record).encode("utf-8") + b"\n"
        path = lockfiles.lock_path(repo, lockfiles.INDEX)
        # The marker is written to a file of our own first and then linked to index.lock:
        # link() fails when index.lock exists, exactly as git's O_EXCL create, and the lock
        # never exists without its marker (a kill right after creating it leaves a lock
        # that is recognisably ours, never an empty one).
        draft = repo.git_dir / f"index.lock.gitdream-{os.getpid()}.tmp"
        with os.fdopen(paths.open_state_file(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "wb") as handle:
            handle.write(payload)  # never through a link
        deadline = time.monotonic() + wait
        try:
            while True:
                try:
                    os.link(draft, path)
                    return cls(repo, token)
                except FileExistsError:
                    if time.monotonic() >= deadline:
                        raise lockfiles.held(path, lockfiles.INDEX) from None
                    time.sleep(0.02)
        finally:
            with contextlib.suppress(FileNotFoundError):
                draft.unlink()

    def ours(self) -> bool:
        """True while the lock file is still the one this object made (marker with our
        token, or the index we staged)."""
        found = owner(self.path)
        if found is not None:
            return found.get("token") == self.token
        return self.staged is not None and sha256_file(self.path) == self.staged

    def stage(self, records: list[bytes]) -> str:
        """Build the new index beside the lock: the current index with `records` (`git
        update-index -z --index-info` input: `mode sha\tpath`) applied. Returns its
        SHA-256, which the caller records (the journal) before `put` moves it into the
        lock — so the lock never holds an index nobody can recognise. Raises GitdreamError
        when git refuses the entries."""
        tmp = staging_path(self.repo)
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        digest = self._stage_in_memory(records, tmp)
        indexmodel.staged_once(self.repo)
        if digest is not None:
            self.pending = digest
            return digest
        if self.index.exists():
            shutil.copyfile(self.index, tmp)
        self._snapshot = None
        if records:
            payload = b"\0".join(records) + b"\0"
            proc = self.repo.git(
                "update-index",
                "-z",
                "--index-info",
                input=payload,
                env={"GIT_INDEX_FILE": str(tmp)},
                check=False,
            )
            if proc.returncode != 0:
                first = proc.stderr.decode("utf-8", "replace").strip().splitlines()
                with contextlib.suppress(FileNotFoundError):
                    tmp.unlink()
                raise GitdreamError(
                    "the new index could not be built: " + (first[0] if first else "git update-index failed"),
                    hint="nothing was written; run `git status` to check the index, then run again",
                )
        if not tmp.exists():  # no index and nothing to add: git's own empty index
            self.repo.git("read-tree", "--empty", env={"GIT_INDEX_FILE": str(tmp)})
        # Not fsynced, as git does not fsync the index (`core.fsync`'s default): a kill
        # leaves the whole file, and an fsync of a 100 000-file index cost more than the
        # rest of the commit (issue 16, case 14). The journal that names it is fsynced.
        digest = sha256_file(tmp)
        assert digest is not None
        self.pending = digest
        return digest

    def _stage_in_memory(self, records: list[bytes], tmp: Path) -> str | None:
        """`stage` without a git process: the records applied to the parsed index
        (`indexmodel`), written to `tmp`. Returns the SHA-256 of what was written, or None
        when git must build it (an index form `indexmodel` does not read, or an entry
        that would replace a folder or a file on the way, which git resolves)."""
        try:
            snapshot = indexmodel.current(self.repo)
        except indexmodel.Unsupported:
            return None
        changes: dict[str, tuple[int, str] | None] = {}
        for record in records:
            meta, _, name = record.partition(b"\t")
            mode_text, oid = meta.decode("ascii").split(" ")
            mode, path = int(mode_text, 8), os.fsdecode(name)
            if mode and snapshot.has_file_or_folder_clash(path):
                return None
            changes[path] = (mode, oid) if mode else None
        staged = snapshot.apply(changes)
        data = staged.serialize()
        with tmp.open("xb") as handle:
            handle.write(data)
            handle.flush()
            self._snapshot = (staged, indexmodel.identity_of(os.fstat(handle.fileno()), data))
        return hashlib.sha256(data).hexdigest()

    def put(self) -> None:
        """Move the index `stage` built into the lock (an atomic rename: the lock holds the
        marker or that index, never anything else)."""
        assert self.pending is not None, "stage() first"
        os.replace(staging_path(self.repo), self.path)
        self.staged = self.pending

    def commit(self) -> None:
        """Install the staged index: rename the lock over the index, as git's
        `commit_lock_file` (no fsync, as git's default `core.fsync`). Raises OSError."""
        assert self.staged is not None, "stage() first"
        os.replace(self.path, self.index)
        self.done = True
        if self._snapshot is not None:
            indexmodel.remember(self.repo, *self._snapshot)

    def release(self) -> None:
        """Remove the lock without installing it, if it is still ours."""
        if not self.done and self.ours():
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
        with contextlib.suppress(FileNotFoundError):
            staging_path(self.repo).unlink()
        self.done = True
