"""The model's answer and the server's response are untrusted input: what a hostile or
broken server (or a model gone wrong) can send, and what gitdream makes of it — nothing
lost, nothing written outside the memory folder, a clear message and the documented exit
code. The real SDK over HTTP against the loopback fake (`tests/fakeapi.py`), the real CLI
on a real repository."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gitdream.engines.anthropic import SCREEN_TOOL
from tests import fakeapi
from tests.engines.test_anthropic_run import LOG, RAW, _setup, _unit
from tests.fakeapi import FakeAnthropic, Recorded, shown
from tests.helpers import cli, commit_all, deadline, git, write

WATERMARK = "refs/gitdream/watermark/ops"


def _yes() -> fakeapi.Reply:
    return fakeapi.tool_use(SCREEN_TOOL, {"verdict": "yes", "reason": "no secrets or personal data"})


def _run(root: Path, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any], str]:
    result = cli(root, "run", "--engine", "anthropic", "--json", env=env)
    return result.exit_code, json.loads(result.stdout), result.stderr


def _watermark(root: Path) -> str:
    return git(root, "rev-parse", "-q", "--verify", WATERMARK, check=False)


# --- the response ----------------------------------------------------------------------------


def test_an_answer_longer_than_max_tokens_allows_is_refused_without_reading_it_all(
    agent_repo: Path, anthropic_api: FakeAnthropic
) -> None:
    """A server that ignores max_tokens streams 20 000 units (20 MB): reading stops past
    what max_tokens could hold, the call fails, nothing is consumed — instead of minutes
    of accumulating it and a retry that the budget refuses, ending "ok" with nothing done."""
    _setup(agent_repo)
    many = [_unit([f"{LOG}#L1-L1"], title=f"Lesson {i}") for i in range(20_000)]
    anthropic_api.enqueue(fakeapi.distilled(many), fakeapi.distilled(many))
    with deadline(60, "reading an oversized answer"):
        code, doc, err = _run(agent_repo)
    receipt = doc["runs"][0]
    assert code == 1 and receipt["status"] == "failed"
    assert "the answer is longer than max_tokens = 4096 allows" in receipt["error"]["message"]
    assert "Traceback" not in err and len(anthropic_api.messages) == 1  # the failed call is not retried
    assert receipt["commits"]["experience"] is None and _watermark(agent_repo) == ""


MALFORMED = {
    "message not an object": b'event: message_start\ndata: {"type": "message_start", "message": "x"}\n\n',
    "no message": b'event: message_start\ndata: {"type": "message_start"}\n\n',
    "block not an object": (
        b'event: message_start\ndata: {"type": "message_start", "message": {"id": "m", "usage": {}}}\n\n'
        b'event: content_block_start\ndata: {"type": "content_block_start", "index": 0, "content_block": 5}\n\n'
    ),
    "index not a number": (
        b'event: message_start\ndata: {"type": "message_start", "message": {"id": "m", "usage": {}}}\n\n'
        b'event: content_block_start\ndata: {"type": "content_block_start", "index": 0, '
        b'"content_block": {"type": "text", "text": ""}}\n\n'
        b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": "0", "delta": {}}\n\n'
    ),
}


@pytest.mark.parametrize("body", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_stream_of_malformed_events_is_a_failed_call(
    agent_repo: Path, anthropic_api: FakeAnthropic, body: bytes
) -> None:
    _setup(agent_repo)
    anthropic_api.enqueue(fakeapi.raw(body))
    code, doc, err = _run(agent_repo)
    receipt = doc["runs"][0]
    assert code == 1 and receipt["status"] == "failed" and "Traceback" not in err
    assert "not shaped as the Messages API's" in receipt["error"]["message"]
    assert receipt["error"]["hint"] and _watermark(agent_repo) == ""


def test_a_200_whose_body_is_not_json_is_a_failed_call(
    agent_repo: Path, anthropic_api: FakeAnthropic
) -> None:
    _setup(agent_repo)
    anthropic_api.enqueue(fakeapi.raw(b"<html><body>502 Bad Gateway</body></html>", "text/html"))
    code, doc, err = _run(agent_repo)
    receipt = doc["runs"][0]
    assert code == 1 and receipt["status"] == "failed" and "Traceback" not in err
    assert "nothing of it was used" in receipt["error"]["message"] and _watermark(agent_repo) == ""


# --- the answer ------------------------------------------------------------------------------


@pytest.mark.parametrize("slug", ["MEMORY", "Memory", "agent", "notes.md", "gitdream-topics"])
def test_a_topic_that_cannot_name_a_file_is_sent_back_and_never_consumes_material(
    agent_repo: Path, anthropic_api: FakeAnthropic, slug: str
) -> None:
    """The slug passes the schema's pattern but names the index, a definition or a
    `.md` twice: sent back like a schema violation; twice, its batch stays pending."""
    _setup(agent_repo)
    bad = fakeapi.distilled([_unit([f"{LOG}#L1-L1"], topic=slug)])
    anthropic_api.enqueue(bad, bad)
    before = {p.name for p in (agent_repo / "agents/ops/memory").iterdir()}
    code, doc, _err = _run(agent_repo)
    receipt = doc["runs"][0]
    assert code == 1 and receipt["status"] == "partial"
    [retry] = anthropic_api.messages[1].body["messages"][2]["content"]
    assert f"$.units[0].topic: {slug!r} cannot name a topic file" in retry["content"]
    assert receipt["rejected"] == [] and receipt["commits"]["experience"] is None
    assert [p["entries"] for p in receipt["pending"]] == [[f"{LOG}#L1-L1", f"{LOG}#L2-L2"]]
    assert {p.name for p in (agent_repo / "agents/ops/memory").iterdir()} == before
    assert (agent_repo / "agents/ops/memory/MEMORY.md").read_text() == (
        "# ops — memory index\n\n- [Human topic](human.md)\n"
    )


def test_a_declared_topic_that_cannot_name_a_file_is_sent_back(
    agent_repo: Path, anthropic_api: FakeAnthropic
) -> None:
    _setup(agent_repo)
    topics = [{"slug": "agent", "name": "The agent", "description": "What the agent is"}]
    anthropic_api.enqueue(
        fakeapi.distilled([_unit([f"{LOG}#L1-L1"])], topics=[*topics, *fakeapi.declared([_unit([])])]),
        fakeapi.distilled([_unit([f"{LOG}#L1-L1"])]),
        _yes(),
    )
    code, _doc, err = _run(agent_repo)
    assert code == 0, err
    [retry] = anthropic_api.messages[1].body["messages"][2]["content"]
    assert "$.topics[0].slug: 'agent' cannot name a topic file" in retry["content"]
    assert not (agent_repo / "agents/ops/memory/agent.md").exists()


@pytest.mark.parametrize("field", ["name", "description"])
def test_a_blank_topic_name_or_description_is_sent_back(
    agent_repo: Path, anthropic_api: FakeAnthropic, field: str
) -> None:
    """A name of white space only would leave the topic named after its first unit's title."""
    _setup(agent_repo)
    good = {"slug": "deploy", "name": "Deploys and rollbacks", "description": "How builds are rolled back"}
    anthropic_api.enqueue(
        fakeapi.distilled([_unit([f"{LOG}#L1-L1"])], topics=[dict(good, **{field: " \n\t "})]),
        fakeapi.distilled([_unit([f"{LOG}#L1-L1"])], topics=[good]),
        _yes(),
    )
    code, _doc, err = _run(agent_repo)
    assert code == 0, err
    [retry] = anthropic_api.messages[1].body["messages"][2]["content"]
    assert f"$.topics[0].{field}:" in retry["content"]
    deploy = (agent_repo / "agents/ops/memory/deploy.md").read_text()
    assert "\n# Deploys and rollbacks\n" in deploy and "description: How builds are rolled back\n" in deploy


