"""The write gate: may gitdream write this path? (DESIGN §6, "Never lose anyone's work")

For each target path and the kind of write, one verdict: allowed (the path is tracked and
clean, or absent everywhere) or refused with the reason and the next step. The rules, in
the order they are checked:

1. a plain repository-relative path: not empty or absolute, no `\\`, NUL, `.` or `..`
   component, no `.git` component (any case, as git's own verify_path);
2. inside the agent's directory;
3. of the kind the phase may write: memory files (not raw logs) for `experience`, the
   agent's definition files for `definition` (`new`, used by `gitdream init --commit`,
   skips rules 2 and 3 but accepts only absent paths);
4. reached through no symbolic link and no submodule, in the working tree and in HEAD,
   and not itself a directory;
5. not governed by an external filter driver (`filter=lfs` or any `filter=<name>`) or a
   `working-tree-encoding`, which libgit2 cannot apply;
6. inside the sparse checkout, if there is one (`gitdream.git.sparse`: a tracked file
   with the skip-worktree bit, or a new file the sparse patterns leave out, is refused);
7. tracked with index and working tree equal to HEAD (compared by git itself, `git
   ls-files -m -d` limited to the paths written, through the repository's filters, so a
   CRLF checkout of an LF blob is clean), or absent
   from the working tree, the index and HEAD alike and not ignored; a tracked file with
   the assume-unchanged or skip-worktree bit is refused too (git hides a local edit of it).

A verdict also records what the gate saw (`Seen`), so the commit builder can re-check a
file is unchanged right before replacing it. With `tree_only` (review branches, which
touch neither index nor working tree) rules 4 and 7 look at HEAD's tree only, and rule
6 does not apply.
"""

from __future__ import annotations

import os
import stat as stat_mod
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2
from pygit2.enums import FileStatus as F

from gitdream import faults
from gitdream.errors import WriteRefused
from gitdream.git import indexfile, sparse, worktree

if TYPE_CHECKING:
    from gitdream.agents import Agent
    from gitdream.git.indexfile import Listing
    from gitdream.git.repo import Repo

EXPERIENCE = "experience"
DEFINITION = "definition"
NEW_FILES = "new"  # `gitdream init --commit`: new files anywhere in the repository
KINDS = (EXPERIENCE, DEFINITION, NEW_FILES)

_LINK = 0o120000
_GITLINK = 0o160000
_TREE = 0o040000


@dataclass(frozen=True)
class Seen:
    """What the gate saw of a path (its `status`): `absent`, or `clean` with the HEAD blob id and mode and
    the SHA-256 of the working-tree bytes (None when the file was not on disk)."""

    status: str
    head_oid: str | None = None
    head_mode: int | None = None
    worktree_sha256: str | None = None


@dataclass(frozen=True)
class Verdict:
    """The gate's answer for one path: `allowed`, else `reason` and `hint` (next step)."""

    path: str
    allowed: bool
    reason: str | None = None
    hint: str | None = None
    seen: Seen | None = None


def syntax_problem(path: str) -> str | None:
    """Why `path` is not a plain repository-relative POSIX path, or None. Pure."""
    if not path:
        return "the path is empty"
    if "\0" in path:
        return "the path contains a NUL character"
    if "\\" in path:
        return "the path contains a backslash"
    if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        return "the path is absolute"
    for part in path.split("/"):
        if part in ("", "."):
            return "the path has an empty or '.' component"
        if part == "..":
            return "the path has a '..' component (it would leave its folder)"
        if part.rstrip(". ").lower() == ".git":
            return "the path is inside .git"
    return None


def file_sha256(workdir: Path, path: str) -> str | None:
    """SHA-256 (hex) of the working-tree file `path`, reached through no link and opened
    only when it is a regular file (`worktree.sha256`: its markers otherwise); None when it
    does not exist, "unreadable" when the file system refuses (a re-check then never
    matches it)."""
    try:
        return worktree.sha256(workdir, path)
    except OSError:
        return "unreadable"


