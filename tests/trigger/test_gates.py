"""Gates, back-off, throttle, sessions and the stamp (freezegun for time)."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from freezegun import freeze_time

from gitdream import clock, config, paths
from gitdream.agents import list_agents
from gitdream.git.repo import Repo
from gitdream.trigger import gates
from gitdream.trigger import state as state_mod
from tests.helpers import cli, commit_all, git, write

T0 = "2026-03-01T12:00:00Z"


@pytest.mark.parametrize(
    ("base", "failures", "expected"),
    [
        (24, 0, 24),
        (24, 1, 24),
        (24, 5, 24),
        (1, 1, 2),
        (1, 3, 8),
        (1, 5, 24),
        (1, 50, 24),
        (6, 1, 12),
        (6, 2, 24),
        (6, 3, 24),
        (168, 0, 168),
        (168, 1, 168),
        (168, 4, 168),
        (0.5, 2, 2),
    ],
)
def test_backoff_interval(base: float, failures: int, expected: float) -> None:
    assert state_mod.interval_hours(base, failures) == expected


def test_noop_and_aborted_do_not_count_success_resets() -> None:
    st = state_mod.State()
    when = datetime(2026, 3, 1, tzinfo=UTC)
    for status, expected in [
        ("failed", 1),
        ("failed", 2),
        ("noop", 2),
        ("aborted", 2),
        ("failed", 3),
        ("ok", 0),
    ]:
        state_mod.record_run(st, "ops", "r", status, when)
        assert st.agent("ops").failures == expected, status


def _evaluate(root: Path, st: state_mod.State, **overrides: object) -> gates.GateResult:
    cfg = config.load(root, env={}).with_overrides({k: (v, "test") for k, v in overrides.items()})
    repo = Repo.open(root)
    return gates.evaluate(repo, cfg, list_agents(root, cfg), st)


def _sessions(root: Path, n: int, start: int = 1) -> None:
    for i in range(start, start + n):
        write(root, f"agents/ops/memory/logs/2026/03/2026-03-{i:02d}.md", f"- entry {i}\n")
    commit_all(root, f"{n} sessions")


def test_time_gate_closed_at_23h59_open_at_24h(agent_repo: Path) -> None:
    _sessions(agent_repo, 5)
    st = state_mod.State()
    with freeze_time(T0) as frozen:
        state_mod.record_run(st, "ops", "r1", "ok", clock.now())
        frozen.tick(timedelta(hours=23, minutes=59))
        closed = _evaluate(agent_repo, st)
        assert closed.gate == "time" and not closed.open
        assert "opens in 0.0 h" in closed.reason
        frozen.tick(timedelta(minutes=1))
        opened = _evaluate(agent_repo, st)
        assert opened.open and [a.id for a in opened.ready] == ["ops"]


def test_backoff_stretches_the_time_gate(agent_repo: Path) -> None:
    _sessions(agent_repo, 5)
    st = state_mod.State()
    with freeze_time(T0) as frozen:
        state_mod.record_run(st, "ops", "r1", "failed", clock.now())
        state_mod.record_run(st, "ops", "r2", "failed", clock.now())
        frozen.tick(timedelta(hours=3, minutes=59))
        assert _evaluate(agent_repo, st, min_hours=1.0).gate == "time"  # 1 h × 2² = 4 h
        frozen.tick(timedelta(minutes=1))
        assert _evaluate(agent_repo, st, min_hours=1.0).open


def test_throttle_then_sessions(agent_repo: Path) -> None:
    _sessions(agent_repo, 2)
    st = state_mod.State()
    with freeze_time(T0) as frozen:
        first = _evaluate(agent_repo, st)
        assert first.gate == "sessions" and first.agents[0].sessions == 2
        assert "2 new sessions since the watermark, 5 needed" in first.reason
        _sessions(agent_repo, 3, start=10)
        frozen.tick(timedelta(minutes=9))
        assert _evaluate(agent_repo, st).gate == "throttle"
        frozen.tick(timedelta(minutes=1))
        assert _evaluate(agent_repo, st).open


def test_sessions_count_files_not_entries_or_mtimes(agent_repo: Path) -> None:
    write(agent_repo, "agents/ops/memory/logs/2026/03/2026-03-01.md", "".join(f"- e{i}\n" for i in range(50)))
    commit_all(agent_repo, "one file, fifty entries")
    st = state_mod.State()
    assert _evaluate(agent_repo, st).agents[0].sessions == 1
    for path in (agent_repo / "agents").rglob("*.md"):
        os.utime(path, (0, 0))
    st = state_mod.State()
    assert _evaluate(agent_repo, st).agents[0].sessions == 1


def test_repository_gate(agent_repo: Path) -> None:
    git(agent_repo, "checkout", "-q", "--detach")
    result = _evaluate(agent_repo, state_mod.State())
    assert result.gate == "repository" and "detached" in result.reason


def test_next_opening_and_stamp(tmp_path: Path) -> None:
    st = state_mod.State()
    with freeze_time(T0):
        assert state_mod.next_opening(st, ["ops"], 24, 10) is None  # never ran: ask Python
        state_mod.record_run(st, "ops", "r", "ok", clock.now())
        opening = state_mod.next_opening(st, ["ops"], 24, 10)
        assert opening == clock.now() + timedelta(hours=24)
        state_mod.write_stamp(tmp_path, opening)
        assert state_mod.read_stamp(tmp_path) == int(opening.timestamp())
        state_mod.write_stamp(tmp_path, None)
        assert state_mod.read_stamp(tmp_path) == 0


def test_auto_run_with_closed_gate_is_silent_and_writes_stamp(agent_repo: Path) -> None:
    result = cli(agent_repo, "run", "--auto")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "" and result.stderr == ""
    stamp = state_mod.read_stamp(agent_repo / ".git")
    assert stamp is not None
    verbose = cli(agent_repo, "run", "--auto", "--verbose")
    assert verbose.exit_code == 0
    assert "gate 'throttle' is closed" in verbose.stderr


def test_disabled_means_no_side_effects(agent_repo: Path, isolate: Path) -> None:
    write(agent_repo, "gitdream.toml", "enabled = false\n")
    commit_all(agent_repo, "disable")
    for args in (["run", "--auto"], ["run"], ["status"], ["status", "--json"], ["run", "--auto", "--json"]):
        result = cli(agent_repo, *args)
        assert result.exit_code == 0, (args, result.stderr)
    assert not paths.state_dir(agent_repo / ".git").exists()
    assert not (isolate / "gitdream-home").exists()
    assert git(agent_repo, "for-each-ref", "refs/gitdream", "refs/notes") == ""


def test_a_closed_gate_that_changes_nothing_rewrites_neither_state_nor_stamp(agent_repo: Path) -> None:
    assert cli(agent_repo, "run", "--auto").exit_code == 0  # first scan: writes both
    files = [state_mod.state_path(agent_repo / ".git"), state_mod.stamp_path(agent_repo / ".git")]
    before = [(f.read_bytes(), f.stat().st_ino, f.stat().st_mtime_ns) for f in files]
    result = cli(agent_repo, "run", "--auto", "--verbose")  # throttle closed: nothing changes
    assert "gate 'throttle' is closed" in result.stderr
    assert [(f.read_bytes(), f.stat().st_ino, f.stat().st_mtime_ns) for f in files] == before
    state_mod.write_stamp(agent_repo / ".git", None)  # a different value is written
    assert state_mod.read_stamp(agent_repo / ".git") == 0


def test_pending_material_opens_the_session_gate(agent_repo: Path) -> None:
    """Regression test: entries left over by max_units were invisible to auto mode
    ("0 new sessions") until five new files arrived."""
    for day in (1, 2):
        write(
            agent_repo,
            f"agents/ops/memory/logs/2026/03/2026-03-0{day}.md",
            "".join(f"- [t{i}] fact number {i} of day {day}\n" for i in range(4)),
        )
    commit_all(agent_repo, "logs")
    first = cli(agent_repo, "run", "--json", env={"GITDREAM_MAX_UNITS": "3"})
    receipt = __import__("json").loads(first.stdout)["runs"][0]
    assert receipt["pending"], receipt
    st = state_mod.State()
    result = _evaluate(agent_repo, st)
    assert result.open and "pending from the last dream" in result.agents[0].reason
