"""The anthropic engine on a backlog: runs, requests and input tokens until it converges.

`tests/fakeapi.ModelLike` answers on 127.0.0.1 in this process like a model would, from
what each request holds: 5 units per distill batch (never more than the batch's cap),
each citing a real entry of the batch, corroborating a fact it was shown when the entry
repeats it; "yes" to every screener call. It counts tokens as UTF-8 bytes / 4 (its
`count_tokens` endpoint and the `usage` it reports), so the receipts' tokens are that
count. Each run is a `gitdream run --engine anthropic` process with the **default
budgets** (`max_calls_per_run` 50, `max_tokens_per_run` 500 000, `max_tokens_per_day`
2 000 000, `max_input_tokens` 40 000, `max_units_per_batch` 10) unless a row says
otherwise; runs are repeated until one finds nothing new.

Cases: synthetic backlogs of thousands of entries (100 per daily log, committed before the
first run), and — when `../shared` is there — Kit's 777 real entries from
`make-real-repo`, with the default budgets and with `max_calls_per_run = 10` (the budget
that wedged the agent before runs were planned). Target: every run with material commits
and makes progress, none fails on a budget, and a run with nothing new makes 0 requests.

    python -m bench --only anthropic_backlog
"""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from bench import repos
from bench.harness import Figure, Table, gitdream_cmd, run_child, secs

NAME = "anthropic_backlog"
TITLE = "The anthropic engine on a backlog: runs, requests and tokens to converge"
PER_DAY = 100
MAX_RUNS = 40
REAL_TOOL = Path(__file__).resolve().parent.parent.parent / "shared" / "tools" / "make-real-repo"


def _synthetic(tmp: Path, entries: int, env: dict[str, str]) -> Path:
    return repos.one_agent_backlog(tmp, entries, env, "backlog", PER_DAY)


def _real(tmp: Path) -> Path | None:
    if not REAL_TOOL.is_file():
        return None
    repo = tmp / "real"
    if not repo.exists():
        subprocess.run([str(REAL_TOOL), str(repo)], check=True, capture_output=True)
    copy = tmp / f"real-{len(list(tmp.glob('real-*')))}"
    shutil.copytree(repo, copy, symlinks=True)
    return copy


def _converge(
    repo: Path, agent: str, env: dict[str, str], fake: Any, extra: dict[str, str], down_first: bool = False
) -> dict[str, Any]:
    """Run until a run finds nothing new; the per-run figures and the totals. With
    `down_first` the screener answers 529 throughout the first run."""
    cmd = gitdream_cmd("run", "--engine", "anthropic", "--agent", agent, "--json")
    runs: list[dict[str, Any]] = []
    while len(runs) < MAX_RUNS:
        if down_first and not runs:
            fake.responder.down("screen")
        else:
            fake.responder.up("screen")
        fake.requests.clear()
        child = run_child(cmd, repo, {**env, **extra}, check=False)
        receipt = json.loads(child.stdout)["runs"][0]
        runs.append(
            {
                "status": receipt["status"],
                "exit": child.returncode,
                "committed": bool(receipt["commits"]["experience"]),
                "entries": receipt["counts"].get("entries", 0),
                "left": sum(len(p.get("entries") or []) for p in receipt["pending"]),
                "distill": sum(1 for c in receipt["calls"] if c["purpose"] == "distill"),
                "screen": sum(1 for c in receipt["calls"] if c["purpose"] == "screen"),
                "requests": len(fake.messages),
                "counts": len(fake.counts),
                "tokens": sum(receipt["tokens"].values()),
                "units": sum(
                    receipt["counts"].get(k, 0) for k in ("created", "corroborated", "refined", "superseded")
                ),
                "unjudged": len(receipt.get("unjudged") or []),
                "carried": receipt["phases"].get("distill", {}).get("carried", 0),
                "seconds": child.seconds,
                "error": (receipt.get("error") or {}).get("message"),
            }
        )
        if receipt["status"] == "noop":
            break
    return {"runs": runs}


