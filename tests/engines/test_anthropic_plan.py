"""Planning a run inside its budgets (`gitdream.engines.plan`): pure, no request."""

from __future__ import annotations

from datetime import date

import pytest

from gitdream.engines.budget import Budget, BudgetExceeded
from gitdream.engines.plan import CALLS_KEY, UNITS_KEY, Costs, Planner
from gitdream.units import Entry

COSTS = Costs(fixed=1000, topics=500, output=1000, screen=500, material=4000)


def entries(count: int, cost: int = 100) -> list[tuple[Entry, int]]:
    return [(Entry("log.md", i, i, f"- entry {i}", date(2026, 3, 1)), cost) for i in range(1, count + 1)]


def budget(calls: int = 50, run: int = 500_000, day: int = 2_000_000, used_today: int = 0) -> Budget:
    return Budget(max_calls=calls, max_tokens_run=run, max_tokens_day=day, used_today=used_today)


def spend(b: Budget, tokens: int) -> None:
    b.record({"input_tokens": tokens})


def test_a_batch_reserves_a_screener_call_for_every_unit_it_may_propose() -> None:
    b = budget(calls=14)
    planner = Planner(entries(200), COSTS, b, units_per_batch=5, units_per_run=100)
    first = planner.take()
    assert first is not None and first.cap == 5 and len(first.entries) == 40  # 4000 tokens of material
    assert (b.reserved_calls, b.reserved_tokens) == (5 + 1, 2500)  # five screens and a retry
    spend(b, 6000)
    planner.produced(5)  # five units owe five screener calls
    assert (b.reserved_calls, b.reserved_tokens) == (5, 2500)
    second = planner.take()  # 14 - 1 spent - 5 owed = 8: a distill call, its retry, five screens
    assert second is not None and second.cap == 5
    spend(b, 6000)
    planner.produced(3)  # fewer units than asked: the reservation shrinks to what is owed
    third = planner.take()  # 14 - 2 - 8 owed = 4 calls: a batch asked for two units
    assert third is not None and third.cap == 2 and len(third.entries) == 16  # material × 2/5
    spend(b, 3000)
    planner.produced(1)
    fourth = planner.take()  # 2 calls left: one unit, and no call held for a retry
    assert fourth is not None and fourth.cap == 1 and b.reserved_calls == 9 + 1
    spend(b, 2000)
    planner.produced(1)
    assert planner.take() is None and planner.limit == CALLS_KEY
    assert len(planner.rest()) == 200 - 40 - 40 - 16 - 8
    assert [e.start for e in planner.rest()][:2] == [105, 106]  # the oldest material went first


def test_the_units_of_a_run_are_capped() -> None:
    planner = Planner(entries(500), COSTS, budget(), units_per_batch=5, units_per_run=7)
    assert planner.take().cap == 5  # type: ignore[union-attr]
    planner.produced(5)
    last = planner.take()
    assert last is not None and last.cap == 2 and len(last.entries) == 16
    planner.produced(2)
    assert planner.take() is None and planner.limit == UNITS_KEY


def test_a_short_token_budget_takes_a_smaller_batch_then_leaves_the_rest() -> None:
    # 6000 tokens: fixed 1000 + topics 500 + output 1000 + 5 screens 2500 leaves 1000 for material.
    b = budget(run=6000)
    planner = Planner(entries(100), COSTS, b, units_per_batch=5, units_per_run=100)
    batch = planner.take()
    assert batch is not None and batch.cap == 5 and batch.tokens == 1000
    spend(b, 2500)
    planner.produced(5)
    assert planner.take() is None and planner.limit == "anthropic.max_tokens_per_run"


def test_the_daily_budget_counts_what_today_already_spent() -> None:
    planner = Planner(entries(10), COSTS, budget(day=100_000, used_today=99_000), 5, 100)
    assert planner.take() is None and planner.limit == "anthropic.max_tokens_per_day"
    assert planner.smallest_batch() == 1000 + 500 + 100 + 1000 + 500


def test_preview_counts_the_batches_of_the_worst_case_and_changes_nothing() -> None:
    b = budget(calls=20)
    planner = Planner(entries(300), COSTS, b, units_per_batch=5, units_per_run=100)
    assert planner.preview() == (4, 300 - 40 - 40 - 40 - 8)  # 6 + 6 + 6 calls, then 2 for one unit
    assert b.reserved_calls == 0 and b.calls == 0 and len(planner.rest()) == 300


def test_put_back_returns_a_batch_to_the_front_and_most_caps_a_half() -> None:
    planner = Planner(entries(100), COSTS, budget(), 5, 100)
    batch = planner.take()
    assert batch is not None
    planner.put_back([(e, 100) for e in batch.entries])
    half = planner.take(most=batch.tokens // 2)
    assert half is not None and half.entries == batch.entries[:20]


def test_a_call_that_would_eat_the_reserved_screener_calls_is_refused() -> None:
    b = budget(calls=6)
    planner = Planner(entries(10), COSTS, b, units_per_batch=5, units_per_run=100)
    assert planner.take().cap == 4  # type: ignore[union-attr]  # 6 calls: distill, retry, 4 screens
    b.check("distill", 3000)  # the batch's call fits beside its retry and its screener calls
    spend(b, 3000)
    with pytest.raises(BudgetExceeded, match=r"call 7 of this run \(5 held for screener calls\)"):
        b.check("distill", 3000)  # not without releasing the call held for the retry
    planner.retry()
    b.check("distill", 3000)  # the retry
    spend(b, 3000)
    with pytest.raises(BudgetExceeded):
        b.check("distill", 3000)  # a third attempt would take a screener call's place
    planner.produced(4)
    planner.release()
    b.check("screen", 500)
