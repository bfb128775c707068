"""The idle path: `gitdream run --auto` with a closed gate, and `gitdream status`, on a
repository of one agent and on one of 50 agents and 10 000 commits (issues 5 and 12).

The repositories (built with fast-import): one agent under `agents/` with a year of daily
logs (365 commits), and 50 agents with 10 000 commits, round-robin, each adding one
agent's next daily log (200 logs per agent, 10 000 tracked log files). Every agent's
watermark sits 3 of its commits back, so each has 3 new sessions (fewer than
`min_sessions = 5`), the state file says every agent ran and scanned just now, and the
index has been refreshed after the checkout (as in a repository in use). Each
command runs as a process, as the hooks and cron start it (`python -m gitdream run --auto
--trigger post-merge`), with one of its gates closed:

- time: the default `min_hours = 24` closes it after reading the state (no diff);
- throttle: `GITDREAM_MIN_HOURS=0`; the sessions gate closes on the counts the scan
  throttle (10 min) reuses, since nothing was committed since they were counted;
- sessions: also `GITDREAM_SCAN_INTERVAL_MINUTES=0`, so the new sessions of every agent
  are counted (a tree diff per agent) — the most work a closed gate does;
- `gitdream status` (50 agents): every agent's sessions, watermark, lock, hooks,
  uncommitted raw files.

Baseline: `python -c "import pygit2, click"` — Python start-up plus the two libraries
every gitdream command needs. Nothing gitdream does can go below it, so the ratio is
gitdream's own overhead (its imports plus its work). Target: ratio ≤ 1.3.

A second table gives each case's CPU time (user + sys of the child, from `os.wait4`) in
the same rounds: on a loaded machine a child waits for a core, which its wall time counts
and its CPU time does not, so the CPU ratio is the one to compare across runs.

With `--compare DIR` every case is also run with the gitdream of checkout DIR (an older
tree: "before"), interleaved with this checkout's in the same rounds, each on its own copy
of the repositories (each version rewrites the state file its own way).

    python -m bench --only idle_path [--compare /tmp/gitdream-d9ac1c2]
"""

from __future__ import annotations

import json
import shutil
import sys
import time
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
TITLE = "The idle path: `run --auto` with a closed gate, and `status` (issues 5 and 12)"
TARGET = 1.3
NEW_SESSIONS = 3


def _settle_index(repo: Path, env: dict[str, str]) -> None:
    """Leave the index as an ordinary git command leaves it in a repository in use: the
    checkout wrote every file in the second it wrote the index, so git holds each entry
    "racily clean" and re-reads its content at every status (10 000 files: ~50 ms per
    `git status`, against ~10 ms) until a command refreshes and rewrites the index after
    that second. `gitdream status` runs `git status --no-optional-locks`, which never
    rewrites it, so without this the figure would time git's racy-entry checks."""
    time.sleep(1.1)
    git(repo, "update-index", "-q", "--really-refresh", env=env)
    git(repo, "status", "--porcelain", env=env)


def build(tmp: Path, env: dict[str, str], name: str, agents: int, commits: int) -> Path:
    """A repository of `agents` agents and `commits` commits under `tmp/name`, every
    watermark NEW_SESSIONS of its agent's commits back, every agent just dreamed and
    scanned."""
    repo = tmp / name
    ids = repos.fast_import(repo, repos.agent_history(agents, commits), env)
    repos.checkout(repo, env)
    _settle_index(repo, env)
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
    return repo


GATES = {  # each case's environment, over the figure's
    "time": {},
    "throttle": {"GITDREAM_MIN_HOURS": "0"},
    "sessions": {"GITDREAM_MIN_HOURS": "0", "GITDREAM_SCAN_INTERVAL_MINUTES": "0"},
}


def _check_closed(auto: list[str], repo: Path, env: dict[str, str], gate: str, *, own: bool) -> None:
    """The case closes the gate it claims to (and, for this checkout's gitdream, the
    throttle case reuses the counts while the sessions case counts; gitdream before issue
    17 named a gate closed on reused counts "throttle")."""
    shown = json.loads(run_child([*auto, "--json"], repo, env).stdout)
    closed = {"time"} if gate == "time" else {"sessions"}
    if gate == "throttle" and not own:
        closed.add("throttle")
    assert shown["gate"]["open"] is False and shown["gate"]["gate"] in closed, shown["gate"]
    if own:
        reused = "nothing committed since" in shown["gate"]["reason"]
        assert reused == (gate == "throttle"), shown["gate"]


