"""Which repositories the user trusts to choose where data goes and what runs.

Some settings decide where the user's data and credentials are sent or what program
runs (`engine`, `anthropic.base_url`, `anthropic.api_key`: the keys `Key.user_only`
marks). A repository's `gitdream.toml` is written by whoever can push to it, so — as git
never lets a cloned repository choose `core.fsmonitor` or `core.hooksPath` — gitdream
honours those keys only from the user config, the environment and flags. The user can
trust one repository's values explicitly (`gitdream trust`): the grant is recorded
outside every repository, in `trusted.json` beside the user config, keyed by the
repository's git common dir, and pinned to the values granted — a later commit that
changes one of them is ignored again until the user trusts the new value (as direnv's
`allow` pins a file's content).

The file is JSON: `{"version": 1, "repositories": {"<common dir>": {"workdir", "granted",
"settings": {key: value}}}}`. Nothing here runs at import time; reading a missing or
unreadable file grants nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitdream import clock, paths
from gitdream.errors import ConfigError

FILE_NAME = "trusted.json"
VERSION = 1


@dataclass(frozen=True)
class Grant:
    """One trusted repository: its key (git common dir), working tree when granted, the
    time of the grant (ISO 8601 UTC) and the settings `{key: value}` it may set."""

    key: str
    workdir: str
    granted: str
    settings: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "repository": self.key,
            "workdir": self.workdir,
            "granted": self.granted,
            "settings": self.settings,
        }


def store_path() -> Path:
    """`trusted.json` in the folder of the user config file (`$GITDREAM_HOME` in tests)."""
    return paths.user_config_file().parent / FILE_NAME


def _read() -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(store_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    repositories = data.get("repositories") if isinstance(data, dict) else None
    if not isinstance(repositories, dict):
        return {}
    return {
        k: v for k, v in repositories.items() if isinstance(v, dict) and isinstance(v.get("settings"), dict)
    }


def _write(repositories: dict[str, dict[str, Any]]) -> None:
    path = store_path()
    try:
        paths.ensure_dir(path.parent)
        body = json.dumps({"version": VERSION, "repositories": repositories}, indent=1, sort_keys=True)
        paths.atomic_write(path, (body + "\n").encode("utf-8"), mode=0o600)
    except OSError as exc:
        raise ConfigError(
            f"cannot record the trust in {path}: {exc.strerror}",
            hint=f"check that {path.parent} is writable",
        ) from None


def pin(value: Any, secret: bool) -> Any:
    """What a grant records for `value`: the value itself, or for a secret (an API key)
    only its SHA-256, so trusted.json never holds a credential."""
    if not secret:
        return value

    return "sha256:" + hashlib.sha256(str(value).encode("utf-8")).hexdigest()


def repository_key(common_dir: Path | str) -> str:
    """The key of a repository: its git common dir, resolved (shared by its worktrees)."""
    return os.path.realpath(common_dir)


def granted(key: str) -> dict[str, Any]:
    """The settings the user trusted for repository `key` (empty when none)."""
    entry = _read().get(key)
    return dict(entry["settings"]) if entry else {}


def grant(key: str, workdir: Path | str, settings: dict[str, Any]) -> Grant:
    """Trust repository `key` to set `settings` (its gitdream.toml's user-only values as
    they are now), replacing an earlier grant. Raises ConfigError when the file cannot be
    written."""
    repositories = _read()
    when = clock.iso(clock.now())
    repositories[key] = {"workdir": str(workdir), "granted": when, "settings": dict(settings)}
    _write(repositories)
    return Grant(key, str(workdir), when, dict(settings))


def revoke(key: str) -> bool:
    """Forget the trust of repository `key`; True when there was one."""
    repositories = _read()
    if key not in repositories:
        return False
    del repositories[key]
    _write(repositories)
    return True


def grants() -> list[Grant]:
    """Every trusted repository, sorted by key."""
    return [
        Grant(key, str(v.get("workdir", "")), str(v.get("granted", "")), dict(v["settings"]))
        for key, v in sorted(_read().items())
    ]
