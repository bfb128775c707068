"""The hooks log: one line per decision a git hook made about dreaming.

`<user log dir>/hooks.log` (`$GITDREAM_HOME/logs/hooks.log` when set), shared by every
repository of the user. Each decision is one line of four tab-separated fields:

    <time, ISO 8601 UTC>  <hook>  <worktree root>  <decision>

The hook's `sh` writes the decisions it takes without Python (the time gate is closed by
the stamp; gitdream is not installed); `gitdream run --auto` started by a hook writes the
rest (which gate was closed and why, or what each agent's dream did). Anything else in
the file (warnings and errors of detached runs, lines of older versions) is not a
decision and is skipped by `last`. `gitdream status` prints the path and the last
decision for its repository.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitdream import clock, paths

LOG_NAME = "hooks.log"
HOOK_ENV = "_GITDREAM_HOOK"
"""Set by gitdream's hook scripts for the `gitdream run` they start: the hook's name."""
TAIL_BYTES = 256 * 1024


@dataclass(frozen=True)
class Decision:
    """One line of the hooks log: `time` (ISO 8601 UTC), `hook`, `workdir`, `message`."""

    time: str
    hook: str
    workdir: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"time": self.time, "hook": self.hook, "message": self.message}


def log_path() -> Path:
    """Where the hooks log is (may not exist yet)."""
    return paths.user_log_dir() / LOG_NAME


def _clean(text: str) -> str:
    return " ".join(text.replace("\t", " ").split())


def record(workdir: Path, hook: str, message: str) -> None:
    """Append one decision for the worktree `workdir`. Never raises for an unwritable log:
    a hook must not fail because of it."""
    line = "\t".join((clock.iso(clock.now()), _clean(hook), os.path.realpath(workdir), _clean(message)))
    path = log_path()
    try:
        paths.ensure_dir(path.parent)
        with open(path, "a", encoding="utf-8", errors="replace") as handle:
            handle.write(line + "\n")
    except OSError:
        return


def last(workdir: Path) -> Decision | None:
    """The newest decision for the worktree `workdir` among the log's last TAIL_BYTES, or
    None (no log, or no decision for it there)."""
    here = os.path.realpath(workdir)
    try:
        with open(log_path(), "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - TAIL_BYTES))
            data = handle.read()
    except OSError:
        return None
    for raw in reversed(data.decode("utf-8", "replace").splitlines()):
        fields = raw.split("\t")
        if len(fields) == 4 and fields[2] == here and fields[0][:2].isdigit():
            return Decision(*fields)
    return None


def describe(result: Any) -> str:
    """The decision line for a `gitdream.commands.run.RunResult` of `run --auto`."""
    gate = result.gate or {}
    if result.outcomes:
        parts = []
        for outcome in result.outcomes:
            commits = outcome.receipt.commits
            made = ", ".join(f"{kind} {oid[:7]}" for kind, oid in commits.items() if oid)
            run_id = outcome.receipt.run
            parts.append(f"{outcome.agent} {outcome.status} (run {run_id}{'; ' + made if made else ''})")
        return "dreamed: " + "; ".join(parts)
    if gate and not gate.get("open"):
        return f"gate '{gate.get('gate')}' closed: {gate.get('reason')}"
    if result.disabled:
        return f"disabled ({result.disabled})"
    if result.warnings:
        return "no dream: " + "; ".join(result.warnings)
    return "no dream: no agent to dream for"
