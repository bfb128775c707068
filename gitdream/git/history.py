"""Reading history for review: dream commits by trailer, diffstats and patches, and file
text at a past commit (the git side of `gitdream log`, `show`, `audit` and `revert`).

Everything here reads; nothing writes objects, refs, the index or files.

Finding dream commits never walks all of history: `trailer_commits` stops after `limit`
commits of HEAD's history (newest first by commit time, as `git log` shows them), and
callers prefer the commit ids recorded in receipts. Trailers are read with libgit2's
`git_message_trailers` (the rules of `git interpret-trailers`: the last paragraph of the
message, `Key: value` lines).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pygit2
from pygit2.enums import DeltaStatus, SortMode

from gitdream import clock
from gitdream.git.diffstat import StatFile, format_stat

if TYPE_CHECKING:
    import pygit2

    from gitdream.git.repo import Repo

RUN_TRAILER = "Gitdream-Run"
KIND_TRAILER = "Gitdream-Kind"
AGENT_TRAILER = "Gitdream-Agent"
INPUT_TRAILER = "Gitdream-Input"
ENGINE_TRAILER = "Gitdream-Engine"
REVERTS_TRAILER = "Gitdream-Reverts"


@dataclass(frozen=True)
class TrailerCommit:
    """A commit carrying a `Gitdream-Run` trailer: its id, subject, commit time (ISO UTC)
    and the gitdream trailers (None when absent)."""

    oid: str
    subject: str
    time: str
    run: str
    kind: str | None
    agent: str | None
    input: str | None
    engine: str | None
    reverts: str | None


@dataclass(frozen=True)
class FileStat:
    """One file of a commit's diffstat: `status` is git's letter (A, D, M, R, T)."""

    path: str
    status: str
    insertions: int
    deletions: int

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "status": self.status,
            "insertions": self.insertions,
            "deletions": self.deletions,
        }


@dataclass
class CommitView:
    """A commit for `gitdream show`: subject, time, parent, per-file stats, the diffstat
    as git prints it, and the patch (only when asked for)."""

    oid: str
    subject: str
    time: str
    parent: str | None
    files: list[FileStat] = field(default_factory=list)
    stat: str = ""
    patch: str | None = None

    @property
    def insertions(self) -> int:
        return sum(f.insertions for f in self.files)

    @property
    def deletions(self) -> int:
        return sum(f.deletions for f in self.files)


def _iso(epoch: int) -> str:
    return clock.iso(datetime.fromtimestamp(epoch, UTC))


def _trailers(commit: pygit2.Commit) -> dict[str, str]:
    try:
        found = commit.message_trailers
    except Exception:  # pygit2 raises GitError for a message libgit2 cannot parse
        return {}
    return {str(k): str(v).strip() for k, v in found.items()}


def trailer_commit(repo: Repo, oid: str) -> TrailerCommit | None:
    """The gitdream trailers of commit `oid`, or None when it is missing or has no
    `Gitdream-Run` trailer."""

    obj = repo.raw.get(oid)
    if not isinstance(obj, pygit2.Commit):
        return None
    return _from_commit(obj)


def _from_commit(commit: pygit2.Commit) -> TrailerCommit | None:
    message = commit.message
    if RUN_TRAILER not in message:  # cheap test first: most commits are not gitdream's
        return None
    trailers = _trailers(commit)
    run = trailers.get(RUN_TRAILER)
    if not run:
        return None
    return TrailerCommit(
        oid=str(commit.id),
        subject=message.split("\n", 1)[0].strip(),
        time=_iso(commit.commit_time),
        run=run,
        kind=trailers.get(KIND_TRAILER),
        agent=trailers.get(AGENT_TRAILER),
        input=trailers.get(INPUT_TRAILER),
        engine=trailers.get(ENGINE_TRAILER),
        reverts=trailers.get(REVERTS_TRAILER),
    )


def trailer_commits(repo: Repo, start: str | None, limit: int) -> tuple[list[TrailerCommit], bool]:
    """Commits with a `Gitdream-Run` trailer among the first `limit` commits of the
    history of `start` (all parents, newest commit time first, like `git log`).

    Returns `(commits, truncated)`; `truncated` is True when the walk stopped at `limit`
    with history left. `start` None (unborn branch) gives `([], False)`.
    """

    if start is None or limit <= 0:
        return [], False
    found: list[TrailerCommit] = []
    for seen, commit in enumerate(repo.raw.walk(pygit2.Oid(hex=start), SortMode.TIME)):
        if seen >= limit:
            return found, True
        item = _from_commit(commit)
        if item is not None:
            found.append(item)
    return found, False


def same_change(repo: Repo, a: str, b: str) -> bool:
    """True when commits `a` and `b` change the same paths to the same blobs, each against
    its first parent (a commit and its rebased copy)."""

    def change(oid: str) -> dict[str, str | None]:
        commit = repo.raw[oid].peel(pygit2.Commit)
        parent = commit.parents[0].tree if commit.parents else None
        diff = (
            commit.tree.diff_to_tree(parent, swap=True)
            if parent is not None
            else commit.tree.diff_to_tree(swap=True)
        )
        out: dict[str, str | None] = {}
        for delta in diff.deltas:
            out[delta.new_file.path] = None if delta.status_char() == "D" else str(delta.new_file.id)
        return out

    return change(a) == change(b)


def subject(repo: Repo, oid: str) -> str:
    """The first line of commit `oid`'s message (KeyError when it is missing)."""

    commit = repo.raw[oid].peel(pygit2.Commit)
    return commit.message.split("\n", 1)[0].strip()


