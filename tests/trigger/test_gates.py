"""Gates, back-off, throttle, sessions and the stamp (freezegun for time)."""

from __future__ import annotations

import json
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


def test_a_run_refused_for_the_repositorys_state_does_not_back_off() -> None:
    """A run refused with RepoStateError (the watermark not in this clone) is the last
    run, but neither a failure nor a reset: the back-off stays what the dreams made it."""
    st = state_mod.State()
    when = clock.parse_iso("2026-03-01T00:00:00Z")
    state_mod.record_run(st, "ops", "r1", "failed", when, refused=True)
    entry = st.agent("ops")
    assert (entry.last_run, entry.last_status, entry.failures, entry.last_failed) == ("r1", "failed", 0, None)
    assert state_mod.time_gate_opens(entry, 24.0) is None
    state_mod.record_run(st, "ops", "r2", "failed", when)
    state_mod.record_run(st, "ops", "r3", "failed", when + timedelta(hours=1), refused=True)
    assert (st.agent("ops").failures, st.agent("ops").last_failed) == (1, clock.iso(when))


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


def test_throttle_reuses_a_count_only_while_nothing_was_committed(agent_repo: Path) -> None:
    """Regression test for #17: `status` said NEXT now, SESSIONS 6/5, and the hook did not
    dream (gate 'throttle' closed) though the pull had just added commits."""
    _sessions(agent_repo, 2)
    st = state_mod.State()
    with freeze_time(T0) as frozen:
        first = _evaluate(agent_repo, st)
        assert first.gate == "sessions" and first.agents[0].sessions == 2
        assert first.reason == "ops: 2 new sessions since the watermark, 5 needed"
        frozen.tick(timedelta(minutes=3))
        again = _evaluate(agent_repo, st)  # nothing committed: the count is reused
        assert again.gate == "sessions"
        assert again.reason.endswith("(counted 3 min ago; nothing committed since)")
        _sessions(agent_repo, 3, start=10)
        frozen.tick(timedelta(minutes=1))
        opened = _evaluate(agent_repo, st)  # new commits: counted again at once
        assert opened.open and opened.agents[0].sessions == 5


def test_throttle_counts_again_after_the_interval(agent_repo: Path) -> None:
    _sessions(agent_repo, 2)
    st = state_mod.State()
    with freeze_time(T0) as frozen:
        _evaluate(agent_repo, st)
        st.agent("ops").last_sessions = 99  # a count that is not what the tree says
        frozen.tick(timedelta(minutes=9))
        assert _evaluate(agent_repo, st).open  # still reused
        frozen.tick(timedelta(minutes=1))
        again = _evaluate(agent_repo, st)
        assert again.gate == "sessions" and again.agents[0].sessions == 2


def test_a_run_that_consolidated_nothing_leaves_the_time_gate_open(agent_repo: Path) -> None:
    """Regression test for #17: after a manual `gitdream run` that found nothing, pulls
    that brought six days of logs were refused by the time gate."""
    _sessions(agent_repo, 6)
    st = state_mod.State()
    with freeze_time(T0) as frozen:
        state_mod.record_run(st, "ops", "r1", "noop", clock.now())
        frozen.tick(timedelta(minutes=30))
        assert _evaluate(agent_repo, st).open
        state_mod.record_run(st, "ops", "r2", "aborted", clock.now())
        assert _evaluate(agent_repo, st).open
        state_mod.record_run(st, "ops", "r3", "ok", clock.now())
        closed = _evaluate(agent_repo, st)
        assert closed.gate == "time"
        assert (
            "the last dream was less than 24 h ago (opens in 24.0 h, at 2026-03-02T12:30:00Z)"
            in closed.reason
        )
        frozen.tick(timedelta(hours=23))
        state_mod.record_run(st, "ops", "r4", "noop", clock.now())  # does not restart the clock
        frozen.tick(timedelta(hours=1))
        assert _evaluate(agent_repo, st).open


