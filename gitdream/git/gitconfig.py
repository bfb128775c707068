"""git's configuration as git itself reads it, for identity and signing.

libgit2 reads the repository's, the global (`~/.gitconfig`, XDG) and the system file, but
not what the git command also honours: `GIT_CONFIG_GLOBAL`/`GIT_CONFIG_SYSTEM`,
`GIT_CONFIG_COUNT` with `GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`, `GIT_CONFIG_PARAMETERS`
(what `git -c key=value` passes to the processes it starts, hooks included), and every
`include`/`includeIf` condition git knows. Reading signing or identity through libgit2
alone made dream commits unsigned and anonymous where git signs and names the user
(issue 16). So these settings are read by asking `git config --list` once — the same
files, variables, includes and precedence as the `git commit` the user would run — with
the command-line variables kept (the one git call that does: they belong to this
repository's invocation, see `gitcmd.run`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gitdream.errors import ConfigError
from gitdream.git.gitcmd import GitCommandError

if TYPE_CHECKING:
    from gitdream.git.repo import Repo

_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0", ""})


@dataclass
class GitConfig:
    """`{name: [values, in the order git read them]}`; names as git prints them (section
    and key lower-cased, subsection as written). A key written without `=` has the value
    None (git: boolean true)."""

    values: dict[str, list[str | None]] = field(default_factory=dict)

    def get(self, name: str) -> str | None:
        """The value git uses for a single-valued key: the last one read, or None."""
        found = self.values.get(_canonical(name))
        return found[-1] if found else None

    def has(self, name: str) -> bool:
        return _canonical(name) in self.values

    def get_bool(self, name: str, default: bool = False) -> bool:
        """A boolean as git reads it (true/yes/on/1 or no value; false/no/off/0 or
        empty). Raises ConfigError for anything else, as git refuses it."""
        if not self.has(name):
            return default
        value = self.get(name)
        if value is None:
            return True
        lowered = value.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise ConfigError(
            f"git config {name} has the value {value!r}, which is not a boolean",
            hint=f"fix it with `git config {name} true` or `false` (see `git config --show-origin {name}`)",
        )


def _canonical(name: str) -> str:
    section, _, rest = name.partition(".")
    subsection, dot, key = rest.rpartition(".")
    return f"{section.lower()}.{subsection}.{key.lower()}" if dot else f"{section.lower()}.{rest.lower()}"


def parse(listing: bytes) -> GitConfig:
    """Parse `git config --list -z`: records separated by NUL, each `name\\nvalue` (or
    `name` alone for a key without `=`)."""
    config = GitConfig()
    for record in listing.split(b"\0"):
        if not record:
            continue
        name, newline, value = record.partition(b"\n")
        text = os.fsdecode(value) if newline else None
        config.values.setdefault(os.fsdecode(name), []).append(text)
    return config


def read(repo: Repo) -> GitConfig:
    """This repository's configuration as `git config --list` sees it (see the module
    docstring). Raises ConfigError with git's message when git cannot read it (a broken
    config file)."""
    try:
        proc = repo.git("config", "--list", "--includes", "-z", config_env=True)
    except GitCommandError as exc:
        detail = exc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ConfigError(
            "git cannot read its configuration: " + (detail[0] if detail else "git config failed"),
            hint="fix the file git names (try `git config --list --show-origin`)",
        ) from None
    return parse(proc.stdout)
