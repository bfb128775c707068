"""Issue #17's acceptance, end to end: real hooks installed with this source tree's
interpreter, fired by real `git pull`s from a local bare remote, real detached dreams.

The hooks log is how a test learns that a detached run finished: every firing writes
exactly one decision line there (the sh fast path, or the run it started).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitdream.git.repo import Repo
from gitdream.trigger import hookscripts
from tests.conftest import AGENT_MD
from tests.helpers import cli, commit_all, git, gitdream_env, run_gitdream, write

POST_HOOKS = ["post-merge", "post-rewrite", "post-commit"]


class Remote:
    """A bare remote, an upstream clone where the agent runtime commits its logs, and a
    local clone with gitdream's hooks."""

    def __init__(self, tmp_path: Path, log: Path) -> None:
        self.bare = tmp_path / "remote.git"
        git(tmp_path, "init", "-q", "--bare", "-b", "main", str(self.bare))
        self.upstream = tmp_path / "upstream"
        git(tmp_path, "clone", "-q", str(self.bare), str(self.upstream))
        write(self.upstream, "agents/ops/agent.md", AGENT_MD)
        write(self.upstream, "agents/ops/memory/MEMORY.md", "# ops — memory index\n")
        commit_all(self.upstream, "agent ops")
        git(self.upstream, "push", "-q", "origin", "main")
        self.local = tmp_path / "local"
        git(tmp_path, "clone", "-q", str(self.bare), str(self.local))
        git(self.local, "config", "pull.rebase", "false")
        hookscripts.install(Repo.open(self.local), hooks=POST_HOOKS, python=sys.executable)
        self.log = log
        self.env = gitdream_env()
        self.day = 0

    def logs(self, days: int, *, extra: dict[str, str] | None = None) -> None:
        """Commit `days` daily logs upstream, one commit a day, and push."""
        for _ in range(days):
            self.day += 1
            write(
                self.upstream,
                f"agents/ops/memory/logs/2026/03/2026-03-{self.day:02d}.md",
                f"- Lesson: the deploy of day {self.day} needs the cache warmed first, because cold "
                f"starts time out.\n- Decision: keep release notes for day {self.day} in the wiki.\n",
            )
            for name, content in (extra or {}).items():
                write(self.upstream, name, content)
            extra = None
            commit_all(self.upstream, f"log day {self.day}", date=f"2026-03-{self.day:02d}T18:00:00Z")
        git(self.upstream, "push", "-q", "origin", "main")

    def decisions(self) -> list[str]:
        if not self.log.exists():
            return []
        found = []
        for line in self.log.read_text().splitlines():
            fields = line.split("\t")
            if len(fields) == 4 and fields[2] == os.path.realpath(self.local):
                found.append(fields[3])
        return found

    def pull(self) -> str:
        """`git pull`; waits for the decision the hook logs and returns it."""
        before = len(self.decisions())
        proc = subprocess.run(
            ["git", "pull", "-q", "--no-edit"], cwd=self.local, env=self.env, capture_output=True
        )
        assert proc.returncode == 0, proc.stderr
        deadline = time.monotonic() + 120
        while len(self.decisions()) <= before:
            assert time.monotonic() < deadline, (
                f"no decision logged: {self.log.read_text() if self.log.exists() else ''}"
            )
            time.sleep(0.1)
        time.sleep(0.2)  # let the detached run release the lock and write its receipt
        (decision,) = self.decisions()[before:]
        return decision


@pytest.fixture
def remote(tmp_path: Path, isolate: Path) -> Remote:
    return Remote(tmp_path, isolate / "gitdream-home" / "logs" / "hooks.log")


def test_after_a_manual_no_op_a_pull_of_six_days_of_logs_dreams(remote: Remote) -> None:
    """Regression test for #17: with the default configuration a manual `gitdream run`
    that found nothing closed the time gate for 24 h."""
    manual = run_gitdream(remote.local, "run")
    assert manual.returncode == 0 and "Nothing new" in manual.stdout, manual.stderr
    remote.logs(6)
    decision = remote.pull()
    assert decision.startswith("dreamed: ops ok (run "), decision
    assert "experience" in decision
    status = json.loads(cli(remote.local, "status", "--json").stdout)
    assert status["hooks_log"]["path"] == str(remote.log)
    assert status["hooks_log"]["last"]["message"] == decision
    (agent,) = status["agents"]
    assert agent["next"].startswith("in 2") and agent["last_dream"] is not None

    # A pull that also sets min_hours = 0 and min_sessions = 1: the next log is dreamed.
    remote.logs(1, extra={"gitdream.toml": "min_hours = 0\nmin_sessions = 1\n"})
    assert remote.pull().startswith("dreamed: ops ok")
    remote.logs(1)
    assert remote.pull().startswith("dreamed: ops ok")
    dreams = git(remote.local, "log", "--format=%s", "--grep=^dream(ops)")
    assert dreams.count("dream(ops): experience") == 3


