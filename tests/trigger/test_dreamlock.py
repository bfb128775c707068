"""The dream lock: exclusive, pid + start time, stale detection, TTL, release."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from freezegun import freeze_time

from gitdream import clock
from gitdream.errors import LockHeld
from gitdream.trigger import dreamlock
from tests.helpers import gitdream_env


def _write(common: Path, **fields: object) -> None:
    path = dreamlock.lock_path(common)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "pid": os.getpid(),
        "pid_start": dreamlock.process_start(os.getpid()),
        "host": socket.gethostname(),
        "started": clock.iso(clock.now()),
        "run": "other",
    }
    data.update(fields)
    path.write_text(json.dumps(data))


def test_acquire_and_release(tmp_path: Path) -> None:
    held = dreamlock.acquire(tmp_path, "r1", 240)
    info = dreamlock.read(tmp_path)
    assert info is not None and info.run == "r1" and info.pid == os.getpid()
    with pytest.raises(LockHeld) as exc:
        dreamlock.acquire(tmp_path, "r2", 240)
    assert exc.value.message.startswith(f"another dream (run r1, pid {os.getpid()} on ")
    assert "has been running since" in exc.value.message
    held.release()
    assert dreamlock.read(tmp_path) is None


def test_release_leaves_someone_elses_lock(tmp_path: Path) -> None:
    held = dreamlock.acquire(tmp_path, "r1", 240)
    _write(tmp_path, run="thief")
    held.release()
    assert dreamlock.read(tmp_path).run == "thief"


def test_dead_pid_is_stale(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    _write(tmp_path, pid=proc.pid, pid_start="12345")
    held = dreamlock.acquire(tmp_path, "mine", 240)
    assert held.warnings and f"pid {proc.pid}" in held.warnings[0]
    assert dreamlock.read(tmp_path).run == "mine"


def test_reused_pid_is_stale(tmp_path: Path) -> None:
    """A live process with the recorded pid but another start time is not the holder."""
    _write(tmp_path, pid=os.getpid(), pid_start="1")
    held = dreamlock.acquire(tmp_path, "mine", 240)
    assert "pid reused" in held.warnings[0]


def test_live_holder_is_respected(tmp_path: Path) -> None:
    _write(tmp_path)
    with pytest.raises(LockHeld):
        dreamlock.acquire(tmp_path, "mine", 240)


def test_lock_older_than_ttl_is_stale_even_if_alive(tmp_path: Path) -> None:
    with freeze_time("2026-03-01T00:00:00Z") as frozen:
        _write(tmp_path, host="another-host")
        with pytest.raises(LockHeld):
            dreamlock.acquire(tmp_path, "mine", 240)
        frozen.tick(timedelta(minutes=241))
        held = dreamlock.acquire(tmp_path, "mine", 240)
    assert "older than lock_ttl_minutes" in held.warnings[0]


def test_other_host_is_not_judged_by_pid(tmp_path: Path) -> None:
    _write(tmp_path, host="another-host", pid=999_999_999)
    with pytest.raises(LockHeld):
        dreamlock.acquire(tmp_path, "mine", 240)


def test_unreadable_lock_is_stale(tmp_path: Path) -> None:
    path = dreamlock.lock_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("garbage")
    held = dreamlock.acquire(tmp_path, "mine", 240)
    assert held.warnings


def test_only_one_of_many_processes_gets_the_lock(tmp_path: Path) -> None:
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from gitdream.trigger import dreamlock\n"
        "from gitdream.errors import LockHeld\n"
        "try:\n"
        "    held = dreamlock.acquire(Path(sys.argv[1]), sys.argv[2], 240)\n"
        "except LockHeld:\n"
        "    print('held'); sys.exit(0)\n"
        "print('got'); time.sleep(1.0); held.release()\n"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(tmp_path), f"r{i}"],
            stdout=subprocess.PIPE,
            text=True,
            env=gitdream_env(),
        )
        for i in range(8)
    ]
    outputs = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert outputs.count("got") == 1, outputs
    assert outputs.count("held") == 7


def test_acquire_removes_temp_files_of_dead_writers(tmp_path: Path) -> None:
    """Regression test: a run killed while writing state.json left
    `.state.json.gitdream-<pid>.tmp` in the state folder for good."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    folder = dreamlock.lock_path(tmp_path).parent
    (folder / "journal").mkdir(parents=True)
    dead = folder / f".state.json.gitdream-{proc.pid}.tmp"
    dead_journal = folder / "journal" / f".abc.json.gitdream-{proc.pid}.tmp"
    alive = folder / f".stamp.gitdream-{os.getpid()}.tmp"
    for path in (dead, dead_journal, alive):
        path.write_text("half")
    dreamlock.acquire(tmp_path, "mine", 240).release()
    assert not dead.exists() and not dead_journal.exists()
    assert alive.exists(), "a live writer's temp file is left alone"
