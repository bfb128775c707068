"""The ref-move/index-update window (issue 16, case 6), and a fuzz of interleavings.

Before, the dream moved the branch and updated the index as two steps with nothing held
in between: a user's `git commit` in that window (50 ms to 1.4 s with many files)
recorded the old index and undid the dream — 74 new experience files of a real agent
vanished from the branch in 1 of 12 tries — and after a kill in that window the user's
next plain `git commit` did the same, and the next run asked the user to commit
gitdream's files by hand. The commit builder now holds `index.lock` from before the
branch move to the index write, as git's own commands do, with a journal the next
gitdream command completes.

The fuzz starts real dreams and, at a random moment of each, a random sequence of what a
person does meanwhile — commit (other files and the dream's own), stage, edit, check out
another branch and back, rebase — and checks every interleaving: the dream commits or
refuses clearly; no byte the user wrote is lost; the dream's work, once committed, is in
HEAD, the index and the working tree (unless the user changed those very files); HEAD,
index and working tree agree on everything else. `GITDREAM_TEST_SEED=N` replays a run,
`GITDREAM_TEST_ROUNDS=N` sets how many interleavings (default 12; bench/RESULTS.md has a
long run).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import commit_all, git, popen, run_gitdream, write
from tests.reliability.support import LOCK, LOGS, MEMORY, agent_repo, fsck, leftovers, named, prepared
from tests.reliability.test_races import (
    AGENT,
    INDEX,
    TOPIC,
    User,
    _finish_rebase,
    _fresh_clean,
    check_outcome,
    check_user_kept,
    dream_kept,
)

WORDS = (
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "uniform",
    "victor",
    "whiskey",
    "xray",
    "yankee",
    "zulu",
    "amber",
    "birch",
    "cedar",
    "dahlia",
    "elm",
    "fern",
    "ginger",
    "hazel",
    "iris",
    "jasmine",
    "kale",
    "laurel",
    "maple",
    "nutmeg",
)
TOPICS = len(WORDS)
MANY = 20
"""At least this many of them are new topic files (the offline engine merges a few)."""


def _topics(names: list[str]) -> int:
    """How many of the topic files the dream makes (one per word) are among `names`."""
    return len([n for n in names if n.rsplit("/", 1)[-1].removesuffix(".md") in WORDS])


def _many_topics(root: Path) -> dict[str, object]:
    """agent ops with a log of TOPICS entries, each tagged with its own topic: the dream
    creates a new topic file for most of them (Kit's real dream made 74)."""
    agent_repo(root)
    write(root, "unstaged.txt", "committed\n")
    write(root, "gitdream.toml", f"max_new_topics = {TOPICS}\n")
    log = "".join(
        f"- [{word}] The {word} service needs its own runbook entry {n}.\n" for n, word in enumerate(WORDS)
    )
    write(root, f"{LOGS}/2026-03-01.md", log)
    commit_all(root, "a day with many topics")
    git(root, "branch", "before")
    write(root, "notes.txt", "untracked\n")
    return {"head": git(root, "rev-parse", "HEAD").strip()}


def _agree(root: Path, user: User) -> None:
    status = git(root, "status", "--porcelain", "--untracked-files=all", "--", "agents").splitlines()
    touched = {p for p in user.last if p.startswith("agents/")}
    assert all(line[3:] in touched for line in status), status


_RUN_SECONDS: dict[str, float] = {}


def _run_seconds(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, key: str, build: Callable[[Path], object]
) -> float:
    if key not in _RUN_SECONDS:
        sample, _meta = prepared(tmp_path_factory, key, build, tmp_path / f"sample-{key}")
        start = time.monotonic()
        assert run_gitdream(sample, "run").returncode == 0
        _RUN_SECONDS[key] = time.monotonic() - start
    return _RUN_SECONDS[key]


def test_a_commit_at_a_random_moment_never_undoes_a_dream_of_many_files(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """The replay of the issue: a dream that creates TOPICS topic files, and the user
    committing other files in a loop from a random moment until it ends, 12 times. Every
    time the dream's files are in HEAD, the index and the working tree at the end."""
    seed = int(os.environ.get("GITDREAM_TEST_SEED", time.time_ns() % 100000))
    rng = random.Random(seed)
    seconds = _run_seconds(tmp_path_factory, tmp_path, "many-topics", _many_topics)
    for attempt in range(12):
        root, _meta = prepared(tmp_path_factory, "many-topics", _many_topics, tmp_path / f"repo{attempt}")
        user = User(root)
        delay = rng.uniform(0.3, 1.0) * seconds
        where = (
            f"seed {seed}, round {attempt} (GITDREAM_TEST_SEED={seed}); plan: wait {delay * 1000:.0f} ms "
            f"(of a {seconds * 1000:.0f} ms dream), then commit user-N.txt in a loop until it ends"
        )
        proc = popen(root, "run", "--json")
        user.start = time.monotonic()
        time.sleep(delay)
        while proc.poll() is None:
            user.commit(f"user-{rng.randrange(3)}.txt")
        out, err = proc.communicate(timeout=60)
        with named(where, user.history, err):
            assert check_outcome(root, proc.returncode, out, err) == "ok"
            check_user_kept(root, user)
            dream_kept(root, user)
            topics = git(root, "ls-tree", "--name-only", "HEAD", f"{MEMORY}/").split()
            assert _topics(topics) >= MANY, topics  # all there: `dream_kept`
            _agree(root, user)


# --- a kill in the window, then the user's plain `git commit` ------------------------------------


@pytest.mark.parametrize("point", ["after-ref-move", "mid-worktree-update", "before-index-update"])
def test_after_a_kill_in_the_window_the_users_commit_cannot_undo_the_dream(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, point: str
) -> None:
    """Killed between its branch move and its index update, the dream leaves index.lock
    (with the index to install) and its journal: the user's next `git commit` fails as it
    fails against any git command holding the lock, instead of recording the old index;
    the next gitdream command — `status` here — finishes the working tree and the index;
    then the user's commit lands on top of the dream, and the next run has nothing to ask."""
    root, _meta = prepared(tmp_path_factory, "many-topics", _many_topics, tmp_path / "repo")
    write(root, "staged.txt", "the user's staged change\n")
    git(root, "add", "staged.txt")
    killed = run_gitdream(root, "run", env={"GITDREAM_FAULT": f"{point}@1:kill"})
    assert killed.returncode == -signal.SIGKILL
    assert (root / ".git" / "index.lock").exists()
    refused = subprocess.run(
        ["git", "commit", "-q", "-m", "the user's commit"], cwd=root, capture_output=True, text=True
    )
    assert refused.returncode != 0 and "index.lock" in refused.stderr
    finished = run_gitdream(root, "status")
    assert finished.returncode == 0, finished.stderr
    assert "finished updating the working tree and index for dream commit" in finished.stderr
    assert not (root / ".git" / "index.lock").exists()
    assert git(root, "status", "--porcelain", "--untracked-files=all") == "A  staged.txt\n?? notes.txt\n"
    git(root, "commit", "-q", "-m", "the user's commit")
    user = User(root)
    dream_kept(root, user)
    assert git(root, "cat-file", "-p", "HEAD:staged.txt") == "the user's staged change\n"
    again = run_gitdream(root, "run", "--json")
    assert again.returncode == 0, again.stderr
    receipts = json.loads(again.stdout)["runs"]
    assert receipts and all(r["status"] in ("ok", "noop") for r in receipts), receipts
    assert fsck(root) == "" and leftovers(root) == [] and not (root / LOCK).exists()


@pytest.mark.parametrize("point", ["after-ref-move", "mid-worktree-update", "before-index-update"])
def test_a_lock_removed_by_hand_after_a_kill_is_repaired_where_it_still_can_be(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, point: str
) -> None:
    """The remaining limit, stated in docs/reliability.md: if the user deletes the
    index.lock a killed dream left (git's message suggests it) instead of running a
    gitdream command, their next commit records the index without the dream. Nothing is
    lost even then: the dream's commit stays in history, and — the watermark had not
    moved — the next dream writes the facts again. Killed after it had written files
    (`mid-worktree-update`, `before-index-update`), the working tree held the dream's
    files, which the user's commit left as an edit of MEMORY.md and untracked topic files:
    the next run refused and asked the user to commit gitdream's files by hand (issue 16,
    case 6). Files that still hold exactly the dream's bytes are now put back to HEAD's
    version (they are kept in the dream's commit), so the run dreams again."""
    root, _meta = prepared(tmp_path_factory, "many-topics", _many_topics, tmp_path / "repo")
    killed = run_gitdream(root, "run", env={"GITDREAM_FAULT": f"{point}@1:kill"})
    assert killed.returncode == -signal.SIGKILL
    (root / ".git" / "index.lock").unlink()
    write(root, "user.txt", "the user's file\n")
    git(root, "add", "user.txt")
    git(root, "commit", "-q", "-m", "the user's commit of the old index")
    again = run_gitdream(root, "run", "--json")
    assert again.returncode == 0, again.stderr
    assert "HEAD no longer has the dream's version" in again.stderr
    (receipt,) = json.loads(again.stdout)["runs"]
    assert receipt["status"] == "ok" and receipt["commits"]["experience"], receipt
    topics = git(root, "ls-tree", "--name-only", "HEAD", f"{MEMORY}/").split()
    assert _topics(topics) >= MANY
    assert git(root, "status", "--porcelain", "--untracked-files=all") == "?? notes.txt\n"
    assert fsck(root) == "" and leftovers(root) == []


def test_a_users_edit_of_a_dream_file_after_a_lock_removed_by_hand_is_kept(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """Only a file that holds exactly the bytes the dream wrote is put back: one the user
    edited after the kill (an untracked topic file, MEMORY.md) keeps the user's bytes,
    and the run refuses for it, naming it; the files the user did not touch are put back."""
    root, _meta = prepared(tmp_path_factory, "many-topics", _many_topics, tmp_path / "repo")
    killed = run_gitdream(root, "run", env={"GITDREAM_FAULT": "before-index-update@1:kill"})
    assert killed.returncode == -signal.SIGKILL
    (root / ".git" / "index.lock").unlink()
    edited = {f"{MEMORY}/alpha.md": b"", f"{MEMORY}/MEMORY.md": b""}
    for path in edited:
        edited[path] = (root / path).read_bytes() + b"\nthe user's own line\n"
        (root / path).write_bytes(edited[path])
    write(root, "user.txt", "the user's file\n")
    git(root, "add", "user.txt")
    git(root, "commit", "-q", "-m", "the user's commit of the old index")
    again = run_gitdream(root, "run", "--json")
    assert again.returncode != 0
    assert f"{MEMORY}/alpha.md is untracked" in again.stderr, again.stderr
    assert f"{MEMORY}/MEMORY.md has uncommitted changes" in again.stderr, again.stderr
    assert "bravo.md" not in again.stderr.split("error:", 1)[1]
    for path, data in edited.items():
        assert (root / path).read_bytes() == data
    status = git(root, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert sorted(status) == sorted([f" M {MEMORY}/MEMORY.md", f"?? {MEMORY}/alpha.md", "?? notes.txt"])
    assert fsck(root) == "" and leftovers(root) == []


# --- the fuzz ---------------------------------------------------------------------------------


def _commit_other(user: User, rng: random.Random) -> None:
    user.commit(f"user-{rng.randrange(3)}.txt")


def _commit_target(user: User, rng: random.Random) -> None:
    user.commit(rng.choice([INDEX, TOPIC, AGENT]))


def _stage(user: User, rng: random.Random) -> None:
    path = rng.choice([INDEX, "user-0.txt"])
    user.write(path)
    user.add(path)


def _edit(user: User, rng: random.Random) -> None:
    user.write(rng.choice([INDEX, TOPIC, AGENT]))


def _back_to_main(user: User) -> None:
    """Check out main again, trying again while a dream holds index.lock (as a person
    would: git says another git process is running)."""
    for _attempt in range(200):
        if user.git("checkout", "-q", "main"):
            return
        time.sleep(0.02)
    raise AssertionError(f"cannot check out main again: {user.failures[-1]}")


def _checkout_and_back(user: User, rng: random.Random) -> None:
    if user.git("checkout", "-q", "before"):
        time.sleep(rng.uniform(0, 0.05))
        _back_to_main(user)


def _rebase(user: User, rng: random.Random) -> None:
    user.git("rebase", "-q", "--force-rebase", "HEAD~1")


ACTIONS = [_commit_other, _commit_target, _stage, _edit, _checkout_and_back, _rebase]
# A rebase refuses over unstaged changes and `git rebase --abort` (what the person does
# with one the dream's lock interrupted) resets the working tree: rounds with a rebase use
# only commits, checkouts and rebases, on a repository with nothing uncommitted.
WITH_REBASE = [_commit_other, _checkout_and_back, _rebase]


def test_fuzz_of_interleavings(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """Random interleavings (module docstring); every failure names the seed, the round and
    the plan with its timings, and shows what the person did, in order, in ms after the
    dream started."""
    seed = int(os.environ.get("GITDREAM_TEST_SEED", time.time_ns() % 100000))
    rounds = int(os.environ.get("GITDREAM_TEST_ROUNDS", "12"))
    rng = random.Random(seed)
    seconds = _run_seconds(tmp_path_factory, tmp_path, "race-clean", _fresh_clean)
    tally: dict[str, int] = {}
    for attempt in range(rounds):
        rebasing = rng.random() < 0.3
        pool = WITH_REBASE if rebasing else ACTIONS
        delay = rng.uniform(0, 1.0) * seconds
        plan = [(rng.choice(pool), rng.uniform(0, 0.02)) for _ in range(rng.randint(1, 4))]
        where = (
            f"seed {seed}, round {attempt} (GITDREAM_TEST_SEED={seed} GITDREAM_TEST_ROUNDS={attempt + 1}); "
            f"{'a rebase round; ' if rebasing else ''}plan: wait {delay * 1000:.0f} ms (of a "
            f"{seconds * 1000:.0f} ms dream), "
            + ", ".join(f"{action.__name__[1:]}, wait {pause * 1000:.0f} ms" for action, pause in plan)
        )
        root, _meta = prepared(tmp_path_factory, "race-clean", _fresh_clean, tmp_path / f"repo{attempt}")
        if not rebasing:
            write(root, "unstaged.txt", "edited, not staged\n")
        user = User(root)
        proc = popen(root, "run", "--json")
        user.start = time.monotonic()
        time.sleep(delay)
        for action, pause in plan:
            action(user, rng)
            time.sleep(pause)
        out, err = proc.communicate(timeout=60)
        user.note(f"the dream exited {proc.returncode}")
        with named(where, user.history, err):
            _finish_rebase(user)
            _back_to_main(user)
            outcome = check_outcome(root, proc.returncode, out, err)
            tally[outcome] = tally.get(outcome, 0) + 1
            check_user_kept(root, user)
            if outcome == "ok":
                dream_kept(root, user)
            _agree(root, user)
            assert not (root / ".git" / "index.lock").exists(), "index.lock is left"
    print(f"interleavings: {rounds} (seed {seed}): {tally}")
    assert fsck(root) == "" and leftovers(root) == []
