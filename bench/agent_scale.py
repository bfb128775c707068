"""Many agents in one repository: `gitdream run` and `gitdream status` with 1 000 and
10 000 agents (issue 16, case 14).

Each repository (fast-import, then checked out and repacked) holds N agents — the files
`gitdream init --agent` writes — and then one commit per agent adding a daily log of 3
entries: every agent has material and none has dreamed. Measured as child processes, in
an isolated home, with the offline engine:

- `gitdream status` before the dream (every agent pending), the median of a few runs;
- `gitdream run` once (it dreams every agent: two commits each, receipts, watermarks),
  stopped with SIGTERM after 15 minutes (gitdream stops before its next write);
- `gitdream status` after it (every agent dreamed), the median of a few runs.

Before issue 16, 10 000 agents did not finish `run` in 15 minutes (`state.json`, which
lists every agent, was rewritten after each one) and `status` took 82 s. There is no
baseline to interleave with (the old code is gone); the target is the issue's: `run`
well under 15 minutes, `status` in seconds, both roughly linear in the number of agents.

    python -m bench --only agent_scale
    GITDREAM_BENCH_AGENTS=1000,3000 python -m bench --only agent_scale   # other sizes
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path

from bench import repos
from bench.harness import Figure, Settings, Table, gitdream_cmd, median, run_child, secs

NAME = "agent_scale"
TITLE = "Many agents: `run` and `status` with 1 000 and 10 000 agents (issue 16)"
RUN_TARGET = 15 * 60.0  # seconds: the "do not finish in 15 minutes"


def build(tmp: Path, agents: int, env: dict[str, str]) -> Path:
    """A repository of `agents` agents, each with one daily log not dreamed yet."""
    rng = random.Random(agents)
    ids = repos.agent_ids(agents) if agents <= 1000 else [f"a{i:05d}" for i in range(agents)]
    first: dict[str, bytes] = {}
    for agent in ids:
        first.update(repos.agent_files(agent))
    first["gitdream.toml"] = b'agents = ["agents/*"]\n'
    history = [repos.Commit(first, message="add agents", when=repos.EPOCH)]
    for n, agent in enumerate(ids, start=1):
        day = repos.START_DAY
        data = repos.daily_log(day, 3, rng, serial=n * 1000)
        history.append(
            repos.Commit(
                {repos.log_path(f"agents/{agent}", day): data},
                message=f"{agent}: log {day}",
                when=repos.EPOCH + n * 60,
            )
        )
    repo = tmp / f"agents-{agents}"
    repos.fast_import(repo, history, env)
    repos.checkout(repo, env)
    return repo


def _dream(repo: Path, env: dict[str, str], limit: float) -> tuple[float, float, float, int]:
    """`gitdream run` in `repo`, stopped with SIGTERM (gitdream stops before its next
    write) once `limit` seconds have passed: (wall seconds, CPU seconds, peak RSS MiB,
    exit code)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        gitdream_cmd("run"), cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    stopped = False
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if not stopped and time.perf_counter() - start > limit:
            proc.send_signal(signal.SIGTERM)
            stopped = True
        time.sleep(0.2)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode


def _status(repo: Path, env: dict[str, str], repeats: int) -> float:
    return median([run_child(gitdream_cmd("status"), repo, env).seconds for _ in range(repeats)])


SIZES_ENV = "GITDREAM_BENCH_AGENTS"
"""Comma-separated agent counts to build instead of 1 000 and 10 000 (e.g. `1000,3000`:
minutes instead of half an hour, to see whether the cost per agent stays flat)."""


def _sizes() -> tuple[int, ...]:
    raw = os.environ.get(SIZES_ENV, "")
    try:
        picked = tuple(int(part) for part in raw.split(",") if part.strip())
    except ValueError:
        raise SystemExit(
            f"{SIZES_ENV}={raw!r}: give agent counts separated by commas, e.g. 1000,3000"
        ) from None
    return picked or (1000, 10000)


def run(settings: Settings, tmp: Path, env: dict[str, str]) -> Figure:
    """Build each repository, time `status`, one `run`, `status` again."""
    sizes = settings.pick(_sizes(), (5,))
    repeats = settings.reps(3, 1)
    table = Table(
        "Child processes, offline engine; `status`: median of "
        f"{repeats} runs; `run`: one run (it dreams every agent), stopped with SIGTERM after 15 minutes:",
        columns=(
            "agents",
            "`status` before",
            "`run`",
            "`run` CPU",
            "peak RSS",
            "`status` after",
            "target",
            "",
        ),
    )
    samples: dict[str, list[float]] = {}
    for agents in sizes:
        repo = build(tmp, agents, env)
        before = _status(repo, env, repeats)
        wall, cpu, rss, code = _dream(repo, env, settings.pick(RUN_TARGET, 60.0))
        after = _status(repo, env, repeats)
        listed = run_child(["git", "for-each-ref", "refs/gitdream/watermark"], repo, env)
        moved = listed.stdout.count(b"\n")
        samples[str(agents)] = [before, wall, cpu, after]
        finished = code == 0 and moved == agents
        table.rows.append(
            [
                f"{agents}",
                secs(before),
                secs(wall) if finished else f"stopped at {secs(wall)}: {moved} of {agents} agents dreamed",
                f"{cpu:.0f} s ({cpu / max(moved, 1) * 1000:.0f} ms per agent)",
                f"{rss:.0f} MB",
                secs(after),
                "`run` < 15 min",
                "✓" if finished and wall < RUN_TARGET else "✗",
            ]
        )
    figure = Figure(NAME, TITLE, [table], samples=samples)
    figure.notes.append(
        "`status` after: every agent dreamed, or as many as the run dreamed before it was "
        "stopped. Before issue 16: 10 000 agents did not finish `run` in 15 minutes and "
        "`status` took 82 s."
    )
    return figure