def _rows(label: str, result: dict[str, Any], table: Table, down_first: bool = False) -> bool:
    runs = result["runs"]
    dreams = [r for r in runs if r["status"] != "noop"]
    last = runs[-1]
    good = dreams[1:] if down_first else dreams
    ok = (
        last["status"] == "noop"
        and last["requests"] == 0
        and all(r["status"] == "ok" and r["committed"] and r["exit"] == 0 for r in good)
        and all(b["left"] < a["left"] for a, b in itertools.pairwise(good))
    )
    if down_first:
        first, second = dreams[0], dreams[1]
        ok = ok and first["status"] == "partial" and not first["committed"] and first["unjudged"] > 0
        ok = ok and second["carried"] == first["unjudged"]
    per_run = " → ".join(f"{r['left']:,}" for r in dreams)
    table.rows.append(
        [
            label,
            f"{len(dreams)}",
            f"{sum(r['distill'] for r in dreams)} + {sum(r['screen'] for r in dreams)}",
            f"{max((r['distill'] + r['screen'] for r in dreams), default=0)}",
            f"{sum(r['tokens'] for r in dreams):,}",
            f"{sum(r['units'] for r in dreams)}",
            per_run,
            f"{last['requests']}",
            secs(sum(r["seconds"] for r in dreams)),
            "✓" if ok else "✗",
        ]
    )
    return ok


def run(settings: Any, tmp: Path, env: dict[str, str]) -> Figure:
    from tests.fakeapi import FakeAnthropic, ModelLike

    figure = Figure(NAME, TITLE)
    fake = FakeAnthropic(responder=ModelLike(units=5)).start()
    api_env = dict(env, ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="sk-ant-bench-not-a-real-key")
    table = Table(
        "Repeated `gitdream run --engine anthropic` (a process each) until a run finds nothing "
        "new; calls and tokens as the receipts count them (tokens: bytes / 4), requests at the fake:",
        columns=(
            "backlog",
            "runs with material",
            "model calls (distill + screen)",
            "most calls in a run",
            "input + output tokens",
            "facts written",
            "entries left after each run",
            "requests of the run with nothing new",
            "wall time",
            "",
        ),
    )
    try:
        sizes = settings.pick((3_000, 10_000), (300,))
        for size in sizes:
            repo = _synthetic(tmp, size, env)
            result = _converge(repo, "a000", api_env, fake, {})
            figure.samples[f"synthetic {size}"] = result
            _rows(f"{size:,} synthetic entries, default budgets", result, table)
        ten = {"GITDREAM_ANTHROPIC_MAX_CALLS_PER_RUN": "10", "GITDREAM_ANTHROPIC_MAX_RETRIES": "1"}
        cases: list[tuple[str, dict[str, str], bool]] = [("default budgets", {}, False)]
        if not settings.quick:
            cases += [
                ("`max_calls_per_run = 10`", ten, False),
                ("`max_calls_per_run = 10`, the screener down in the first run", ten, True),
            ]
        for label, extra, down in cases:
            repo = _real(tmp)
            if repo is None:
                figure.notes.append(
                    "Kit's real entries were left out: ../shared/tools/make-real-repo is absent."
                )
                break
            result = _converge(repo, "kit", api_env, fake, extra, down_first=down)
            figure.samples[f"kit {label}"] = result
            _rows(f"Kit's 777 real entries, {label}", result, table, down_first=down)
        figure.tables.append(table)
    finally:
        fake.stop()
    figure.notes.append(
        "✓: every run with material ended `ok`, committed and left fewer entries than the run "
        "before, none failed on a budget, and the run after the last one made no request; with "
        "the screener down, the first run ended `partial` without a commit, its units not judged, "
        "and the second screened those very units (carried in the receipt) and committed them. A "
        "distill batch is asked for at most 10 units and the fake proposes 5, so each batch "
        "costs 1 distill and 5 screener calls; the plan holds a screener call for each unit a "
        "batch may propose before sending it, so the last batch of a run is asked for fewer "
        "units and carries proportionally less material. One count_tokens request per run "
        "(not a model call, not in the columns) calibrates the plan to the server's count."
    )
    return figure
