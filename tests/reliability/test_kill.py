"""Kill anywhere (issue 8): SIGKILL a real `gitdream revert` (plain, `--replay`,
`--branch`) at every fault point it crosses, a `gitdream run` onto a review branch and in a
linked worktree, and runs at random moments.

After each kill: `git fsck --strict` is clean, the user's staged, unstaged and untracked
work is byte-identical, every file gitdream writes holds either its old or its new bytes;
then the same command completes (or reports that everything was already done) and the
repository ends as after an uninterrupted command: same files, same facts, same watermark,
nothing left behind (temporary files, git or gitdream locks).

`gitdream run` at every point of its own path is in tests/trigger/test_crash.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import git, run_gitdream
from tests.reliability.support import (
    LOCK,
    USER_STATUS,
    agent_repo,
    fsck,
    killed,
    leftovers,
    material,
    memory_tree,
    prepared,
    ref,
    run_json,
    status,
    user_changes,
    user_state,
)

WATERMARK = "refs/gitdream/watermark/ops"
REVIEW = "review"
_REFERENCE: dict[str, dict[str, Any]] = {}


def _dreamed(root: Path) -> dict[str, Any]:
    """agent ops, material, one uninterrupted dream (an experience commit and a definition
    commit that touches SKILL.md and soul.md), then the user's uncommitted work."""
    agent_repo(root)
    material(root)
    receipt = run_json(root, "run")["runs"][0]
    assert receipt["status"] == "ok" and all(receipt["commits"].values()), receipt
    user_changes(root)
    return {"run": receipt["run"], "head": git(root, "rev-parse", "HEAD").strip()}


def _fresh(root: Path) -> dict[str, Any]:
    """agent ops with material not dreamed yet, and the user's uncommitted work."""
    agent_repo(root)
    material(root)
    user_changes(root)
    return {"head": git(root, "rev-parse", "HEAD").strip()}


REVERT_ARGS = {"plain": [], "replay": ["--replay"], "branch": ["--branch", REVIEW]}


def _end_state(root: Path, variant: str) -> dict[str, Any]:
    rev = REVIEW if variant == "branch" else "HEAD"
    return {"tree": memory_tree(root, rev), "watermark": ref(root, WATERMARK), "head": ref(root, "HEAD")}


def _reference(
    factory: pytest.TempPathFactory, key: str, build: Any, args: list[str], variant: str
) -> dict[str, Any]:
    """The end state of the command `args` run uninterrupted on a copy of `key`."""
    name = f"{key}:{' '.join(args)}"
    if name not in _REFERENCE:
        root, meta = prepared(factory, key, build, factory.mktemp("reference") / "repo")
        proc = run_gitdream(root, *[a.format(**meta) for a in args])
        assert proc.returncode == 0, proc.stderr
        state = _end_state(root, variant)
        state["status"] = status(root)
        _REFERENCE[name] = state
    return _REFERENCE[name]


def _after_kill(root: Path, before: dict[str, object], old: dict[str, str], new: dict[str, str]) -> None:
    """Right after a kill: sound repository, user work intact, no half-written file."""
    assert fsck(root) == ""
    assert user_state(root) == before
    for path in set(old) | set(new):
        target = root / path
        on_disk = target.read_text(encoding="utf-8") if target.exists() else None
        assert on_disk in (old.get(path), new.get(path)) or _same_facts(
            on_disk, old.get(path), new.get(path)
        ), path


def _same_facts(on_disk: str | None, *candidates: str | None) -> bool:
    import re

    norm = re.sub(r"@[0-9a-f]{12}`", "@<input>`", on_disk) if on_disk is not None else None
    return norm in candidates


def _finally(root: Path, before: dict[str, object]) -> None:
    assert fsck(root) == ""
    assert user_state(root) == before
    assert status(root) == USER_STATUS
    assert leftovers(root) == []
    assert not (root / LOCK).exists()


