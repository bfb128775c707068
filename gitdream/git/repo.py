"""The repository model: the only place gitdream opens a repository with pygit2.

Discovery follows git: from the current directory upwards (any sub-folder, a linked
worktree's folder), or, when the process inherited them, from `GIT_DIR` and
`GIT_WORK_TREE` (as git itself honours them; inside a hook they name the same repository
git is working on). `GIT_INDEX_FILE` is *not* used for writing: inside a commit hook it
names a temporary or locked index (githooks(5); builtin/commit.c `prepare_index`), so write commands refuse to run while it
points anywhere but the repository's own index (`Repo.require_own_index`); only
`gitdream check --staged` reads it, explicitly.

A bare repository is refused at open; a repository with no commits, an operation in
progress (merge, rebase, cherry-pick, revert, bisect, am) and a detached HEAD are reported
by `in_progress()`/`head()` and refused by `require_writable()` with the next step.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import pygit2
from pygit2.enums import ObjectType
from pygit2.enums import RepositoryState as S

from gitdream.errors import ConfigError, RepoStateError
from gitdream.git import gitcmd

if TYPE_CHECKING:
    import subprocess

    import pygit2

    from gitdream.git.gitconfig import GitConfig

T = TypeVar("T")
OBJECT_WRITE_ATTEMPTS = 10
ANCESTRY_QUERIES = 8
REF_REREADS = 20
"""How often `Repo.head` reads HEAD again when git replaced it mid-read (`Repo.head`)."""
"""Questions about one commit's ancestry answered by libgit2's graph query each (cheap
when the answer is near); later ones share one walk of its history (`Repo.descends_from`)."""


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """`(inode, size, modification time in ns)` of `path`, or None when it cannot be
    read: what changes when git renames a new file over it."""
    try:
        found = path.stat()
    except OSError:
        return None
    return (found.st_ino, found.st_size, found.st_mtime_ns)


def write_object(call: Callable[[], T]) -> T:
    """Run `call`, a libgit2 object write, again when its fan-out folder (`objects/xx/`)
    vanished between libgit2 creating it and renaming the new object into it: `git gc` and
    `git prune-packed` remove emptied fan-out folders while gitdream writes. git's own
    object writes retry the same way; libgit2 reports it as OSError ("failed to rename
    lockfile … No such file or directory")."""
    for attempt in range(OBJECT_WRITE_ATTEMPTS):
        try:
            return call()
        except OSError as exc:
            if "No such file or directory" not in str(exc) or attempt == OBJECT_WRITE_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


_IN_PROGRESS_HINTS = {
    "merge": "finish the merge with `git commit`, or abort it with `git merge --abort`",
    "rebase": "finish the rebase with `git rebase --continue`, or abort it with `git rebase --abort`",
    "cherry-pick": "finish it with `git cherry-pick --continue`, or `git cherry-pick --abort`",
    "revert": "finish it with `git revert --continue`, or `git revert --abort`",
    "bisect": "end the bisect with `git bisect reset`",
    "am": "finish it with `git am --continue`, or `git am --abort`",
}


class Head(NamedTuple):  # not a frozen dataclass: 4x cheaper to build at import (idle path)
    """Where HEAD points: `branch` is a full ref name (None when detached), `oid` the
    commit id as hex (None when the branch is unborn)."""

    branch: str | None
    oid: str | None

    @property
    def detached(self) -> bool:
        return self.branch is None

    @property
    def unborn(self) -> bool:
        return self.oid is None

    @property
    def short_branch(self) -> str | None:
        if self.branch is None:
            return None
        return self.branch.removeprefix("refs/heads/")


def _common_dir(git_dir: Path, env: dict[str, str] | os._Environ[str]) -> Path:
    """The common dir, as git finds it: `GIT_COMMON_DIR`, else the `commondir` file of a
    linked worktree's git dir (relative to that dir), else the git dir itself
    (gitrepository-layout(5), "commondir"). No subprocess: this is on the idle path."""
    if env.get("GIT_COMMON_DIR"):
        return Path(env["GIT_COMMON_DIR"]).resolve()
    marker = git_dir / "commondir"
    try:
        text = marker.read_text(encoding="utf-8").strip()
    except OSError:
        return git_dir
    path = Path(text)
    return (path if path.is_absolute() else git_dir / path).resolve()


# Index extensions libgit2 cannot read (it refuses the whole index): what they are and
# how to turn them off.
_UNREADABLE_INDEX = {
    "sdir": (
        "a sparse index (index.sparse)",
        "turn it off with `git sparse-checkout reapply --no-sparse-index`",
    ),
    "link": (
        "a split index (core.splitIndex)",
        "turn it off with `git config core.splitIndex false && git update-index --no-split-index`",
    ),
}


def index_format_error(exc: BaseException) -> RepoStateError | None:
    """libgit2's "unsupported mandatory extension: 'sdir'" (sparse index) or "'link'"
    (split index) as a refusal naming the fix; None for any other error. Any libgit2 read
    of the index raises it, before gitdream writes anything."""
    text = str(exc)
    for extension, (what, fix) in _UNREADABLE_INDEX.items():
        if f"unsupported mandatory extension: '{extension}'" in text:
            return RepoStateError(
                f"this repository's index is {what}, which libgit2 (the git library gitdream "
                "uses) cannot read",
                hint=f"{fix}, then run again",
            )
    return None


def _quote(text: str) -> str:
    import shlex  # idle path: only for a refusal's hint

    return shlex.quote(text)


def _open_hint(message: str, git_dir: str) -> str:
    """The next step for a repository libgit2 would not open. Ownership (libgit2: "repository
    path '/r' is not owned by current user", git's "dubious ownership") names the folder git
    wants in `safe.directory`: the path libgit2 checked, else the working tree of `git_dir`."""
    if "object format" in message or "objectformat" in message:
        # a SHA-256 repository (`git init --object-format=sha256`): the libgit2 of pygit2's
        # wheels reads only SHA-1 ones ("check that the folder is a readable git
        # repository" sent the user looking for a damage that is not there)
        return (
            "this repository uses an object format (SHA-256) that libgit2, the git library "
            "gitdream uses, cannot read yet; gitdream works only in SHA-1 repositories"
        )
    if "owned" not in message and "owner" not in message and "safe.directory" not in message:
        return "check that the folder is a readable git repository"
    found = re.search(r"path '([^']+)'", message)
    folder = found.group(1) if found else str(Path(git_dir.rstrip("/")).parent)
    return (
        "the repository is owned by another user; if you trust it, run "
        f"`git config --global --add safe.directory {_quote(folder.rstrip('/'))}`"
    )


TREE_CACHE_LIMIT = 64 * 1024 * 1024
"""libgit2 caches only trees of at most 4 KB by default: the `agents/` tree of a
repository of 10 000 agents (400 KB) was read and parsed again for every path looked up
under it — 3 ms each, minutes for `gitdream status` (issue 16). Trees up to this size are
cached (within libgit2's overall cache, 256 MB by default)."""


def _cache_large_trees(pygit2: Any) -> None:

    pygit2.settings.cache_object_limit(ObjectType.TREE, TREE_CACHE_LIMIT)


class Repo:
    """An open repository with a working tree.

    Attributes: `raw` (the pygit2.Repository), `workdir` (working-tree root, absolute
    Path), `git_dir` (this worktree's git dir), `common_dir` (shared by all worktrees),
    `inherited_index` (absolute path from an inherited GIT_INDEX_FILE, or None).
    """

    def __init__(
        self,
        raw: pygit2.Repository,
        workdir: Path,
        git_dir: Path,
        common_dir: Path,
        inherited_index: Path | None,
    ) -> None:
        self.raw = raw
        self.workdir = workdir
        self.git_dir = git_dir
        self.common_dir = common_dir
        self.inherited_index = inherited_index
        self._ancestry: dict[tuple[str, str], bool] = {}
        self._asked: dict[str, int] = {}
        self._walks: dict[str, tuple[Iterator[Any], set[str]]] = {}
        self.memo: dict[str, Any] = {}
        """Facts computed once per process for all agents (e.g. which agents' dream commits
        a bounded walk of history found): a run over 10 000 agents must not redo them."""
        self._git_config: GitConfig | None = None

    # --- opening -------------------------------------------------------------------
    @classmethod
    def open(cls, start: Path | str | None = None, env: dict[str, str] | None = None) -> Repo:
        """Discover and open the repository containing `start` (default: the cwd).

        An inherited `GIT_DIR` is used instead of discovery and, as git does, its working
        tree is `GIT_WORK_TREE`, else `core.worktree`, else `start` itself (git(1):
        `--git-dir` "tells Git that you are at the top level of the working tree").

        Raises RepoStateError when there is no repository, when it is bare, or when it
        cannot be opened (e.g. `safe.directory`), each with the next step.
        """

        environ = os.environ if env is None else env
        _cache_large_trees(pygit2)
        start_path = Path(start if start is not None else os.getcwd()).absolute()
        inherited_git_dir = environ.get("GIT_DIR")
        if inherited_git_dir:
            candidate = Path(inherited_git_dir)
            git_dir_str = str(candidate if candidate.is_absolute() else start_path / candidate)
        else:
            found = pygit2.discover_repository(str(start_path))
            if found is None:
                raise RepoStateError(
                    f"not a git repository (or any parent up to /): {start_path}",
                    hint="run gitdream inside a git repository, or create one with `git init`",
                )
            git_dir_str = found
        try:
            # Opened from `start`, not from the git dir discovery found: when `.git` is a
            # `gitdir:` file (a linked worktree, a submodule, `git clone
            # --separate-git-dir`), libgit2 takes the folder holding that file as the
            # working tree only when it finds the file itself; opened from the git dir, it
            # takes the git dir's parent, and a dream would write beside the git dir.
            raw = pygit2.Repository(git_dir_str if inherited_git_dir else str(start_path))
        except pygit2.GitError as exc:
            raise RepoStateError(
                f"cannot open the repository: {exc}", hint=_open_hint(str(exc), git_dir_str)
            ) from exc
        if raw.is_bare:
            raise RepoStateError(
                f"{raw.path.rstrip('/')} is a bare repository: gitdream needs a working tree",
                hint="run gitdream in a clone with a working tree (git clone <repo>)",
            )
        if environ.get("GIT_WORK_TREE"):
            work = Path(environ["GIT_WORK_TREE"])
            raw.workdir = str(work if work.is_absolute() else start_path / work)
        elif inherited_git_dir and "core.worktree" not in raw.config:
            # git(1), --git-dir: GIT_DIR without GIT_WORK_TREE (or core.worktree) "tells Git
            # that you are at the top level of the working tree" — the current directory.
            raw.workdir = str(start_path)
        workdir = Path(raw.workdir).resolve()
        git_dir = Path(raw.path).resolve()
        inherited_index = None
        if environ.get("GIT_INDEX_FILE"):
            index = Path(environ["GIT_INDEX_FILE"])
            inherited_index = (index if index.is_absolute() else workdir / index).resolve()
        return cls(raw, workdir, git_dir, _common_dir(git_dir, environ), inherited_index)

    # --- state -------------------------------------------------------------------------
    def head(self) -> Head:
        """Where HEAD points (see `Head`). Reads refs only.

        Read again when git replaced the `HEAD` file while libgit2 read it: libgit2 takes a
        loose ref's size from a `stat` and its bytes from a later read, so a `git checkout`
        renaming a new `HEAD` over it in between reads too few or too many bytes ("could not
        read (expected 49 bytes, read 18)", or a cut name such as "refs/heads/a-"; the
        interleaving fuzz met it). git writes HEAD only by rename, so a read during which the
        file's inode, size and modification time stayed the same read it whole: its answer,
        or its error (pygit2.GitError), stands."""
        path = self.git_dir / "HEAD"
        for _attempt in range(REF_REREADS - 1):
            before = _stamp(path)
            try:
                found = self._head()
            except pygit2.GitError:
                if _stamp(path) == before:
                    raise
                continue
            if _stamp(path) == before:
                return found
        return self._head()

    def _head(self) -> Head:
        raw = self.raw
        if raw.head_is_detached:
            return Head(None, str(raw.head.target))
        target = raw.references["HEAD"].target
        branch = target if isinstance(target, str) else None
        if raw.head_is_unborn:
            return Head(branch, None)
        return Head(branch, str(raw.head.target))

    def in_progress(self) -> str | None:
        """The operation in progress ("merge", "rebase", "cherry-pick", "revert",
        "bisect", "am"), or None. Read from this worktree's git dir."""

        state = self.raw.state()
        mapping = {
            S.MERGE: "merge",
            S.REVERT: "revert",
            S.REVERT_SEQUENCE: "revert",
            S.CHERRYPICK: "cherry-pick",
            S.CHERRYPICK_SEQUENCE: "cherry-pick",
            S.BISECT: "bisect",
            S.REBASE: "rebase",
            S.REBASE_INTERACTIVE: "rebase",
            S.REBASE_MERGE: "rebase",
            S.APPLY_MAILBOX: "am",
            S.APPLY_MAILBOX_OR_REBASE: "rebase",
        }
        return mapping.get(state)

    def state_problem(self) -> RepoStateError | None:
        """The reason this repository cannot take a dream commit now, or None.

        Checked in order: operation in progress, detached HEAD, no commits.
        """
        op = self.in_progress()
        if op is not None:
            return RepoStateError(
                f"a {op} is in progress in {self.workdir}", hint=_IN_PROGRESS_HINTS[op] + ", then run again"
            )
        head = self.head()
        if head.detached:
            return RepoStateError(
                f"HEAD is detached at {head.oid[:12] if head.oid else '?'}: gitdream commits onto a branch",
                hint="check out a branch (git switch <branch>), "
                "or use --branch NAME to write a review branch",
            )
        if head.unborn:
            return RepoStateError(
                f"the repository has no commits yet (branch {head.short_branch} is unborn)",
                hint="commit your agent files first (for a new repository: gitdream init --commit)",
            )
        return None

    def index_problem(self) -> RepoStateError | None:
        """The refusal of `index_format_error` when this worktree's index is in a format
        libgit2 cannot read (sparse or split index), else None.

        Cheap in the usual case: the index is parsed (O(tracked files)) only when git was
        told to write such an index — `index.sparse` or `core.splitIndex` set, or a
        `sharedindex.*` file (left by `git update-index --split-index`) in the git dir."""

        hinted = self.config_bool("index.sparse") or self.config_bool("core.splitIndex")
        if not hinted and not any(self.git_dir.glob("sharedindex.*")):
            return None
        try:
            self.raw.index.read()
        except pygit2.GitError as exc:
            return index_format_error(exc)
        return None

    def require_writable(self) -> Head:
        """Return `head()` or raise the RepoStateError of `state_problem()`."""
        problem = self.state_problem()
        if problem is not None:
            raise problem
        return self.head()

    def require_own_index(self) -> None:
        """Refuse to write when an inherited GIT_INDEX_FILE names another index.

        Inside a commit hook git points GIT_INDEX_FILE at `index.lock` or a temporary
        index (builtin/commit.c `prepare_index`); writing the real index then would race git's own commit.
        """
        if self.inherited_index is None:
            return
        own = (self.git_dir / "index").resolve()
        if self.inherited_index != own:
            raise RepoStateError(
                f"GIT_INDEX_FILE is set to {self.inherited_index}, not this repository's index; "
                "gitdream writes the repository's own index and will not race a git command",
                hint="run gitdream outside git hooks, or unset GIT_INDEX_FILE",
            )

    # --- helpers ------------------------------------------------------------------------
    def git(self, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        """Run the git command on this repository (see gitcmd.run)."""
        return gitcmd.run(
            list(args), cwd=self.workdir, git_dir=self.git_dir, work_tree=self.workdir, **kwargs
        )

    def git_config(self) -> GitConfig:
        """The configuration as the git command reads it (`gitdream.git.gitconfig`: also
        `GIT_CONFIG_GLOBAL`, `git -c`, `GIT_CONFIG_COUNT`, includes), read once per Repo.
        For what git itself decides from configuration — identity, signing; the cheap
        libgit2 reads below serve the rest. Raises ConfigError when git cannot read it."""
        if self._git_config is None:
            from gitdream.git import gitconfig  # idle path: only where it is used

            self._git_config = gitconfig.read(self)
        return self._git_config

    def config_value(self, name: str) -> str | None:
        """A git config value as a string, or None when unset."""
        try:
            return self.raw.config[name]
        except KeyError:
            return None

    def config_bool(self, name: str, default: bool = False) -> bool:
        """A git config boolean (git's spellings: true/yes/on/1, false/no/off/0)."""
        try:
            return self.raw.config.get_bool(name)
        except KeyError:
            return default
        except Exception:  # pygit2 raises GitError for a value that is not a boolean
            value = self.config_value(name)
            raise ConfigError(
                f"git config {name} has the value {value!r}, which is not a boolean",
                hint=f"fix it with `git config {name} true` or `false`",
            ) from None

    def relpath(self, path: Path | str) -> str:
        """`path` (absolute or cwd-relative) as a repository-relative POSIX path."""
        absolute = Path(path).absolute()
        try:
            rel = absolute.resolve().relative_to(self.workdir)
        except ValueError:
            rel = Path(os.path.relpath(absolute, self.workdir))
        return rel.as_posix()

    def descends_from(self, commit: str, ancestor: str) -> bool:
        """True when `ancestor` is a proper ancestor of `commit` (both hex ids). Remembered
        for the life of this object — two commit ids' ancestry never changes. The first
        `ANCESTRY_QUERIES` questions about one `commit` are libgit2's graph query each; after
        that one walk of `commit`'s history answers them all (resumed where the previous
        question stopped), so `status` over 10 000 agents, each dreamed at its own commit,
        walks the history once rather than once per agent (issue 16)."""
        key = (commit, ancestor)
        known = self._ancestry.get(key)
        if known is None:
            asked = self._asked[commit] = self._asked.get(commit, 0) + 1
            if commit == ancestor:
                known = False
            elif asked <= ANCESTRY_QUERIES:
                known = bool(self.raw.descendant_of(commit, ancestor))
            else:
                known = self._walk_to(commit, ancestor)
            self._ancestry[key] = known
        return known

    def _walk_to(self, commit: str, ancestor: str) -> bool:
        """Whether the shared walk of `commit`'s history meets `ancestor`: what it has seen
        answers at once; else it walks on until it does or the history ends."""
        walk = self._walks.get(commit)
        if walk is None:
            walk = self._walks[commit] = (iter(self.raw.walk(commit)), set())
        commits, seen = walk
        if ancestor in seen:
            return True
        for found in commits:
            oid = str(found.id)
            seen.add(oid)
            if oid == ancestor:
                return True
        return False

    def changed_paths(self, under: Sequence[str] = ()) -> set[str]:
        """Repository-relative paths that differ between HEAD, the index and the working
        tree — staged, modified, deleted or untracked (one by one; ignored files left out)
        — as `git status` reports them.

        `under`: folders (repository-relative, "" = the whole repository) to look in; paths
        elsewhere may be returned too. One `git status` limited to the folders' common
        parent, so only the files there are `lstat`ed (and git's untracked
        cache and fsmonitor serve, where configured) — with libgit2's status every tracked
        file of the repository is, 90 ms for 10 000 files (bench/RESULTS.md). It runs with
        `--no-optional-locks`, as git documents for background readers, so it never takes
        `index.lock` from a concurrent git command; submodules are not looked into.

        Raises GitCommandError when git fails (e.g. a corrupt index).
        """
        args = ["--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=all"]
        args += ["--ignored=no", "--no-renames", "--ignore-submodules=all"]
        # One pathspec, the folders' common parent: git matches every index entry against
        # every pathspec, so 50 agent folders as 50 pathspecs cost more than they save.
        parent = posixpath.commonpath(list(under)) if under else ""
        if parent:
            args += ["--", f":(top,literal){parent}"]
        out = self.git(*args).stdout
        # -z: "XY PATH\0" per path, never quoted (--no-renames: no second path)
        return {os.fsdecode(record[3:]) for record in out.split(b"\0") if len(record) > 3}

    def index_path(self) -> Path:
        """This worktree's index file."""
        return self.git_dir / "index"

    def is_gitlink(self, path: str) -> bool:
        """True when `path` is a submodule (a gitlink entry) in HEAD's tree."""

        head = self.head()
        if head.oid is None or not path:
            return False
        try:
            entry = self.raw[head.oid].peel(pygit2.Tree)[path]
        except KeyError:
            return False
        return entry.filemode == 0o160000

    def shallow(self) -> bool:
        """True for a shallow clone."""
        return self.raw.is_shallow


def open_repo(start: Path | str | None = None) -> Repo:
    """Shorthand for `Repo.open(start)`."""
    return Repo.open(start)