def _refuse(path: str, reason: str, hint: str) -> Verdict:
    """A refusal; `reason` names `path` itself or gets it as a prefix."""
    if not reason.startswith(path + " "):
        reason = f"{path}: {reason}"
    return Verdict(path, False, reason, hint)


def _worktree_link_problem(workdir: Path, path: str) -> tuple[str, str] | None:
    parts = path.split("/")
    current = workdir
    for index, part in enumerate(parts):
        current = current / part
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            return (f"{'/'.join(parts[:index])} is not a directory", "move that file away")
        shown = "/".join(parts[: index + 1])
        if stat_mod.S_ISLNK(st.st_mode):
            return (
                f"{shown} is a symbolic link; gitdream never writes through links",
                f"replace the link {shown} with a real folder or file, or change the config",
            )
        last = index == len(parts) - 1
        if not last and not stat_mod.S_ISDIR(st.st_mode):
            return (f"{shown} is not a directory", f"move {shown} away, then run again")
        if last and stat_mod.S_ISDIR(st.st_mode):
            return (f"{shown} is a directory", f"move the directory {shown} away, then run again")
    return None


def _tree_problem(repo: Repo, path: str) -> tuple[str, str] | None:
    """Links, submodules or directories in HEAD's tree along `path`."""

    head = repo.head()
    if head.oid is None:
        return None
    tree = repo.raw[head.oid].peel(pygit2.Tree)
    parts = path.split("/")
    for index in range(len(parts)):
        shown = "/".join(parts[: index + 1])
        try:
            entry = tree[shown]
        except KeyError:
            return None
        mode = entry.filemode
        last = index == len(parts) - 1
        if mode == _LINK:
            return (
                f"{shown} is a symbolic link in HEAD; gitdream never writes through links",
                f"replace the link {shown} with a real file or folder and commit that",
            )
        if mode == _GITLINK:
            return (
                f"{shown} is a submodule; gitdream writes only inside its own repository",
                "run gitdream inside the submodule instead",
            )
        if last and mode == _TREE:
            return (f"{shown} is a directory in HEAD", f"move the directory {shown} away")
        if not last and mode != _TREE:
            return (f"{shown} is a file in HEAD, not a directory", f"move {shown} away")
    return None


def _filter_problem(repo: Repo, path: str) -> tuple[str, str] | None:
    driver = repo.raw.get_attr(path, "filter")
    if driver not in (None, False):
        return (
            f"{path} is governed by the external filter driver filter={driver} "
            "(e.g. Git LFS), which libgit2 cannot run",
            "exclude the path from that filter in .gitattributes, or move the memory elsewhere",
        )
    encoding = repo.raw.get_attr(path, "working-tree-encoding")
    if encoding not in (None, False):
        return (
            f"{path} has working-tree-encoding={encoding}, which libgit2 cannot apply",
            "remove the working-tree-encoding attribute for this path",
        )
    return None


def _status_problem(repo: Repo, path: str, flags: int) -> tuple[str, str]:

    if flags & F.CONFLICTED:
        return (f"{path} has a merge conflict", f"resolve the conflict in {path} and commit it")
    if flags & (F.INDEX_NEW | F.INDEX_MODIFIED | F.INDEX_DELETED | F.INDEX_RENAMED | F.INDEX_TYPECHANGE):
        return (
            f"{path} has staged changes",
            f"commit or unstage your change to {path} (git restore --staged {path}), then run again",
        )
    if flags & F.WT_DELETED:
        return (
            f"{path} is deleted in the working tree but not in HEAD",
            f"restore it (git restore {path}) or commit the deletion, then run again",
        )
    return (
        f"{path} has uncommitted changes",
        f"commit or stash your change to {path}, then run again",
    )