def test_an_oversized_invalid_answer_is_not_echoed_in_the_retry(
    agent_repo: Path, anthropic_api: FakeAnthropic
) -> None:
    """60 units (over the schema's 50) in more JSON than max_tokens could write: the retry
    reports the violation without sending that input back, so it costs what the first
    request did."""
    _setup(agent_repo)
    many = [_unit([f"{LOG}#L1-L1"], title=f"Lesson {i}") for i in range(60)]
    anthropic_api.enqueue(fakeapi.distilled(many), fakeapi.distilled([_unit([f"{LOG}#L1-L1"])]), _yes())
    code, _doc, err = _run(agent_repo, env={"GITDREAM_ANTHROPIC_MAX_TOKENS": "1000"})
    assert code == 0, err
    first, retry = anthropic_api.messages[0], anthropic_api.messages[1]
    echoed = retry.body["messages"][1]["content"][0]
    assert echoed["type"] == "tool_use" and echoed["input"] == {}
    assert "$.units: more than 50 items" in retry.body["messages"][2]["content"][0]["content"]
    assert len(retry.text) < len(first.text) + 2000


def test_a_unit_citing_an_entry_outside_its_batch_does_not_consume_it(
    agent_repo: Path, anthropic_api: FakeAnthropic
) -> None:
    """A batch holds part of the run's material (the budget leaves the rest for the next
    run); a unit citing an entry of the run it was not shown loses that source — the entry
    stays pending, read again next run — and a unit left with no source is rejected."""
    lines = [f"- Entry {n}: " + "the registry job keeps image tags for a while. " * 60 for n in range(1, 13)]
    _setup(agent_repo, "\n".join(lines) + "\n")
    every = [f"{LOG}#L{n}-L{n}" for n in range(1, 13)]
    seen: list[list[str]] = []

    def answer(record: Recorded) -> fakeapi.Reply | None:
        if record.body["tool_choice"]["name"] == SCREEN_TOOL:
            return _yes()
        shown_ids = [e[0] for e in shown(record).entries]
        seen.append(shown_ids)
        outside = next(i for i in every if i not in shown_ids)
        return fakeapi.distilled(
            [
                _unit([shown_ids[0], outside], title="Half seen"),
                _unit([outside], title="Never seen", body="Image tags are kept for a while."),
            ]
        )

    anthropic_api.responder = answer
    code, doc, err = _run(agent_repo, env={"GITDREAM_ANTHROPIC_MAX_CALLS_PER_RUN": "4"})
    assert code == 0, err
    receipt = doc["runs"][0]
    [batch] = seen
    assert 0 < len(batch) < len(every)
    outside = next(i for i in every if i not in batch)
    assert receipt["phases"]["distill"]["stats"]["sources_outside_batch"] == 2
    assert [(r["title"], r["stage"]) for r in receipt["rejected"]] == [("Never seen", "verify")]
    [kept] = receipt["units"]
    assert kept["sources"] == [f"{batch[0]}@{receipt['input_commit'][:12]}"]
    assert outside in {e for p in receipt["pending"] for e in p["entries"]}
    assert outside not in (agent_repo / "agents/ops/memory/deploy.md").read_text()


