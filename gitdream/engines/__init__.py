"""Engines turn a run's material into units. None of them writes files (DESIGN §9).

Each implements the `Engine` protocol of `gitdream.contract` (where its types live).
`get_engine(name, cfg, used_today=…)` imports the engine's module lazily, so the
anthropic SDK is imported only when that engine makes a request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitdream.contract import Engine, Progress, UsedToday, no_progress, nothing_used
from gitdream.engines.offline import OfflineEngine
from gitdream.errors import ConfigError

if TYPE_CHECKING:
    from gitdream.config import Config

ENGINES = ("offline", "anthropic")


def get_engine(
    name: str, cfg: Config, *, used_today: UsedToday = nothing_used, progress: Progress = no_progress
) -> Engine:
    """Build engine `name` ("offline" or "anthropic") with configuration `cfg` (its
    per-run budgets), `used_today` (tokens spent today, asked only by an engine with a
    daily budget; see `gitdream.contract.UsedToday`) and `progress` (where an engine that
    makes model calls reports them; `gitdream.contract.Progress`).

    Raises ConfigError for an unknown name. Building does no work and needs no key:
    `Engine.check()` says whether the engine can run.
    """
    if name == "offline":
        return OfflineEngine(cfg)
    if name == "anthropic":
        from gitdream.engines.anthropic import AnthropicEngine  # idle path: loaded only when chosen

        return AnthropicEngine(cfg, used_today=used_today, progress=progress)
    raise ConfigError(f"unknown engine {name!r}", hint="use --engine offline or --engine anthropic")
