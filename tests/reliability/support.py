"""Shared pieces of the reliability suite: a prepared repository copied per case, the
user's uncommitted work and how to check it survived, and the consistency checks every
case ends with (real git, real subprocesses)."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers import commit_all, git, init_repo, run_gitdream, write

LOGS = "agents/ops/memory/logs/2026/03"
MEMORY = "agents/ops/memory"
LOCK = Path(".git") / "gitdream" / "lock"

_CACHE: dict[str, tuple[Path, object]] = {}


def material(root: Path) -> None:
    """Two committed daily logs: facts for two topics (deploy.md, ci.md) and units for
    SKILL.md, agent.md and soul.md."""
    write(
        root,
        f"{LOGS}/2026-03-01.md",
        "# 2026-03-01\n\n- [deploy] Rollbacks need the previous image tag.\n"
        "- [ci] The integration suite is flaky.\n- Always run the smoke test first. #skill\n"
        "- Escalate to a human after two failed rollbacks. #agent\n",
    )
    write(root, f"{LOGS}/2026-03-02.md", "- [deploy] Yesterday's build is stable.\n- Answer briefly. #soul\n")
    commit_all(root, "logs")


USER_PATHS = (
    "README.md",
    "notes.txt",
    "partly.txt",
    "unstaged.txt",
    f"{MEMORY}/scratch.txt",
    f"{LOGS}/2026-03-03.md",
)


def user_changes(root: Path) -> None:
    """Uncommitted work of every kind, none of it on a path gitdream writes: a staged
    change, an unstaged change, a change staged and then edited again, untracked files
    (one inside the agent's memory folder) and a log the runtime has not committed yet."""
    write(root, "unstaged.txt", "committed\n")
    write(root, "partly.txt", "committed\n")
    commit_all(root, "user files")
    write(root, "README.md", "staged by the user\n")
    git(root, "add", "README.md")
    write(root, "unstaged.txt", "edited, not staged\n")
    write(root, "partly.txt", "staged version\n")
    git(root, "add", "partly.txt")
    write(root, "partly.txt", "edited again after staging\n")
    write(root, "notes.txt", "untracked by the user\n")
    write(root, f"{MEMORY}/scratch.txt", "untracked, next to the memory\n")
    write(root, f"{LOGS}/2026-03-03.md", "- not committed yet\n")


def user_state(root: Path) -> dict[str, object]:
    """The user's index entries and bytes of USER_PATHS. (Not `git diff --cached`: right
    after a kill between the branch move and the index update, HEAD is ahead of the index
    by design.)"""
    state: dict[str, object] = {"index": git(root, "ls-files", "-s", "--", *USER_PATHS)}
    for path in USER_PATHS:
        state[path] = (root / path).read_bytes()
    return state


USER_STATUS = sorted(
    [
        "M  README.md",
        "MM partly.txt",
        " M unstaged.txt",
        "?? notes.txt",
        f"?? {MEMORY}/scratch.txt",
        f"?? {LOGS}/2026-03-03.md",
    ]
)


def status(root: Path) -> list[str]:
    return sorted(git(root, "status", "--porcelain", "--untracked-files=all").splitlines())


def fsck(root: Path) -> str:
    """`git fsck --strict` output; empty when the repository is sound (dangling objects
    a killed write leaves are not problems)."""
    return git(root, "fsck", "--strict", "--no-progress", "--no-dangling")


def memory_tree(root: Path, rev: str = "HEAD") -> dict[str, str]:
    """Path → content of every file under agents/ at `rev`, with the input commit of source
    references (`@<12 hex>`) normalised: a run that finishes a killed one reads the same
    entries at a later input commit."""
    files = git(root, "ls-tree", "-r", "--name-only", rev, "agents").split()
    return {p: re.sub(r"@[0-9a-f]{12}`", "@<input>`", git(root, "show", f"{rev}:{p}")) for p in files}


def worktree_matches(root: Path, tree: dict[str, str]) -> bool:
    """True when every file of `tree` has that content in the working tree."""
    return all(
        re.sub(r"@[0-9a-f]{12}`", "@<input>`", (root / p).read_text(encoding="utf-8")) == text
        for p, text in tree.items()
    )


def leftovers(root: Path) -> list[str]:
    """Half-written files: gitdream's temporary files, git lock files and the records of
    the ref locks gitdream holds."""
    found = [str(p) for p in root.rglob("*.gitdream-*.tmp")]
    found += [str(p) for p in (root / ".git").rglob("*.lock")]
    found += [str(p) for p in (root / ".git" / "gitdream" / "reflocks").glob("*")]  # refs.drop_dead_locks
    return found


def ref(root: Path, name: str) -> str | None:
    out = git(root, "rev-parse", "-q", "--verify", name, check=False).strip()
    return out or None


def killed(proc: subprocess.CompletedProcess[str]) -> bool:
    return proc.returncode == -signal.SIGKILL


def agent_repo(root: Path) -> Path:
    """The `agent_repo` fixture's repository, built at `root`."""
    from tests.conftest import AGENT_MD

    init_repo(root)
    write(root, "README.md", "# test repository\n")
    write(root, "agents/ops/agent.md", AGENT_MD)
    write(root, "agents/ops/soul.md", "# ops — persona\n\nCalm.\n")
    write(root, "agents/ops/SKILL.md", "# ops — skills\n\n- Read logs.\n")
    write(root, f"{MEMORY}/MEMORY.md", "# ops — memory index\n\n- [Human topic](human.md)\n")
    write(
        root,
        f"{MEMORY}/human.md",
        "---\nname: human\ndescription: written by a person\ntype: note\n---\n\nKeep.\n",
    )
    commit_all(root, "add agent ops")
    return root


def prepared(
    factory: pytest.TempPathFactory, key: str, build: Callable[[Path], object], dest: Path
) -> tuple[Path, object]:
    """A copy at `dest` of the repository `build(path)` makes once per session under `key`
    (copying is much faster than building: no git commands, no dream), and what `build`
    returned."""
    if key not in _CACHE:
        source = factory.mktemp(f"prepared-{key}") / "repo"
        _CACHE[key] = (source, build(source))
    source, meta = _CACHE[key]
    shutil.copytree(source, dest, symlinks=True)
    return dest, meta


def run_json(root: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, object]:
    proc = run_gitdream(root, *args, "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@contextmanager
def named(where: str, history: list[str] | None = None, err: str = "") -> Iterator[None]:
    """Re-raise any assertion failure inside with `where` in front (the seed, round and
    plan with its timings: what GITDREAM_TEST_SEED needs to replay it), then the person's
    timed actions (`history`) and the command's stderr (`err`), then the original message."""
    try:
        yield
    except AssertionError as error:
        lines = [where]
        if history:
            lines += ["the person's actions (ms after the dream started):", *history]
        if err:
            lines += ["the dream's stderr:", err.rstrip()]
        raise AssertionError("\n".join([*lines, str(error)])) from error


def deep_notes(root: Path) -> None:
    """Re-lay the notes tree two fan-out levels deep (`ab/cd/ef…`), as git lays out a
    notes ref of more than 65 536 notes (someone else's, fetched)."""
    listed = git(root, "notes", "--ref", "gitdream", "list").split()
    lines = "".join(
        f"100644 blob {blob}\t{target[:2]}/{target[2:4]}/{target[4:]}\n"
        for blob, target in zip(listed[::2], listed[1::2], strict=True)
    )
    tree = mktree(root, lines)
    tip = git(root, "commit-tree", tree, "-p", "refs/notes/gitdream", "-m", "Notes fanned out by git").strip()
    git(root, "update-ref", "refs/notes/gitdream", tip)


def mktree(root: Path, lines: str) -> str:
    """The id of the tree `git mktree` makes of `mode type id\tpath` lines whose paths
    may have folders (each folder made by `git mktree` too)."""
    files: list[str] = []
    folders: dict[str, list[str]] = {}
    for line in lines.splitlines():
        meta, path = line.split("\t")
        head, _, rest = path.partition("/")
        if rest:
            folders.setdefault(head, []).append(f"{meta}\t{rest}")
        else:
            files.append(line)
    entries = files + [
        f"040000 tree {mktree(root, chr(10).join(sub))}\t{head}" for head, sub in folders.items()
    ]
    made = subprocess.run(
        ["git", "mktree"],
        cwd=root,
        input="\n".join(entries) + "\n",
        capture_output=True,
        text=True,
        check=True,
    )
    return made.stdout.strip()


def clone_with_hooks(tmp_path: Path) -> tuple[Path, Path]:
    """A bare remote, the collaborator's clone (`upstream`) and the user's clone (`local`)
    with gitdream's post-merge hook installed (the real interpreter). The user has not
    dreamed yet, so a pull fast-forwards and the hook dreams at once."""
    import sys

    from gitdream.git.repo import Repo
    from gitdream.trigger import hookscripts

    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    upstream = agent_repo(tmp_path / "upstream")
    material(upstream)
    git(upstream, "remote", "add", "origin", str(remote))
    git(upstream, "push", "-q", "origin", "main")
    local = tmp_path / "local"
    git(tmp_path, "clone", "-q", str(remote), str(local))
    hookscripts.install(Repo.open(local), hooks=["post-merge"], python=sys.executable)
    return upstream, local
