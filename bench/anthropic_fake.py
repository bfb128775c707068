"""The anthropic engine against the loopback fake Messages API: requests and input tokens
per run for a given amount of new material, and none when there is none.

`tests/fakeapi.py` serves the Messages API on 127.0.0.1 in this process, with a responder
that answers any number of calls: a distill call gets 2 units citing entries of its batch,
a screen call gets "yes". It reports `input_tokens` as the request's UTF-8 bytes / 3 (the
engine's own estimator; the fake cannot tokenize), so the receipts' token figures are
those estimates. Each case is a `gitdream run --engine anthropic` process on a repository
whose one agent has N new log entries (100 per daily log, committed after the agent);
requests and their sizes are counted at the server.

Baselines: for requests, the engine's own plan (`run --estimate`, which makes no request
and plans the worst case: every batch proposes as many units as it may): the distill
requests must be at least that (a batch that proposes fewer units leaves room for more),
one screen request per unit, and all of them within `max_calls_per_run` (50). The fake
has no count_tokens endpoint here, so the run plans with the same local estimate. For tokens, the
material itself (its entries as the engine sends them, bytes / 3): the ratio is the
overhead of prompt, tools, index and facts per run. Target: 0 requests when there is no
new material (a second run; `run --auto` with its gate closed; a commit that touches no raw
source).

    python -m bench --only anthropic_fake
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from bench import repos
from bench.harness import Figure, Row, Settings, Table, git, gitdream_cmd, run_child, secs

NAME = "anthropic_fake"
TITLE = "The anthropic engine against the loopback fake: requests and tokens per run"
UNITS_PER_BATCH = 2
PER_DAY = 100
_ENTRY = re.compile(r'<entry id="([^"]+)"')


def _tokens(body: dict[str, Any]) -> int:
    """The request's size as the engine estimates tokens: UTF-8 bytes / 3 of system,
    messages and tools."""
    text = json.dumps([body.get("system"), body.get("messages"), body.get("tools")], ensure_ascii=False)
    return math.ceil(len(text.encode("utf-8")) / 3)


def _responder(record: Any) -> Any:
    from gitdream.engines.anthropic import DISTILL_TOOL, SCREEN_TOOL
    from tests import fakeapi

    tool = (record.body.get("tool_choice") or {}).get("name")
    used = _tokens(record.body)
    if tool == SCREEN_TOOL:
        return fakeapi.tool_use(
            SCREEN_TOOL,
            {"verdict": "yes", "reason": "a plain operational fact"},
            input_tokens=used,
            output_tokens=20,
        )
    if tool != DISTILL_TOOL:
        return None
    content = record.body["messages"][-1]["content"]
    text = content if isinstance(content, str) else json.dumps(content)
    ids = [i.replace("&amp;", "&") for i in _ENTRY.findall(text)]
    units = []
    for k, source in enumerate(ids[:: max(1, len(ids) // UNITS_PER_BATCH)][:UNITS_PER_BATCH]):
        units.append(
            {
                "title": f"Lesson {k} of a batch",
                "body": f"Keep the previous image tag until the smoke test of {source} passes.",
                "target": "experience",
                "action": "create",
                "topic": "deploys",
                "sources": [source],
            }
        )
    return fakeapi.distilled(units, input_tokens=used, output_tokens=300)


def _repo(tmp: Path, entries: int, env: dict[str, str]) -> Path:
    return repos.one_agent_backlog(tmp, entries, env, "material", PER_DAY)


def _purposes(fake: Any) -> dict[str, list[dict[str, Any]]]:
    from gitdream.engines.anthropic import DISTILL_TOOL, SCREEN_TOOL

    found: dict[str, list[dict[str, Any]]] = {"distill": [], "screen": []}
    for record in fake.messages:
        tool = (record.body.get("tool_choice") or {}).get("name")
        if tool == DISTILL_TOOL:
            found["distill"].append(record.body)
        elif tool == SCREEN_TOOL:
            found["screen"].append(record.body)
    return found


def _material_tokens(bodies: list[dict[str, Any]]) -> int:
    """Estimated tokens of the `<material>` parts of the distill requests."""
    total = 0
    for body in bodies:
        content = body["messages"][0]["content"]
        text = content if isinstance(content, str) else json.dumps(content)
        start, end = text.find("<material>"), text.find("</material>")
        if start >= 0:
            total += math.ceil(len(text[start:end].encode("utf-8")) / 3)
    return total


def run(settings: Settings, tmp: Path, env: dict[str, str]) -> Figure:
    from tests.fakeapi import FakeAnthropic

    figure = Figure(NAME, TITLE)
    sizes = settings.pick((10, 100, 1_000, 5_000), (10,))
    fake = FakeAnthropic(responder=_responder, count_tokens=False).start()
    api_env = dict(env, ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="sk-ant-bench-not-a-real-key")
    run_cmd = gitdream_cmd("run", "--engine", "anthropic", "--json")
    try:
        table = Table(
            "One `gitdream run --engine anthropic` per row (a process) on an agent with N new log "
            "entries; requests counted at the fake server; tokens = bytes / 3:",
            columns=(
                "new entries",
                "requests (distill + screen)",
                "baseline: `--estimate` distill calls (worst case)",
                "input tokens (per entry)",
                "material tokens (overhead)",
                "",
            ),
        )
        empty = Table(
            "No new material: requests made (target 0):",
            columns=("case", "requests", "target", ""),
        )
        for size in sizes:
            repo = _repo(tmp, size, env)
            estimate = json.loads(run_child([*run_cmd, "--estimate"], repo, api_env).stdout)
            planned = estimate["estimates"]["a000"]
            fake.requests.clear()
            child = run_child(run_cmd, repo, api_env)
            receipt = json.loads(child.stdout)["runs"][0]
            assert receipt["status"] == "ok", receipt
            bodies = _purposes(fake)
            distill, screen = len(bodies["distill"]), len(bodies["screen"])
            tokens = sum(_tokens(b) for b in bodies["distill"] + bodies["screen"])
            material = _material_tokens(bodies["distill"])
            figure.samples[f"run {size}"] = {
                "seconds": child.seconds,
                "distill": distill,
                "screen": screen,
                "input_tokens": tokens,
                "receipt_tokens": receipt.get("tokens"),
                "estimate": planned,
            }
            table.rows.append(
                Row(
                    f"{size} ({receipt['counts']['units']} units kept; {secs(child.seconds)})",
                    f"{distill + screen} ({distill} + {screen})",
                    f"{planned['calls']} (est. {planned['input_tokens']} tokens)",
                    f"{tokens} ({tokens / size:.0f})",
                    f"{material} ({tokens / material:.2f}×)" if material else "—",
                    distill >= planned["calls"]
                    and distill + screen <= 50
                    and screen == receipt["counts"]["units"] + len(receipt["rejected"]),
                )
            )
            if size != sizes[0]:
                continue
            # No new material: the same repository again, then a commit touching no raw source.
            cases = [
                ("second `run`, nothing committed since", run_cmd, None),
                (
                    "`run --auto`, gate closed",
                    gitdream_cmd("run", "--auto", "--engine", "anthropic", "--json"),
                    None,
                ),
                ("`run` after a commit that touches only agent.md", run_cmd, "agent.md"),
            ]
            for label, cmd, prepare in cases[:1] if settings.quick else cases:
                if prepare:
                    path = repo / "agents" / "a000" / prepare
                    path.write_text(path.read_text() + "\nEdited by a human.\n")
                    git(repo, "commit", "-q", "-am", "edit", env=env)
                fake.requests.clear()
                run_child(cmd, repo, api_env)
                made = len(fake.messages)
                empty.rows.append([label, str(made), "0", "✓" if made == 0 else "✗"])
        figure.tables += [table, empty]
    finally:
        fake.stop()
    figure.notes.append(
        f"The fake answers each distill call with {UNITS_PER_BATCH} units, so screen requests = "
        f"{UNITS_PER_BATCH} × distill requests; ✓ in the first table means the distill requests "
        "are at least the worst-case plan of `--estimate`, there is one screen request per unit, "
        "and the run stayed within `max_calls_per_run`. Wall times are the process's, against a "
        "server that answers at once."
    )
    return figure