def test_backoff_counts_from_the_last_failure(agent_repo: Path) -> None:
    _sessions(agent_repo, 5)
    st = state_mod.State()
    with freeze_time(T0) as frozen:
        state_mod.record_run(st, "ops", "r1", "failed", clock.now())
        frozen.tick(timedelta(hours=1))
        state_mod.record_run(st, "ops", "r2", "failed", clock.now())
        frozen.tick(timedelta(minutes=30))
        state_mod.record_run(st, "ops", "r3", "noop", clock.now())
        closed = _evaluate(agent_repo, st, min_hours=1.0)  # 1 h × 2² = 4 h after r2
        assert closed.gate == "time" and closed.reason.startswith(
            "ops: 2 failed runs in a row back off to 4 h"
        )
        frozen.tick(timedelta(hours=3, minutes=30))
        assert _evaluate(agent_repo, st, min_hours=1.0).open


def test_a_state_file_of_an_earlier_version_keeps_its_last_dream(tmp_path: Path) -> None:
    folder = tmp_path / "gitdream"
    folder.mkdir()
    (folder / "state.json").write_text(
        '{"agents": {"ops": {"last_attempt": "2026-03-01T12:00:00Z", "last_status": "ok", "failures": 0},'
        ' "qa": {"last_attempt": "2026-03-01T10:00:00Z", "last_status": "failed", "failures": 2}}}'
    )
    st = state_mod.load(tmp_path)
    assert st.agents["ops"].last_dream == "2026-03-01T12:00:00Z"
    assert st.agents["qa"].last_failed == "2026-03-01T10:00:00Z" and st.agents["qa"].last_dream is None


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
        assert state_mod.next_opening(st, ["ops"], 24) is None  # never ran: ask Python
        state_mod.record_run(st, "ops", "r", "noop", clock.now())
        assert state_mod.next_opening(st, ["ops"], 24) is None  # consolidated nothing
        state_mod.record_run(st, "ops", "r", "ok", clock.now())
        opening = state_mod.next_opening(st, ["ops"], 24)
        assert opening == clock.now() + timedelta(hours=24)
        state_mod.write_stamp(tmp_path, opening, workdir=tmp_path, env={"GITDREAM_AGENTS": "x/*"})
        assert state_mod.read_stamp(tmp_path) == int(opening.timestamp())
        assert state_mod.stamp_path(tmp_path).read_text() == (
            f"{int(opening.timestamp())} 2026-03-02T12:00:00Z\n{os.path.realpath(tmp_path)}\n|x/*||\n"
        )
        state_mod.write_stamp(tmp_path, None)
        assert state_mod.read_stamp(tmp_path) == 0


def test_the_stamp_is_older_than_the_configuration_it_was_computed_from(agent_repo: Path) -> None:
    """The hooks trust the stamp only while gitdream.toml is not newer (`-nt`): its mtime
    is one second before the configuration was read, never after a later change."""
    write(agent_repo, "gitdream.toml", "min_hours = 5\n")
    before = clock.epoch()
    assert cli(agent_repo, "run", "--auto").exit_code == 0
    after = clock.epoch()
    stamp = state_mod.stamp_path(agent_repo / ".git")
    toml = agent_repo / "gitdream.toml"
    assert before - 1 <= stamp.stat().st_mtime <= after - 1
    past = clock.epoch() - 3600
    os.utime(toml, (past, past))
    os.utime(stamp, (past - 10, past - 10))  # written earlier than the file it relies on
    assert cli(agent_repo, "run", "--auto").exit_code == 0
    assert stamp.stat().st_mtime > toml.stat().st_mtime  # marked as made from it


def test_auto_run_with_closed_gate_is_silent_and_writes_stamp(agent_repo: Path) -> None:
    result = cli(agent_repo, "run", "--auto")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "" and result.stderr == ""
    stamp = state_mod.read_stamp(agent_repo / ".git")
    assert stamp is not None
    verbose = cli(agent_repo, "run", "--auto", "--verbose")
    assert verbose.exit_code == 0
    assert "gate 'sessions' is closed" in verbose.stderr and "nothing committed since" in verbose.stderr


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
    result = cli(agent_repo, "run", "--auto", "--verbose")  # the count is reused: nothing changes
    assert "nothing committed since" in result.stderr
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


