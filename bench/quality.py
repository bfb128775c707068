"""The quality of the offline dream on real agent material: is the memory worth keeping?

1. `../shared/tools/make-real-repo` builds the real agent repository (Kit's daily logs, the
   BookMinder diary, Claude Code transcripts, the agents' definitions and memory).
2. `gitdream run --engine offline` runs as a process, again and again with the default
   configuration, until a run changes nothing and leaves nothing pending (converged), at
   most `MAX_RUNS` times.
3. `../shared/tools/score-dream REPO --labels ../shared/quality/labels.jsonl --json` scores
   the facts at HEAD against hand-made labels: precision (facts citing a `keep` entry),
   noise (facts citing only `noise` entries), recall (`keep` entries cited), topics created,
   topic names that are a clock time, a turn or a tally.

Targets (issue #14): precision ≥ 0.7, noise ≤ 0.02, recall ≥ 0.6, no clock/tally/turn topic
names, at most ~25 topics for Kit. The labels cover three agents only; the same scoring
runs elsewhere on material whose labels are not in ../shared, so these figures are a check
of the principle, not a target to tune to.

4. **Held out**: for each agent whose labels mark entries worth keeping (Kit, BookMinder),
   the salience weights are fitted again by `bench.fit_salience`'s procedure on the
   *other* agents' labels only (same pull `L2`, same threshold), a fresh real repository
   is dreamed with them (`bench.heldout_run`) and `score-dream --agent` scores that agent:
   the figure a maintainer should expect on material whose labels the weights never saw,
   next to the in-sample one (the default weights, fitted on all labels).

`--quick` dreams one small agent (claude-dev) once: a smoke run whose figures mean nothing;
it skips the held-out dreams.
Without ../shared the figure says so and measures nothing.

    python -m bench --only quality
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.harness import Figure, Row, Settings, Table, gitdream_cmd, run_child

NAME = "quality"
TITLE = "Quality of the offline dream on real material (score-dream against hand-made labels)"
ROOT = Path(__file__).resolve().parent.parent
MAX_RUNS = 15


def shared_dir() -> Path | None:
    """../shared beside the checkout (or two levels up, for a linked worktree), or None."""
    for candidate in (ROOT.parent / "shared", ROOT.parent.parent / "shared"):
        if (candidate / "tools" / "make-real-repo").is_file() and (candidate / "quality").is_dir():
            return candidate
    return None


HELD_OUT = ("kit", "bookminder")
"""Agents scored held out: those whose labels mark entries worth keeping."""


def dream_to_convergence(
    repo: Path, env: dict[str, str], agents: list[str], max_runs: int, weights: Path | None = None
) -> dict[str, Any]:
    """Run `gitdream run --engine offline --json` until a run writes nothing and leaves
    nothing pending; returns {"runs": n, "converged": bool, "seconds": total, "per_run":
    [{"agent": {"created":…, "corroborated":…, "superseded":…, "not_kept":…}}]}."""
    args = ("run", "--engine", "offline", "--json", *[a for agent in agents for a in ("--agent", agent)])
    if weights is None:
        cmd = gitdream_cmd(*args)
    else:  # the same command, with the salience weights of `weights` (bench.heldout_run)
        cmd = [sys.executable, "-m", "bench.heldout_run", str(weights), *args]
    out: dict[str, Any] = {"runs": 0, "converged": False, "seconds": 0.0, "per_run": []}
    for _ in range(max_runs):
        child = run_child(cmd, repo, env)
        out["runs"] += 1
        out["seconds"] += child.seconds
        runs = json.loads(child.stdout)["runs"]
        out["per_run"].append(
            {
                r["agent"]: {
                    "status": r["status"],
                    "units": r.get("counts", {}).get("units", 0),
                    "created": r.get("counts", {}).get("created", 0),
                    "superseded": r.get("counts", {}).get("superseded", 0),
                    "pending": sum(len(p.get("entries") or []) or 1 for p in r.get("pending") or []),
                }
                for r in runs
                if r["status"] != "noop"
            }
        )
        if all(
            r["status"] == "noop" or not (r.get("commits") or {}).get("experience") for r in runs
        ) and not any(r.get("pending") for r in runs):
            out["converged"] = True
            break
    return out


def score(shared: Path, repo: Path, agent: str | None = None, labels: Path | None = None) -> dict[str, Any]:
    """score-dream's figures for `repo` (its `--json` output), of one `agent` when given,
    against `labels` (default: `../shared/quality/labels.jsonl`)."""
    proc = subprocess.run(
        [
            sys.executable,
            str(shared / "tools" / "score-dream"),
            str(repo),
            "--labels",
            str(labels or shared / "quality" / "labels.jsonl"),
            "--json",
            *(["--agent", agent] if agent else []),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout)


def run(settings: Settings, tmp: Path, env: dict[str, str]) -> Figure:
    figure = Figure(NAME, TITLE)
    shared = shared_dir()
    table = Table(
        "Real repository dreamed to convergence with the default configuration, scored by "
        "`../shared/tools/score-dream` against `../shared/quality/labels.jsonl`:",
        columns=("figure", "measured", "", "", "target", ""),
    )
    figure.tables.append(table)
    if shared is None:
        table.rows.append(Row("../shared (real data and labels)", "absent: nothing measured"))
        return figure
    repo = tmp / "real"
    subprocess.run(
        [sys.executable, str(shared / "tools" / "make-real-repo"), str(repo)], check=True, capture_output=True
    )
    agents = ["claude-dev"] if settings.quick else []
    dreamed = dream_to_convergence(repo, env, agents, 1 if settings.quick else MAX_RUNS)
    figures = score(shared, repo)
    figure.samples = {"dream": dreamed, "score": figures}
    per_agent = figures.get("per_agent") or {}
    kit_topics = (per_agent.get("kit") or {}).get("topics")
    odd_count = int(figures.get("clock_or_tally_topic_names") or 0)

    def num(key: str) -> float:
        value = figures.get(key)
        return float(value) if isinstance(value, int | float) else float("nan")

    table.rows += [
        Row(
            "precision (facts citing a keep entry)",
            f"{num('precision'):.3f}",
            target="≥ 0.7",
            ok=num("precision") >= 0.7,
        ),
        Row(
            "noise (facts citing only noise)", f"{num('noise'):.3f}", target="≤ 0.02", ok=num("noise") <= 0.02
        ),
        Row("recall (keep entries cited)", f"{num('recall'):.3f}", target="≥ 0.6", ok=num("recall") >= 0.6),
        Row("facts", str(figures.get("facts", "?"))),
        Row("topics created", str(figures.get("topics_created", "?"))),
        Row(
            "topics created for Kit",
            str(kit_topics if kit_topics is not None else "?"),
            target="≤ ~25",
            ok=None if kit_topics is None else kit_topics <= 25,
        ),
        Row("clock / tally / turn topic names", str(odd_count), target="0", ok=odd_count == 0),
        Row(
            "runs to converge",
            f"{dreamed['runs']}{'' if dreamed['converged'] else ' (not converged)'}",
            target="a handful",
            ok=dreamed["converged"] and dreamed["runs"] <= 10,
        ),
        Row("dream time, all runs", f"{dreamed['seconds']:.1f} s"),
    ]
    for name, agent in sorted(per_agent.items()):
        if isinstance(agent, dict):
            figure.notes.append(f"{name}: " + ", ".join(f"{k} {v}" for k, v in sorted(agent.items())))
    if not settings.quick:
        figure.tables.append(held_out(shared, repo, tmp, env))
    return figure


def held_out(shared: Path, dreamed: Path, tmp: Path, env: dict[str, str]) -> Table:
    """Step 4: each agent of `HELD_OUT` dreamed with weights fitted without its labels, and
    scored, next to its in-sample score in `dreamed` (the default weights)."""
    from bench import fit_salience
    from gitdream.dream import salience_weights

    table = Table(
        "Held out: each agent dreamed with salience weights fitted on the other agents' labels "
        "only, scored on its own (in-sample: the default weights, fitted on all labels):",
        columns=(
            "agent",
            "precision / recall held out",
            "precision / recall in-sample",
            "facts held out / in-sample",
            "",
            "",
        ),
    )
    examples = fit_salience.examples(shared, dreamed)  # the raw files, which dreams never change
    for agent in HELD_OUT:
        train = [ex for ex in examples if not ex.id.startswith(f"agents/{agent}/")]
        weights, bias = fit_salience.fit(train, salience_weights.L2)
        spec = tmp / f"weights-without-{agent}.json"
        spec.write_text(json.dumps({"weights": weights, "bias": bias}), encoding="utf-8")
        repo = tmp / f"real-without-{agent}"
        subprocess.run(
            [sys.executable, str(shared / "tools" / "make-real-repo"), str(repo)],
            check=True,
            capture_output=True,
        )
        dream_to_convergence(repo, env, [agent], MAX_RUNS, weights=spec)
        out, into = _agent_figures(shared, repo, agent), _agent_figures(shared, dreamed, agent)
        table.rows.append(
            Row(
                agent,
                f"{out['precision']:.3f} / {out['recall']:.3f}",
                f"{into['precision']:.3f} / {into['recall']:.3f}",
                f"{out['facts']} / {into['facts']}",
            )
        )
    return table


def _agent_figures(shared: Path, repo: Path, agent: str) -> dict[str, Any]:
    figures = score(shared, repo, agent)
    nan = float("nan")
    return {
        "precision": float(figures.get("precision", nan)),
        "recall": float(figures.get("recall", nan)),
        "facts": figures.get("facts", "?"),
    }
