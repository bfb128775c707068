"""The commit of a 5-file dream in repositories of 100 / 10 000 / 100 000 tracked files.

Each repository (fast-import, then checked out) holds agent a000 and filler files under
`data/dNNNNN/` (100 to a folder). A sample is one `commitbuilder.commit()` of 5 memory
files of a000 (`agents/a000/memory/topic-K.md`, new content every time), in this
process, on a freshly opened repository: write gate, blobs, tree, commit object,
re-check, journal, compare-and-swap of the branch, working-tree files, index entries.

Baseline: the same commit in the 100-file repository, interleaved in one loop. The
tree levels a dream touches are the same in every repository (root, agents/, a000/,
memory/), so the cost should not grow with the repository's size: target ≤ 1.5× at
10 000 and 100 000 files. For reference, in the same loop: the same commit onto a new
review branch (`Destination.review`: no index or working-tree update), libgit2 reading the
index (what the write gate's status and attribute lookups make it do), and git itself
doing the same (`git add` of 5 files, then `git commit`, two processes). And "in a run":
the same commit on a repository opened once and kept, as `gitdream run` does over many
agents, in a copy of its own (so the other cases' index writes do not make its index
in memory stale): the index is parsed in the warm-up, then updated in memory.

    python -m bench --only commit_scale
"""

from __future__ import annotations

import itertools
import subprocess
import time
from pathlib import Path

from bench import repos
from bench.harness import Figure, Row, Settings, Table, interleave, median, ms, ratio

NAME = "commit_scale"
TITLE = "Committing a 5-file dream against repository size"
TARGET = 1.5
FILES = 5


def build(tmp: Path, files: int, env: dict[str, str]) -> Path:
    repo = tmp / f"wide-{files}"
    repos.fast_import(repo, repos.wide_tree(files), env)
    repos.checkout(repo, env)
    return repo


def _cases(repo: Path, counter: itertools.count):
    from gitdream import config
    from gitdream.agents import make_agent
    from gitdream.git import commitbuilder
    from gitdream.git.repo import Repo

    cfg = config.load(repo, env={})
    agent = make_agent("agents/a000", cfg)
    ident = commitbuilder.Identity(("gitdream", "gitdream@bench.invalid"), ("bench", "bench@example.invalid"))

    def changes(n: int) -> list:
        return [
            commitbuilder.Change(
                f"agents/a000/memory/topic-{k}.md", f"# topic {k}\n\n- fact {n} of topic {k}\n".encode()
            )
            for k in range(FILES)
        ]

    def case() -> float:
        n = next(counter)
        start = time.perf_counter()
        opened = Repo.open(repo, env={})
        commitbuilder.commit(opened, agent, "experience", changes(n), f"dream {n}\n", ident)
        return time.perf_counter() - start

    def review() -> float:
        n = next(counter)
        start = time.perf_counter()
        opened = Repo.open(repo, env={})
        target = commitbuilder.Destination.review(f"dream/bench-{n}", opened.head().oid, create=True)
        commitbuilder.commit(opened, agent, "experience", changes(n), f"dream {n}\n", ident, target)
        return time.perf_counter() - start

    def index() -> float:
        opened = Repo.open(repo, env={})
        start = time.perf_counter()
        entries = len(opened.raw.index)
        seconds = time.perf_counter() - start
        assert entries >= 100
        return seconds

    kept: list[Repo] = []

    def in_run() -> float:
        n = next(counter)
        if not kept:
            kept.append(Repo.open(repo, env={}))
        start = time.perf_counter()
        commitbuilder.commit(kept[0], agent, "experience", changes(n), f"dream {n}\n", ident)
        return time.perf_counter() - start

    return {"dream": case, "review": review, "index": index, "run": in_run}


def _git_case(repo: Path, env: dict[str, str], counter: itertools.count):
    def case() -> float:
        n = next(counter)
        paths = [f"agents/a000/notes/note-{k}.md" for k in range(FILES)]
        for k, path in enumerate(paths):
            target = repo / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f"# note {k}\n\n- line {n}\n")
        start = time.perf_counter()
        subprocess.run(["git", "add", "--", *paths], cwd=repo, env=env, check=True, capture_output=True)
        subprocess.run(["git", "commit", "-q", "-m", f"notes {n}"], cwd=repo, env=env, check=True)
        return time.perf_counter() - start

    return case


def run(settings: Settings, tmp: Path, env: dict[str, str]) -> Figure:
    figure = Figure(NAME, TITLE)
    sizes = settings.pick((100, 10_000, 100_000), (100, 300))
    counter = itertools.count()
    cases = {}
    for size in sizes:
        repo = build(tmp, size, env)
        for kind, case in _cases(repo, counter).items():
            if kind != "run":
                cases[f"{kind} {size}"] = case
        (tmp / "run").mkdir(exist_ok=True)
        cases[f"run {size}"] = _cases(build(tmp / "run", size, env), counter)["run"]
        cases[f"git {size}"] = _git_case(repo, env, counter)
    runs = settings.reps(30, 1)
    samples = interleave(cases, runs, warmup=settings.pick(3, 0))
    figure.samples.update(samples)
    med = {name: median(values) for name, values in samples.items()}
    table = Table(
        f"One commit of {FILES} memory files; median of {runs} interleaved runs; baseline: the "
        f"same commit at {sizes[0]} tracked files:",
        columns=("case", "median", "baseline", "ratio", "target", ""),
    )
    for kind, label, target in (
        ("dream", "`commitbuilder.commit()` onto the checked-out branch", f"≤ {TARGET}×"),
        ("run", "the same in a run (repository kept open, index in memory)", f"≤ {TARGET}×"),
        ("review", "(reference) the same onto a new review branch (no index, no working tree)", ""),
        ("index", "(reference) libgit2 reading the index", ""),
        ("git", "(reference) `git add` + `git commit` of 5 files", ""),
    ):
        base = med[f"{kind} {sizes[0]}"]
        for size in sizes:
            value = med[f"{kind} {size}"]
            first = size == sizes[0]
            table.rows.append(
                Row(
                    f"{label}, {size} files",
                    ms(value),
                    "" if first else ms(base),
                    "" if first else ratio(value, base),
                    "baseline" if first else target,
                    None if first or not target else value / base <= TARGET,
                )
            )
    figure.tables.append(table)
    return figure
