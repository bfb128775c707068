"""Hard budgets on model spend (DESIGN §9): calls per run, tokens per run, tokens per day.

This module does not import the SDK, so the pipeline can sum receipts and `status` can
show budgets on the idle path.

Tokens of a call are `input_tokens + cache_creation_input_tokens +
cache_read_input_tokens + output_tokens` — everything the API bills, cached or not.
A run is planned inside these budgets before its first call (`gitdream.engines.plan`):
the planner reserves the screener calls owed for units already proposed (`reserve`), and
takes only the batches that fit with their own screener calls. `check` stays as the last
guard before every request: a call is made only if its worst case (the estimated input
plus `max_tokens` of output) fits in what is left of every budget *after the
reservations*; otherwise `BudgetExceeded` is raised before any request — the engine then
leaves that material for the next run instead of failing.

The daily budget is per repository and per UTC day: the pipeline sums the tokens of the
day's receipts (`total_tokens(calls)` over each receipt's recorded calls) and hands the
sum to the engine as `used_today`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from gitdream.config import Config
from gitdream.errors import EngineError

TOKEN_FIELDS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")


class BudgetExceeded(EngineError):
    """A hard budget (`anthropic.max_calls_per_run`, `max_tokens_per_run` or
    `max_tokens_per_day`) would be exceeded by the next model call. `budget` names the key."""

    kind = "budget"

    def __init__(self, message: str, hint: str | None = None, budget: str = "") -> None:
        super().__init__(message, hint)
        self.budget = budget


def estimate_tokens(text: str) -> int:
    """Estimated tokens of `text`: UTF-8 bytes / 3, rounded up. Claude averages about 3.5
    characters per token in English and one token per CJK character (3 UTF-8 bytes), so
    this errs on the high side, the safe side for batching and budgets."""
    return math.ceil(len(text.encode("utf-8")) / 3)


def content_tokens(text: str) -> int:
    """Estimated tokens of `text` as it travels inside a request's JSON body, where a line
    break, a quote or a backslash takes two bytes: `estimate_tokens` of the JSON string
    without its quotes. The parts of a message counted this way never add up to less than
    `request_tokens` counts for the whole message, so a batch planned from its parts is
    one the check before its call accepts."""
    return math.ceil((len(json.dumps(text, ensure_ascii=False).encode("utf-8")) - 2) / 3)


def call_tokens(call: Mapping[str, Any]) -> int:
    """Tokens billed for one recorded call (see module docstring); missing fields are 0."""
    return sum(int(call.get(name) or 0) for name in TOKEN_FIELDS)


def total_tokens(calls: Iterable[Mapping[str, Any]]) -> int:
    """Sum of `call_tokens` over `calls`."""
    return sum(call_tokens(c) for c in calls)


class Budget:
    """The spend of one run against the configured limits.

    `max_calls`, `max_tokens_run`, `max_tokens_day`: the limits; `used_today`: tokens
    already spent today by earlier runs of this repository (from receipts).
    """

    def __init__(self, *, max_calls: int, max_tokens_run: int, max_tokens_day: int, used_today: int = 0):
        self.max_calls = max_calls
        self.max_tokens_run = max_tokens_run
        self.max_tokens_day = max_tokens_day
        self.used_today = used_today
        self.calls = 0
        self.tokens = 0
        self.reserved_calls = 0
        self.reserved_tokens = 0

    def copy(self) -> Budget:
        """An independent budget with the same limits, spend and reservations."""
        other = Budget(
            max_calls=self.max_calls,
            max_tokens_run=self.max_tokens_run,
            max_tokens_day=self.max_tokens_day,
            used_today=self.used_today,
        )
        other.calls, other.tokens = self.calls, self.tokens
        other.reserved_calls, other.reserved_tokens = self.reserved_calls, self.reserved_tokens
        return other

    def reserve(self, calls: int, tokens: int) -> None:
        """Hold `calls` calls and `tokens` tokens for calls planned later (replacing the
        previous reservation): `check`, `calls_left` and `tokens_left` leave them alone."""
        self.reserved_calls, self.reserved_tokens = calls, tokens

    def calls_left(self) -> int:
        """Calls this run may still make beyond the reservation."""
        return self.max_calls - self.calls - self.reserved_calls

    def tokens_left(self) -> int:
        """Tokens this run may still use beyond the reservation: the smaller of what is
        left of the run's budget and of today's."""
        run = self.max_tokens_run - self.tokens
        day = self.max_tokens_day - self.used_today - self.tokens
        return min(run, day) - self.reserved_tokens

    def binding_tokens(self) -> str:
        """The key of the token budget with less left: `anthropic.max_tokens_per_day` or
        `anthropic.max_tokens_per_run`."""
        run = self.max_tokens_run - self.tokens
        day = self.max_tokens_day - self.used_today - self.tokens
        return "anthropic.max_tokens_per_day" if day < run else "anthropic.max_tokens_per_run"

    def spend(self, calls: int, tokens: int) -> None:
        """Count `calls` calls and `tokens` tokens as spent (a plan's simulation)."""
        self.calls += calls
        self.tokens += tokens

    @classmethod
    def from_config(cls, cfg: Config, used_today: int = 0) -> Budget:
        """The limits of `cfg` (`anthropic.max_calls_per_run`, `…max_tokens_per_run`,
        `…max_tokens_per_day`)."""
        return cls(
            max_calls=cfg.int("anthropic.max_calls_per_run"),
            max_tokens_run=cfg.int("anthropic.max_tokens_per_run"),
            max_tokens_day=cfg.int("anthropic.max_tokens_per_day"),
            used_today=used_today,
        )

    def check(self, purpose: str, worst_case_tokens: int) -> None:
        """Raise BudgetExceeded unless one more call of at most `worst_case_tokens` tokens
        fits every limit, leaving the reservation intact. `purpose` ("distill", "screen")
        goes into the message."""
        held = f" ({self.reserved_calls} held for screener calls)" if self.reserved_calls else ""
        if self.calls + self.reserved_calls + 1 > self.max_calls:
            raise BudgetExceeded(
                f"budget reached: a {purpose} call would be call {self.calls + self.reserved_calls + 1} of "
                f"this run{held}, over anthropic.max_calls_per_run = {self.max_calls}",
                hint="raise anthropic.max_calls_per_run; material not consumed is read again next run",
                budget="anthropic.max_calls_per_run",
            )
        need = worst_case_tokens + self.reserved_tokens
        if self.tokens + need > self.max_tokens_run:
            raise BudgetExceeded(
                f"budget reached: this run used {self.tokens} tokens and the next {purpose} call may use up to "
                f"{worst_case_tokens}, over anthropic.max_tokens_per_run = {self.max_tokens_run}",
                hint="raise anthropic.max_tokens_per_run; material not consumed is read again next run",
                budget="anthropic.max_tokens_per_run",
            )
        if self.used_today + self.tokens + need > self.max_tokens_day:
            raise BudgetExceeded(
                f"budget reached: {self.used_today + self.tokens} tokens used today (UTC) and the next "
                f"{purpose} call may use up to {worst_case_tokens}, over anthropic.max_tokens_per_day = "
                f"{self.max_tokens_day}",
                hint="wait until tomorrow (UTC) or raise anthropic.max_tokens_per_day",
                budget="anthropic.max_tokens_per_day",
            )

    def record(self, call: Mapping[str, Any]) -> None:
        """Count one call that was made (whatever its outcome) and its tokens."""
        self.calls += 1
        self.tokens += call_tokens(call)
