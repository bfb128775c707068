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
"""How much of the log's end `last` reads at a time, going back a chunk at a time."""
SCAN_BYTES = 16 * 1024 * 1024
"""How far back from the end `last` looks for a decision of the worktree before giving up:
a shared log where other repositories (or older versions' long lines) wrote since."""
MESSAGE_CHARS = 4000
"""The most characters of one decision: `record` cuts a longer message (and `last` one
an older version wrote), so a decision line stays readable whatever the number of agents
(the gate reason is bounded already, `gates.summarize`; this is the backstop)."""
DREAMS_SHOWN = 5
"""How many agents' dreams a "dreamed:" decision names; the rest are counted by status."""
CUT = " … (cut; `gitdream run --auto --verbose --json` gives every agent)"


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


def _bounded(message: str) -> str:
    """`message` cut to MESSAGE_CHARS, saying so."""
    if len(message) <= MESSAGE_CHARS:
        return message
    return message[: MESSAGE_CHARS - len(CUT)] + CUT


def record(workdir: Path, hook: str, message: str) -> None:
    """Append one decision for the worktree `workdir`. Never raises for an unwritable log:
    a hook must not fail because of it."""
    line = "\t".join(
        (clock.iso(clock.now()), _clean(hook), os.path.realpath(workdir), _bounded(_clean(message)))
    )
    path = log_path()
    try:
        paths.ensure_dir(path.parent)
        with open(path, "a", encoding="utf-8", errors="replace") as handle:
            handle.write(line + "\n")
    except OSError:
        return


def last(workdir: Path) -> Decision | None:
    """The newest decision for the worktree `workdir`, or None (no log, or no decision for
    it in the log's last SCAN_BYTES). Reads back from the end TAIL_BYTES at a time, so a
    line longer than that (an older version's, or another repository's) neither hides the
    decisions before it nor is read whole into memory more than once; a long message is
    cut to MESSAGE_CHARS."""
    here = os.path.realpath(workdir).encode("utf-8", "surrogateescape")
    try:
        with open(log_path(), "rb") as handle:
            size = end = handle.seek(0, os.SEEK_END)
            carry = b""  # the rest of a line that starts in an earlier chunk (its head only)
            while end > 0 and size - end < SCAN_BYTES:
                start = max(0, end - TAIL_BYTES)
                handle.seek(start)
                lines = (handle.read(end - start) + carry).split(b"\n")
                end = start
                # Only a line's start is needed: its fields, and a message cut anyway.
                carry = lines.pop(0)[:TAIL_BYTES] if start > 0 else b""
                found = _newest(reversed(lines), here)
                if found is not None:
                    return found
    except OSError:
        return None
    return None


def _newest(lines: Any, here: bytes) -> Decision | None:
    """The first line of `lines` (bytes, newest first) that is a decision for `here`."""
    for raw in lines:
        fields = raw.split(b"\t", 3)
        if len(fields) == 4 and fields[2] == here and fields[0][:2].isdigit() and b"\t" not in fields[3]:
            decoded = [field.decode("utf-8", "replace") for field in fields]
            return Decision(decoded[0], decoded[1], decoded[2], _bounded(decoded[3].rstrip("\r")))
    return None


def describe(result: Any) -> str:
    """The decision line for a `gitdream.commands.run.RunResult` of `run --auto`."""
    gate = result.gate or {}
    if result.outcomes:
        parts = []
        for outcome in result.outcomes[:DREAMS_SHOWN]:
            commits = outcome.receipt.commits
            made = ", ".join(f"{kind} {oid[:7]}" for kind, oid in commits.items() if oid)
            run_id = outcome.receipt.run
            parts.append(f"{outcome.agent} {outcome.status} (run {run_id}{'; ' + made if made else ''})")
        rest = result.outcomes[DREAMS_SHOWN:]
        if rest:
            counts: dict[str, int] = {}
            for outcome in rest:
                counts[outcome.status] = counts.get(outcome.status, 0) + 1
            told = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
            noun = "agent" if len(rest) == 1 else "agents"
            parts.append(f"and {len(rest)} more {noun} ({told}; `gitdream log` lists each run)")
        return "dreamed: " + "; ".join(parts)
    if gate and not gate.get("open"):
        return f"gate '{gate.get('gate')}' closed: {gate.get('reason')}"
    if result.disabled:
        return f"disabled ({result.disabled})"
    if result.warnings:
        return "no dream: " + "; ".join(result.warnings)
    return "no dream: no agent to dream for"
