"""The idle path: `gitdream run --auto` with a closed gate, and `gitdream status`, on a
repository of 50 agents and 10 000 commits (issue 5).

The repository (built with fast-import): 50 agents under `agents/`, then 10 000
commits, round-robin, each adding one agent's next daily log (200 logs per agent, 10 000
tracked log files). Every agent's watermark sits 150 commits back, so each has 3 new
sessions (fewer than `min_sessions = 5`), and the state file says every agent ran and
scanned just now. Each command runs as a process, as the hooks and cron start it
(`python -m gitdream run --auto --trigger post-merge`), with one of its gates closed:

- time: the default `min_hours = 24` closes it after reading the state (no diff);
- throttle: `GITDREAM_MIN_HOURS=0`; the sessions gate closes on the counts the scan
  throttle (10 min) reuses, since nothing was committed since they were counted;
- sessions: also `GITDREAM_SCAN_INTERVAL_MINUTES=0`, so the new sessions of all 50
  agents are counted (a tree diff per agent) — the most work a closed gate does;
- `gitdream status`: every agent's sessions, watermark, lock, hooks, uncommitted raw files.

Baseline: `python -c "import pygit2, click"` — Python start-up plus the two libraries
every gitdream command needs. Nothing gitdream does can go below it, so the ratio is
gitdream's own overhead (its imports plus its work). Target: ratio ≤ 1.3.

    python -m bench --only idle_path
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bench import repos
from bench.harness import (
    Figure,
    Row,
    Settings,
    Table,
    git,
    gitdream_cmd,
    interleave,
    median,
    ms,
    ratio,
    run_child,
)

NAME = "idle_path"
TITLE = "The idle path: `run --auto` with a closed gate, and `status` (issue 5)"
TARGET = 1.3
NEW_SESSIONS = 3


def build(settings: Settings, tmp: Path, env: dict[str, str]) -> tuple[Path, int, int]:
    """The repository, its agent count and commit count."""
    agents = settings.pick(50, 3)
    commits = settings.pick(10_000, 60)
    repo = tmp / "idle"
    ids = repos.fast_import(repo, repos.agent_history(agents, commits), env)
    repos.checkout(repo, env)
    mark = ids[-1 - NEW_SESSIONS * agents]  # the last 3 x agents commits: 3 new logs each
    for agent in repos.agent_ids(agents):
        git(repo, "update-ref", f"refs/gitdream/watermark/{agent}", mark, env=env)

    from gitdream import clock
    from gitdream.trigger import state as state_mod

    now = clock.iso(clock.now())
    head = git(repo, "rev-parse", "HEAD", env=env).strip()
    state = state_mod.State()
    for agent in repos.agent_ids(agents):
        state.agents[agent] = state_mod.AgentState(
            last_attempt=now,
            last_run="bench",
            last_status="ok",
            last_dream=now,
            last_scan=now,
            last_sessions=3,
            last_scan_key=state_mod.scan_key(head, mark),
        )
    state_mod.save(repo / ".git", state)
    return repo, agents, commits


def run(settings: Settings, tmp: Path, env: dict[str, str]) -> Figure:
    figure = Figure(NAME, TITLE)
    repo, agents, commits = build(settings, tmp, env)
    auto = gitdream_cmd("run", "--auto", "--trigger", "post-merge")
    envs = {
        "time": env,
        "throttle": dict(env, GITDREAM_MIN_HOURS="0"),
        "sessions": dict(env, GITDREAM_MIN_HOURS="0", GITDREAM_SCAN_INTERVAL_MINUTES="0"),
    }
    for gate, gate_env in envs.items():  # each case closes the gate it claims to
        if settings.quick and gate != "sessions":
            continue
        shown = json.loads(run_child([*auto, "--json"], repo, gate_env).stdout)
        closed = "time" if gate == "time" else "sessions"
        assert shown["gate"]["open"] is False and shown["gate"]["gate"] == closed, shown["gate"]
        reused = "nothing committed since" in shown["gate"]["reason"]
        assert reused == (gate == "throttle"), shown["gate"]
    if not settings.quick:
        status = run_child(gitdream_cmd("status", "--json"), repo, env)
        assert len(json.loads(status.stdout)["agents"]) == agents

    def child(cmd: list[str], child_env: dict[str, str]):
        return lambda: run_child(cmd, repo, child_env).seconds

    cases = {
        "baseline": child([sys.executable, "-c", "import pygit2, click"], env),
        "time": child(auto, envs["time"]),
        "throttle": child(auto, envs["throttle"]),
        "sessions": child(auto, envs["sessions"]),
        "status": child(gitdream_cmd("status"), env),
    }
    if settings.quick:  # the smoke run: one gate is enough
        del cases["time"], cases["throttle"]
    runs = settings.reps(30, 1)
    samples = interleave(cases, runs, warmup=settings.pick(3, 0))
    figure.samples.update(samples)
    med = {name: median(values) for name, values in samples.items()}
    base = med["baseline"]
    table = Table(
        f"{agents} agents, {commits} commits; processes, median of {runs} interleaved runs; "
        'baseline `python -c "import pygit2, click"`:'
    )
    for label, name in (
        ("`run --auto`, time gate closed", "time"),
        ("`run --auto`, sessions gate closed on the throttle's reused counts", "throttle"),
        (f"`run --auto`, sessions gate closed ({agents} agents' sessions counted)", "sessions"),
        ("`gitdream status`", "status"),
    ):
        if name not in med:
            continue
        table.rows.append(
            Row(
                label,
                ms(med[name]),
                ms(base),
                ratio(med[name], base),
                f"≤ {TARGET}×",
                med[name] / base <= TARGET,
            )
        )
    figure.tables.append(table)
    return figure
