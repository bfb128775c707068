"""The repository's dream lock: one dream at a time per repository (DESIGN §5).

`<git-common-dir>/gitdream/lock` is held with `fcntl.flock` — a kernel lock on the open
file, which the kernel releases when its process exits, however it dies (SIGKILL
included) — and it holds JSON naming the holder: pid, that process's start time, host,
the run's start time and run id. The kernel lock is the ground truth (issue 16): the
contents only say who holds it. So a holder is never judged by what its file says — an
empty file (a holder not done writing it) or a pid that looks dead cannot make a second
run break a live lock — and a lock file nobody holds is simply taken over, with a warning
naming the run that left it.

`release()` removes the file while still holding the lock; `acquire` checks that the file
it locked is still the one at the path (a release may have removed it meanwhile), so two
processes can never both hold it. `lock_ttl_minutes` no longer breaks a lock: a holder
older than it is reported as probably hung (`stale_reason`), never raced.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import socket
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from gitdream import clock, faults, paths
from gitdream.errors import LockHeld
from gitdream.processes import process_start


@dataclass
class LockInfo:
    """The holder recorded in a lock file (pid 0 and run "unknown" when it was empty or
    unreadable: a holder still writing it, or one killed before it could)."""

    pid: int
    pid_start: str | None
    host: str
    started: str
    run: str

    def describe(self) -> str:
        if self.pid <= 0:
            return "another dream is starting (its lock file does not name it yet)"
        return f"another dream (run {self.run}, pid {self.pid} on {self.host}) has been running since {self.started}"


def lock_path(common_dir: Path) -> Path:
    return paths.state_dir(common_dir) / "lock"


def _parse(text: str) -> LockInfo:
    try:
        data = json.loads(text)
        return LockInfo(
            int(data["pid"]), data.get("pid_start"), str(data["host"]), str(data["started"]), str(data["run"])
        )
    except (ValueError, KeyError, TypeError):
        return LockInfo(0, None, socket.gethostname(), "an unknown time", "unknown")


def read(common_dir: Path) -> LockInfo | None:
    """The holder the lock file names, or None when there is no lock file."""
    try:
        return _parse(lock_path(common_dir).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except OSError:
        return LockInfo(0, None, socket.gethostname(), "an unknown time", "unknown")


def held(common_dir: Path) -> bool:
    """True when a process holds the lock right now (the kernel lock, not the file)."""
    try:
        fd = os.open(lock_path(common_dir), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def stale_reason(common_dir: Path, info: LockInfo, ttl_minutes: float) -> str | None:
    """Why the lock that `info` describes is not a live dream, or None when it is: nobody
    holds it (its process exited or was killed: the next run takes it over), or its holder
    has run longer than `lock_ttl_minutes` (probably hung; it is not broken)."""
    if not held(common_dir):
        return "no process holds it any more (the dream that took it exited or was killed)"
    try:
        started = clock.parse_iso(info.started)
    except ValueError:
        return None
    if (clock.now() - started).total_seconds() > ttl_minutes * 60:
        return f"it has been held longer than lock_ttl_minutes ({ttl_minutes:g}): the dream is probably hung"
    return None


class Lock:
    """A held lock; use as a context manager or call `release()`."""

    def __init__(self, common_dir: Path, run_id: str, warnings: list[str], fd: int = -1):
        self.common_dir = common_dir
        self.run_id = run_id
        self.warnings = warnings
        self.fd = fd

    def release(self) -> None:
        """Remove the lock file (still holding the lock, so nobody can take the removed
        file), then let the lock go. Idempotent."""
        if self.fd < 0:
            return
        with contextlib.suppress(FileNotFoundError):
            if os.stat(lock_path(self.common_dir)).st_ino == os.fstat(self.fd).st_ino:
                lock_path(self.common_dir).unlink()
        os.close(self.fd)
        self.fd = -1

    def __enter__(self) -> Lock:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.release()


_TEMP = re.compile(r"\.(?P<name>.+)\.gitdream-(?P<pid>[0-9]+)\.tmp")


def _remove_dead_temp_files(folder: Path) -> None:
    """Remove temporary files of `atomic_write`s (state.json, stamp, journal) whose writer
    is no longer running: a process killed mid-write leaves one behind. The real files were
    never touched (the write is a rename)."""
    for candidate in list(folder.glob(".*.gitdream-*.tmp")) + list(folder.glob("*/.*.gitdream-*.tmp")):
        match = _TEMP.fullmatch(candidate.name)
        if match is None or candidate.parent.is_symlink() or process_start(int(match["pid"])) is not None:
            continue
        try:
            candidate.unlink()
        except OSError:
            pass


def acquire(common_dir: Path, run_id: str, ttl_minutes: float) -> Lock:
    """Take the lock for `run_id` or raise LockHeld (message: who holds it, since when).

    A lock file nobody holds (its dream exited or was killed) is taken over, with a warning
    in `Lock.warnings` naming the run that left it. `ttl_minutes` is not used to break a
    lock (see `stale_reason`). Creates the state directory.
    """
    path = lock_path(common_dir)
    paths.state_folder(common_dir)  # a real folder, never a link
    for _attempt in range(10):
        fd = paths.open_state_file(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            info = read(common_dir)
            raise LockHeld(
                (info or LockInfo(0, None, "", "", "")).describe(),
                hint="wait for it to finish (the lock is released when it exits, however it ends)",
            ) from None
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if not same:  # released (and removed) between our open and our lock: open again
            os.close(fd)
            continue
        warnings = _taken_over(fd)
        faults.point("lock-taken")  # held, not yet named in the file
        _write_holder(fd, run_id)
        _remove_dead_temp_files(path.parent)
        return Lock(common_dir, run_id, warnings, fd)
    raise LockHeld(
        "the lock kept changing hands",
        hint="another gitdream process is starting at the same moment; run again",
    )


def _taken_over(fd: int) -> list[str]:
    """The warning for a lock file left by a dream that no longer holds it, if any."""
    os.lseek(fd, 0, os.SEEK_SET)
    text = os.read(fd, 65536).decode("utf-8", "replace")
    if not text.strip():
        return []
    info = _parse(text)
    who = f"run {info.run} (pid {info.pid} on {info.host})" if info.pid > 0 else "an unnamed run"
    return [f"broke a stale lock of {who}: its process no longer holds it (it exited or was killed)"]


def _write_holder(fd: int, run_id: str) -> None:
    payload = {
        "pid": os.getpid(),
        "pid_start": process_start(os.getpid()),
        "host": socket.gethostname(),
        "started": clock.iso(clock.now()),
        "run": run_id,
    }
    data = json.dumps(payload).encode("utf-8")
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)
    os.fsync(fd)


def age_seconds(info: LockInfo) -> float | None:
    """Seconds since the holder started, or None when unknown."""
    try:
        started: datetime = clock.parse_iso(info.started)
    except ValueError:
        return None
    return (clock.now() - started).total_seconds()
