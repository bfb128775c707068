"""`gitdream config show`: the effective configuration and where each value came from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gitdream import config


@dataclass(frozen=True)
class Shown:
    """One key as `config show` shows it: name, value (secrets masked) and its source."""

    name: str
    value: Any
    source: str


@dataclass
class ConfigShowResult:
    """Every key (in `config.KEYS` order) and the configuration files that were read
    (`files`: `{"user": path | None, "repository": path | None}`)."""

    keys: list[Shown]
    files: dict[str, str | None]

    def to_json(self) -> dict[str, object]:
        """`{"files": {"user", "repository"}, "keys": {name: {"value", "source"}}}`."""
        return {
            "files": dict(self.files),
            "keys": {k.name: {"value": k.value, "source": k.source} for k in self.keys},
        }


def show(cfg: config.Config) -> ConfigShowResult:
    """The effective configuration `cfg`, secrets masked."""
    keys = [
        Shown(key.name, config.display_value(key, cfg.value(key.name)), cfg.source(key.name))
        for key in config.KEYS
    ]
    return ConfigShowResult(keys, dict(cfg.files))