def exists(repo: Repo, oid: str | None) -> bool:
    """True when `oid` names a commit in this repository."""

    if not oid:
        return False
    return isinstance(repo.raw.get(oid), pygit2.Commit)


def in_history(repo: Repo, head: str | None, oid: str) -> bool:
    """True when commit `oid` is `head` or one of its ancestors (`git merge-base
    --is-ancestor`)."""
    if head is None or not exists(repo, oid):
        return False
    return head == oid or bool(repo.raw.descendant_of(head, oid))


def commit_view(repo: Repo, oid: str, *, patch: bool = False, width: int = 80) -> CommitView | None:
    """Subject, time, diffstat (against the first parent) and optionally the patch of
    commit `oid`, or None when it is not in the repository. Renames are not detected
    (dream commits create, change and delete files; they never rename)."""

    commit = repo.raw.get(oid)
    if not isinstance(commit, pygit2.Commit):
        return None
    parent = commit.parents[0] if commit.parents else None
    diff = (
        repo.raw.diff(parent.tree, commit.tree) if parent is not None else commit.tree.diff_to_tree(swap=True)
    )
    letters = {
        DeltaStatus.ADDED: "A",
        DeltaStatus.DELETED: "D",
        DeltaStatus.MODIFIED: "M",
        DeltaStatus.RENAMED: "R",
        DeltaStatus.TYPECHANGE: "T",
    }
    view = CommitView(
        oid=str(commit.id),
        subject=commit.message.split("\n", 1)[0].strip(),
        time=_iso(commit.commit_time),
        parent=str(parent.id) if parent is not None else None,
    )
    drawn: list[StatFile] = []
    for one in diff:
        delta = one.delta
        _context, added, deleted = one.line_stats
        path = delta.new_file.path if delta.status != DeltaStatus.DELETED else delta.old_file.path
        view.files.append(FileStat(path, letters.get(delta.status, "M"), added, deleted))
        drawn.append(_stat_file(delta, path, added, deleted))
    # Drawn as git draws it: libgit2's DiffStats.format scales the graph its own way.
    view.stat = format_stat(drawn, width)
    if patch:
        view.patch = diff.patch or ""
    return view


