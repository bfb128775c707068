"""Many agents in one repository: `gitdream run` and `gitdream status` with 1 000 and
10 000 agents (issue 16, case 14).

Each repository (fast-import, then checked out and repacked) holds N agents — the files
`gitdream init --agent` writes — and then one commit per agent adding a daily log of 3
entries: every agent has material and none has dreamed. Measured as child processes, in
an isolated home, with the offline engine:

- `gitdream status` before the dream (every agent pending), the median of a few runs;
- `gitdream run` once (it dreams every agent: two commits each, receipts, watermarks);
- `gitdream status` after it (every agent dreamed), the median of a few runs.

Before issue 16, 10 000 agents did not finish `run` in 15 minutes (`state.json`, which
lists every agent, was rewritten after each one) and `status` took 82 s. There is no
baseline to interleave with (the old code is gone); the target is the issue's: `run`
well under 15 minutes, `status` in seconds, both roughly linear in the number of agents.

    python -m bench --only agent_scale
"""

from __future__ import annotations

import random
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


def _status(repo: Path, env: dict[str, str], repeats: int) -> float:
    return median([run_child(gitdream_cmd("status"), repo, env).seconds for _ in range(repeats)])


def run(settings: Settings, tmp: Path, env: dict[str, str]) -> Figure:
    """Build each repository, time `status`, one `run`, `status` again."""
    sizes = settings.pick((1000, 10000), (5,))
    repeats = settings.reps(3, 1)
    table = Table(
        "Child processes, offline engine; `status`: median of "
        f"{repeats} runs; `run`: one run (it dreams every agent):",
        columns=(
            "agents",
            "`status` before",
            "`run`",
            "per agent",
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
        dream = run_child(gitdream_cmd("run"), repo, env)
        after = _status(repo, env, repeats)
        dreamed = run_child(["git", "for-each-ref", "--count=100000", "refs/gitdream/watermark"], repo, env)
        moved = dreamed.stdout.count(b"\n")
        assert moved == agents, f"{moved} of {agents} agents dreamed"
        samples[str(agents)] = [before, dream.seconds, after]
        ok = dream.seconds < RUN_TARGET
        table.rows.append(
            [
                f"{agents}",
                secs(before),
                secs(dream.seconds),
                f"{dream.seconds / agents * 1000:.1f} ms",
                f"{dream.rss_mib:.0f} MB",
                secs(after),
                "`run` < 15 min",
                "✓" if ok else "✗",
            ]
        )
    figure = Figure(NAME, TITLE, [table], samples=samples)
    figure.notes.append(
        "Every agent's watermark moved (checked). Before issue 16: 10 000 agents did not "
        "finish `run` in 15 minutes and `status` took 82 s."
    )
    return figure
