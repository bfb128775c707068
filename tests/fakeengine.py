"""A fake engine: the `gitdream.contract.Engine` protocol in a few lines, for pipeline tests.

`FakeEngine(propose)` distills by calling `propose(context)` for its units (a function of
the material, so tests can cite real entry ids); `rejects` are unit titles its screen
rejects; every `distill` and `screen` records one call with `tokens` input tokens, as a
model engine would, so the receipt's calls and token totals can be checked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gitdream.contract import DistillContext, DistillResult, ScreenResult
from gitdream.units import Rejected, Unit


class FakeEngine:
    name = "fake"

    def __init__(
        self,
        propose: Callable[[DistillContext], list[Unit]],
        *,
        rejects: Sequence[str] = (),
        tokens: int = 0,
    ) -> None:
        self.propose = propose
        self.rejects = set(rejects)
        self.tokens = tokens
        self.calls: list[dict[str, Any]] = []
        self.closed = False

    def _call(self, purpose: str) -> dict[str, Any]:
        call = {"purpose": purpose, "model": "fake", "input_tokens": self.tokens, "output_tokens": 1}
        self.calls.append(call)
        return call

    def check(self) -> None:
        pass

    def estimate(self, context: DistillContext) -> dict[str, Any]:
        return {"engine": self.name, "calls": 1, "input_tokens": self.tokens, "entries": len(context.entries)}

    def distill(self, context: DistillContext) -> DistillResult:
        return DistillResult(units=self.propose(context), calls=[self._call("distill")])

    def screen(self, units: Sequence[Unit]) -> ScreenResult:
        call = self._call("screen")
        kept = [u for u in units if u.title not in self.rejects]
        rejected = [Rejected(u, "screen", "fake screener: no") for u in units if u.title in self.rejects]
        return ScreenResult(kept, rejected, [call])

    def close(self) -> None:
        self.closed = True
