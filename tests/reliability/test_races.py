"""Races (issue 8): a real `gitdream run` while the user commits, edits, stages, checks out
another branch, or runs `git gc`; concurrent runs and reverts.

The user's action is placed exactly in each dangerous window with the `pause` fault action
(between the gate and the index lock, while the dream holds index.lock before and after
its branch move, between the working-tree update and the index update), then at random
moments in bounded loops. Whatever happens, the dream either commits or refuses with a
clear error, and never overwrites or loses a byte the user wrote: the user's last content
of every file they wrote is in the working tree or in a commit they made; the index has no
conflict entries and keeps what the user staged; `git fsck --strict` is clean; no lock is
left. While the dream holds index.lock (issue 16), the user's git commands that write the
index fail as they fail against any git command holding it — the person tries again —
and the dream's commit is never undone by a commit of the old index.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import git, popen, resume, run_gitdream, start_paused
from tests.reliability.support import (
    LOCK,
    MEMORY,
    agent_repo,
    fsck,
    leftovers,
    material,
    named,
    prepared,
    ref,
    run_json,
    write,
)

INDEX = f"{MEMORY}/MEMORY.md"
TOPIC = f"{MEMORY}/deploy.md"  # created by the dream
AGENT = "agents/ops/agent.md"
WATERMARK = "refs/gitdream/watermark/ops"
CLEAR_ERRORS = (
    "changed while the dream ran",
    "moved while the dream ran",
    "switched from",
    "uncommitted changes",
    "refusing to write",
    "another git command is updating",
    "is in progress",
    "a rebase started",
)


def _fresh(root: Path) -> dict[str, Any]:
    """agent ops with material not dreamed yet; the user has an unstaged change and an
    untracked file (neither is committed by `git add X && git commit`)."""
    agent_repo(root)
    write(root, "unstaged.txt", "committed\n")
    material(root)
    git(root, "branch", "before")  # another branch, at the commit the dream starts from
    write(root, "unstaged.txt", "edited, not staged\n")
    write(root, "notes.txt", "untracked\n")
    return {"head": git(root, "rev-parse", "HEAD").strip()}


def _fresh_clean(root: Path) -> dict[str, Any]:
    """`_fresh` with nothing uncommitted but an untracked file: a state `git rebase`
    accepts (it refuses unstaged changes)."""
    agent_repo(root)
    write(root, "unstaged.txt", "committed\n")
    material(root)
    git(root, "branch", "before")
    write(root, "notes.txt", "untracked\n")
    return {"head": git(root, "rev-parse", "HEAD").strip()}


def _dreamed(root: Path) -> dict[str, Any]:
    """`_fresh` after one uninterrupted dream."""
    meta = _fresh(root)
    receipt = run_json(root, "run")["runs"][0]
    assert receipt["status"] == "ok" and all(receipt["commits"].values()), receipt
    return {**meta, "run": receipt["run"]}


class User:
    """The person working in the repository meanwhile: every write is recorded, so the end
    state can be checked against the last bytes they wrote to each file."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.last: dict[str, bytes] = {
            "unstaged.txt": (root / "unstaged.txt").read_bytes(),
            "notes.txt": (root / "notes.txt").read_bytes(),
        }
        self.staged: dict[str, bytes] = {}
        self.committed: dict[str, bytes] = {}
        self.count = 0
        self.failures: list[str] = []
        self.aborted_rebase = False
        self.during_rebase: set[str] = set()
        """Paths written while a rebase stood stopped midway: the person's own `git rebase
        --abort` (`_finish_rebase`) resets them to where the rebase began."""
        self.start = time.monotonic()
        self.history: list[str] = []
        """What the person did, in order, each line with its time in ms since `start`
        (reset it when the dream starts): the replay of a failure."""

    def note(self, text: str) -> None:
        """Add `text` to the history, with the time since `start`."""
        self.history.append(f"{(time.monotonic() - self.start) * 1000:8.1f} ms  {text}")

    def write(self, path: str, text: str | None = None) -> bytes:
        self.count += 1
        data = (text or f"written by the user, #{self.count} at {time.monotonic_ns()}\n").encode()
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        self.note(f"write {path} #{self.count}")
        if (self.root / ".git" / "rebase-merge").is_dir():
            self.during_rebase.add(path)
        target.write_bytes(data)
        self.last[path] = data
        return data

    def git(self, *args: str) -> bool:
        """Run git as a person would; a failure (e.g. index.lock held by the dream's
        update) is recorded, not raised: the person would simply try again."""
        self.note(f"git {' '.join(args)}")
        proc = subprocess.run(["git", *args], cwd=self.root, capture_output=True, text=True)
        self.note(f"  -> {'ok' if proc.returncode == 0 else 'failed: ' + proc.stderr.strip()}")
        if proc.returncode != 0:
            self.failures.append(f"git {' '.join(args)}: {proc.stderr.strip()}")
        return proc.returncode == 0

    def add(self, path: str) -> bool:
        done = self.git("add", "--", path)
        if done:
            self.staged[path] = self.last[path]
        return done

    def commit(self, path: str, text: str | None = None) -> bool:
        """Write `path`, stage it and commit the index (everything staged so far)."""
        self.write(path, text)
        if not (self.add(path) and self.git("commit", "-q", "-m", f"the user's commit of {path}")):
            return False
        self.committed.update(self.staged)
        self.staged.clear()
        return True


