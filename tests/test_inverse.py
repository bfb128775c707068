"""git.inverse: a commit's inverse on a later tree, case by case (real repositories)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitdream.git.inverse import inverse, patch_text
from gitdream.git.repo import Repo
from tests.helpers import commit_all, git, head, write

LINES = "".join(f"line {n}\n" for n in range(1, 11))


def _inverse(root: Path, commit: str) -> tuple[dict[str, bytes | None], dict[str, str], list[str]]:
    result = inverse(Repo.open(root), commit, head(root))
    return (
        {c.path: c.data for c in result.changes},
        {c.path: c.reason for c in result.conflicts},
        result.unchanged,
    )


def test_each_case_of_the_three_way_rule(git_repo: Path) -> None:
    write(git_repo, "changed.md", LINES)
    write(git_repo, "deleted.md", "kept before\n")
    write(git_repo, "deleted-then-recreated.md", "old\n")
    write(git_repo, "changed-then-deleted.md", LINES)
    write(git_repo, "undone.md", LINES)
    commit_all(git_repo, "base")
    write(git_repo, "changed.md", LINES.replace("line 2\n", "line two\n"))
    write(git_repo, "created.md", "new\n")
    write(git_repo, "created-then-changed.md", "new\n")
    for name in ("deleted.md", "deleted-then-recreated.md"):
        (git_repo / name).unlink()
    write(git_repo, "changed-then-deleted.md", LINES + "more\n")
    write(git_repo, "undone.md", LINES + "more\n")
    run = commit_all(git_repo, "the run")
    # Later work: elsewhere in changed.md (merges), and conflicting changes.
    write(git_repo, "changed.md", LINES.replace("line 2\n", "line two\n").replace("line 9\n", "line nine\n"))
    write(git_repo, "created-then-changed.md", "new, edited\n")
    write(git_repo, "deleted-then-recreated.md", "someone else's\n")
    (git_repo / "changed-then-deleted.md").unlink()
    write(git_repo, "undone.md", LINES)
    commit_all(git_repo, "later")

    changes, conflicts, unchanged = _inverse(git_repo, run)
    assert changes == {
        "changed.md": LINES.replace("line 9\n", "line nine\n").encode(),
        "created.md": None,
        "deleted.md": b"kept before\n",
    }
    assert conflicts == {
        "created-then-changed.md": "created by the run, and changed since",
        "deleted-then-recreated.md": "deleted by the run, and created again since",
        "changed-then-deleted.md": "changed by the run, and deleted since",
    }
    assert unchanged == ["undone.md"]


def test_same_and_adjacent_lines_conflict_like_git(git_repo: Path) -> None:
    write(git_repo, "f.md", LINES)
    commit_all(git_repo, "base")
    write(git_repo, "f.md", LINES.replace("line 5\n", "line five\n"))
    run = commit_all(git_repo, "the run")
    write(git_repo, "f.md", LINES.replace("line 5\n", "line five\n").replace("line 6\n", "line six\n"))
    commit_all(git_repo, "adjacent")
    _changes, conflicts, _unchanged = _inverse(git_repo, run)
    assert conflicts == {"f.md": "the same lines were changed since the run"}
    # git revert agrees.
    proc = git(git_repo, "revert", "--no-edit", run, check=False)
    assert "CONFLICT" in proc or git(git_repo, "status", "--porcelain").startswith("UU")
    git(git_repo, "revert", "--abort")


def test_merge_commits_are_not_inverted(git_repo: Path) -> None:
    git(git_repo, "checkout", "-q", "-b", "side")
    write(git_repo, "side.md", "side\n")
    commit_all(git_repo, "side")
    git(git_repo, "checkout", "-q", "main")
    write(git_repo, "main.md", "main\n")
    commit_all(git_repo, "main")
    git(git_repo, "merge", "-q", "--no-edit", "side")
    with pytest.raises(ValueError, match="2 parents"):
        inverse(Repo.open(git_repo), head(git_repo), head(git_repo))


def test_patch_text_is_git_style() -> None:
    assert patch_text("a.md", None, b"x\n").startswith("diff --git a/a.md b/a.md\nnew file mode 100644\n")
    assert "deleted file mode 100644\n" in patch_text("a.md", b"x\n", None)
    assert "-x\n+y\n" in patch_text("a.md", b"x\n", b"y\n")
