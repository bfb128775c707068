"""Planning a model run inside its budgets, before the first call (DESIGN §9, issue #15).

A run's material is distilled in batches, each one call, and every unit a batch proposes
costs one screener call later. So before any batch is sent the planner asks: do this call,
**and the screener calls for the most units it may propose**, and the screener calls still
owed for units proposed earlier, all fit what is left of `anthropic.max_calls_per_run`,
`anthropic.max_tokens_per_run` and `anthropic.max_tokens_per_day`? The oldest material
that fits is taken; the rest is left for the next run (`rest()`, with `limit` naming the
budget or cap that left it) — so a run never fails on a budget it could plan for, every
run with material makes progress while one distill call and one screener call fit, and a
backlog converges over runs.

A batch in flight also holds one call for the retry its answer may need (a schema
violation is sent back once), when the calls left allow one besides its screener calls.

The units asked of a batch are capped (`units_per_batch`, and `units_per_run` over the
run); a batch whose cap must shrink because the budgets are short carries proportionally
less material (`material × cap / units_per_batch`), so the material per unit asked stays
the same and a small last batch does not squeeze hundreds of entries into one unit.

Token figures are estimates (`anthropic.estimate_tokens`); the worst case of a call is
its estimated input plus its `max_tokens`. Reservations for owed screener calls are held in
the `Budget` (`reserve`), so a retry of a distill call after a schema violation is made only
if it leaves them intact. Pure: no SDK, no request, no clock.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from gitdream.engines.budget import Budget
from gitdream.units import Entry

CALLS_KEY = "anthropic.max_calls_per_run"
UNITS_KEY = "max_units"


@dataclass(frozen=True)
class Costs:
    """Estimated tokens of a run's calls.

    `fixed`: what every distill request carries besides topics and material (system
    prompt, tools, index, framing); `topics`: the most the relevant topics of one batch
    may take; `output`: `max_tokens` of a distill call; `screen`: the worst case of one
    screener call (input for the longest unit plus its `max_tokens`); `material`: the
    material one full batch may carry (`anthropic.max_input_tokens` minus the rest).
    """

    fixed: int
    topics: int
    output: int
    screen: int
    material: int


@dataclass
class Batch:
    """Entries sent in one distill call, their estimated material tokens, and `cap`: the
    most units the model is asked for (and allowed) in its answer."""

    entries: list[Entry]
    tokens: int
    cap: int


@dataclass
class Planner:
    """Takes batches, oldest material first, while the budgets hold them (module doc).

    `entries` are `(entry, estimated tokens)` pairs in the order to take them (oldest
    first). After each distill call, `produced(n)` records the units its answer kept
    (they are owed a screener call each); `put_back(entries)` returns a batch's entries to
    the front (a split). `units` counts the units produced so far.
    """

    entries: Iterable[tuple[Entry, int]]
    costs: Costs
    budget: Budget
    units_per_batch: int
    units_per_run: int
    units: int = 0
    owed: int = 0
    limit: str = ""
    _queue: deque[tuple[Entry, int]] = field(init=False)
    _flight: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self._queue = deque(self.entries)
        self._hold()

    # --- reservations --------------------------------------------------------------------

    def _hold(self, extra_units: int = 0, retry: int = 0) -> None:
        """Reserve the screener calls owed, plus `extra_units` more and `retry` calls (a
        batch in flight)."""
        units = self.owed + extra_units
        self._flight = extra_units
        self.budget.reserve(units + retry, units * self.costs.screen)

    def retry(self) -> None:
        """The batch in flight makes its retry: release the call held for it."""
        self._hold(self._flight)

    def hold_owed(self, count: int) -> None:
        """`count` units from an earlier run wait for a screener call this run: hold their
        calls before any batch (they do not count against `units_per_run`)."""
        self.owed += count
        self._hold()

    def produced(self, count: int) -> None:
        """The last batch's answer kept `count` units: each is owed a screener call."""
        self.units += count
        self.owed += count
        self._hold()

    def put_back(self, entries: list[tuple[Entry, int]]) -> None:
        """Return entries (with their costs) to the front of the queue, in order."""
        self._queue.extendleft(reversed(entries))
        self._hold()

    def release(self) -> None:
        """Screening starts: the owed calls are made now, nothing stays reserved."""
        self.owed = 0
        self.budget.reserve(0, 0)

    # --- taking ------------------------------------------------------------------------------

    def _fit(self, cap: int, room: int) -> tuple[list[tuple[Entry, int]], int]:
        """The entries of a batch asked for `cap` units with `room` material tokens."""
        scaled = max(1, math.ceil(self.costs.material * cap / self.units_per_batch))
        limit = min(self.costs.material, scaled, room)
        taken: list[tuple[Entry, int]] = []
        used = 0
        for entry, cost in self._queue:
            if used + cost > limit:
                break
            taken.append((entry, cost))
            used += cost
        if not taken and self._queue and self._queue[0][1] <= min(room, self.costs.material):
            taken = [self._queue[0]]  # a batch always carries one entry when it fits at all
            used = taken[0][1]
        return taken, used

    def take(self, most: int | None = None) -> Batch | None:
        """The next batch, or None when no material is left or none fits (then `limit`
        names why). `most` caps its material tokens (the halves of a split)."""
        if not self._queue:
            return None
        self._hold()
        calls_left = self.budget.calls_left()
        units_left = self.units_per_run - self.units
        retry = 1 if calls_left >= 3 else 0
        cap = min(self.units_per_batch, units_left, calls_left - 1 - retry)
        if units_left <= 0:
            self.limit = UNITS_KEY
            return None
        if cap < 1:
            self.limit = CALLS_KEY
            return None
        fixed = self.costs.fixed + self.costs.topics + self.costs.output
        for size in range(cap, 0, -1):
            room = self.budget.tokens_left() - fixed - size * self.costs.screen
            if most is not None:
                room = min(room, most)
            taken, used = self._fit(size, room)
            if taken:
                for _ in taken:
                    self._queue.popleft()
                self._hold(size, retry)
                return Batch([entry for entry, _ in taken], used, size)
        self.limit = self.budget.binding_tokens()
        return None

    def smallest_batch(self) -> int:
        """Tokens of the smallest batch a run can make: one distill call with the first
        entry, and one screener call (0 when no material is left)."""
        if not self._queue:
            return 0
        c = self.costs
        return c.fixed + c.topics + self._queue[0][1] + c.output + c.screen

    def rest(self) -> list[Entry]:
        """Entries not taken (left for the next run)."""
        return [entry for entry, _ in self._queue]

    def preview(self) -> tuple[int, int]:
        """`(batches, entries left)` if every remaining batch proposed as many units as it
        may: the plan of the rest of the run, without changing it."""
        shadow_budget = self.budget.copy()
        shadow = Planner(
            list(self._queue), self.costs, shadow_budget, self.units_per_batch, self.units_per_run, self.units
        )
        shadow.owed = self.owed
        shadow._hold()
        batches = 0
        while (batch := shadow.take()) is not None:
            batches += 1
            shadow_budget.spend(1, self.costs.fixed + self.costs.topics + batch.tokens + self.costs.output)
            shadow.produced(batch.cap)
        return batches, len(shadow._queue)
