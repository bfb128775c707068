"""Killed, interrupted and concurrent runs (issue 5): real `gitdream run` subprocesses."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitdream.faults import RUN_POINTS
from tests.helpers import commit_all, git, gitdream_env, head, resume, run_gitdream, start_paused, write

LOGS = "agents/ops/memory/logs/2026/03"


def _material(root: Path) -> None:
    write(
        root,
        f"{LOGS}/2026-03-01.md",
        "# 2026-03-01\n\n- [deploy] Rollbacks need the previous image tag.\n"
        "- [ci] The integration suite is flaky.\n- Always run the smoke test first. #skill\n",
    )
    write(root, f"{LOGS}/2026-03-02.md", "- [deploy] Yesterday's build is stable.\n- Answer briefly. #soul\n")
    commit_all(root, "logs")


def _user_changes(root: Path) -> None:
    write(root, "README.md", "staged by the user\n")
    git(root, "add", "README.md")
    write(root, "notes.txt", "untracked by the user\n")
    write(root, "agents/ops/memory/logs/2026/03/2026-03-03.md", "- not committed yet\n")


def _user_state(root: Path) -> dict[str, object]:
    return {
        # The index entry the user staged (not `git diff --cached`: right after a kill between
        # the branch move and the index update, HEAD is ahead of the index by design).
        "staged": git(root, "ls-files", "-s", "README.md", "notes.txt", LOGS),
        "README.md": (root / "README.md").read_bytes(),
        "notes.txt": (root / "notes.txt").read_bytes(),
        "uncommitted log": (root / LOGS / "2026-03-03.md").read_bytes(),
    }


def _memory_tree(root: Path) -> dict[str, str]:
    """Path → content of every file under agents/ at HEAD (what a dream wrote).

    A source reference ends in `@<input commit>`: after a kill between the experience and
    the definition commit, the run that finishes the job reads the same entries (same ids,
    same text) at a later input commit, so the commit part is normalised away.
    """
    files = git(root, "ls-tree", "-r", "--name-only", "HEAD", "agents").split()
    return {p: re.sub(r"@[0-9a-f]{12}`", "@<input>`", git(root, "show", f"HEAD:{p}")) for p in files}


def _leftover_temp_files(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*.gitdream-*.tmp")]


@pytest.fixture
def reference(agent_repo: Path, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The repository with material and user changes, and the result of an uninterrupted run
    on an identical copy."""
    _material(agent_repo)
    copy = tmp_path / "reference"
    shutil.copytree(agent_repo, copy, symlinks=True)
    proc = run_gitdream(copy, "run")
    assert proc.returncode == 0, proc.stderr
    _user_changes(agent_repo)
    return agent_repo, _memory_tree(copy)


@pytest.mark.parametrize("point", RUN_POINTS)
def test_kill_at_every_fault_point_then_next_run_completes(
    reference: tuple[Path, dict[str, str]], point: str
) -> None:
    root, expected = reference
    before_user = _user_state(root)
    proc = run_gitdream(root, "run", env={"GITDREAM_FAULT": f"{point}:kill"})
    assert proc.returncode == -signal.SIGKILL, (point, proc.returncode, proc.stderr)
    assert git(root, "fsck", "--strict", "--no-progress", "--no-dangling") == ""
    assert _user_state(root) == before_user
    # The next run completes, repairs what the kill left, and ends where an uninterrupted
    # run ends: same files, same facts.
    again = run_gitdream(root, "run")
    assert again.returncode == 0, (point, again.stderr)
    assert _memory_tree(root) == expected, point
    assert _user_state(root) == before_user
    assert _leftover_temp_files(root) == []
    assert git(root, "fsck", "--strict", "--no-progress", "--no-dangling") == ""
    status = git(root, "status", "--porcelain")
    assert sorted(status.splitlines()) == [
        "?? agents/ops/memory/logs/2026/03/2026-03-03.md",
        "?? notes.txt",
        "M  README.md",
    ]
    assert not (root / ".git" / "gitdream" / "lock").exists()