def check(
    repo: Repo,
    agent: Agent | None,
    paths: Iterable[str],
    kind: str,
    *,
    tree_only: bool = False,
) -> list[Verdict]:
    """Return one Verdict per path (in order) for writing `paths` as `kind`.

    `kind` is "experience", "definition" or "new" (`agent` may then be None). Reads
    HEAD, the index and the working tree; writes nothing. Raises ValueError for an
    unknown kind (a programming error).
    """
    if kind not in KINDS:
        raise ValueError(f"unknown write kind {kind!r}")
    paths = list(paths)
    plain = [p for p in paths if syntax_problem(p) is None]
    # The bytes first (through no link, never opening anything but a regular file), then
    # the look that says they are HEAD's (issue 16): read after the look, they could be an
    # edit made in between, which the re-check under index.lock and the working-tree update
    # would then take for the pre-dream bytes, and overwrite.
    sha = {} if tree_only else {p: file_sha256(repo.workdir, p) for p in plain}
    # One look at the index for all of them, limited to them (issue 16: not the tree).
    listed = None if tree_only else indexfile.listing(repo, plain)
    faults.point("after-gate-look")
    verdicts = []
    for path in paths:
        verdicts.append(_check_one(repo, agent, path, kind, listed, sha.get(path)))
    if listed is not None:
        verdicts = _hidden_changes(listed, verdicts)
    return verdicts


def _hidden_changes(listed: Listing, verdicts: list[Verdict]) -> list[Verdict]:
    """Refuse tracked paths whose index entry has the assume-unchanged or skip-worktree
    bit: git then stops comparing the file with the index, so a local edit is invisible
    to every status — libgit2's included — and a write would destroy it (issue 16), and
    `git update-index --index-info` would clear the bit the user set."""
    tracked = [v.path for v in verdicts if v.allowed and v.seen is not None and v.seen.status == "clean"]
    if not tracked:
        return verdicts
    found = listed.entries
    out = []
    for verdict in verdicts:
        entry = found.get(verdict.path, [None])[0] if verdict.path in tracked else None
        if entry is not None and (entry.assume_unchanged or entry.skip_worktree):
            bit = "assume-unchanged" if entry.assume_unchanged else "skip-worktree"
            verdict = _refuse(
                verdict.path,
                f"{verdict.path} is marked {bit} in the index, so git hides any local change to it "
                "and gitdream cannot tell whether writing it would overwrite yours",
                f"clear the bit (git update-index --no-{bit} {verdict.path}), check `git diff {verdict.path}`, "
                "commit or stash your change, then run again",
            )
        out.append(verdict)
    return out


def _check_one(
    repo: Repo, agent: Agent | None, path: str, kind: str, listed: Listing | None, sha: str | None = None
) -> Verdict:
    tree_only = listed is None
    problem = syntax_problem(path)
    if problem is not None:
        return _refuse(path, problem, "gitdream writes only plain paths inside the agent's folder")
    if kind == NEW_FILES or agent is None:
        found = _tree_problem(repo, path) or _worktree_link_problem(repo.workdir, path)
        if found is not None:
            return _refuse(path, *found)
        verdict = _status_verdict(repo, path, listed, sha)
        if verdict.allowed and verdict.seen and verdict.seen.status != "absent":
            return _refuse(path, f"{path} already exists", "gitdream init never overwrites a file")
        return verdict
    if not agent.contains(path):
        return _refuse(
            path,
            f"outside the directory of agent {agent.id} ({agent.dir or '.'})",
            "a dream writes only inside its own agent's folder",
        )
    if kind == EXPERIENCE and not agent.is_memory_path(path):
        why = "a raw log or transcript" if agent.is_source(path) else "not in the memory folder"
        return _refuse(
            path,
            f"the experience commit may write only memory files, and this is {why}",
            f"memory files live under {agent.memory_dir}/ (raw logs are never rewritten)",
        )
    if kind == DEFINITION and not agent.is_definition_path(path):
        return _refuse(
            path,
            "the definition commit may write only the agent's definition files",
            "definitions are " + ", ".join(agent.definition_files),
        )
    found = _tree_problem(repo, path)
    if found is None and not tree_only:
        found = _worktree_link_problem(repo.workdir, path)
    if found is None:
        found = _filter_problem(repo, path)
    if found is not None:
        return _refuse(path, *found)
    return _status_verdict(repo, path, listed, sha)


