"""`gitdream config show`: the effective configuration and where each value came from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gitdream import config, paths


@dataclass(frozen=True)
class Shown:
    """One key as `config show` shows it: name, value (secrets masked) and its source."""

    name: str
    value: Any
    source: str


@dataclass
class ConfigShowResult:
    """Every key (in `config.KEYS` order), the configuration files that were read
    (`files`: `{"user": path | None, "repository": path | None}`), the user-only keys
    gitdream.toml set that were `ignored`, and `user_file`: where the user config was
    looked for (whether or not it exists)."""

    keys: list[Shown]
    files: dict[str, str | None]
    ignored: dict[str, Any]
    user_file: str = ""

    def to_json(self) -> dict[str, object]:
        """`{"files": {"user", "repository"}, "user_file": path, "keys": {name: {"value",
        "source"}}, "ignored": {name: value}}`."""
        return {
            "files": dict(self.files),
            "user_file": self.user_file,
            "keys": {k.name: {"value": k.value, "source": k.source} for k in self.keys},
            "ignored": dict(self.ignored),
        }


def show(cfg: config.Config) -> ConfigShowResult:
    """The effective configuration `cfg`, secrets masked; `ignored` holds the user-only
    keys gitdream.toml set and gitdream did not honour (see `gitdream trust`)."""
    keys = [
        Shown(key.name, config.display_value(key, cfg.value(key.name)), cfg.source(key.name))
        for key in config.KEYS
    ]
    ignored = {
        name: config.display_value(config.KEY_BY_NAME[name], value) for name, value in cfg.ignored.items()
    }
    return ConfigShowResult(keys, dict(cfg.files), ignored, str(paths.user_config_file()))
