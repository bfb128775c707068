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
import os
import random
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from gitdream.faults import REVERT_POINTS
from tests.helpers import git, popen, run_gitdream
from tests.reliability.support import (
    LOCK,
    USER_STATUS,
    agent_repo,
    deep_notes,
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
        start = time.monotonic()
        proc = run_gitdream(root, *[a.format(**meta) for a in args])
        assert proc.returncode == 0, proc.stderr
        state = _end_state(root, variant)
        state["seconds"] = time.monotonic() - start
        state["status"] = status(root)
        _REFERENCE[name] = state
    return _REFERENCE[name]


def _after_kill(
    root: Path, before: dict[str, object], old: dict[str, str], new: dict[str, str], where: str = ""
) -> None:
    """Right after a kill: sound repository, user work intact, no half-written file
    (`where` names the kill in the messages)."""
    assert fsck(root) == "", where
    assert user_state(root) == before, where
    for path in set(old) | set(new):
        target = root / path
        on_disk = target.read_text(encoding="utf-8") if target.exists() else None
        assert on_disk in (old.get(path), new.get(path)) or _same_facts(
            on_disk, old.get(path), new.get(path)
        ), (path, where)


def _same_facts(on_disk: str | None, *candidates: str | None) -> bool:
    import re

    norm = re.sub(r"@[0-9a-f]{12}`", "@<input>`", on_disk) if on_disk is not None else None
    return norm in candidates


def _finally(root: Path, before: dict[str, object], where: str = "") -> None:
    assert fsck(root) == "", where
    assert user_state(root) == before, where
    assert status(root) == USER_STATUS, where
    assert leftovers(root) == [], where
    assert not (root / LOCK).exists(), where


REVERT_CASES = (
    [("plain", p) for p in REVERT_POINTS if p != "before-watermark"]
    # The second (experience) commit once its branch moved. Its earlier points leave the
    # state `after-definition-commit` leaves; `before-receipt` needs no second look.
    + [("plain", f"{p}@2") for p in ("after-ref-move", "before-index-update")]
    + [("replay", p) for p in ("after-ref-move@2", "before-watermark")]
    # On a review branch the commits are only built; the branch is created once, at the end.
    + [("branch", p) for p in ("before-ref-move", "after-ref-move")]
)


@pytest.mark.parametrize(("variant", "point"), REVERT_CASES)
def test_kill_revert_then_revert_again(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, variant: str, point: str
) -> None:
    args = ["revert", "{run}", *REVERT_ARGS[variant]]
    expected = _reference(tmp_path_factory, "dreamed", _dreamed, args, variant)
    root, meta = prepared(tmp_path_factory, "dreamed", _dreamed, tmp_path / "repo")
    command = [a.format(**meta) for a in args]
    before = user_state(root)
    old = memory_tree(root)
    watermark = ref(root, WATERMARK)

    proc = run_gitdream(root, *command, env={"GITDREAM_FAULT": f"{point}:kill"})
    assert killed(proc), (point, proc.returncode, proc.stderr)
    _after_kill(root, before, old, expected["tree"] if variant != "branch" else old)
    if variant == "branch":
        assert memory_tree(root) == old and ref(root, "HEAD") == meta["head"]

    again = run_gitdream(root, *command)
    if again.returncode != 0:
        # Everything the revert writes was written before the kill: the retry says so.
        assert again.returncode == 1, (point, again.stderr)
        assert "already undone" in again.stderr or "already exists" in again.stderr, again.stderr
    end = _end_state(root, variant)
    assert end["tree"] == expected["tree"], point
    assert end["watermark"] == (expected["watermark"] if variant == "replay" else watermark), point
    if variant == "branch":
        assert ref(root, "HEAD") == meta["head"]
    _finally(root, before)


# after-experience-commit: test_a_killed_review_run_leaves_no_half_branch.
RUN_BRANCH_POINTS = ("before-ref-move", "after-ref-move")


@pytest.mark.parametrize("point", RUN_BRANCH_POINTS)
def test_kill_run_onto_a_review_branch(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, point: str
) -> None:
    args = ["run", "--branch", REVIEW]
    expected = _reference(tmp_path_factory, "fresh", _fresh, args, "branch")
    root, meta = prepared(tmp_path_factory, "fresh", _fresh, tmp_path / "repo")
    before = user_state(root)
    old = memory_tree(root)
    proc = run_gitdream(root, *args, env={"GITDREAM_FAULT": f"{point}:kill"})
    assert killed(proc), (point, proc.returncode, proc.stderr)
    _after_kill(root, before, old, old)
    assert ref(root, "HEAD") == meta["head"] and memory_tree(root) == old

    again = run_gitdream(root, *args)
    if again.returncode != 0:
        # The branch and the watermark moved together before the kill: the dream is done.
        assert again.returncode == 1 and "branch review already exists" in again.stderr, (point, again.stderr)
        assert point == "after-ref-move"
    assert memory_tree(root, REVIEW) == expected["tree"], point
    assert ref(root, "HEAD") == meta["head"] and memory_tree(root) == old
    assert ref(root, WATERMARK) == meta["head"]
    _finally(root, before)


def _worktrees(folder: Path) -> dict[str, Any]:
    """`folder/main` (agent ops, material) and its linked worktree `folder/linked` on
    branch feature, both with the user's uncommitted work."""
    main = folder / "main"
    _fresh(main)
    git(main, "worktree", "add", "-q", "-b", "feature", str(folder / "linked"))
    user_changes(folder / "linked")
    return {}


WORKTREE_POINTS = ("after-ref-move", "mid-worktree-update", "after-experience-commit")


@pytest.mark.parametrize("point", WORKTREE_POINTS)
def test_kill_run_in_a_linked_worktree(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, point: str
) -> None:
    expected = _reference(tmp_path_factory, "fresh", _fresh, ["run"], "plain")
    folder, _meta = prepared(tmp_path_factory, "worktrees", _worktrees, tmp_path / "copy")
    main, linked = folder / "main", folder / "linked"
    # The copy's worktree links still name the original folders: point them at the copy.
    admin = main / ".git" / "worktrees" / "linked"
    (linked / ".git").write_text(f"gitdir: {admin}\n")
    (admin / "gitdir").write_text(f"{linked / '.git'}\n")
    assert git(linked, "rev-parse", "--show-toplevel").strip() == str(linked)
    main_before = user_state(main)
    before = user_state(linked)
    old = memory_tree(linked)

    proc = run_gitdream(linked, "run", env={"GITDREAM_FAULT": f"{point}:kill"})
    assert killed(proc), (point, proc.returncode, proc.stderr)
    _after_kill(linked, before, old, expected["tree"])
    on_disk = {p: (linked / p).read_bytes() for p in expected["tree"] if (linked / p).exists()}
    # A command in the main worktree leaves the linked worktree's unfinished update alone.
    # (Not a dream: the watermark is the agent's, so a dream on main would consume the
    # material the linked branch's unfinished dream still needs.)
    other = run_gitdream(main, "status")
    assert other.returncode == 0, other.stderr
    assert {p: (linked / p).read_bytes() for p in expected["tree"] if (linked / p).exists()} == on_disk
    assert user_state(main) == main_before and status(main) == USER_STATUS

    again = run_gitdream(linked, "run")
    assert again.returncode == 0, (point, again.stderr)
    assert memory_tree(linked) == expected["tree"], point
    _finally(linked, before)
    assert user_state(main) == main_before and status(main) == USER_STATUS
    assert fsck(main) == ""


def _timed(root: Path, *args: str) -> float:
    start = time.monotonic()
    proc = run_gitdream(root, *args)
    assert proc.returncode == 0, proc.stderr
    return time.monotonic() - start


def _kill_after(root: Path, delay: float, *args: str) -> int:
    proc = popen(root, *args)
    time.sleep(delay)
    proc.kill()
    proc.communicate(timeout=60)
    return proc.returncode


def _dream_with_commits(root: Path) -> str:
    runs = json.loads(run_gitdream(root, "log", "--json").stdout)["runs"]
    return next(r["run"] for r in runs if r["commits"]["experience"] and not r["reverts"])


def test_kill_at_random_moments(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """SIGKILL `gitdream run` (4 times), then `gitdream revert` (twice), after a random
    delay within the time an uninterrupted command takes: each time the repository is
    consistent, and the same command run again completes and ends where an uninterrupted
    one ends. A command that finished before its kill is tried again on a fresh copy with
    half the delay. GITDREAM_TEST_SEED=N replays a failure."""
    seed = int(os.environ.get("GITDREAM_TEST_SEED", time.time_ns() % 100000))
    rng = random.Random(seed)
    for attempt, (key, build, args) in enumerate(
        [("fresh", _fresh, ["run"])] * 4 + [("dreamed", _dreamed, ["revert", "{run}"])] * 2
    ):
        expected = _reference(tmp_path_factory, key, build, args, "plain")
        where = f"seed {seed}, attempt {attempt}"
        delay = rng.uniform(0.2, 0.95) * expected["seconds"]
        for again in range(6):
            root, meta = prepared(tmp_path_factory, key, build, tmp_path / f"repo{attempt}-{again}")
            command = [a.format(**meta) for a in args]
            before = user_state(root)
            old = memory_tree(root)
            proc = popen(root, *command)
            time.sleep(delay)
            proc.kill()
            proc.communicate(timeout=60)
            if killed(proc):
                break
            delay /= 2
        where = f"{where}, `gitdream {' '.join(command)}` killed after {delay:.3f} s (replay: GITDREAM_TEST_SEED={seed})"
        assert killed(proc), f"{where}: the command always finished before its kill"
        _after_kill(root, before, old, expected["tree"], where)
        retry = run_gitdream(root, *command)
        assert retry.returncode == 0 or "already undone" in retry.stderr, (where, retry.stderr)
        assert memory_tree(root) == expected["tree"], where
        _finally(root, before, where)


@pytest.mark.parametrize("command", ["run", "revert"])
def test_ref_locks_of_a_command_killed_while_moving_a_ref_are_removed(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, command: str
) -> None:
    """Regression test (a random kill during `revert`, seed 3454): SIGKILL while libgit2
    held `HEAD.lock` and the branch's lock left them behind, and every later git or
    gitdream write refused until someone removed them by hand. The next gitdream command
    (here `status`) removes exactly the lock files the killed process took."""
    key, build, args = (
        ("fresh", _fresh, ["run"]) if command == "run" else ("dreamed", _dreamed, ["revert", "{run}"])
    )
    root, meta = prepared(tmp_path_factory, key, build, tmp_path / "repo")
    args = [a.format(**meta) for a in args]
    before = user_state(root)
    proc = run_gitdream(root, *args, env={"GITDREAM_FAULT": "refs-locked:kill"})
    assert killed(proc), proc.stderr
    head_lock, branch_lock = root / ".git" / "HEAD.lock", root / ".git" / "refs" / "heads" / "main.lock"
    assert head_lock.exists() and branch_lock.exists()
    assert fsck(root) == "" and user_state(root) == before
    shown = run_gitdream(root, "status")
    assert shown.returncode == 0, shown.stderr
    assert f"removed {head_lock}" in shown.stderr and f"removed {branch_lock}" in shown.stderr
    retry = run_gitdream(root, *args)
    assert retry.returncode == 0, retry.stderr
    _finally(root, before)


def test_a_ref_lock_created_but_not_yet_recorded_when_killed_is_removed(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """Regression test (a random kill of `gitdream run` in the full suite, seed 74664,
    killed after 0.315 s): SIGKILL right after libgit2 created `refs/heads/main.lock` and
    before the record named it left a lock the next command did not remove, and the
    rerun was refused. Each lock is now announced in the record before it is created: the
    next command removes a file created right after the announcement once it is older than
    any git command holds a ref lock (here it waits for that)."""
    root, _meta = prepared(tmp_path_factory, "fresh", _fresh, tmp_path / "repo")
    before = user_state(root)
    proc = run_gitdream(root, "run", env={"GITDREAM_FAULT": "ref-lock-created@2:kill"})
    assert killed(proc), proc.stderr
    head_lock, branch_lock = root / ".git" / "HEAD.lock", root / ".git" / "refs" / "heads" / "main.lock"
    assert head_lock.exists() and branch_lock.exists()  # HEAD's recorded, the branch's only announced
    shown = run_gitdream(root, "status")
    assert shown.returncode == 0, shown.stderr
    assert f"removed {head_lock}" in shown.stderr and f"removed {branch_lock}" in shown.stderr
    retry = run_gitdream(root, "run")
    assert retry.returncode == 0, retry.stderr
    _finally(root, before)


def test_an_announced_lock_a_git_command_took_later_is_kept(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """An announced lock (see the test above) whose file was created well after the
    announcement is not the killed process's: it stays, and the run refuses naming it."""
    root, _meta = prepared(tmp_path_factory, "fresh", _fresh, tmp_path / "repo")
    proc = run_gitdream(root, "run", env={"GITDREAM_FAULT": "ref-lock-created@1:kill"})
    assert killed(proc), proc.stderr
    head_lock = root / ".git" / "HEAD.lock"
    head_lock.unlink()
    time.sleep(1.2)  # past refs.ANNOUNCED_SECONDS
    head_lock.write_text("")  # a git command's lock, taken since
    done = run_gitdream(root, "run")
    assert done.returncode != 0 and f"{head_lock} exists" in done.stderr, done.stderr
    assert head_lock.exists()


def test_a_lock_a_git_command_took_since_at_the_same_path_is_kept(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """The record of a killed gitdream's ref locks names the very files it created: a
    `HEAD.lock` another command created after the dead one was removed is a live lock, and
    stays (the run refuses, naming it)."""
    root, _ = prepared(tmp_path_factory, "fresh", _fresh, tmp_path / "repo")
    proc = run_gitdream(root, "run", env={"GITDREAM_FAULT": "refs-locked:kill"})
    assert killed(proc), proc.stderr
    head_lock = root / ".git" / "HEAD.lock"
    head_lock.unlink()
    head_lock.write_text("")  # a git command's lock, taken since
    done = run_gitdream(root, "run")
    assert done.returncode != 0 and f"{head_lock} exists" in done.stderr, done.stderr
    assert head_lock.exists()
    assert not (root / ".git" / "refs" / "heads" / "main.lock").exists(), "the dead process's own lock goes"


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


NOTES = "refs/notes/gitdream"


@pytest.mark.parametrize("case", ["run", "revert-deep"])
def test_the_notes_lock_of_a_command_killed_while_writing_a_receipt_is_removed(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, case: str
) -> None:
    """Regression test: a receipt note on a note git had fanned out two levels deep (the
    reverted run's note, annotated by `revert`) was written by libgit2's `create_note`,
    whose ref update took `refs/notes/gitdream.lock` with no record of gitdream's: a SIGKILL
    there left the lock, and every later receipt and `git notes` refused until someone
    removed it by hand. Every note write now moves the ref through gitdream's reference
    transaction (fault point `note-locked`, the lock taken): the next gitdream command
    removes the lock, and the command run again ends where an uninterrupted one ends."""
    if case == "run":
        root, meta = prepared(tmp_path_factory, "fresh", _fresh, tmp_path / "repo")
        args, crossing = ["run"], 1  # the run's receipt
    else:
        root, meta = prepared(tmp_path_factory, "dreamed", _dreamed, tmp_path / "repo")
        deep_notes(root)
        args, crossing = ["revert", str(meta["run"])], 2  # the revert's receipt, then the run's note
    before = user_state(root)
    notes_before = set(git(root, "notes", "--ref", "gitdream", "list", check=False).splitlines())
    proc = run_gitdream(root, *args, env={"GITDREAM_FAULT": f"note-locked@{crossing}:kill"})
    assert killed(proc), proc.stderr
    lock = root / ".git" / f"{NOTES}.lock"
    assert lock.exists()
    assert fsck(root) == "" and user_state(root) == before
    # the note being written is unchanged (a revert's own receipt, written first, stays)
    assert notes_before <= set(git(root, "notes", "--ref", "gitdream", "list", check=False).splitlines())
    refused = subprocess.run(
        ["git", "notes", "--ref", "gitdream", "add", "-f", "-m", "x", "HEAD"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert refused.returncode != 0 and "gitdream.lock" in refused.stderr  # git's own writers refuse too
    shown = run_gitdream(root, "status")
    assert shown.returncode == 0, shown.stderr
    assert f"removed {lock}" in shown.stderr and not lock.exists()
    retry = run_gitdream(root, *args)
    assert retry.returncode == 0 or "already undone" in retry.stderr, retry.stderr
    _finally(root, before)
    if case == "revert-deep":  # the reverted run's note, annotated where git put it
        note = git(root, "notes", "--ref", "gitdream", "list").split()
        paths = git(root, "ls-tree", "-r", "--name-only", NOTES).split()
        assert len(paths) == len(note) // 2, paths  # one place per note: none written twice
        assert len([p for p in paths if p.count("/") == 2]) == len(notes_before), paths