def test_status_next_follows_the_gates_the_hooks_apply(agent_repo: Path) -> None:
    """`status`'s NEXT is what `run --auto` does: the time gate (from the last dream), then
    the sessions, then what blocks every dream; disabled, never."""
    import json

    def next_of(**env: str) -> str:
        return json.loads(cli(agent_repo, "status", "--json", env=env or None).stdout)["agents"][0]["next"]

    assert next_of() == "at 5 sessions"
    _sessions(agent_repo, 5)
    assert next_of() == "now"
    st = state_mod.load(agent_repo / ".git")
    state_mod.record_run(st, "ops", "r1", "noop", clock.now())
    state_mod.save(agent_repo / ".git", st)
    assert next_of() == "now"  # a run that consolidated nothing
    state_mod.record_run(st, "ops", "r2", "ok", clock.now())
    state_mod.save(agent_repo / ".git", st)
    assert next_of().startswith("in 2")
    assert next_of(GITDREAM_MIN_HOURS="0") == "now"
    git(agent_repo, "checkout", "-q", "--detach")
    assert next_of(GITDREAM_MIN_HOURS="0") == "after the repository is fixed"
    assert next_of(GITDREAM_ENABLED="0") == "never (disabled)"


def _two_agents(root: Path) -> None:
    write(root, "agents/dev/agent.md", "# dev\n")
    write(root, "agents/dev/memory/MEMORY.md", "# dev — memory index\n")
    commit_all(root, "add agent dev")


def test_a_count_is_reused_exactly_while_the_agents_folder_trees_are_unchanged(agent_repo: Path) -> None:
    """DESIGN §11: a commit costs the counting of the agents it touched, not of every
    agent. The planted counts show which agents were diffed again and which were not."""
    _two_agents(agent_repo)
    _sessions(agent_repo, 2)
    st = state_mod.State()
    first = _evaluate(agent_repo, st, scan_interval_minutes=0)
    assert [(a.agent, a.sessions) for a in first.agents] == [("dev", 0), ("ops", 2)]
    st.agent("ops").last_count = 4  # planted: reused only while ops's folder is unchanged
    st.agent("dev").last_count = 3
    write(agent_repo, "agents/dev/memory/logs/2026/03/2026-03-01.md", "- dev's first\n")
    commit_all(agent_repo, "a session of dev only")
    again = _evaluate(agent_repo, st, scan_interval_minutes=0)  # no throttle: HEAD moved anyway
    assert [(a.agent, a.sessions) for a in again.agents] == [("dev", 1), ("ops", 4)]
    assert again.reason == (  # the agent nearest a dream first
        "ops: 4 new sessions since the watermark, 5 needed; dev: 1 new session since the watermark, 5 needed"
    )


def test_an_exact_count_is_not_reused_once_the_rules_or_the_base_change(agent_repo: Path) -> None:
    _sessions(agent_repo, 2)
    st = state_mod.State()
    assert _evaluate(agent_repo, st, scan_interval_minutes=0).agents[0].sessions == 2
    st.agent("ops").last_count = 7
    assert _evaluate(agent_repo, st, scan_interval_minutes=0).agents[0].sessions == 7  # same trees
    write(agent_repo, "gitdream.toml", 'log_globs = ["memory/logs/2026/03/2026-03-01.md"]\n')
    commit_all(agent_repo, "fewer log globs")  # ops's folder unchanged, its rules not
    assert _evaluate(agent_repo, st, scan_interval_minutes=0).agents[0].sessions == 1
    st.agent("ops").last_count = 7
    head = git(agent_repo, "rev-parse", "HEAD").strip()
    git(agent_repo, "update-ref", "refs/gitdream/watermark/ops", head)  # the base moved
    assert _evaluate(agent_repo, st, scan_interval_minutes=0).agents[0].sessions == 0


def test_a_state_file_keeps_the_exact_count_and_status_uses_it(agent_repo: Path) -> None:
    _sessions(agent_repo, 2)
    common = Repo.open(agent_repo).common_dir
    st = state_mod.State()
    _evaluate(agent_repo, st, scan_interval_minutes=0)
    st.agent("ops").last_count = 6  # planted, so that status shows where its count came from
    state_mod.save(common, st)
    assert state_mod.load(common).agents["ops"].last_count_key == st.agents["ops"].last_count_key
    result = cli(agent_repo, "status", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["agents"][0]["sessions"]["new"] == 6
