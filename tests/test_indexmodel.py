"""The in-memory index (`gitdream.git.indexmodel`) against git itself: what it reads, what
it writes, and that a run of many commits sees every change someone else makes to the
index between them (issue 16, case 14)."""

from __future__ import annotations

import os
import shutil
import struct
import time
from pathlib import Path

import pytest

from gitdream import config
from gitdream.agents import list_agents
from gitdream.errors import WriteRefused
from gitdream.git import commitbuilder, indexmodel
from gitdream.git.commitbuilder import Change
from gitdream.git.repo import Repo
from tests.helpers import commit_all, git, write

MEM = "agents/ops/memory"
BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # the empty blob
OTHER = "d00491fd7e5bb6fa28c517a0bb32b8b506539d4d"  # "1\n"
IDENT = commitbuilder.Identity(
    ("gitdream", "gitdream@gitdream.invalid"), ("Test User", "test@example.invalid")
)


def _ls(root: Path, index: Path | None = None) -> str:
    env = {**os.environ, "GIT_INDEX_FILE": str(index)} if index else None
    return git(root, "ls-files", "-s", "-v", env=env)


def _rich_index(root: Path) -> None:
    """An index with what real ones hold: nested folders, an executable, a link, a path
    longer than the 12-bit name length, skip-worktree and assume-unchanged bits (version
    3), an intent-to-add entry, a conflicted path, and git's cache tree."""
    write(root, "run.sh", "#!/bin/sh\n")
    os.chmod(root / "run.sh", 0o755)
    os.symlink("README.md", root / "link")
    write(root, "x-y", "a\n")
    write(root, "x/y", "b\n")
    write(root, "x0", "c\n")
    commit_all(root, "rich")
    long_path = "deep/" + "d" * 4200
    records = [
        f"100644 {BLOB}\t{long_path}",
        f"100644 {BLOB} 1\tclash.md",
        f"100644 {OTHER} 2\tclash.md",
        f"100644 {BLOB} 3\tclash.md",
    ]
    git(root, "update-index", "--index-info", input=("\n".join(records) + "\n").encode())
    git(root, "update-index", "--skip-worktree", "x0")
    git(root, "update-index", "--assume-unchanged", "x-y")
    write(root, "new.txt", "intent\n")
    git(root, "add", "-N", "new.txt")


def _parse(root: Path) -> indexmodel.Snapshot:
    index = root / ".git" / "index"
    return indexmodel.Snapshot.parse(index.read_bytes(), int(index.stat().st_mtime))


def test_an_index_read_and_written_again_is_the_same_to_git(agent_repo: Path, tmp_path: Path) -> None:
    _rich_index(agent_repo)
    copy = tmp_path / "index"
    copy.write_bytes(_parse(agent_repo).serialize())
    assert _ls(agent_repo, copy) == _ls(agent_repo)
    lines = _ls(agent_repo, copy).splitlines()
    assert any(line.startswith("S ") and line.endswith("\tx0") for line in lines)  # skip-worktree
    assert any(line.startswith("h ") and line.endswith("\tx-y") for line in lines)  # assume-unchanged


def test_changes_are_applied_as_git_update_index_applies_them(agent_repo: Path, tmp_path: Path) -> None:
    _rich_index(agent_repo)
    changes: dict[str, tuple[int, str] | None] = {
        f"{MEM}/MEMORY.md": (0o100644, OTHER),  # replace
        f"{MEM}/new/topic.md": (0o100644, BLOB),  # add, in a new folder
        f"{MEM}/human.md": None,  # remove
        "clash.md": (0o100755, OTHER),  # three conflict stages become one entry
        "x.z": (0o100644, BLOB),  # sorts between x-y, x/y and x0 as git sorts bytes
        "gone.md": None,  # removing what is not there
    }
    ours = tmp_path / "ours"
    ours.write_bytes(_parse(agent_repo).apply(changes).serialize())
    theirs = tmp_path / "theirs"
    shutil.copyfile(agent_repo / ".git" / "index", theirs)
    records = [
        (f"0 {'0' * 40}" if change is None else f"{change[0]:o} {change[1]}") + f"\t{path}"
        for path, change in changes.items()
    ]
    env = {**os.environ, "GIT_INDEX_FILE": str(theirs)}
    git(agent_repo, "update-index", "--index-info", input=("\n".join(records) + "\n").encode(), env=env)
    assert _ls(agent_repo, ours) == _ls(agent_repo, theirs)
    assert "clash.md" in _ls(agent_repo, ours)


