"""The engine contract: what a dream gives an engine, and what it gets back (DESIGN §9).

An engine turns a run's material into units and may screen them a second time; it never
writes files. The `run` command builds one engine per agent run (`gitdream.engines.
get_engine`, with its budgets) and hands it to the pipeline, which uses only this
protocol: it imports nothing from `gitdream.engines` and asks an engine nothing that is
not declared here. On the ground floor, so that engines and the pipeline both stand on it
without pointing at each other.

    estimate(context)  what distilling would cost; no request, no key needed (--estimate)
    distill(context)   material → proposed units (the pipeline verifies them next)
    screen(units)      an engine's own screen after the deterministic scanner
    calls              every model call made so far, failed ones included (the receipt)
    close()            release what the engine holds (an HTTP client)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from gitdream.agents import Agent
    from gitdream.config import Config
    from gitdream.units import Entry, Rejected, TopicProposal, Unit


def _never() -> None:
    """The default `DistillContext.stop`: never asks to stop."""


def nothing_used() -> int:
    """The default `used_today` of an engine: no tokens spent today."""
    return 0


Progress = Callable[[str, str], None]
"""Where an engine reports progress inside a phase: `progress(phase, detail)`, e.g.
`("distill", "batch 2/5 · 18 units · 61k tokens · 14 s · 33 calls left")`. Given to an
engine when it is built; the CLI shows it on a terminal only (never under hooks,
`--quiet` or `--json`)."""


def no_progress(phase: str, detail: str) -> None:
    """The default `Progress` of an engine: reported to no one."""


UsedToday = Callable[[], int]
"""Tokens this repository already spent today (UTC day, summed from receipts): given to an
engine when it is built and asked only by an engine with a daily budget, when it first
needs the figure (so a run without model calls never reads the receipts)."""


@dataclass(frozen=True)
class MemoryView:
    """The agent's memory and definitions at the input commit.

    `files` maps repository-relative paths to text: `MEMORY.md`, the topic files and
    archive files under the memory directory (raw logs excluded), and the definition
    files that exist. Absent files are simply not in the map.
    """

    files: dict[str, str]


@dataclass(frozen=True)
class DistillContext:
    """Everything an engine may look at: the agent, this run's entries (material), the
    memory at the input commit, the configuration, the input commit id (hex) and the
    run's date (`today`, from `clock.now()`). An engine calls `stop()` between units of
    work (entries, model calls): it raises Interrupted when SIGINT/SIGTERM asked the run
    to stop, so Ctrl-C does not wait for the whole distillation. `waiting` counts units
    proposed by an earlier run that its screen could not judge: this run screens them
    too, so an engine that plans screener calls holds one for each before any batch (their
    entries are not in `entries`). `outline` holds every entry read from the files of this
    run's material — `entries` and the entries around them consolidated earlier or left
    for later — for an engine to see how a file is laid out (which headings repeat), not
    to distill (issue #14: a session-template slot names no topic, whichever run reads
    the entries under it)."""

    agent: Agent
    entries: list[Entry]
    memory: MemoryView
    cfg: Config
    input_commit: str
    today: date
    stop: Callable[[], None] = _never
    waiting: int = 0
    outline: Sequence[Entry] = ()


@dataclass
class DistillResult:
    """What `Engine.distill` returns.

    `units`: proposed units. `skipped`: `(entry id, reason)` for entries that produced no
    unit (counted in the receipt by reason). `stats`: engine counters (e.g.
    `{"created": 3, "corroborated": 4}`). `calls`: one dict per model call of this
    distillation (purpose, model, input/output/cache tokens, stop reason, latency
    seconds) — empty for offline. `failed_entries`: ids of entries whose batch failed;
    they are not consumed, so the watermark is not moved past them. `errors`:
    human-readable failures of batches; any error makes the run `partial` (the back-off
    counts it). `deferred`: `(entry id, reason)` for entries this run planned to leave
    for the next one — what its budgets or unit caps could not hold — not consumed either,
    and not a failure (the summary says "N entries left for the next run"). `topics`: the
    engine's name and description for topics its units create (or a better description
    of an existing one), which integration uses instead of deriving them from the facts;
    None for an engine that names no topics (then a topic's description says what it
    holds now, refreshed as its facts change). `slots`: the inline labels of the material
    read that are slots of a template (case-folded: "files and code sections", "pending
    tasks" of a session's recap), when the engine knows them; a fact opening with one says
    which part of a recap or a routine it fills, so it describes only a topic that holds
    nothing else.
    """

    units: list[Unit] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    calls: list[dict[str, Any]] = field(default_factory=list)
    failed_entries: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    deferred: list[tuple[str, str]] = field(default_factory=list)
    topics: list[TopicProposal] | None = None
    slots: frozenset[str] = frozenset()


@dataclass
class ScreenResult:
    """Units that passed a screen (`kept`), those rejected on the merits with reasons
    (`rejected`: consumed, listed in the receipt), and those the screen could not judge
    (`unjudged`: its call failed or was not made) — never written, and their material
    stays pending so the next run judges it; `errors` says why (any error makes the run
    `partial`). `calls`: model calls made."""

    kept: list[Unit] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    unjudged: list[Unit] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class Engine(Protocol):
    """An engine, as the pipeline uses it (see the module docstring).

    Built by `gitdream.engines.get_engine(name, cfg, used_today=…, progress=…)`: the
    per-run budgets come from `cfg`, the daily one from `used_today`; an engine that
    takes time inside a phase reports to `progress`. Building an engine does no work and
    makes no request.
    """

    name: str
    """The engine's name, as in the `engine` config key (receipts, `Gitdream-Engine`)."""

    @property
    def calls(self) -> list[dict[str, Any]]:
        """Every model call this engine made (distill and screen), failed ones included:
        read for the receipt even when a method raised, so tokens spent before a failure
        still count toward the daily budget. Empty for an engine that calls no model."""
        ...

    def check(self) -> None:
        """Raise EngineError when the engine cannot run at all (no API key), before any
        work; an estimate needs no such check."""
        ...

    def estimate(self, context: DistillContext) -> dict[str, Any]:
        """What `distill(context)` would cost (`engine`, `calls`, `input_tokens`, …: the
        `estimates` of `run --estimate --json`), without a request or a key."""
        ...

    def distill(self, context: DistillContext) -> DistillResult:
        """Turn `context.entries` into units. Raises EngineError (a budget reached, an API
        failure): the distill phase fails."""
        ...

    def screen(self, units: Sequence[Unit]) -> ScreenResult:
        """Screen units the deterministic scanner kept; fail closed (a unit the screener is
        unsure of is rejected; one it could not be asked about is `unjudged`: not written,
        its material pending). An engine without a screener of its own keeps every unit."""
        ...

    def close(self) -> None:
        """Release what the engine holds; it is not used afterwards."""
        ...
