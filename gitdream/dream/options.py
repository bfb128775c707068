"""How a run is asked for (`RunOptions`) and who hears of its progress (`Reporter`).

Kept apart from `gitdream.dream.pipeline` so that the idle path (`run --auto` with a
closed gate) can build its options without importing the pipeline and what it imports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(eq=False)  # eq=False: never compared; less to build at import
class RunOptions:
    """How to run: `trigger` (manual, post-merge, schedule), `engine` (None: config),
    `dry_run`, review `branch`, `since` (revision) or `full`, `estimate` (count model
    calls and tokens, call nothing)."""

    trigger: str = "manual"
    engine: str | None = None
    dry_run: bool = False
    branch: str | None = None
    since: str | None = None
    full: bool = False
    estimate: bool = False


class Reporter(Protocol):
    """Receives progress (the CLI's progress printer is one; it renders it on stderr):
    `phase` marks the start of a phase; `progress` reports work inside one (an engine's
    batches and screener calls: `gitdream.contract.Progress`), each report replacing the
    previous one of the same phase."""

    def phase(self, agent: str, phase: str, detail: str = "") -> None: ...

    def progress(self, agent: str, phase: str, detail: str) -> None: ...


class Silent:
    """The Reporter that ignores progress."""

    def phase(self, agent: str, phase: str, detail: str = "") -> None:
        pass

    def progress(self, agent: str, phase: str, detail: str) -> None:
        pass
