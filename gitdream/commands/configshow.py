"""`gitdream config show`: the effective configuration and where each value came from."""

from __future__ import annotations

from gitdream import config


def show(cfg: config.Config) -> dict[str, object]:
    """`{"files": {"user", "repository"}, "keys": {name: {"value", "source"}}, "ignored":
    {name: value}}` with secrets masked; `ignored` holds the user-only keys gitdream.toml
    set and gitdream did not honour (see `gitdream trust`). This is also the `--json`
    document."""
    keys = {}
    for key in config.KEYS:
        keys[key.name] = {
            "value": config.display_value(key, cfg.value(key.name)),
            "source": cfg.source(key.name),
        }
    ignored = {
        name: config.display_value(config.KEY_BY_NAME[name], value) for name, value in cfg.ignored.items()
    }
    return {"files": dict(cfg.files), "keys": keys, "ignored": ignored}