def _stat_file(delta: pygit2.DiffDelta, path: str, added: int, deleted: int) -> StatFile:
    """One file of `format_stat`, with git's summary line for a created or deleted file
    or a mode change."""
    old, new = delta.old_file.mode, delta.new_file.mode
    summary = None
    if delta.status == DeltaStatus.ADDED:
        summary = f"create mode {new:06o}"
    elif delta.status == DeltaStatus.DELETED:
        summary = f"delete mode {old:06o}"
    elif old != new:
        summary = f"mode change {old:06o} => {new:06o}"
    sizes = (delta.old_file.size, delta.new_file.size)
    return StatFile(path, added, deleted, binary=bool(delta.is_binary), sizes=sizes, summary=summary)


def changed_paths(repo: Repo, oid: str) -> list[str]:
    """Paths commit `oid` changed against its first parent (every path for a root
    commit), sorted."""

    commit = repo.raw[oid].peel(pygit2.Commit)
    if commit.parents:
        diff = commit.parents[0].tree.diff_to_tree(commit.tree)
    else:
        diff = commit.tree.diff_to_tree(swap=True)
    out = set()
    for delta in diff.deltas:
        out.add(delta.old_file.path)
        out.add(delta.new_file.path)
    return sorted(out)


def later_changes(repo: Repo, since: str, head: str, path: str, limit: int = 3) -> list[tuple[str, str]]:
    """Up to `limit` commits after `since` up to `head` that changed `path`, newest
    first, as `(oid, subject)` — what `git log since..head -- path` lists first. The
    walk is bounded (at most 5000 commits)."""

    found: list[tuple[str, str]] = []
    walker = repo.raw.walk(pygit2.Oid(hex=head), SortMode.TIME)
    walker.hide(pygit2.Oid(hex=since))
    for count, commit in enumerate(walker):
        if count >= 5000 or len(found) >= limit:
            break
        mine = _entry_id(commit.tree, path)
        parents = [_entry_id(p.tree, path) for p in commit.parents] or [None]
        if all(mine != other for other in parents):
            found.append((str(commit.id), commit.message.split("\n", 1)[0].strip()))
    return found


def _entry_id(tree: pygit2.Tree, path: str) -> str | None:
    try:
        return str(tree[path].id)
    except KeyError:
        return None


@dataclass(frozen=True)
class FileAt:
    """The result of reading `path` at a commit named by a prefix: `commit` (full id) and
    `data` (the blob's bytes) when found, else `problem` (why not)."""

    commit: str | None
    data: bytes | None
    problem: str | None = None


def file_at(repo: Repo, commit_prefix: str, path: str) -> FileAt:
    """Read `path` at the commit named by `commit_prefix` (hex, 4-40 digits).

    Never raises: a prefix that names no commit, an ambiguous prefix, a path missing at
    that commit, a directory or a submodule give `FileAt(..., problem=...)`.
    """

    try:
        obj = repo.raw.get(commit_prefix)
    except ValueError as exc:  # ambiguous or malformed prefix
        reason = str(exc).lower()
        if "ambiguous" in reason:
            return FileAt(None, None, f"commit prefix {commit_prefix} is ambiguous")
        return FileAt(None, None, f"{commit_prefix} is not a commit id")
    except (KeyError, pygit2.GitError):
        obj = None
    if obj is None:
        return FileAt(None, None, f"commit {commit_prefix} is not in this repository")
    if not isinstance(obj, pygit2.Commit):
        return FileAt(None, None, f"{commit_prefix} names a {obj.type_str}, not a commit")
    oid = str(obj.id)
    try:
        entry = obj.tree[path]
    except KeyError:
        return FileAt(oid, None, f"{path} does not exist at commit {oid[:12]}")
    if not isinstance(entry, pygit2.Blob) or entry.filemode == 0o120000:
        return FileAt(oid, None, f"{path} is not a regular file at commit {oid[:12]}")
    return FileAt(oid, bytes(entry.data))