def test_revert_finishes_the_update_a_killed_dream_left(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """Regression test: after a dream killed between its branch move and the working-tree
    update, `gitdream revert` did not finish that update first: the write gate took the
    dream's un-synced paths for the user's uncommitted changes and refused ("commit or
    stash your change", which would have undone the dream by hand); and a revert killed
    the same way was answered "already undone" with the working tree still behind."""
    root, meta = prepared(tmp_path_factory, "fresh", _fresh, tmp_path / "repo")
    before = user_state(root)
    old = memory_tree(root)
    proc = run_gitdream(root, "run", env={"GITDREAM_FAULT": "after-ref-move:kill"})
    assert killed(proc)
    assert status(root) != USER_STATUS  # the index and working tree are behind HEAD
    reverted = run_gitdream(root, "revert", "last")
    assert reverted.returncode == 0, reverted.stderr
    assert "finished updating the working tree" in reverted.stderr
    assert memory_tree(root) == old
    _finally(root, before)
    assert ref(root, WATERMARK) is None and ref(root, "HEAD") != meta["head"]


def test_replay_of_an_undone_run_moves_only_the_watermark(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """Regression test: `gitdream revert RUN --replay` killed after its revert commits but
    before its watermark move could never be finished: the next `revert --replay` answered
    "already undone" and the watermark stayed, so the next dream never read the material
    again. Now --replay of an undone run moves just the watermark (same for a plain revert
    followed by --replay)."""
    root, meta = prepared(tmp_path_factory, "dreamed", _dreamed, tmp_path / "repo")
    before = user_state(root)
    assert ref(root, WATERMARK) is not None
    proc = run_gitdream(
        root, "revert", meta["run"], "--replay", env={"GITDREAM_FAULT": "before-watermark:kill"}
    )
    assert killed(proc)
    reverted = memory_tree(root)
    head = ref(root, "HEAD")
    again = run_gitdream(root, "revert", meta["run"], "--replay", "--json")
    assert again.returncode == 0, again.stderr
    document = json.loads(again.stdout)
    assert document["commits"] == [] and document["watermark"]["to"] is None
    assert ref(root, WATERMARK) is None and ref(root, "HEAD") == head and memory_tree(root) == reverted
    _finally(root, before)
    # Once the watermark is back, there is nothing left to do.
    third = run_gitdream(root, "revert", meta["run"], "--replay")
    assert third.returncode == 1 and "already undone" in third.stderr
    # The next dream reads the material again and writes the same memory.
    assert run_gitdream(root, "run").returncode == 0
    assert ref(root, WATERMARK) is not None


def test_a_killed_review_run_leaves_no_half_branch(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """Regression test: `gitdream run --branch NAME` (and `revert --branch NAME`) killed
    between its two commits left branch NAME with half the dream (and the watermark not
    moved); the same command run again was refused: "branch NAME already exists". The
    branch is now created once, with the whole dream and (for run) the watermark."""
    root, meta = prepared(tmp_path_factory, "dreamed", _dreamed, tmp_path / "repo")
    proc = run_gitdream(
        root,
        "revert",
        meta["run"],
        "--branch",
        REVIEW,
        env={"GITDREAM_FAULT": "after-definition-commit:kill"},
    )
    assert killed(proc)
    assert ref(root, REVIEW) is None
    again = run_gitdream(root, "revert", meta["run"], "--branch", REVIEW, "--json")
    assert again.returncode == 0, again.stderr
    assert [c["kind"] for c in json.loads(again.stdout)["commits"]] == ["definition", "experience"]
    assert git(root, "log", "--format=%s", f"HEAD..{REVIEW}").startswith('Revert "dream(ops): experience')

    root, meta = prepared(tmp_path_factory, "fresh", _fresh, tmp_path / "fresh")
    proc = run_gitdream(
        root, "run", "--branch", REVIEW, env={"GITDREAM_FAULT": "after-experience-commit:kill"}
    )
    assert killed(proc)
    assert ref(root, REVIEW) is None and ref(root, WATERMARK) is None
    again = run_gitdream(root, "run", "--branch", REVIEW)
    assert again.returncode == 0, again.stderr
    subjects = git(root, "log", "--format=%s", f"HEAD..{REVIEW}").splitlines()
    assert [s.split(" — ")[0] for s in subjects] == ["dream(ops): definitions", "dream(ops): experience"]
    assert ref(root, WATERMARK) == meta["head"]