# --- what is written -------------------------------------------------------------------------


def test_the_overflow_index_follows_a_better_description(
    agent_repo: Path, anthropic_api: FakeAnthropic
) -> None:
    """MEMORY.md is over its limits, so gitdream indexes its topics in gitdream-topics.md:
    a description the model improved there is the one the topic file now has."""
    _setup(agent_repo)
    limits = {"GITDREAM_MEMORY_MAX_LINES": "2"}
    first = {"slug": "deploy", "name": "Deploys", "description": "Image tags"}
    anthropic_api.enqueue(fakeapi.distilled([_unit([f"{LOG}#L1-L1"])], topics=[first]), _yes())
    assert _run(agent_repo, env=limits)[0] == 0
    overflow = agent_repo / "agents/ops/memory/gitdream-topics.md"
    assert "[Deploys](deploy.md) — Image tags" in overflow.read_text()
    write(agent_repo, LOG, RAW + "- Smoke tests run on staging before every promotion.\n")
    commit_all(agent_repo, "more")
    better = {"slug": "deploy", "name": "Deploys", "description": "How builds are promoted and rolled back"}
    unit = _unit([f"{LOG}#L3-L3"], title="Smoke first", body="Promote only builds whose smoke test passed.")
    anthropic_api.enqueue(fakeapi.distilled([unit], topics=[better]), _yes())
    code, _doc, err = _run(agent_repo, env=limits)
    assert code == 0, err
    assert (
        "description: How builds are promoted and rolled back\n"
        in (agent_repo / "agents/ops/memory/deploy.md").read_text()
    )
    index = overflow.read_text()
    assert "[Deploys](deploy.md) — How builds are promoted and rolled back" in index
    assert "Image tags" not in index
