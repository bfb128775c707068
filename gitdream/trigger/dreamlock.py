"""The repository's dream lock: one dream at a time per repository (DESIGN §5).

`<git-common-dir>/gitdream/lock` is created exclusively (O_CREAT|O_EXCL) and holds JSON:
the holder's pid, that process's start time (pids are reused, so a pid alone proves
nothing), host, the run's start time and run id. A lock is **stale** when

- it was taken on this host and no live process has that pid *and* that start time, or
- it is older than `lock_ttl_minutes` (longer than the longest allowed run), on any host;

a stale lock is broken with a warning. Breaking is itself serialised by a short-lived
`lock.break` file, so two processes cannot both break a lock and then both take it. The
lock is released on every exit path (`release()` removes it only if it is still ours).
"""

from __future__ import annotations

import json
import os
import re
import socket
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from gitdream import clock, paths
from gitdream.errors import LockHeld
from gitdream.processes import process_start

BREAK_TTL_SECONDS = 60


@dataclass
class LockInfo:
    """The holder recorded in a lock file."""

    pid: int
    pid_start: str | None
    host: str
    started: str
    run: str

    def describe(self) -> str:
        return f"another dream (run {self.run}, pid {self.pid} on {self.host}) has been running since {self.started}"


def lock_path(common_dir: Path) -> Path:
    return paths.state_dir(common_dir) / "lock"


def read(common_dir: Path) -> LockInfo | None:
    """The current holder, or None when unlocked (an unreadable file reads as a holder
    with pid 0, which is stale)."""
    path = lock_path(common_dir)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return LockInfo(
            int(data["pid"]), data.get("pid_start"), str(data["host"]), str(data["started"]), str(data["run"])
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        return LockInfo(0, None, socket.gethostname(), "an unknown time", "unknown")


def stale_reason(info: LockInfo, ttl_minutes: float) -> str | None:
    """Why the lock of `info` is stale, or None when its holder may still be running."""
    try:
        started = clock.parse_iso(info.started)
    except ValueError:
        started = None
    if started is not None and (clock.now() - started).total_seconds() > ttl_minutes * 60:
        return f"it is older than lock_ttl_minutes ({ttl_minutes:g})"
    if info.host == socket.gethostname():
        actual = process_start(info.pid) if info.pid > 0 else None
        if actual is None:
            return f"no process {info.pid} is running"
        if info.pid_start is not None and actual != info.pid_start:
            return f"process {info.pid} is a different process now (pid reused)"
    if started is None and info.pid == 0:
        return "the lock file is unreadable"
    return None


class Lock:
    """A held lock; use as a context manager or call `release()`."""

    def __init__(self, common_dir: Path, run_id: str, warnings: list[str]):
        self.common_dir = common_dir
        self.run_id = run_id
        self.warnings = warnings

    def release(self) -> None:
        """Remove the lock file if it is still ours."""
        info = read(self.common_dir)
        if info is not None and info.run == self.run_id and info.pid == os.getpid():
            try:
                lock_path(self.common_dir).unlink()
            except FileNotFoundError:
                pass

    def __enter__(self) -> Lock:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.release()


def _create(path: Path, run_id: str) -> bool:
    payload = {
        "pid": os.getpid(),
        "pid_start": process_start(os.getpid()),
        "host": socket.gethostname(),
        "started": clock.iso(clock.now()),
        "run": run_id,
    }
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(payload, handle)
        handle.flush()
        os.fsync(handle.fileno())
    return True


def _break(path: Path, info: LockInfo, ttl_minutes: float) -> str | None:
    """Break the stale lock `info` under the break mutex; returns the reason, or None when
    someone else got there first or the lock is no longer stale."""
    guard = path.with_name("lock.break")
    try:
        fd = os.open(guard, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        try:
            if time.time() - guard.stat().st_mtime > BREAK_TTL_SECONDS:
                guard.unlink()
        except FileNotFoundError:
            pass
        return None
    os.close(fd)
    try:
        current = read(path.parent.parent)
        if current is None or current != info:
            return None
        reason = stale_reason(current, ttl_minutes)
        if reason is None:
            return None
        path.unlink()
        return reason
    finally:
        try:
            guard.unlink()
        except FileNotFoundError:
            pass


_TEMP = re.compile(r"\.(?P<name>.+)\.gitdream-(?P<pid>[0-9]+)\.tmp")


def _remove_dead_temp_files(folder: Path) -> None:
    """Remove temporary files of `atomic_write`s (state.json, stamp, journal) whose writer
    is no longer running: a process killed mid-write leaves one behind. The real files were
    never touched (the write is a rename)."""
    for candidate in list(folder.glob(".*.gitdream-*.tmp")) + list(folder.glob("*/.*.gitdream-*.tmp")):
        match = _TEMP.fullmatch(candidate.name)
        if match is None or process_start(int(match["pid"])) is not None:
            continue
        try:
            candidate.unlink()
        except OSError:
            pass


def acquire(common_dir: Path, run_id: str, ttl_minutes: float) -> Lock:
    """Take the lock for `run_id` or raise LockHeld (message: who holds it, since when).

    Breaks a stale lock (with a warning in `Lock.warnings`). Creates the state directory.
    """
    path = lock_path(common_dir)
    paths.ensure_dir(path.parent)
    warnings: list[str] = []
    for _attempt in range(5):
        if _create(path, run_id):
            _remove_dead_temp_files(path.parent)
            return Lock(common_dir, run_id, warnings)
        info = read(common_dir)
        if info is None:
            continue
        reason = stale_reason(info, ttl_minutes)
        if reason is None:
            raise LockHeld(
                info.describe(),
                hint="wait for it to finish; if it is gone, the lock is broken automatically once stale",
            )
        broken = _break(path, info, ttl_minutes)
        if broken:
            warnings.append(f"broke a stale lock of run {info.run} (pid {info.pid} on {info.host}): {broken}")
    info = read(common_dir)
    raise LockHeld(
        info.describe() if info else "the lock kept changing hands",
        hint="another gitdream process is starting at the same moment; run again",
    )


def age_seconds(info: LockInfo) -> float | None:
    """Seconds since the holder started, or None when unknown."""
    try:
        started: datetime = clock.parse_iso(info.started)
    except ValueError:
        return None
    return (clock.now() - started).total_seconds()
