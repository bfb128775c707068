"""`gitdream config show`: the effective configuration and where each value came from."""

from __future__ import annotations

from gitdream import config


def show(cfg: config.Config) -> dict[str, object]:
    """`{"files": {"user", "repository"}, "keys": {name: {"value", "source"}}}` with
    secrets masked. This is also the `--json` document."""
    keys = {}
    for key in config.KEYS:
        keys[key.name] = {
            "value": config.display_value(key, cfg.value(key.name)),
            "source": cfg.source(key.name),
        }
    return {"files": dict(cfg.files), "keys": keys}
