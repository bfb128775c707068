"""`gitdream trust`: let this repository's gitdream.toml set the user-only keys.

The keys that choose where data or credentials go or what runs (`engine`,
`anthropic.base_url`, `anthropic.api_key`) are ignored in a repository's gitdream.toml
(`gitdream.config`, `gitdream.trust`). This command records, outside the repository, that
the user trusts the values this repository's gitdream.toml sets for them now; `--revoke`
withdraws it, `--list` shows every repository trusted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gitdream import config, trust
from gitdream.git.repo import Repo


@dataclass
class TrustResult:
    """What `gitdream trust` did: `action` is "granted", "revoked", "not-trusted" (nothing
    to revoke), "nothing-to-trust" (gitdream.toml sets no user-only key) or "list"."""

    action: str
    repository: str | None = None
    workdir: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    grants: list[trust.Grant] = field(default_factory=list)
    store: str = ""

    @property
    def shown_settings(self) -> dict[str, Any]:
        """`settings` with secrets masked, as printed."""
        return masked(self.settings)

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {"action": self.action, "store": self.store}
        if self.action == "list":
            document["repositories"] = [_shown(g.to_json()) for g in self.grants]
        else:
            document.update(repository=self.repository, workdir=self.workdir, settings=masked(self.settings))
        return document


def masked(settings: dict[str, Any]) -> dict[str, Any]:
    """`settings` with the values of secret keys replaced by "(set)"."""
    return {k: "(set)" if config.KEY_BY_NAME[k].secret else v for k, v in settings.items()}


def _shown(grant: dict[str, Any]) -> dict[str, Any]:
    return {**grant, "settings": masked(grant["settings"])}


def run_trust(repo: Repo | None, *, revoke: bool = False, list_all: bool = False) -> TrustResult:
    """Grant (default), revoke or list trust; `repo` is needed unless `list_all`.

    Raises ConfigError when gitdream.toml cannot be read, holds a pattern RE2 rejects, or
    the trust file cannot be written."""
    store = str(trust.store_path())
    if list_all:
        return TrustResult("list", grants=trust.grants(), store=store)
    assert repo is not None
    key = trust.repository_key(repo.common_dir)
    workdir = str(repo.workdir)
    if revoke:
        previous = trust.granted(key)
        action = "revoked" if trust.revoke(key) else "not-trusted"
        return TrustResult(action, key, workdir, previous, store=store)
    path = repo.workdir / config.REPO_FILE
    linked = path.is_symlink()  # ignored by `config.load` too (`config.linked_repo_file`)
    values = config.read_toml(path, config.REPO_FILE) if path.is_file() and not linked else {}
    chosen = config.user_only_values(values)
    if not chosen:
        return TrustResult("nothing-to-trust", key, workdir, store=store)
    config.check_patterns(chosen)  # a `screen.allow` RE2 rejects would fail every dream after
    pinned = {name: trust.pin(value, config.KEY_BY_NAME[name].secret) for name, value in chosen.items()}
    trust.grant(key, workdir, pinned)
    return TrustResult("granted", key, workdir, chosen, store=store)
