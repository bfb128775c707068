"""Engines turn a run's material into units. None of them writes files (DESIGN §9).

An engine implements `Engine.distill(DistillContext) -> DistillResult`; the pipeline then
verifies, screens and integrates the units. `get_engine(name, cfg)` imports the engine's
module lazily, so the anthropic SDK is imported only when that engine runs.

Optional: an engine may also implement `screen(units, policy) -> ScreenResult` (the
anthropic engine's independent screener call per unit); the deterministic scanner in
`gitdream.dream.screen` runs first for every engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any, Protocol

from gitdream.errors import ConfigError

if TYPE_CHECKING:
    from gitdream.agents import Agent
    from gitdream.config import Config
    from gitdream.units import Entry, Rejected, Unit


def _never() -> None:
    """The default `DistillContext.stop`: never asks to stop."""


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
    to stop, so Ctrl-C does not wait for the whole distillation."""

    agent: Agent
    entries: list[Entry]
    memory: MemoryView
    cfg: Config
    input_commit: str
    today: date
    stop: Callable[[], None] = _never


@dataclass
class DistillResult:
    """What an engine returns.

    `units`: proposed units. `skipped`: `(entry id, reason)` for entries that produced no
    unit (counted in the receipt by reason). `stats`: engine counters (e.g.
    `{"created": 3, "corroborated": 4}`). `calls`: one dict per model call (purpose,
    model, input/output/cache tokens, stop reason, latency seconds) — empty for offline.
    `failed_entries`: ids of entries whose batch failed; they are not consumed, so the
    watermark is not moved past them. `errors`: human-readable failures of batches.
    """

    units: list[Unit] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    stats: dict[str, int] = field(default_factory=dict)
    calls: list[dict[str, Any]] = field(default_factory=list)
    failed_entries: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@dataclass
class ScreenResult:
    """Units that passed a screen, and those rejected with reasons; model calls made."""

    kept: list[Unit] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)


class Engine(Protocol):
    """The engine protocol (see module docstring)."""

    name: str

    def distill(self, context: DistillContext) -> DistillResult: ...


ENGINES = ("offline", "anthropic")


def get_engine(name: str, cfg: Config) -> Engine:
    """Instantiate engine `name` ("offline" or "anthropic") with configuration `cfg`.

    Raises ConfigError for an unknown name, and whatever the engine raises when it cannot
    run (e.g. EngineError for a missing API key) before any work is done.
    """
    if name == "offline":
        from gitdream.engines.offline import OfflineEngine

        return OfflineEngine(cfg)
    if name == "anthropic":
        from gitdream.engines.anthropic import AnthropicEngine

        return AnthropicEngine(cfg)
    raise ConfigError(f"unknown engine {name!r}", hint="use --engine offline or --engine anthropic")