def _committed_by_user(root: Path, path: str, data: bytes) -> bool:
    """True when a commit of the user in HEAD's history has `data` at `path`."""
    for oid in git(root, "log", "--format=%H", "--author=Test User", "HEAD", "--", path).split():
        proc = subprocess.run(["git", "cat-file", "blob", f"{oid}:{path}"], cwd=root, capture_output=True)
        if proc.returncode == 0 and proc.stdout == data:
            return True
    return False


def _index_entries(root: Path) -> dict[str, tuple[str, str]]:
    entries = {}
    for line in git(root, "ls-files", "-s").splitlines():
        meta, path = line.split("\t", 1)
        mode, oid, stage = meta.split()
        assert stage == "0", f"conflict entry in the index: {line}"
        entries[path] = (mode, oid)
    return entries


def _blob_id(root: Path, data: bytes) -> str:
    return git(root, "hash-object", "--stdin", input=data).strip()


def _outside_blocks(text: str) -> str:
    """`text` without gitdream's managed blocks (markers and contents), as a file the user
    wrote reads once a dream appended its block (after a blank line)."""
    from gitdream.text import blocks

    found = blocks.parse(text, "file")
    if not found:
        return text
    return text[: found[0].start].rstrip("\n") + "\n" + text[found[-1].end :].lstrip("\n")


def check_user_kept(root: Path, user: User) -> None:
    """No byte the user wrote is lost, what they staged is still staged (unless they
    committed it), and the repository is sound with no lock left behind."""
    for path, data in user.last.items():
        target = root / path
        on_disk = target.read_bytes() if target.exists() else None
        assert on_disk == data or _committed_by_user(root, path, data), f"the user's bytes of {path} are lost"
    for path, data in user.committed.items():
        # A dream whose contents were computed before the user's commit must never
        # replace what the user committed (it refuses instead); a dream that started
        # after it may add its own managed block to it, and nothing else.
        at_head = git(root, "cat-file", "blob", f"HEAD:{path}")
        assert at_head.encode() == data or _outside_blocks(at_head) == data.decode(), (
            f"{path} was overwritten"
        )
    index = _index_entries(root)
    for path, data in user.staged.items():
        blob = _blob_id(root, data)
        assert index.get(path, ("", ""))[1] == blob or _committed_by_user(root, path, data), (
            f"what the user staged for {path} is no longer in the index"
        )
    assert fsck(root) == ""
    assert leftovers(root) == []
    assert not (root / LOCK).exists()
    git(root, "status", "--porcelain")  # the index can be read and refreshed


def _rewritten_on_a_branch(root: Path, commit: str) -> bool:
    """True when a branch has a copy of dream commit `commit` that the user's rebase wrote
    (a new id, the same trailers and the same change)."""
    trailers = git(root, "log", "-1", "--format=%(trailers:key=Gitdream-Run,valueonly)", commit).strip()
    patch = git(root, "diff-tree", "-r", "--no-commit-id", commit)
    for copy in git(root, "log", "--branches", "--format=%H", f"--grep=Gitdream-Run: {trailers}").split():
        if copy != commit and git(root, "diff-tree", "-r", "--no-commit-id", copy) == patch:
            return True
    return False


def dream_kept(root: Path, user: User) -> None:
    """The dream's work is not lost either: its commits are on a branch — the one that was
    checked out when it committed — and where that branch is checked out now, every path
    they wrote that the user did not write has the dream's version in HEAD, the index and
    the working tree (a commit of the old index, or a checkout, never undid it)."""
    every = git(root, "log", "--all", "--format=%H", "--author=gitdream", "--grep=^dream(").split()
    assert every, "the dream made no commit"
    dreams = git(root, "log", "--format=%H", "--author=gitdream", "--grep=^dream(", "HEAD").split()
    for commit in every:
        if git(root, "branch", "--contains", commit).strip() or _rewritten_on_a_branch(root, commit):
            continue
        # The limit docs/reliability.md states: a rebase that read the branch before the
        # dream's branch move and wrote its state after gitdream's last check, then aborted,
        # puts the branch back where it found it. The dream's commits are kept in the reflog.
        assert user.aborted_rebase, (
            f"dream commit {commit[:12]} is on no branch",
            git(root, "reflog", "-12"),
        )
        assert commit in git(root, "log", "-g", "--format=%H", "HEAD").split()
    index = _index_entries(root)
    for dream in dreams:
        for line in git(root, "diff-tree", "-r", "--no-commit-id", "--no-renames", dream).splitlines():
            meta, path = line.split("\t", 1)
            blob = meta.split()[3]
            if (
                path in user.last
                or git(root, "log", "-1", "--format=%H", f"{dream}..HEAD", "--", path).strip()
            ):
                continue  # the user's own file, or changed by a later commit
            assert git(root, "rev-parse", f"HEAD:{path}").strip() == blob, (
                f"{path}: the dream's version was undone"
            )
            assert index.get(path, ("", ""))[1] == blob, f"{path}: the index lost the dream's version"
            assert git(root, "hash-object", "--", path).strip() == blob, f"{path}: the working tree lost it"