def test_sigint_mid_run_aborts_with_nothing_committed(agent_repo: Path, tmp_path: Path) -> None:
    _material(agent_repo)
    before = head(agent_repo)
    faults = tmp_path / "faults"
    proc = start_paused(agent_repo, faults, "before-experience-commit", "run", "--json")
    assert (agent_repo / ".git" / "gitdream" / "lock").exists()
    proc.send_signal(signal.SIGINT)
    time.sleep(0.2)
    out, err = resume(proc, faults, "before-experience-commit")
    assert proc.returncode == 130, err
    receipt = json.loads(out)["runs"][0]
    assert receipt["status"] == "aborted"
    assert "stopped by SIGINT" in receipt["error"]["message"]
    assert head(agent_repo) == before
    assert not (agent_repo / ".git" / "gitdream" / "lock").exists()
    assert git(agent_repo, "rev-parse", "-q", "--verify", "refs/gitdream/watermark/ops", check=False) == ""
    note = git(agent_repo, "notes", "--ref", "gitdream", "show", before)
    assert json.loads(note.splitlines()[-1])["status"] == "aborted"
    state = json.loads((agent_repo / ".git" / "gitdream" / "state.json").read_text())
    assert state["agents"]["ops"]["failures"] == 0, "aborted is not a failure"


def test_sigterm_is_handled_like_sigint(agent_repo: Path, tmp_path: Path) -> None:
    _material(agent_repo)
    faults = tmp_path / "faults"
    proc = start_paused(agent_repo, faults, "before-experience-commit", "run")
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.2)
    _out, err = resume(proc, faults, "before-experience-commit")
    assert proc.returncode == 130
    assert "aborted before its next write" in err


@pytest.mark.parametrize("auto", [False, True])
def test_eight_concurrent_runs_make_one_dream(agent_repo: Path, auto: bool) -> None:
    _material(agent_repo)
    before = head(agent_repo)
    args = [sys.executable, "-m", "gitdream", "run", "--json"] + (["--auto"] if auto else [])
    env = gitdream_env({"GITDREAM_MIN_SESSIONS": "1"} if auto else None)
    procs = [
        subprocess.Popen(
            args, cwd=agent_repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(8)
    ]
    results = [(p.wait(timeout=120), *p.communicate()) for p in procs]
    codes = sorted(code for code, _out, _err in results)
    dreams = [json.loads(out) for code, out, _err in results if code == 0 and out.strip()]
    ok_runs = [r for d in dreams for r in d.get("runs", []) if r["status"] == "ok"]
    assert len(ok_runs) == 1, results
    dream_commits = git(agent_repo, "log", "--format=%s", f"{before}..HEAD").splitlines()
    assert len(dream_commits) == 2 and all(c.startswith("dream(ops): ") for c in dream_commits)
    if auto:
        assert codes == [0] * 8
    else:
        assert codes.count(0) >= 1 and set(codes) <= {0, 75}
        locked = [err for code, _out, err in results if code == 75]
        assert all("another dream" in err for err in locked)  # (run R, pid P…) or "is starting"
    assert git(agent_repo, "fsck", "--strict", "--no-progress") == ""
    assert not (agent_repo / ".git" / "gitdream" / "lock").exists()


def test_stale_lock_of_a_killed_run_is_broken(agent_repo: Path) -> None:
    _material(agent_repo)
    proc = run_gitdream(agent_repo, "run", env={"GITDREAM_FAULT": "after-blobs:kill"})
    assert proc.returncode == -signal.SIGKILL
    assert (agent_repo / ".git" / "gitdream" / "lock").exists()
    again = run_gitdream(agent_repo, "run")
    assert again.returncode == 0, again.stderr
    assert "broke a stale lock" in again.stderr


@pytest.mark.parametrize("args", [["run", "--auto"], ["status"], ["status", "--json"], ["check"]])
def test_idle_path_never_imports_the_anthropic_sdk(agent_repo: Path, args: list[str]) -> None:
    # the user's own choice (a repository's gitdream.toml may not choose the engine)
    user = Path(os.environ["GITDREAM_HOME"]) / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('engine = "anthropic"\n')
    code = (
        "import sys\n"
        "from gitdream.cli import cli\n"
        "try:\n"
        f"    cli({args!r}, prog_name='gitdream')\n"
        "except SystemExit:\n"
        "    pass\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('anthropic', 'httpx', 'httpx2', 'pydantic'))\n"
        "print('LOADED', loaded)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=agent_repo, env=gitdream_env(), capture_output=True, text=True
    )
    assert "LOADED []" in proc.stdout, proc.stdout + proc.stderr


def test_disabled_hook_environment_is_not_needed(agent_repo: Path) -> None:
    """GITDREAM_ENABLED=0 in the environment disables every side effect too."""
    _material(agent_repo)
    proc = run_gitdream(agent_repo, "run", env={"GITDREAM_ENABLED": "0"})
    assert proc.returncode == 0
    assert "disabled" in proc.stderr
    assert not (agent_repo / ".git" / "gitdream").exists()
    assert git(agent_repo, "for-each-ref", "refs/gitdream", "refs/notes") == ""
