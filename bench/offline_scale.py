"""Material detection against history length: 100 / 1 000 / 10 000 commits, 10 new files
(issue 4).

Each repository holds 5 agents and N commits of history, round-robin, each commit
writing one agent's daily log, imported with fast-import (packed, as after a clone or
`git gc`); then 10 commits, made with `git commit` (loose objects, as an agent runtime
makes them), each adding one new daily log of agent a000, whose watermark sits just
before them. Two series:

- fixed tree: the history rewrites 20 logs per agent over and over, so only the history
  grows (100 log files whatever N) — the question of issue 4;
- growing tree: a new log every 10 commits of an agent, so the number of tracked files
  grows with the history (N / 10 logs), as in a real agent repository.

Measured in this process, on a freshly opened repository each time (no object or index
cache carried over):

- material: `resolve_base` + `changed_sources` — what a dream runs to find its input;
- sessions: `resolve_base` + `count_sessions` — the `min_sessions` gate of `run --auto`;
- for reference, reading the index (`len(repo.index)`), which libgit2 does on the first
  attribute lookup (the diff driver of a patch).

Baseline: the same call on the 100-commit repository of the same series, interleaved
with the others in one loop. Detection must cost O(changed files), not O(history):
target flat, ≤ 1.5× at 10 000 commits.

    python -m bench --only offline_scale
"""

from __future__ import annotations

import random
import time
from datetime import timedelta
from pathlib import Path

from bench import repos
from bench.harness import Figure, Row, Settings, Table, git, interleave, median, ms, ratio

NAME = "offline_scale"
TITLE = "Material detection against history length (issue 4)"
TARGET = 1.5
NEW_FILES = 10
AGENTS = 5


def build(tmp: Path, commits: int, series: str, env: dict[str, str]) -> Path:
    """A repository of `series` ("fixed" or "growing") with `commits` commits of history
    and then the NEW_FILES new logs (see module docstring)."""
    if series == "fixed":
        history = repos.agent_history(AGENTS, commits, files_per_agent=20, entries_per_log=3)
    else:
        history = repos.agent_history(AGENTS, commits, days_per_file=10, entries_per_log=3)
    repo = tmp / f"{series}-{commits}"
    ids = repos.fast_import(repo, history, env)
    repos.checkout(repo, env)
    git(repo, "update-ref", "refs/gitdream/watermark/a000", ids[-1], env=env)
    rng = random.Random(commits)
    day = repos.START_DAY + timedelta(days=3650)
    for i in range(NEW_FILES):
        path = repo / repos.log_path("agents/a000", day + timedelta(days=i))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(repos.daily_log(day + timedelta(days=i), 6, rng))
        git(repo, "add", "-A", env=env)
        git(repo, "commit", "-q", "-m", f"a000: log {i}", env=env)
    return repo


def _cases(repo: Path):
    from gitdream import config
    from gitdream.agents import make_agent
    from gitdream.dream import material
    from gitdream.git.repo import Repo

    cfg = config.load(repo, env={})
    agent = make_agent("agents/a000", cfg)

    def detect() -> float:
        start = time.perf_counter()
        opened = Repo.open(repo, env={})
        head = opened.head().oid
        base, _ = material.resolve_base(opened, agent, head)
        found = material.changed_sources(opened, agent, base, head)
        seconds = time.perf_counter() - start
        assert len(found.files) == NEW_FILES, found
        return seconds

    def sessions() -> float:
        start = time.perf_counter()
        opened = Repo.open(repo, env={})
        head = opened.head().oid
        base, _ = material.resolve_base(opened, agent, head)
        count = material.count_sessions(opened, agent, base, head)
        seconds = time.perf_counter() - start
        assert count == NEW_FILES, count
        return seconds

    def index() -> float:
        opened = Repo.open(repo, env={})
        start = time.perf_counter()
        entries = len(opened.raw.index)
        seconds = time.perf_counter() - start
        assert entries > 0
        return seconds

    return {"material": detect, "sessions": sessions, "index": index}


def run(settings: Settings, tmp: Path, env: dict[str, str]) -> Figure:
    figure = Figure(NAME, TITLE)
    sizes = settings.pick((100, 1_000, 10_000), (20, 40))
    cases = {}
    tracked = {}
    for series in ("fixed", "growing"):
        for size in sizes:
            repo = build(tmp, size, series, env)
            tracked[(series, size)] = len(git(repo, "ls-files", env=env).splitlines())
            for kind, case in _cases(repo).items():
                if kind == "index" and series == "fixed" and size != sizes[0]:
                    continue
                cases[f"{kind} {series} {size}"] = case
    runs = settings.reps(50, 1)
    samples = interleave(cases, runs, warmup=settings.pick(5, 0))
    figure.samples.update(samples)
    med = {name: median(values) for name, values in samples.items()}
    table = Table(
        f"{NEW_FILES} new daily logs since the watermark; in process, median of {runs} interleaved "
        f"runs; baseline: the same call at {sizes[0]} commits in the same series:",
        columns=("case", "median", "baseline", "ratio", "target", ""),
    )
    for series, what in (("fixed", "fixed tree"), ("growing", "growing tree")):
        for kind, label in (
            ("material", "`resolve_base` + `changed_sources`"),
            ("sessions", "`resolve_base` + `count_sessions`"),
        ):
            base = med[f"{kind} {series} {sizes[0]}"]
            for size in sizes[1:]:
                value = med[f"{kind} {series} {size}"]
                table.rows.append(
                    Row(
                        f"{label}, {size} commits, {what} ({tracked[(series, size)]} files)",
                        ms(value),
                        ms(base),
                        ratio(value, base),
                        f"≤ {TARGET}×",
                        value / base <= TARGET,
                    )
                )
    base = med[f"index growing {sizes[0]}"]
    for size in sizes[1:]:
        value = med[f"index growing {size}"]
        table.rows.append(
            Row(
                f"(reference) reading the index, {size} commits, growing tree "
                f"({tracked[('growing', size)]} files)",
                ms(value),
                ms(base),
                ratio(value, base),
            )
        )
    figure.tables.append(table)
    return figure