def _status_verdict(repo: Repo, path: str, listed: Listing | None, sha: str | None = None) -> Verdict:
    """The verdict from HEAD and `listed` (git's look at the index and working tree);
    `sha`: the SHA-256 of the working-tree bytes, read before that look."""
    head = repo.head()
    entry = None
    if head.oid is not None:
        tree = repo.raw[head.oid].peel(pygit2.Tree)
        try:
            entry = tree[path]
        except KeyError:
            entry = None
    if listed is None:
        if entry is None:
            return Verdict(path, True, seen=Seen("absent"))
        return Verdict(path, True, seen=Seen("clean", str(entry.id), entry.filemode))
    if sparse.enabled(repo):
        found = sparse.problem(repo, path, tracked=entry is not None)
        if found is not None:
            return _refuse(path, *found)
    if entry is not None:
        flags = _status_flags(listed, path, str(entry.id), entry.filemode)
        if flags != 0:
            return _refuse(path, *_status_problem(repo, path, flags))
        return Verdict(path, True, seen=Seen("clean", str(entry.id), entry.filemode, sha))
    # Not in HEAD: it must be absent from the index and the working tree, and not ignored.
    if path in listed.entries:
        return _refuse(
            path,
            f"{path} is staged but not committed",
            f"commit it, or unstage it (git rm --cached {path}), then run again",
        )
    if os.path.lexists(repo.workdir / path):
        return _refuse(
            path,
            f"{path} is untracked: it exists in the working tree but was never committed",
            f"commit {path}, or move it away, then run again",
        )
    if repo.raw.path_is_ignored(path):
        return _refuse(
            path,
            f"{path} is ignored by a .gitignore rule, so a dream commit of it would surprise you",
            f"remove the rule that ignores {path} (see `git check-ignore -v {path}`)",
        )
    return Verdict(path, True, seen=Seen("absent"))


def _status_flags(listed: Listing, path: str, head_oid: str, head_mode: int) -> int:
    """libgit2's status flags (`pygit2.enums.FileStatus`) of a path tracked in HEAD, from
    git's own look at its index entry and working-tree file (`indexfile.listing`): what
    `Repository.status_file` answered, without a status over the whole repository."""
    entries = listed.entries.get(path, [])
    flags = 0
    if any(e.stage != 0 for e in entries):
        flags |= F.CONFLICTED
    elif not entries:
        flags |= F.INDEX_DELETED
    elif (entries[0].oid, entries[0].mode) != (head_oid, head_mode):
        flags |= F.INDEX_MODIFIED
    if path in listed.deleted:
        flags |= F.WT_DELETED
    elif path in listed.modified:
        flags |= F.WT_MODIFIED
    return int(flags)


def require(
    repo: Repo, agent: Agent | None, paths: Iterable[str], kind: str, *, tree_only: bool = False
) -> dict[str, Verdict]:
    """Like `check`, but raise WriteRefused (every refusal listed) unless all are allowed.

    Returns `{path: Verdict}` for the allowed paths.
    """
    verdicts = check(repo, agent, paths, kind, tree_only=tree_only)
    refused = [v for v in verdicts if not v.allowed]
    if refused:
        if len(refused) == 1:
            message = f"refusing to write: {refused[0].reason}"
        else:
            message = "refusing to write:\n" + "\n".join(f"  {v.reason}" for v in refused)
        hints = []
        for v in refused:
            if v.hint and v.hint not in hints:
                hints.append(v.hint)
        raise WriteRefused(message, hint="; ".join(hints), paths=[v.path for v in refused])
    return {v.path: v for v in verdicts}