def test_every_hook_decision_is_one_line_in_the_hooks_log(remote: Remote) -> None:
    remote.logs(2)
    decision = remote.pull()  # never dreamed: the time gate is open, too few sessions
    assert decision == "gate 'sessions' closed: ops: 2 new sessions since the watermark, 5 needed"
    status = cli(remote.local, "status")
    assert f"hooks log: {remote.log}\n" in status.stdout
    assert f"post-merge: {decision}\n" in status.stdout
    assert "at 5 sessions" in status.stdout  # NEXT agrees with what the hook did
    remote.logs(3)
    assert remote.pull().startswith("dreamed: ops ok")
    remote.logs(1)
    decision = remote.pull()  # now the stamp closes the gate in sh
    assert decision.startswith("gate 'time' closed until 20") and decision.endswith(
        "(the stamp; no Python started)"
    )
    assert len(remote.decisions()) == 3


def test_status_next_agrees_with_the_hook_after_the_throttle(remote: Remote) -> None:
    """`status` said NEXT now, SESSIONS 6/5 while the hook's throttle refused to look."""
    remote.logs(2)
    assert remote.pull().startswith("gate 'sessions' closed")  # counted: 2 of 5
    remote.logs(4)
    git(remote.local, "fetch", "-q")
    row = json.loads(cli(remote.local, "status", "--json").stdout)["agents"][0]
    assert row["next"] == "at 5 sessions"  # before the pull: HEAD has 2 new sessions
    decision = remote.pull()  # within the throttle's 10 minutes, but new commits arrived
    assert decision.startswith("dreamed: ops ok"), decision


def test_a_clone_without_gitdreams_refs_closes_the_gate_with_the_fetch_hint(remote: Remote) -> None:
    """Regression test: in a clone of a repository that has dreamed, without
    `refs/gitdream/*` (git clone does not fetch them), the post-merge hook dreamed after
    one new session although min_sessions is 5, recorded a failed run and backed off.
    Now the sessions gate stays closed and says why, with the fetch hint."""
    remote.logs(5)
    dreamed = run_gitdream(remote.upstream, "run")
    assert dreamed.returncode == 0, dreamed.stderr
    assert "dream(ops): experience" in git(remote.upstream, "log", "-1", "--format=%s")
    git(remote.upstream, "push", "-q", "origin", "main")  # main only: no refs/gitdream/*
    clone = remote.bare.parent / "clone"
    git(remote.bare.parent, "clone", "-q", str(remote.bare), str(clone))
    git(clone, "config", "pull.rebase", "false")
    assert git(clone, "for-each-ref", "refs/gitdream", "refs/notes").strip() == ""
    hookscripts.install(Repo.open(clone), hooks=POST_HOOKS, python=sys.executable)
    remote.local = clone
    remote.logs(1)
    decision = remote.pull()
    assert decision.startswith("gate 'sessions' closed: ops: "), decision
    assert "has dreamed before" in decision and "refs/gitdream/watermark/ops" in decision
    assert "git fetch origin 'refs/gitdream/*:refs/gitdream/*'" in decision
    assert "git notes --ref gitdream merge" in decision  # the same hint the run gives
    assert git(clone, "log", "--format=%s").count("dream(ops): experience") == 1  # upstream's
    status = json.loads(cli(clone, "status", "--json").stdout)
    (agent,) = status["agents"]
    assert agent["last_run"]["status"] is None and agent["backoff"]["failures"] == 0
    assert agent["next"] == "after fetching gitdream's refs", agent["next"]
    assert "has dreamed before" in agent["sessions"]["error"]
    assert any("refs/gitdream/*:refs/gitdream/*" in w for w in status["warnings"])
    text = cli(clone, "status").stdout
    assert "refs/gitdream/*:refs/gitdream/*" in text and "after fetching gitdream's refs" in text

    # An explicit run still refuses with the hint. Once the watermark is fetched the
    # sessions are counted from it: 1 new session of 5.
    manual = run_gitdream(clone, "run")
    assert manual.returncode != 0 and "refs/gitdream/*:refs/gitdream/*" in manual.stderr
    # Refused for the repository's state, not a failed dream: recorded as the last run,
    # but no back-off, so the hooks wait no longer than min_hours once the refs are here.
    (agent,) = json.loads(cli(clone, "status", "--json").stdout)["agents"]
    assert agent["last_run"]["status"] == "failed", agent["last_run"]
    assert agent["backoff"] == {"failures": 0, "interval_hours": 24.0}, agent["backoff"]
    assert agent["time_gate"]["open"] is True, agent["time_gate"]
    git(remote.upstream, "push", "-q", "origin", "refs/gitdream/*:refs/gitdream/*")
    git(clone, "fetch", "-q", "origin", "refs/gitdream/*:refs/gitdream/*")
    (agent,) = json.loads(cli(clone, "status", "--json").stdout)["agents"]
    assert agent["sessions"] == {"new": 1, "needed": 5, "pending": 0, "error": None}, agent
