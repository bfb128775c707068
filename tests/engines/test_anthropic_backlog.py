"""The anthropic engine on a backlog, end to end: the real SDK over HTTP against
`tests.fakeapi.ModelLike`, a fake that answers like a model from what each request holds
(units citing real entry ids of the batch, corroborations naming the fact ids it was
shown) and fails on command. Each `gitdream run` is the real CLI on a real repository."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gitdream.engines.anthropic import DISTILL_TOOL, SCREEN_TOOL
from tests.fakeapi import FakeAnthropic, ModelLike
from tests.helpers import cli, commit_all, deadline, git, write

DAY_LOG = "agents/ops/memory/logs/2026/03/2026-03-{day:02d}.md"
SUBJECTS = ["registry", "rollback", "canary", "webhook", "scheduler", "database", "certificate", "queue"]
SMALL = {
    # A small input budget and call budget, so the backlog needs several runs.
    "GITDREAM_ANTHROPIC_MAX_INPUT_TOKENS": "9000",
    "GITDREAM_ANTHROPIC_MAX_CALLS_PER_RUN": "6",
}


def _backlog(root: Path, days: int, per_day: int) -> list[str]:
    """Commit `days` daily logs of `per_day` entries each (one commit per day); returns the
    entry ids in order."""
    ids = []
    for day in range(1, days + 1):
        lines = []
        for n in range(per_day):
            subject = SUBJECTS[(day * per_day + n) % len(SUBJECTS)]
            lines.append(
                f"- The {subject} job on day {day} needed step {n} before the {subject} check passed again."
            )
        path = DAY_LOG.format(day=day)
        write(root, path, "\n".join(lines) + "\n")
        ids += [f"{path}#L{i}-L{i}" for i in range(1, per_day + 1)]
        commit_all(root, f"day {day}", date=f"2026-03-{day:02d}T12:00:00+00:00")
    return ids


def _run(root: Path, env: dict[str, str] | None = None, *args: str) -> tuple[int, dict[str, Any], str]:
    result = cli(root, "run", "--engine", "anthropic", "--json", *args, env=env)
    return result.exit_code, json.loads(result.stdout), result.stderr


def _pending_entries(receipt: dict[str, Any]) -> int:
    return sum(len(p.get("entries") or []) for p in receipt["pending"])


def _model(api: FakeAnthropic) -> ModelLike:
    assert isinstance(api.responder, ModelLike)
    return api.responder


def test_a_backlog_converges_over_runs_each_committing_something(
    agent_repo: Path, model_api: FakeAnthropic
) -> None:
    ids = _backlog(agent_repo, days=8, per_day=15)
    left = [len(ids)]
    runs = 0
    while True:
        runs += 1
        assert runs <= 12, f"no convergence after 11 runs: {left}"
        model_api.requests.clear()
        code, doc, err = _run(agent_repo, SMALL)
        assert code == 0, err
        receipt = doc["runs"][0]
        if receipt["status"] == "noop":
            break
        # Never a budget failure; every run with material commits something and shrinks the backlog.
        assert receipt["status"] == "ok" and receipt["error"] is None, receipt
        assert receipt["commits"]["experience"], f"run {runs} committed nothing"
        assert len(receipt["calls"]) <= 6
        left.append(_pending_entries(receipt))
        assert left[-1] < left[-2], f"run {runs} made no progress: {left}"
    assert runs >= 3, "the small budgets should need several runs"
    assert left[-1] == 0 and model_api.requests == [], "nothing new: no request at all"
    # Every entry was sent to the model exactly once over the runs, oldest first.
    sent = [e[0] for ask in _model(model_api).asked for e in ask.entries]
    assert sorted(sent) == sorted(ids) and len(sent) == len(set(sent))
    assert sent == sorted(sent, key=lambda i: (i.split("#")[0], int(i.split("#L")[1].split("-")[0])))
    # Later batches were shown the topics earlier runs created, and corroborated their facts.
    asked = _model(model_api).asked
    assert any(ask.topics for ask in asked[1:])
    log = git(agent_repo, "log", "--format=%s", "-n", "40")
    assert log.count("dream(ops): experience") == runs - 1


def test_the_summary_says_how_much_is_left_for_the_next_run(
    agent_repo: Path, model_api: FakeAnthropic
) -> None:
    _backlog(agent_repo, days=6, per_day=20)
    result = cli(agent_repo, "run", "--engine", "anthropic", env=SMALL)
    assert result.exit_code == 0, result.stderr
    receipt = json.loads(cli(agent_repo, "show", "last", "--json").stdout)
    left = _pending_entries(receipt.get("receipt", receipt))
    assert left > 0 and f"{left:,} entries left for the next run" in result.stdout
    assert "max_calls_per_run = 6 holds no more batches" in json.dumps(receipt)


def test_a_token_budget_that_binds_the_first_batch_still_makes_progress(
    agent_repo: Path, model_api: FakeAnthropic
) -> None:
    """The batch the plan takes is the one the check before the call accepts: with a
    `max_tokens_per_run` that holds a few batches' worth or less, the first batch is planned
    to fill it, and it must be sent (the check once found it a few dozen tokens over, left
    all material for the next run, which did the same: the agent was wedged, silently)."""
    _backlog(agent_repo, days=6, per_day=20)
    wedged = []
    for budget in range(15_000, 39_000, 2_000):
        model_api.requests.clear()
        code, doc, err = _run(agent_repo, {"GITDREAM_ANTHROPIC_MAX_TOKENS_PER_RUN": str(budget)}, "--dry-run")
        assert code == 0, err
        receipt = doc["runs"][0]
        if not any(call["purpose"] == "distill" for call in receipt["calls"]) or not receipt["units"]:
            wedged.append(budget)
    assert wedged == [], f"no batch was sent with max_tokens_per_run = {wedged}"


def test_the_estimate_says_how_much_the_budgets_leave_for_the_next_run(
    agent_repo: Path, model_api: FakeAnthropic
) -> None:
    _backlog(agent_repo, days=6, per_day=20)
    doc = json.loads(
        cli(agent_repo, "run", "--engine", "anthropic", "--estimate", "--json", env=SMALL).stdout
    )
    plan = doc["estimates"]["ops"]
    assert plan["entries_left"] > 0 and plan["entries_planned"] < plan["entries"] == 120
    result = cli(agent_repo, "run", "--engine", "anthropic", "--estimate", env=SMALL)
    assert result.exit_code == 0, result.stderr
    # The plan's entries, not the whole backlog, and what is left with the limit that leaves it.
    assert f"for {plan['entries_planned']} of 120 entries" in result.stdout, result.stdout
    assert f"{plan['entries_left']} entries left for the next run ({plan['limit']})" in result.stdout, (
        result.stdout
    )
    assert model_api.requests == []


def test_a_screener_down_for_one_run_loses_nothing(agent_repo: Path, model_api: FakeAnthropic) -> None:
    ids = _backlog(agent_repo, days=1, per_day=6)
    model = _model(model_api)
    model.down("screen")
    code, doc, err = _run(agent_repo, {"GITDREAM_ANTHROPIC_MAX_RETRIES": "1"})
    first = doc["runs"][0]
    assert code == 1 and first["status"] == "partial", err
    assert first["commits"]["experience"] is None and first["rejected"] == []
    unjudged = {e for p in first["pending"] for e in p["entries"]}
    assert unjudged and unjudged <= set(ids)
    assert all(p["reason"] == "not screened" for p in first["pending"])
    waiting = {u["body"] for u in first["unjudged"]}
    assert len(waiting) == len(first["unjudged"]) == 5
    assert "screener call failed" in err
    state = json.loads((agent_repo / ".git" / "gitdream" / "state.json").read_text())
    assert state["agents"]["ops"]["failures"] == 1
    # The screener is back: the next run reads the same material and commits its units.
    model.up("screen")
    model_api.requests.clear()
    code, doc, err = _run(agent_repo)
    second = doc["runs"][0]
    assert code == 0 and second["status"] == "ok", err
    assert second["commits"]["experience"] and second["pending"] == [] and second["unjudged"] == []
    # The very units the screener could not judge were screened and committed ...
    assert waiting <= {u["text"] for u in second["units"]}
    written = {s.split("@")[0] for u in second["units"] for s in u["sources"]}
    assert unjudged <= written
    assert second["phases"]["distill"]["carried"] == 5
    # ... without distilling their entries again (the one left over is distilled).
    distilled = [
        e
        for r in model_api.messages
        if r.body["tool_choice"]["name"] == DISTILL_TOOL
        for e in unjudged
        if f'id="{e}"' in r.body["messages"][0]["content"]
    ]
    assert distilled == []
    screened = [r for r in model_api.messages if r.body["tool_choice"]["name"] == SCREEN_TOOL]
    assert len(screened) >= 5
    state = json.loads((agent_repo / ".git" / "gitdream" / "state.json").read_text())
    assert state["agents"]["ops"]["failures"] == 0


def test_a_failed_distill_call_after_a_good_batch_is_partial_and_keeps_its_material(
    agent_repo: Path, model_api: FakeAnthropic
) -> None:
    _backlog(agent_repo, days=10, per_day=30)
    model = _model(model_api)
    env = {"GITDREAM_ANTHROPIC_MAX_INPUT_TOKENS": "9000", "GITDREAM_ANTHROPIC_MAX_RETRIES": "0"}
    model.fail("distill", "none", 1)  # the first batch answers normally
    model.fail("distill", "overloaded", 1)
    code, doc, err = _run(agent_repo, env)
    receipt = doc["runs"][0]
    assert code == 1 and receipt["status"] == "partial", err
    assert receipt["commits"]["experience"], "the good batch's units were committed"
    reasons = {p["reason"] for p in receipt["pending"]}
    assert "not processed by the engine" in reasons
    assert any("not sent after a failed call" in r for r in reasons)
    assert "529 (overloaded)" in json.dumps(receipt["phases"]["distill"]["errors"])
    code, doc, err = _run(agent_repo, env)
    assert code == 0 and doc["runs"][0]["status"] == "ok", err
    assert doc["runs"][0]["pending"] == []


def test_the_first_call_failing_fails_the_run_and_moves_nothing(
    agent_repo: Path, model_api: FakeAnthropic
) -> None:
    _backlog(agent_repo, days=1, per_day=5)
    _model(model_api).down("distill")
    code, doc, _err = _run(agent_repo, {"GITDREAM_ANTHROPIC_MAX_RETRIES": "1"})
    assert code == 1 and doc["runs"][0]["status"] == "failed"
    assert git(agent_repo, "rev-parse", "-q", "--verify", "refs/gitdream/watermark/ops", check=False) == ""


def test_a_cut_stream_and_a_schema_violation_are_retried_or_left_pending(
    agent_repo: Path, model_api: FakeAnthropic
) -> None:
    _backlog(agent_repo, days=1, per_day=5)
    model = _model(model_api)
    model.fail("distill", "schema", 1)  # sent back once as a tool error, then answered
    model.fail("screen", "cut", 1)  # a broken stream: the SDK does not retry it, the call fails
    code, doc, err = _run(agent_repo)
    receipt = doc["runs"][0]
    assert code == 1 and receipt["status"] == "partial", err
    assert [c["attempt"] for c in receipt["calls"] if c["purpose"] == "distill"] == [1, 2]
    assert "broke off" in json.dumps(receipt["phases"]["screen"]["errors"])
    assert {p["reason"] for p in receipt["pending"]} == {"not screened"}
    code, doc, err = _run(agent_repo)
    assert code == 0 and doc["runs"][0]["commits"]["experience"] and doc["runs"][0]["pending"] == [], err


def test_a_slow_answer_past_the_timeout_is_a_failed_call(agent_repo: Path, model_api: FakeAnthropic) -> None:
    _backlog(agent_repo, days=1, per_day=3)
    model = _model(model_api)
    model.delay = 3.0
    code, doc, _err = _run(
        agent_repo, {"GITDREAM_ANTHROPIC_TIMEOUT_SECONDS": "1", "GITDREAM_ANTHROPIC_MAX_RETRIES": "0"}
    )
    assert code == 1 and doc["runs"][0]["status"] == "failed"
    assert "did not answer within anthropic.timeout_seconds = 1 s" in doc["runs"][0]["error"]["message"]


@pytest.mark.parametrize("how", ["ping", "trickle"])
def test_a_stream_that_never_ends_is_abandoned_at_the_call_deadline(
    agent_repo: Path, model_api: FakeAnthropic, how: str
) -> None:
    # The server keeps the screener's stream alive forever (pings, or one byte at a time),
    # well within timeout_seconds between bytes: only the call's deadline ends the call.
    _backlog(agent_repo, days=1, per_day=5)
    model = _model(model_api)
    model.fail("screen", how, 1)
    with deadline(60, "a run against a stream that never ends"):
        code, doc, err = _run(agent_repo, {"GITDREAM_ANTHROPIC_CALL_DEADLINE_SECONDS": "2"})
    receipt = doc["runs"][0]
    assert code == 1 and receipt["status"] == "partial", err
    errors = json.dumps(receipt["phases"]["screen"]["errors"])
    assert "did not finish the call within anthropic.call_deadline_seconds = 2 s" in errors
    assert {p["reason"] for p in receipt["pending"]} == {"not screened"}
    assert _pending_entries(receipt) > 0
    code, doc, err = _run(agent_repo)
    assert code == 0 and doc["runs"][0]["status"] == "ok", err
    assert doc["runs"][0]["commits"]["experience"] and doc["runs"][0]["pending"] == []


def test_a_human_topic_about_the_same_subject_is_given_to_the_model(
    agent_repo: Path, model_api: FakeAnthropic
) -> None:
    human = (
        "---\nname: Clawk\ndescription: How the agent posts on Clawk\ntype: reference\n---\n\n"
        "# Clawk\n\nClawk replies are limited to 280 characters; threads are how longer posts are made.\n"
    )
    write(agent_repo, "agents/ops/memory/clawk.md", human)
    write(
        agent_repo, "agents/ops/memory/cooking.md", "---\nname: Cooking\n---\n\nPasta needs salted water.\n"
    )
    write(
        agent_repo,
        DAY_LOG.format(day=1),
        "- A Clawk reply over 280 characters was cut off; split long Clawk replies into a thread.\n",
    )
    commit_all(agent_repo, "clawk memory and a log")
    code, doc, err = _run(agent_repo)
    assert code == 0, err
    [request] = [r for r in model_api.messages if r.body["tool_choice"]["name"] == DISTILL_TOOL]
    content = request.body["messages"][0]["content"]
    assert (
        '<topic slug="clawk" name="Clawk" written-by="person" description="How the agent posts on Clawk">'
        in content
    )
    assert "Clawk replies are limited to 280 characters; threads are how longer posts are made." in content
    assert "Pasta" not in content  # a topic about another subject is not sent
    # The unit went into the person's topic, inside gitdream's block; their text is intact.
    after = (agent_repo / "agents/ops/memory/clawk.md").read_text()
    assert after.startswith(human) and "<!-- gitdream:begin facts -->" in after
    assert "split long Clawk replies into a thread" in after
    assert not (agent_repo / "agents/ops/memory/a-clawk-reply.md").exists()
    assert doc["runs"][0]["counts"]["created"] == 1


def test_corroboration_names_the_fact_id_it_was_shown(agent_repo: Path, model_api: FakeAnthropic) -> None:
    write(
        agent_repo, DAY_LOG.format(day=1), "- The registry job prunes image tags older than three releases.\n"
    )
    commit_all(agent_repo, "day 1", date="2026-03-01T12:00:00+00:00")
    assert _run(agent_repo)[0] == 0
    write(
        agent_repo,
        DAY_LOG.format(day=2),
        "- Again the registry job prunes image tags older than three releases.\n",
    )
    commit_all(agent_repo, "day 2", date="2026-03-02T12:00:00+00:00")
    code, doc, err = _run(agent_repo)
    assert code == 0, err
    ask = _model(model_api).asked[-1]
    [fact] = ask.facts
    assert fact[0].startswith("fact:")
    receipt = doc["runs"][0]
    assert receipt["counts"]["corroborated"] == 1 and receipt["counts"]["created"] == 0
    [written] = receipt["units"]
    assert written["action"] == "corroborated" and written["seen"] == 2


def _system_prompts(api: FakeAnthropic) -> dict[str, str]:
    out = {}
    for request in api.messages:
        out[request.body["tool_choice"]["name"]] = request.body["system"][0]["text"]
    return out


def test_the_privacy_policy_sets_both_prompts(agent_repo: Path, model_api: FakeAnthropic) -> None:
    write(
        agent_repo, DAY_LOG.format(day=1), "- Clawk replies are limited to 280 characters, found by Dana.\n"
    )
    commit_all(agent_repo, "log")
    assert _run(agent_repo)[0] == 0
    private = _system_prompts(model_api)
    assert set(private) == {DISTILL_TOOL, SCREEN_TOOL}
    for text in private.values():
        assert "# Privacy policy: private" in text and "Clawk replies are limited to 280 characters" in text
        assert "Privacy policy: shared" not in text
    write(agent_repo, DAY_LOG.format(day=2), "- Clawk threads are limited to 25 replies.\n")
    commit_all(agent_repo, "log 2")
    model_api.requests.clear()
    assert _run(agent_repo, {"GITDREAM_SCREEN_POLICY": "shared"})[0] == 0
    shared = _system_prompts(model_api)
    for text in shared.values():
        assert "# Privacy policy: shared" in text
        assert "the name of a company, customer, client, product or project" in text
        assert "Privacy policy: private" not in text
    assert "in the language of the entries it comes from" in shared[DISTILL_TOOL]


def test_no_request_without_material(agent_repo: Path, model_api: FakeAnthropic) -> None:
    code, doc, _err = _run(agent_repo)
    assert code == 0 and doc["runs"][0]["status"] == "noop"
    write(agent_repo, "agents/ops/agent.md", (agent_repo / "agents/ops/agent.md").read_text() + "\nMore.\n")
    commit_all(agent_repo, "edit agent.md only")
    code, doc, _err = _run(agent_repo)
    assert code == 0 and doc["runs"][0]["status"] == "noop"
    assert cli(agent_repo, "run", "--auto", "--engine", "anthropic").exit_code == 0
    assert model_api.requests == [], "no model call and no count_tokens request without material"


def test_a_pending_path_that_grew_keeps_its_new_lines(agent_repo: Path, model_api: FakeAnthropic) -> None:
    """A daily log partly left for the next run, then appended to: the next run reads the
    pending entries and the new lines (the new lines were once dropped)."""
    path = DAY_LOG.format(day=1)
    lines = [
        f"- The {SUBJECTS[n % 8]} step {n} needs its own check before the {SUBJECTS[n % 8]} deploy."
        for n in range(120)
    ]
    write(agent_repo, path, "\n".join(lines) + "\n")
    commit_all(agent_repo, "a long day")
    code, doc, err = _run(agent_repo, SMALL)
    assert code == 0, err
    pending = {e for p in doc["runs"][0]["pending"] for e in p["entries"]}
    assert pending
    more = ["- The webhook retries need a jittered delay, learned late in the day."]
    write(agent_repo, path, "\n".join(lines + more) + "\n")
    commit_all(agent_repo, "the day goes on")
    model = _model(model_api)
    before = len(model.asked)
    code, doc, err = _run(agent_repo, {**SMALL, "GITDREAM_ANTHROPIC_MAX_CALLS_PER_RUN": "50"})
    assert code == 0, err
    sent = {e[0] for ask in model.asked[before:] for e in ask.entries}
    assert f"{path}#L121-L121" in sent and pending <= sent


def _on_a_terminal(root: Path, api: FakeAnthropic, *args: str) -> str:
    """Run `gitdream run --engine anthropic ARGS` in a subprocess whose stderr is a
    terminal (a pseudo-terminal); return what the terminal showed."""
    import os
    import pty
    import subprocess
    import sys

    from tests.helpers import gitdream_env

    master, slave = pty.openpty()
    env = gitdream_env({"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-ant-test", "TERM": "xterm"})
    proc = subprocess.Popen(
        [sys.executable, "-m", "gitdream", "run", "--engine", "anthropic", *args],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=slave,
    )
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    proc.communicate(timeout=60)
    os.close(master)
    return shown.decode("utf-8", "replace")


def test_progress_inside_the_model_phases_on_a_terminal_only(
    agent_repo: Path, model_api: FakeAnthropic
) -> None:
    _backlog(agent_repo, days=2, per_day=10)
    shown = _on_a_terminal(agent_repo, model_api, "--dry-run")
    assert "ops: distill — 20 entries in 1 batch" in shown
    assert "ops: distill — batch 1/1 · 5 units · " in shown and " calls left" in shown
    assert "ops: screen — unit 5/5 · 5 kept · " in shown
    assert "\r" in shown and "\x1b[K" in shown  # one line rewritten in place
    quiet = _on_a_terminal(agent_repo, model_api, "--dry-run", "--quiet")
    assert "batch" not in quiet and "ops: distill" not in quiet
    as_json = _on_a_terminal(agent_repo, model_api, "--dry-run", "--json")
    assert "batch" not in as_json
    # Not a terminal (a hook's log, a pipe): nothing but the result.
    result = cli(agent_repo, "run", "--engine", "anthropic", "--dry-run")
    assert "batch" not in result.stderr and "calls left" not in result.stderr


def test_units_not_judged_twice_wait_again_and_a_forged_record_is_ignored(
    agent_repo: Path, model_api: FakeAnthropic
) -> None:
    _backlog(agent_repo, days=1, per_day=3)
    model = _model(model_api)
    model.down("screen")
    env = {"GITDREAM_ANTHROPIC_MAX_RETRIES": "0"}
    first = _run(agent_repo, env)[1]["runs"][0]
    second = _run(agent_repo, env)[1]["runs"][0]
    assert first["status"] == second["status"] == "partial"
    assert [u["body"] for u in second["unjudged"]] == [u["body"] for u in first["unjudged"]]
    assert second["phases"]["distill"]["carried"] == 3 and second["commits"]["experience"] is None
    assert not [r for r in model_api.messages if r.body["tool_choice"]["name"] == DISTILL_TOOL][1:]
    model.up("screen")
    third = _run(agent_repo)[1]["runs"][0]
    assert third["status"] == "ok" and third["commits"]["experience"] and len(third["units"]) == 3


def test_carried_units_are_untrusted_records() -> None:
    from gitdream.dream.gather import carried_units

    good = {
        "title": "t",
        "body": "b",
        "target": "experience",
        "action": "create",
        "topic": "x",
        "sources": ["log.md#L1-L1"],
        "date": "2026-03-01",
    }
    records = [
        good,
        {**good, "sources": ["other.md#L1-L1"]},  # its entry is not in this run's material
        {**good, "title": 3},
        {**good, "date": "not a date"},
        {"title": "t"},
        "not a dict",
    ]
    units = carried_units(records, {"log.md#L1-L1"})
    assert [(u.title, u.sources) for u in units] == [("t", ("log.md#L1-L1",))]
