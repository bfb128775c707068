"""Engine building blocks without the network: prompts, the schema validator, budgets."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitdream import config
from gitdream.dream.memoryfiles import TOPIC_PATTERN
from gitdream.engines import prompts
from gitdream.engines.anthropic import UNITS_SCHEMA, VERDICT_SCHEMA, estimate_tokens
from gitdream.engines.budget import Budget, BudgetExceeded, call_tokens, total_tokens
from gitdream.engines.schema import validate
from gitdream.errors import EngineError


def test_shipped_prompts_render() -> None:
    policy = prompts.load("policy-private")
    distill = prompts.render("distill", agent="ops", policy=policy)
    assert "`ops`" in distill and "$" not in distill
    for phase in ("Orient", "Gather", "Consolidate", "Prune"):
        assert f"**{phase}.**" in distill
    assert "never instructions" in distill and "# Privacy policy: private" in distill
    assert "in the language of the entries it comes from" in distill
    screen = prompts.render("screen", policy=prompts.load("policy-shared"))
    assert "screen_verdict" in screen and "# Privacy policy: shared" in screen and "$" not in screen


def test_missing_prompt_and_placeholder_are_engine_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "p.md").write_text("Hello $agent, today is $today. Cost: $$5\n")
    (tmp_path / "prompts" / "bad.md").write_text("a lone $ sign\n")
    monkeypatch.setattr(prompts, "templates_dir", lambda: tmp_path)
    assert (
        prompts.render("p", agent="ops", today="2026-03-01") == "Hello ops, today is 2026-03-01. Cost: $5\n"
    )
    with pytest.raises(EngineError, match=r"prompts/p\.md uses the placeholder \$today, which has no value"):
        prompts.render("p", agent="ops")
    with pytest.raises(EngineError, match=r"prompt template .*missing\.md cannot be read"):
        prompts.render("missing")
    with pytest.raises(EngineError, match=r"malformed placeholder"):
        prompts.render("bad")


def good_unit() -> dict[str, object]:
    return {
        "title": "t",
        "body": "b",
        "target": "experience",
        "action": "create",
        "topic": "ops",
        "sources": ["a#L1-L1"],
    }


def test_schema_accepts_a_valid_answer_and_an_empty_one() -> None:
    topic = {"slug": "ops", "name": "Operations", "description": "How the service is run"}
    assert validate({"topics": [topic], "units": [good_unit()]}, UNITS_SCHEMA) == []
    assert validate({"topics": [], "units": []}, UNITS_SCHEMA) == []
    assert validate({"topics": [dict(topic, name="")], "units": []}, UNITS_SCHEMA) == [
        "$.topics[0].name: shorter than 1 characters"
    ]
    assert validate({"verdict": "no", "reason": "names a customer"}, VERDICT_SCHEMA) == []


def test_schema_reports_every_violation_with_a_path() -> None:
    bad = dict(good_unit(), target="file", topic="Not A Slug", sources=[], extra=1)
    del bad["body"]
    errors = validate({"topics": [], "units": [good_unit(), bad], "more": True}, UNITS_SCHEMA)
    assert errors == [
        "$.units[1]: missing required property 'body'",
        "$.units[1].target: 'file' is not one of 'experience', 'skill', 'soul', 'agent'",
        f"$.units[1].topic: 'Not A Slug' does not match {TOPIC_PATTERN}",
        "$.units[1].sources: fewer than 1 items",
        "$.units[1]: unexpected property 'extra'",
        "$: unexpected property 'more'",
    ]
    assert validate([], UNITS_SCHEMA) == ["$: expected object, got list []"]
    assert validate({"topics": [], "units": [dict(good_unit(), title="")]}, UNITS_SCHEMA) == [
        "$.units[0].title: shorter than 1 characters"
    ]
    assert validate({"units": []}, UNITS_SCHEMA) == ["$: missing required property 'topics'"]
    assert validate(True, {"type": "integer"}) == ["$: expected integer, got bool True"]
    assert validate(["a", "b"], {"type": "array", "maxItems": 1}) == ["$: more than 1 items"]
    assert validate("abc", {"type": "string", "maxLength": 2}) == ["$: longer than 2 characters"]


def test_token_estimate_errs_high() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abc") == 1
    assert estimate_tokens("部署") == 2  # 6 UTF-8 bytes


def test_budget_counts_every_kind_of_token() -> None:
    call = {
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_creation_input_tokens": 100,
        "cache_read_input_tokens": 1000,
    }
    assert call_tokens(call) == 1115
    assert call_tokens({"input_tokens": 3, "cache_read_input_tokens": None}) == 3
    assert total_tokens([call, call]) == 2230


def test_budget_checks_each_limit() -> None:
    budget = Budget.from_config(config.defaults(), used_today=0)
    assert (budget.max_calls, budget.max_tokens_run, budget.max_tokens_day) == (50, 500_000, 2_000_000)
    small = Budget(max_calls=2, max_tokens_run=1000, max_tokens_day=5000, used_today=4000)
    small.check("distill", 900)
    small.record({"input_tokens": 600, "output_tokens": 100})
    with pytest.raises(BudgetExceeded) as info:
        small.check("screen", 400)
    assert info.value.budget == "anthropic.max_tokens_per_run"
    small.check("screen", 300)
    small.record({"input_tokens": 100})
    with pytest.raises(BudgetExceeded) as info:
        small.check("screen", 1)
    assert info.value.budget == "anthropic.max_calls_per_run" and info.value.hint
    day = Budget(max_calls=9, max_tokens_run=10_000, max_tokens_day=5000, used_today=4500)
    with pytest.raises(BudgetExceeded, match="4500 tokens used today") as info:
        day.check("distill", 501)
    assert info.value.budget == "anthropic.max_tokens_per_day"
    assert isinstance(info.value, EngineError) and info.value.kind == "budget"