def check_outcome(root: Path, code: int, out: str, err: str) -> str:
    """The dream committed (exit 0) or refused with a clear error (exit 1), never a crash:
    "ok" (both commits, watermark moved), "refused" (no commit, watermark not moved: the
    next run reads the same material), or "partial" (the experience commit, the definition
    commit refused, its material pending for the next run)."""
    assert "Traceback" not in err and "internal error" not in err, err
    document = json.loads(out)
    if "error" in document:  # refused before any agent ran (e.g. a rebase in progress)
        assert code == 1 and any(text in err for text in CLEAR_ERRORS), (code, err)
        assert ref(root, WATERMARK) is None
        return "refused"
    receipt = document["runs"][0]
    if code == 0:
        wanted = ["experience"] + (["definition"] if receipt["counts"].get("definition") else [])
        assert receipt["status"] == "ok" and all(receipt["commits"][k] for k in wanted), receipt
        assert ref(root, WATERMARK) == receipt["input_commit"]
        return "ok"
    assert code == 1, (code, err)
    assert any(text in err for text in CLEAR_ERRORS), err
    if receipt["commits"]["experience"] is None:
        assert receipt["status"] == "failed" and ref(root, WATERMARK) is None, receipt
        return "refused"
    assert receipt["phases"]["definitions"]["status"] == "refused" and receipt["pending"], receipt
    assert ref(root, WATERMARK) == receipt["input_commit"]
    return "partial"


# --- user actions placed in a window ------------------------------------------------------


# Each action returns whether git did what the user asked; a git command that writes the
# index fails while the dream holds index.lock (the window says which to expect).


def commit_unrelated(user: User) -> bool:
    return user.commit("user.txt")


def commit_index(user: User) -> bool:
    return user.commit(INDEX)


def commit_topic(user: User) -> bool:
    return user.commit(TOPIC)


def commit_agent(user: User) -> bool:
    return user.commit(AGENT, "# ops\n\nThe user's own rewrite of agent.md.\n")


def edit_index(user: User) -> bool:
    user.write(INDEX)
    return True


def create_topic(user: User) -> bool:
    user.write(TOPIC)
    return True


def add_index(user: User) -> bool:
    user.write(INDEX)
    return user.add(INDEX)


def checkout_away(user: User) -> bool:
    return user.git("checkout", "-q", "-b", "elsewhere")


def checkout_existing(user: User) -> bool:
    return user.git("checkout", "-q", "before")


def checkout_and_back(user: User) -> bool:
    if not user.git("checkout", "-q", "-b", "elsewhere"):
        return False
    user.write("elsewhere.txt")
    assert user.add("elsewhere.txt") and user.git("commit", "-q", "-m", "on another branch")
    assert user.git("checkout", "-q", "main")
    user.staged.pop("elsewhere.txt")
    user.last.pop("elsewhere.txt")  # it lives on branch elsewhere now, as git does it
    return True


def rebase(user: User) -> bool:
    """`git rebase --force-rebase HEAD~1`: the branch's last commit is rewritten (a new
    id, the same tree), as a pull with --rebase rewrites the user's commits (in the
    `_fresh_clean` repository: git refuses to rebase over unstaged changes)."""
    return user.git("rebase", "-q", "--force-rebase", "HEAD~1")


def gc_prune_now(user: User) -> bool:
    return user.git("gc", "-q", "--prune=now")


def repack(user: User) -> bool:
    return user.git("repack", "-q", "-a", "-d")


def _met_the_dream(failure: str) -> bool:
    """A git command failed because a dream's commit was being written: it could not take
    index.lock, or (`git rebase`, between the dream's branch move and its index update)
    it saw the index differ from the moved HEAD and refused to start."""
    return "index.lock" in failure or "cannot rebase" in failure