def run(settings: Settings, tmp: Path, env: dict[str, str]) -> Figure:
    figure = Figure(NAME, TITLE)
    many = settings.pick(50, 3)
    commits = settings.pick(10_000, 60)
    sizes = {"one": (1, settings.pick(365, 20)), "many": (many, commits)}
    built = {name: build(tmp, env, f"idle-{name}", *size) for name, size in sizes.items()}
    checkouts = {"": None}  # "" is this checkout; "before " the compared one
    if settings.compare is not None:
        checkouts["before "] = settings.compare
    auto = gitdream_cmd("run", "--auto", "--trigger", "post-merge")
    gates = ("sessions",) if settings.quick else tuple(GATES)

    cpu: dict[str, list[float]] = {}  # each case's CPU seconds, warm-up rounds included

    def child(key: str, cmd: list[str], repo: Path, child_env: dict[str, str]):
        samples = cpu.setdefault(key, [])

        def once() -> float:
            result = run_child(cmd, repo, child_env)
            samples.append(result.cpu_seconds)
            return result.seconds

        return once

    cases = {"baseline": child("baseline", [sys.executable, "-c", "import pygit2, click"], built["one"], env)}
    for tag, checkout in checkouts.items():
        base_env = env if checkout is None else dict(env, PYTHONPATH=str(checkout))
        for name, origin in built.items():
            repo = origin
            if checkout is not None:  # its own copy: each version writes its own state file
                repo = tmp / f"before-{name}"
                shutil.copytree(origin, repo, symlinks=True)
            for gate in gates:
                gate_env = dict(base_env, **GATES[gate])
                _check_closed(auto, repo, gate_env, gate, own=checkout is None)
                cases[f"{tag}{name} {gate}"] = child(f"{tag}{name} {gate}", auto, repo, gate_env)
            if name == "many" and not settings.quick:
                status = run_child(gitdream_cmd("status", "--json"), repo, base_env)
                assert len(json.loads(status.stdout)["agents"]) == many
                cases[f"{tag}{name} status"] = child(
                    f"{tag}{name} status", gitdream_cmd("status"), repo, base_env
                )
    runs = settings.reps(30, 1)
    warmup = settings.pick(3, 0)
    samples = interleave(cases, runs, warmup=warmup)
    figure.samples.update(samples)
    med = {name: median(values) for name, values in samples.items()}
    cpu_med = {name: median(values[warmup:]) for name, values in cpu.items()}
    figure.samples.update({f"cpu {name}": values[warmup:] for name, values in cpu.items()})
    table = Table(
        f"one agent ({sizes['one'][1]} commits) and {many} agents ({commits} commits); processes, "
        f'median of {runs} interleaved runs; baseline `python -c "import pygit2, click"`'
        + (f'; "before": the gitdream of {settings.compare}' if settings.compare else "")
        + ":"
    )
    labels = {
        "time": "`run --auto`, time gate closed",
        "throttle": "`run --auto`, sessions gate closed on the throttle's reused counts",
        "sessions": "`run --auto`, sessions gate closed (sessions counted)",
        "status": "`gitdream status`",
    }
    cpu_table = Table(
        "The same rounds, each child's CPU time (user + sys; a child that waits for a core "
        "under load does not count the wait), median, against the baseline's:"
    )
    for name in built:
        who = "one agent" if name == "one" else f"{many} agents"
        for what, label in labels.items():
            for tag in checkouts:
                key = f"{tag}{name} {what}"
                if key not in med:
                    continue
                for rows, values in ((table.rows, med), (cpu_table.rows, cpu_med)):
                    rows.append(
                        Row(
                            f"{tag}{who}: {label}",
                            ms(values[key]),
                            ms(values["baseline"]),
                            ratio(values[key], values["baseline"]),
                            f"≤ {TARGET}×",
                            values[key] / values["baseline"] <= TARGET,
                        )
                    )
    figure.tables += [table, cpu_table]
    return figure
