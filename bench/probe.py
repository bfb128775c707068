"""The offline dream on a probe corpus it was not built on: other agents, other languages.

The labels of `../shared/quality/` cover three agents writing English (and a little Chinese
and Korean); the same scoring runs elsewhere on material whose labels are not there. This
figure is the check that the engine's principle carries: `bench/probe/` holds short daily
logs in styles and languages the labelled material does not have — a Chinese operations
agent (two days, with corrections of the first), a Korean research assistant, a Japanese
coding agent's diary (paragraphs as well as items), a Spanish customer-support agent, an
English agent writing terse timestamped lines with no headings — and `labels.jsonl`, every
entry labelled by hand (`keep` / `transient` / `noise`, as `../shared/quality/GUIDE.md`
says) *before* the engine was ever run on them. The probe is never used to fit the
salience weights (`bench/fit_salience.py` reads `../shared` only): it stays held out.

1. A git repository is built from `bench/probe/` in gitdream's default layout: one commit
   with the agents' definitions, then one commit per day of logs, dated that day.
2. `gitdream run --engine offline` runs until it converges (`bench.quality`'s loop).
3. `../shared/tools/score-dream REPO --labels bench/probe/labels.jsonl` scores it: the same
   figures as the quality benchmark, overall and per agent.

No target is asserted: the figures are read next to the labelled ones (issue #14's targets
are precision ≥ 0.7, noise ≤ 0.02, recall ≥ 0.6), and the dreamed topic files are read.

    python -m bench --only probe
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from bench.harness import Figure, Row, Settings, Table
from bench.quality import MAX_RUNS, dream_to_convergence, score, shared_dir

NAME = "probe"
TITLE = "The offline dream on the probe corpus (other agents and languages, labels never fitted)"
PROBE = Path(__file__).resolve().parent / "probe"
LABELS = PROBE / "labels.jsonl"
_DAY = re.compile(r"(20\d\d-\d\d-\d\d)\.md$")


def _git(repo: Path, *args: str, day: str | None = None) -> None:
    env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1")
    if day is not None:
        stamp = f"{day}T12:00:00+00:00"
        env |= {
            "GIT_AUTHOR_NAME": "agent runtime",
            "GIT_AUTHOR_EMAIL": "runtime@example.invalid",
            "GIT_COMMITTER_NAME": "agent runtime",
            "GIT_COMMITTER_EMAIL": "runtime@example.invalid",
            "GIT_AUTHOR_DATE": stamp,
            "GIT_COMMITTER_DATE": stamp,
        }
    subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)


def build(dest: Path, probe: Path = PROBE) -> Path:
    """Lay `probe`'s agents out as a git repository at `dest` (which must not exist): one
    commit of every file that is not a dated log, then one commit per day of the logs
    (`…/YYYY-MM-DD.md`), in date order, each dated that day. Returns `dest`."""
    files = sorted(p for p in (probe / "agents").rglob("*") if p.is_file())
    logs = sorted((m.group(1), p) for p in files if (m := _DAY.search(p.name)))
    dated = {p for _day, p in logs}
    dest.mkdir(parents=True)
    _git(dest, "init", "-q", "-b", "main")

    def place(src: Path) -> None:
        target = dest / src.relative_to(probe)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)

    for src in files:
        if src not in dated:
            place(src)
    first = logs[0][0] if logs else "2026-01-01"
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "Agent definitions", day=first)
    for day in sorted({d for d, _p in logs}):
        for d, src in logs:
            if d == day:
                place(src)
        _git(dest, "add", "-A")
        _git(dest, "commit", "-q", "-m", f"logs {day}", day=day)
    return dest


def run(settings: Settings, tmp: Path, env: dict[str, str]) -> Figure:
    figure = Figure(NAME, TITLE)
    table = Table(
        "`bench/probe/` dreamed to convergence with the default configuration, scored by "
        "`../shared/tools/score-dream` against `bench/probe/labels.jsonl`:",
        columns=("figure", "measured", "", "", "read next to", ""),
    )
    figure.tables.append(table)
    shared = shared_dir()
    if shared is None:  # score-dream lives in ../shared
        table.rows.append(Row("../shared/tools/score-dream", "absent: nothing measured"))
        return figure
    repo = build(tmp / "probe")
    dreamed = dream_to_convergence(repo, env, [], 1 if settings.quick else MAX_RUNS)
    figures = score(shared, repo, labels=LABELS)
    figure.samples = {"dream": dreamed, "score": figures}

    def num(key: str) -> float:
        value = figures.get(key)
        return float(value) if isinstance(value, int | float) else float("nan")

    table.rows += [
        Row("precision (facts citing a keep entry)", f"{num('precision'):.3f}", target="≥ 0.7"),
        Row("noise (facts citing only noise)", f"{num('noise'):.3f}", target="≤ 0.02"),
        Row("recall (keep entries cited)", f"{num('recall'):.3f}", target="≥ 0.6"),
        Row("facts", str(figures.get("facts", "?"))),
        Row("topics created", str(figures.get("topics_created", "?"))),
        Row(
            "clock / tally / turn topic names",
            str(figures.get("clock_or_tally_topic_names", "?")),
            target="0",
        ),
        Row("runs to converge", f"{dreamed['runs']}{'' if dreamed['converged'] else ' (not converged)'}"),
    ]
    for name, agent in sorted((figures.get("per_agent") or {}).items()):
        if isinstance(agent, dict):
            figure.notes.append(f"{name}: " + ", ".join(f"{k} {v}" for k, v in sorted(agent.items())))
    if os.environ.get("GITDREAM_PROBE_KEEP"):  # to read the dreamed files afterwards
        kept = Path(os.environ["GITDREAM_PROBE_KEEP"])
        shutil.rmtree(kept, ignore_errors=True)
        shutil.copytree(repo, kept, symlinks=True)
        figure.notes.append(f"dreamed repository copied to {kept}")
    return figure