def _window(
    root: Path,
    tmp_path: Path,
    point: str,
    action: Callable[[User], bool],
    *args: str,
    locked: bool | None = None,
) -> tuple[User, str, str, int]:
    """Run gitdream ARGS paused at `point`, do `action` there, resume. With `locked`, the
    action's git command must have been refused on index.lock (True) or have succeeded
    (False)."""
    user = User(root)
    folder = tmp_path / f"faults-{root.name}"
    proc = start_paused(root, folder, point, *args)
    done = action(user)
    out, err = resume(proc, folder, point)
    assert "Traceback" not in err, err
    if locked is not None:
        assert done is not locked, (point, action.__name__, user.failures)
        if locked:
            assert user.failures and all(_met_the_dream(f) for f in user.failures), user.failures
    return user, out, err, proc.returncode


# (point, action, outcome of the dream, whether the action's git command meets the
# dream's index.lock). The regression tests below place more: `git gc --prune=now` after
# the objects are written, a commit to agent.md before the branch move, a `git add` before
# the index update.
WINDOWS: list[tuple[str, Callable[[User], bool], str, bool]] = [
    # After the gate, before the index lock: the re-check, or the compare-and-swap, decides.
    ("after-commit-object", edit_index, "refused", False),
    ("after-commit-object", commit_index, "refused", False),
    ("after-commit-object", commit_topic, "refused", False),
    ("after-commit-object", commit_unrelated, "ok", False),
    ("after-commit-object", checkout_away, "refused", False),
    ("after-commit-object", checkout_and_back, "ok", False),
    ("after-commit-object", rebase, "ok", False),
    # index.lock taken, before the re-check: an edit is seen; git cannot write the index.
    ("after-index-lock", edit_index, "refused", False),
    ("after-index-lock", commit_unrelated, "ok", True),
    # After the re-check, before the branch moves (index.lock held).
    ("before-ref-move", commit_unrelated, "ok", True),
    ("before-ref-move", commit_index, "ok", True),
    ("before-ref-move", checkout_away, "ok", True),
    ("before-ref-move", rebase, "ok", True),
    ("before-ref-move", repack, "ok", False),
    # After the branch moved, before the working tree and index follow (index.lock held).
    ("after-ref-move", edit_index, "ok", False),
    ("after-ref-move", create_topic, "ok", False),
    ("after-ref-move", commit_unrelated, "ok", True),
    ("after-ref-move", checkout_away, "ok", True),
    ("after-ref-move", rebase, "ok", True),
    ("after-ref-move", gc_prune_now, "ok", False),
    # After the working tree, before the index (index.lock held).
    ("before-index-update", commit_unrelated, "ok", True),
    ("before-index-update", add_index, "ok", True),
]


@pytest.mark.parametrize(
    ("point", "action", "outcome", "locked"), WINDOWS, ids=[f"{p}-{a.__name__}" for p, a, _o, _l in WINDOWS]
)
def test_user_action_in_each_window(
    tmp_path_factory: pytest.TempPathFactory,
    tmp_path: Path,
    point: str,
    action: Callable[[User], bool],
    outcome: str,
    locked: bool,
) -> None:
    clean = action is rebase
    fixture = ("race-clean", _fresh_clean) if clean else ("race", _fresh)
    root, _meta = prepared(tmp_path_factory, *fixture, tmp_path / "repo")
    user, out, err, code = _window(root, tmp_path, point, action, "run", "--json", locked=locked)
    assert check_outcome(root, code, out, err) == outcome, err
    check_user_kept(root, user)
    if outcome == "ok":
        dream_kept(root, user)
    status = git(root, "status", "--porcelain", "--untracked-files=all", "--", "agents").splitlines()
    # Every path the user did not touch is the same in HEAD, the index and the working tree
    # (the dream's bytes on the dream's branch, that branch's on another): nothing staged
    # or changed that the user did not stage or change.
    touched = {p for p in user.last if p.startswith("agents/")}
    assert all(line[3:] in touched for line in status), status


# --- regression tests --------------------------------------------------------------------