def test_a_racily_clean_entry_is_smudged_so_a_same_second_edit_stays_visible(agent_repo: Path) -> None:
    """git's racy-git rule: an entry whose file changed in the second the index was
    written looks clean by its stat data once the index is rewritten later — unless its
    size is zeroed in the rewrite (`ce_smudge_racily_clean_entry`). Without it, the edit
    below would vanish from `git status` after gitdream's commit."""
    git(agent_repo, "config", "core.trustctime", "false")
    past = time.time() - 100
    target = agent_repo / "agents/ops/soul.md"
    os.utime(target, (past, past))
    git(agent_repo, "add", "agents/ops/soul.md")
    git(agent_repo, "update-index", "--refresh")
    index = agent_repo / ".git" / "index"
    os.utime(index, (past, past))  # the index written in the same second as the file
    with target.open("r+b") as handle:  # an edit of the same size, in place, same mtime
        data = handle.read()
        handle.seek(0)
        handle.write(data.replace(b"Calm", b"Wary"))
    os.utime(target, (past, past))
    # (git sees it, comparing content; --no-optional-locks: without rewriting the index)
    assert git(agent_repo, "--no-optional-locks", "status", "--porcelain") == " M agents/ops/soul.md\n"
    snapshot = _parse(agent_repo).apply({f"{MEM}/other.md": (0o100644, BLOB)})
    entry = snapshot.raw[snapshot.paths.index(b"agents/ops/soul.md")]
    assert struct.unpack_from(">I", entry, 36)[0] == 0  # size smudged
    index.write_bytes(snapshot.serialize())  # a newer index, as gitdream's commit writes it
    assert " M agents/ops/soul.md" in git(agent_repo, "status", "--porcelain")


def _run(root: Path) -> tuple[Repo, object]:
    repo = Repo.open(root)
    return repo, list_agents(root, config.load(root, env={}))[0]


def _commit(repo: Repo, agent: object, path: str, data: bytes) -> None:
    message = commitbuilder.format_message("dream(ops): experience", "", [])
    commitbuilder.commit(repo, agent, "experience", [Change(path, data)], message, IDENT)  # type: ignore[arg-type]


def test_a_run_of_commits_sees_every_change_made_to_the_index_between_them(agent_repo: Path) -> None:
    """One process, several commits (a run over many agents): from the second on, the
    index is read from memory — but only while the file on disk is the one gitdream
    wrote. A `git add` between two commits is kept; a bit set between them refuses."""
    repo, agent = _run(agent_repo)
    _commit(repo, agent, f"{MEM}/a.md", b"a\n")  # staged by git; from now on, in memory
    _commit(repo, agent, f"{MEM}/b.md", b"b\n")  # the index parsed, the new one written from memory
    assert repo.memo.get("index-snapshot") is not None
    write(agent_repo, "staged.txt", "the user's\n")
    git(agent_repo, "add", "staged.txt")
    _commit(repo, agent, f"{MEM}/c.md", b"c\n")
    git(agent_repo, "update-index", "--skip-worktree", f"{MEM}/a.md")
    with pytest.raises(WriteRefused, match="skip-worktree"):
        _commit(repo, agent, f"{MEM}/a.md", b"a again\n")
    write(agent_repo, f"{MEM}/b.md", "the user's edit\n")
    with pytest.raises(WriteRefused, match="uncommitted changes"):
        _commit(repo, agent, f"{MEM}/b.md", b"b again\n")
    status = git(agent_repo, "status", "--porcelain", "--untracked-files=no")
    assert status == f" M {MEM}/b.md\nA  staged.txt\n"
    assert any(
        line.startswith("S ") and line.endswith(f"\t{MEM}/a.md") for line in _ls(agent_repo).splitlines()
    )
    assert git(agent_repo, "show", "HEAD:agents/ops/memory/c.md") == "c\n"
    assert git(agent_repo, "fsck", "--strict") == ""


def test_an_index_it_does_not_read_is_left_to_git(agent_repo: Path) -> None:
    git(agent_repo, "update-index", "--index-version", "4")
    repo, agent = _run(agent_repo)
    for name in ("a", "b", "c"):
        _commit(repo, agent, f"{MEM}/{name}.md", name.encode() + b"\n")
    assert repo.memo.get("index-snapshot") is None
    assert (agent_repo / ".git" / "index").read_bytes()[4:8] == struct.pack(">I", 4)
    assert git(agent_repo, "status", "--porcelain", "--untracked-files=no") == ""
    assert f"{MEM}/c.md" in git(agent_repo, "ls-files")
