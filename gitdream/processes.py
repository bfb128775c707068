"""Is a process still running? (pids are reused, so a pid alone proves nothing)

Used for the files a gitdream process leaves while it writes — the dream lock's holder,
an `index.lock` gitdream holds, the commit journal, temporary files — to tell a live
writer from one that was killed.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path


def process_start(pid: int) -> str | None:
    """An opaque start-time token for process `pid`, or None when it does not exist.

    Linux: field 22 of /proc/<pid>/stat (clock ticks since boot). Elsewhere:
    `ps -o lstart= -p PID`.
    """
    if pid <= 0:
        return None
    if sys.platform.startswith("linux"):
        try:
            text = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return None
        # The command name (field 2) may contain spaces and parentheses: split after it.
        rest = text.rsplit(")", 1)[-1].split()
        return rest[19] if len(rest) > 19 else None
    try:
        out = subprocess.run(
            ["ps", "-o", "lstart=", "-p", str(pid)], capture_output=True, text=True, check=False
        )
    except OSError:  # pragma: no cover - ps is on every POSIX system
        return None
    value = out.stdout.strip()
    return value or None


def identity() -> dict[str, object]:
    """`{"pid", "pid_start", "host"}` of this process, as recorded in the files it leaves."""
    return {"pid": os.getpid(), "pid_start": process_start(os.getpid()), "host": socket.gethostname()}


def gone(record: dict[str, object]) -> bool:
    """True when the process a record of `identity()` names is provably not running: it
    ran on this host and no process has that pid with that start time. A record from
    another host, or without a pid, is never gone (it cannot be checked from here)."""
    pid = record.get("pid")
    if record.get("host") != socket.gethostname() or not isinstance(pid, int):
        return False
    actual = process_start(pid)
    return actual is None or (record.get("pid_start") is not None and actual != record.get("pid_start"))


def is_me(record: dict[str, object]) -> bool:
    """True when the record names this very process."""
    return record.get("pid") == os.getpid() and record.get("host") == socket.gethostname()
