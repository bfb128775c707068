"""`gitdream hooks install|uninstall|status`: the git hooks (see gitdream.trigger.hookscripts).

`enabled = false` does not stop these commands: they only touch the hooks directory, and a
disabled gitdream's hooks exit at once without starting Python.
"""

from __future__ import annotations

from typing import Any

from gitdream.trigger import hookscripts
from gitdream.trigger.hookscripts import HOOK_NAMES, HooksResult, HooksStatus

__all__ = ["HOOK_NAMES", "install", "status", "uninstall"]


def install(
    repo: Any,
    hooks: tuple[str, ...] | list[str] = (),
    *,
    python: str | None = None,
    allow_outside: bool = False,
) -> HooksResult:
    """Install `hooks` (default: all) into `repo`'s hooks directory; see
    `hookscripts.install` for the rules and the errors raised."""
    return hookscripts.install(
        repo, hooks=tuple(hooks) or HOOK_NAMES, python=python, allow_outside=allow_outside
    )


def uninstall(
    repo: Any, hooks: tuple[str, ...] | list[str] = (), *, allow_outside: bool = False
) -> HooksResult:
    """Uninstall `hooks` (default: all), restoring what was there before."""
    return hookscripts.uninstall(repo, hooks=tuple(hooks) or HOOK_NAMES, allow_outside=allow_outside)


def status(repo: Any) -> HooksStatus:
    """The state of each hook."""
    return hookscripts.status(repo)
