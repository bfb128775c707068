"""`gitdream hooks install|uninstall|status`: the git hooks (see gitdream.trigger.hookscripts).

`enabled = false` does not stop these commands: they only touch the hooks directory, and a
disabled gitdream's hooks exit at once without starting Python.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, NoReturn

from gitdream.trigger import hookscripts, state
from gitdream.trigger.hookscripts import HOOK_NAMES, HooksResult, HooksStatus

__all__ = ["HOOK_NAMES", "install", "run_hook", "status", "uninstall"]


def install(
    repo: Any,
    hooks: tuple[str, ...] | list[str] = (),
    *,
    python: str | None = None,
    allow_outside: bool = False,
    cfg: Any = None,
    config_seen: float | None = None,
) -> HooksResult:
    """Install `hooks` (default: all) into `repo`'s hooks directory; see
    `hookscripts.install` for the rules and the errors raised.

    With `cfg` (the configuration, read at `config_seen`, seconds since the epoch) and
    gitdream enabled, an installed `pre-commit` hook gets the patterns it matches staged
    paths against in sh (`state.write_precommit_paths`), so the first commit after the
    install that stages no agent file starts no Python either."""
    result = hookscripts.install(
        repo, hooks=tuple(hooks) or HOOK_NAMES, python=python, allow_outside=allow_outside
    )
    installed = any(h.name == "pre-commit" and h.action in hookscripts.INSTALL_ACTIONS for h in result.hooks)
    if cfg is not None and installed and cfg.bool("enabled"):
        state.write_precommit_paths(repo.common_dir, repo.workdir, cfg, config_seen=config_seen)
    return result


def uninstall(
    repo: Any, hooks: tuple[str, ...] | list[str] = (), *, allow_outside: bool = False
) -> HooksResult:
    """Uninstall `hooks` (default: all), restoring what was there before."""
    return hookscripts.uninstall(repo, hooks=tuple(hooks) or HOOK_NAMES, allow_outside=allow_outside)


def status(repo: Any) -> HooksStatus:
    """The state of each hook."""
    return hookscripts.status(repo)


def run_hook(name: str, args: Sequence[str]) -> NoReturn:
    """`gitdream hook NAME [ARGS]...`: do what gitdream's installed hook `name` does, for a
    hook that is not gitdream's file — a tracked hooks folder, Husky's `.husky/<hook>`,
    lefthook's `lefthook.yml`. Replaces this process with `/bin/sh` running the same
    script `hooks install` writes (the interpreter baked in is this one), with git's
    arguments, standard input and environment; `_GITDREAM_ENTRY=1` tells it that it
    chains no previous hook. Its exit status is the hook's (pre-commit: 1 blocks the
    commit). Raises HookInstallError for an unknown hook name."""
    script = hookscripts.render(name).decode("utf-8", "surrogateescape")
    env = dict(os.environ, _GITDREAM_ENTRY="1")
    os.execve("/bin/sh", ["sh", "-c", script, name, *args], env)
