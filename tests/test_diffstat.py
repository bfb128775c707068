"""`gitdream show` draws a commit's diffstat as `git show --stat` does.

libgit2's `DiffStats.format` drew a `-` on files with only insertions once long paths made
it scale the graph (`17 +++++++++++++-`, the new user's report); the stat is now computed
with git's own rule (diff.c, `show_stats`), and every case here is compared with the real
`git show --stat=WIDTH --summary` of the same commit (names unquoted, as with
`core.quotePath=false`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitdream.git.history import commit_view
from gitdream.git.repo import Repo
from tests.helpers import commit_all, git, write

LONG = "agents/kit/memory/" + "attestation-signer-and-a-rather-long-topic-name"


def _git_stat(repo: Path, oid: str, width: int) -> str:
    out = git(repo, "-c", "core.quotePath=false", "show", f"--stat={width}", "--summary", "--format=", oid)
    return out.lstrip("\n")


def _commits(root: Path) -> list[str]:
    """Commits of the shapes a stat must get right: long paths with only insertions (the
    report's case), a mix of small and large changes, deletions only, edits that add and
    delete, a deleted file, a mode change, a wide-character name and a short one."""
    write(root, "keep.md", "".join(f"line {i}\n" for i in range(40)))
    first = commit_all(root, "base")
    for n, size in enumerate((17, 21, 9, 48, 3, 55)):
        write(root, f"{LONG}-{n}.md", "".join(f"fact {i}\n" for i in range(size)))
    only_insertions = commit_all(root, "only insertions, long paths")
    write(root, "keep.md", "".join(f"line {i}\n" for i in range(0, 40, 3)))
    write(root, f"{LONG}-0.md", "changed\n" + "".join(f"fact {i}\n" for i in range(1, 17)) + "more\n" * 90)
    mixed = commit_all(root, "deletions and a large insertion")
    git(root, "rm", "-q", f"{LONG}-1.md")
    write(root, "短い名前.md", "一\n二\n")
    write(root, "run.sh", "#!/bin/sh\n")
    deleted = commit_all(root, "a deletion, a wide name")
    (root / "run.sh").chmod(0o755)
    write(root, "a.md", "x\n")
    mode = commit_all(root, "a mode change")
    return [first, only_insertions, mixed, deleted, mode]


@pytest.mark.parametrize("width", [40, 60, 80, 100, 140, 200])
def test_show_stat_is_what_git_show_stat_prints(git_repo: Path, width: int) -> None:
    repo = Repo.open(git_repo)
    for oid in _commits(git_repo):
        view = commit_view(repo, oid, width=width)
        assert view is not None
        assert view.stat == _git_stat(git_repo, oid, width), f"commit {oid[:7]} at width {width}"


def test_a_file_with_only_insertions_draws_no_deletion(git_repo: Path) -> None:
    oid = _commits(git_repo)[1]
    view = commit_view(Repo.open(git_repo), oid, width=80)
    assert view is not None
    lines = [line for line in view.stat.splitlines() if " | " in line]
    assert len(lines) == 6 and not any("-" in line.split(" | ", 1)[1] for line in lines)