def test_gc_prune_now_during_a_dream_never_leaves_a_branch_on_a_missing_commit(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """Regression test: `git gc --prune=now` between the moment the dream wrote its objects
    and the branch move deleted them (nothing reached them yet); the branch then moved to a
    missing commit (fsck: broken link) and the run crashed reading a pruned blob. On a review
    branch the window was the whole run. The commit builder now writes back any object of
    its own that went missing, before and after the ref move."""
    root, _meta = prepared(tmp_path_factory, "race", _fresh, tmp_path / "repo")
    user, _out, err, code = _window(root, tmp_path, "after-commit-object", gc_prune_now, "run", "--json")
    assert code == 0, err
    check_user_kept(root, user)
    root, _meta = prepared(tmp_path_factory, "race", _fresh, tmp_path / "review")
    user, _out, err, code = _window(
        root, tmp_path, "after-experience-commit", gc_prune_now, "run", "--branch", "rv"
    )
    assert code == 0, err
    assert fsck(root) == ""
    assert git(root, "log", "--format=%s", "main..rv").count("dream(ops)") == 2


def test_git_add_between_the_working_tree_and_the_index_update_loses_nothing(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """Regression test: the sync compared each index entry with the pre-dream one while it
    wrote the working-tree files, then ran `git update-index` once at the end; a `git add`
    the user made in between (their edit of MEMORY.md, staged) was replaced by the dream's
    entry. Now the dream holds index.lock there: the `git add` fails (the user adds again
    afterwards), their bytes stay in the working tree, and the dream's entry is in the
    index, so `git status` shows exactly the user's change on top of the dream."""
    root, _meta = prepared(tmp_path_factory, "race", _fresh, tmp_path / "repo")
    user, _out, err, code = _window(root, tmp_path, "before-index-update", add_index, "run", locked=True)
    assert code == 0, err
    user.staged.clear()  # the add failed: nothing of theirs is staged
    check_user_kept(root, user)
    assert git(root, "status", "--porcelain", "--", "agents") == f" M {INDEX}\n"
    assert git(root, "add", INDEX) == "" and git(root, "diff", "--cached", "--name-only").split() == [INDEX]


def test_a_checkout_while_the_dream_holds_the_index_fails_and_leaves_both_branches_whole(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """Regression test: a `git checkout` of another branch between the dream's branch move
    and its working-tree update was followed by the update anyway: the dream's files were
    written, and staged, on the branch the user had switched to. Now the checkout meets
    the dream's index.lock and fails; once the dream is done it works, and both branches
    are whole."""
    root, _meta = prepared(tmp_path_factory, "race", _fresh, tmp_path / "repo")
    user, _out, err, code = _window(root, tmp_path, "after-ref-move", checkout_existing, "run", locked=True)
    assert code == 0, err
    check_user_kept(root, user)
    dream_kept(root, user)
    assert (
        git(root, "checkout", "-q", "before") == ""
        and git(root, "status", "--porcelain", "--", "agents") == ""
    )
    assert (
        git(root, "checkout", "-q", "main") == "" and git(root, "status", "--porcelain", "--", "agents") == ""
    )


@pytest.mark.parametrize(("point", "path"), [("after-gate-look@1", INDEX), ("after-gate-look@2", AGENT)])
def test_an_edit_right_after_the_gates_look_is_never_taken_for_the_old_bytes(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, point: str, path: str
) -> None:
    """Regression test (the interleaving fuzz, under load: "the user's bytes of
    agents/ops/agent.md are lost"): the write gate asked git whether each path differs
    from the index, then read the working-tree bytes it would later re-check against; an
    edit in between (for MEMORY.md in the experience commit, agent.md in the definition
    commit) was read as the pre-dream bytes, passed the re-check under index.lock, and the
    working-tree update replaced it with the dream's version. The bytes are now read
    before git's look: the edit is seen as a change, the commit refused, the edit kept."""
    root, _meta = prepared(tmp_path_factory, "race", _fresh, tmp_path / "repo")
    user, out, err, code = _window(root, tmp_path, point, lambda u: bool(u.write(path)), "run", "--json")
    assert code == 1 and f"{path} changed while the dream ran" in err, err
    check_outcome(root, code, out, err)
    check_user_kept(root, user)


def test_a_commit_to_a_definition_file_meanwhile_is_never_undone(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """Regression test: when the user committed agent.md while the experience commit was
    about to land, the experience commit was rebuilt on top (it does not touch agent.md),
    but the definition commit was then built on it as if its contents had been computed
    there: it replaced the user's committed agent.md with the dream's version. The same
    held for `gitdream revert` (the experience revert after a rebuilt definition revert).
    Now the second commit is compared from the input commit, and refused."""
    root, _meta = prepared(tmp_path_factory, "race", _fresh, tmp_path / "repo")
    user, _out, err, code = _window(
        root, tmp_path, "after-commit-object@1", commit_agent, "run", locked=False
    )
    assert code == 1 and "definitions not written" in err, err
    check_user_kept(root, user)

    root, meta = prepared(tmp_path_factory, "dreamed-race", _dreamed, tmp_path / "dreamed")
    user, _out, err, code = _window(
        root, tmp_path, "after-commit-object@1", commit_index, "revert", meta["run"], locked=False
    )
    assert code == 1 and "but not its experience" in err, err
    check_user_kept(root, user)


def test_a_ref_locked_by_a_git_command_meanwhile_is_waited_for(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression test: when a git command of the user's held `HEAD.lock` or
    `refs/heads/main.lock` at the moment the dream moved the branch (a commit, a checkout,
    `git gc` packing refs), libgit2's lock failure ended the run with an internal error
    (exit 3, traceback). The ref move now waits for the lock, as git does, and refuses a
    lock that stays (as one git left behind), with nothing moved."""
    root, _meta = prepared(tmp_path_factory, "race", _fresh, tmp_path / "repo")
    held = root / ".git" / "refs" / "heads" / "main.lock"

    def take(user: User) -> None:
        held.write_text("")
        threading.Timer(0.3, held.unlink).start()

    user, _out, err, code = _window(root, tmp_path, "before-ref-move", take, "run")
    assert code == 0, err
    check_user_kept(root, user)

    from gitdream.errors import RepoStateError
    from gitdream.git import refs
    from gitdream.git.repo import Repo

    monkeypatch.setattr(refs, "LOCK_TIMEOUT_SECONDS", 0.2)
    watermark = ref(root, WATERMARK)
    held = root / ".git" / "refs" / "gitdream" / "watermark" / "ops.lock"
    held.write_text("")
    with pytest.raises(RepoStateError, match="exists: another git command is updating"):
        refs.compare_and_swap(Repo.open(root), WATERMARK, watermark, _meta["head"], "test")
    held.unlink()
    assert ref(root, WATERMARK) == watermark


def test_git_gc_emptying_object_folders_during_dreams_is_survived(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """Regression test: libgit2 creates an object's fan-out folder (`objects/xx/`), then
    renames the new object into it; `git gc` removing that folder, emptied by packing, in
    between made the write fail with OSError ("failed to rename lockfile … No such file or
    directory"): an internal error. Object writes are retried, as git's own are. (A race:
    dreams against a `git gc` loop; before the fix about one run of this test in three
    failed.)"""
    for attempt in range(2):
        root, _meta = prepared(tmp_path_factory, "race", _fresh, tmp_path / f"repo{attempt}")
        gc = subprocess.Popen(["sh", "-c", "while :; do git gc -q; git prune-packed; done"], cwd=root)
        try:
            proc = run_gitdream(root, "run")
        finally:
            gc.kill()
            gc.wait()
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        assert fsck(root) == ""


# --- the same actions at random moments, in loops -----------------------------------------


def _loop_commit_unrelated(user: User, rng: random.Random) -> None:
    user.commit(f"user-{rng.randrange(3)}.txt")


def _loop_commit_targets(user: User, rng: random.Random) -> None:
    user.commit(rng.choice([INDEX, TOPIC, AGENT]))


def _loop_edit_targets(user: User, rng: random.Random) -> None:
    user.write(rng.choice([INDEX, TOPIC, AGENT]))


def _loop_checkout(user: User, rng: random.Random) -> None:
    user.git("checkout", "-q", "before")
    user.git("checkout", "-q", "main")


def _loop_add(user: User, rng: random.Random) -> None:
    path = rng.choice([INDEX, TOPIC, "user.txt"])
    user.write(path)
    user.add(path)


def _loop_gc(user: User, rng: random.Random) -> None:
    # Not `--prune=now` here: it deletes every object not reachable *when its walk began*,
    # so it can delete what any writer — git's own commands as much as gitdream — wrote
    # and referenced during its run (git documents it as unsafe while the repository is
    # written to). It is tested above, running entirely inside each window.
    user.git(*rng.choice([("gc", "-q"), ("repack", "-q", "-a", "-d"), ("pack-refs", "--all")]))


def _finish_rebase(user: User) -> None:
    """What the person does with a rebase the dream's index.lock interrupted midway (git
    stops it, as against any concurrent git command; a continued pick may then meet
    itself): abort it, which puts the branch back where the rebase found it.

    The abort resets the branch, the index and the working tree to that commit
    (`orig-head`), so what the person wrote, staged or committed while the rebase stood
    stopped — the fuzz's person carries on with their plan meanwhile — is discarded by
    their own command, as git documents: a `user-0.txt` committed on the stopped rebase's
    detached HEAD (or on the branch, checked out again meanwhile) is gone after the abort,
    which the fuzz under load reported as "the user's bytes of user-0.txt are lost", a file
    gitdream never writes. The model expects exactly that: each such path holds its bytes
    at `orig-head` (or is absent), nothing else is excused."""
    if not (user.root / ".git" / "rebase-merge").is_dir():
        return
    orig = (user.root / ".git" / "rebase-merge" / "orig-head").read_text().strip()
    assert user.git("rebase", "--abort"), user.failures[-1]
    user.aborted_rebase = True
    for path in user.during_rebase:
        found = subprocess.run(
            ["git", "cat-file", "blob", f"{orig}:{path}"], cwd=user.root, capture_output=True
        )
        if found.returncode == 0:
            user.last[path] = found.stdout
        else:
            user.last.pop(path, None)
        user.staged.pop(path, None)
        user.committed.pop(path, None)
    user.during_rebase.clear()


def _loop_rebase(user: User, rng: random.Random) -> None:
    # Rebases only: a rebase interrupted midway is aborted (`_finish_rebase`), and
    # `git rebase --abort` resets the working tree hard, discarding uncommitted edits —
    # the person's own command, not the dream.
    user.git("rebase", "-q", "--force-rebase", "HEAD~1")


# (action, whether HEAD, index and working tree must agree on every path the user did not
# touch, dreams). Since the dream holds index.lock from before its branch move to its index
# update, they always agree: no commit of the old index, no checkout, lands in between.
LOOPS = [
    (_loop_commit_unrelated, True, 2),
    (_loop_commit_targets, True, 2),
    (_loop_edit_targets, True, 1),
    (_loop_checkout, True, 1),
    (_loop_add, True, 2),
    (_loop_rebase, True, 1),
    (_loop_gc, True, 1),
]
_RUN_SECONDS: list[float] = []


@pytest.mark.parametrize(("action", "agree", "dreams"), LOOPS, ids=[a.__name__[6:] for a, _c, _n in LOOPS])
def test_user_actions_in_a_loop_during_dreams(
    tmp_path_factory: pytest.TempPathFactory,
    tmp_path: Path,
    action: Callable[[User, random.Random], None],
    agree: bool,
    dreams: int,
) -> None:
    """Dreams, each with the user's action repeated from a random moment until the dream
    ends (GITDREAM_TEST_SEED=N replays a failure)."""
    seed = int(os.environ.get("GITDREAM_TEST_SEED", time.time_ns() % 100000))
    rng = random.Random(seed)
    if not _RUN_SECONDS:
        sample, _meta = prepared(tmp_path_factory, "race", _fresh, tmp_path / "sample")
        start = time.monotonic()
        assert run_gitdream(sample, "run").returncode == 0
        _RUN_SECONDS.append(time.monotonic() - start)
    outcomes = []
    for attempt in range(dreams):
        delay = rng.uniform(0, 0.9) * _RUN_SECONDS[0]
        where = (
            f"seed {seed}, attempt {attempt} (GITDREAM_TEST_SEED={seed}); plan: wait {delay * 1000:.0f} ms "
            f"(of a {_RUN_SECONDS[0] * 1000:.0f} ms dream), then {action.__name__[6:]} in a loop until it ends"
        )
        fixture = ("race-clean", _fresh_clean) if action is _loop_rebase else ("race", _fresh)
        root, _meta = prepared(tmp_path_factory, *fixture, tmp_path / f"repo{attempt}")
        user = User(root)
        proc = popen(root, "run", "--json")
        user.start = time.monotonic()
        time.sleep(delay)
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            action(user, rng)
            time.sleep(rng.uniform(0, 0.01))  # a fast person, not a busy loop
        if action is _loop_checkout:
            user.git("checkout", "-q", "main")
        out, err = proc.communicate(timeout=60)
        with named(where, user.history, err):
            if action is _loop_rebase:
                _finish_rebase(user)
            outcomes.append(check_outcome(root, proc.returncode, out, err))
            check_user_kept(root, user)
            if outcomes[-1] == "ok":
                dream_kept(root, user)
            if agree:
                status = git(
                    root, "status", "--porcelain", "--untracked-files=all", "--", "agents"
                ).splitlines()
                touched = {p for p in user.last if p.startswith("agents/")}
                assert all(line[3:] in touched for line in status), status
    # The repository stays usable: once the user's changes are out of the way, the next
    # dream completes.
    if (root / ".git" / "rebase-merge").exists() or (root / ".git" / "rebase-apply").exists():
        git(root, "rebase", "--quit")
    git(root, "checkout", "-q", "-f", "main")
    git(root, "clean", "-q", "-f", "--", "agents")
    again = run_gitdream(root, "run")
    assert again.returncode == 0, (seed, again.stderr)
    assert fsck(root) == "" and not (root / LOCK).exists()


# --- concurrent dreams and reverts --------------------------------------------------------


def _all(procs: list[subprocess.Popen[str]]) -> list[tuple[int, str, str]]:
    return [(p.wait(timeout=120), *p.communicate()) for p in procs]


def test_eight_concurrent_reverts_make_one_revert(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    root, meta = prepared(tmp_path_factory, "dreamed-race", _dreamed, tmp_path / "repo")
    before = git(root, "rev-parse", "HEAD").strip()
    results = _all([popen(root, "revert", meta["run"]) for _ in range(8)])
    codes = [code for code, _out, _err in results]
    assert codes.count(0) == 1, results
    for code, _out, err in results:
        assert (
            code == 0 or (code == 75 and "another dream" in err) or (code == 1 and "already undone" in err)
        ), (code, err)
    subjects = git(root, "log", "--format=%s", f"{before}..HEAD").splitlines()
    assert [s.split(" — ")[0] for s in subjects] == [
        'Revert "dream(ops): experience',
        'Revert "dream(ops): definitions',
    ], subjects
    assert fsck(root) == "" and not (root / LOCK).exists()
    assert git(root, "status", "--porcelain", "--", "agents") == ""


def test_concurrent_runs_and_reverts(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """Three `gitdream run` and three `gitdream revert` at once: at most one revert lands
    (none when every revert met the lock of a run), every run is a no-op (the material was
    consumed) or reports the lock."""
    root, meta = prepared(tmp_path_factory, "dreamed-race", _dreamed, tmp_path / "repo")
    before = git(root, "rev-parse", "HEAD").strip()
    procs = [popen(root, *(("run", "--json") if i % 2 else ("revert", meta["run"]))) for i in range(6)]
    results = _all(procs)
    reverts = [r for i, r in enumerate(results) if not i % 2]
    runs = [r for i, r in enumerate(results) if i % 2]
    landed = [code for code, _o, _e in reverts].count(0)
    assert landed <= 1, reverts
    if landed == 0:  # each revert found a run (or another revert) holding the lock
        assert all(code == 75 for code, _o, _e in reverts), reverts
    for code, out, err in runs:
        assert code in (0, 75), (code, err)
        if code == 0:
            assert [r["status"] for r in json.loads(out)["runs"]] == ["noop"], out
        else:
            assert "another dream" in err
    for code, _out, err in reverts:
        assert (
            code == 0 or (code == 75 and "another dream" in err) or (code == 1 and "already undone" in err)
        ), (code, err)
    subjects = git(root, "log", "--format=%s", f"{before}..HEAD").splitlines()
    assert len(subjects) == 2 * landed and all(s.startswith('Revert "dream(ops)') for s in subjects), subjects
    assert fsck(root) == "" and not (root / LOCK).exists()


REPLACEMENTS = 1000
"""How many times a `git add` replaces the index while `gitdream check --staged` reads it
(a count, not a timing: the test runs until they are done)."""


def _read_while(root: Path, writer: subprocess.Popen[bytes], read: Callable[[Any], bool]) -> None:
    """Two threads (libgit2 reads without holding the GIL) call `read(repo)` on their own
    `Repo` of `root` for as long as `writer` runs; every read must return True and raise
    nothing, and `writer` must succeed."""
    from gitdream.git.repo import Repo

    failures: list[str] = []
    reads = [0, 0]

    def reader(number: int) -> None:
        repo = Repo.open(root, env={})
        while writer.poll() is None:
            try:
                if not read(repo):
                    failures.append("a read gave the wrong answer")
            except Exception as exc:  # e.g. the RepoStateError naming libgit2's message
                failures.append(f"{type(exc).__name__}: {exc}")
            reads[number] += 1

    threads = [threading.Thread(target=reader, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert writer.returncode == 0
    assert failures == [], f"{len(failures)} of {sum(reads)} reads failed: {failures[:3]}"


def test_the_staged_index_is_read_whole_while_git_replaces_it(tmp_path: Path) -> None:
    """Regression test (a suite run once failed with libgit2's "invalid data in index -
    extension is truncated"): libgit2 takes an index file's size from one `stat` of its
    path and its bytes from a later `open` of that path, so a `git add` that renames a new
    index over it in between hands libgit2 the first bytes of a larger index ("extension is
    truncated") or too few bytes of a smaller one ("could not read (expected N bytes, read
    M)"). git itself replaces the index by rename, never in place; a read is now tried
    again when the index was replaced while libgit2 read it."""
    from gitdream.git import indexfile

    root = agent_repo(tmp_path / "repo")
    replacer = subprocess.Popen(  # each `git add` renames a larger index over the old one
        [
            "bash",
            "-c",
            f"for n in $(seq 1 {REPLACEMENTS}); do echo $n > u$n.txt; git add u$n.txt || exit 1; done",
        ],
        cwd=root,
    )
    _read_while(root, replacer, lambda repo: "agents/ops/agent.md" in indexfile.staged_paths(repo))


def test_head_is_read_whole_while_git_checkout_replaces_it(tmp_path: Path) -> None:
    """Regression test (the interleaving fuzz once failed with libgit2's "could not read
    (expected 23 bytes, read 21)" in a run's first look at HEAD): a `git checkout` renames
    a new `HEAD` over the old one between libgit2's `stat` of the file and its read. HEAD
    is now read again when that happens."""

    root = agent_repo(tmp_path / "repo")
    git(root, "branch", "a-branch-with-a-much-longer-name")
    git(root, "checkout", "-q", "-b", "b")
    switcher = subprocess.Popen(  # HEAD alternates between a short and a long symbolic ref
        [
            "bash",
            "-c",
            f"for n in $(seq 1 {REPLACEMENTS // 2}); do git checkout -q b && git checkout -q a-branch-with-a-much-longer-name || exit 1; done",
        ],
        cwd=root,
    )
    branches = ("refs/heads/b", "refs/heads/a-branch-with-a-much-longer-name")
    _read_while(root, switcher, lambda repo: repo.head().branch in branches)
