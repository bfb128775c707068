"""The dream lock: a kernel lock (flock) as the ground truth, the holder named in the
file, a lock nobody holds taken over, release."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
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


HOLDER = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from gitdream.trigger import dreamlock\n"
    "held = dreamlock.acquire(Path(sys.argv[1]), sys.argv[2], 240)\n"
    "print('got', flush=True)\n"
    "time.sleep(float(sys.argv[3]))\n"
)


def _holder(common: Path, run: str, seconds: float = 30) -> subprocess.Popen[str]:
    """Another process that takes the lock and keeps it."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(common), run, str(seconds)],
        stdout=subprocess.PIPE,
        text=True,
        env=gitdream_env(),
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "got"
    return proc


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


def test_a_lock_file_nobody_holds_is_taken_over_with_a_warning(tmp_path: Path) -> None:
    """A killed dream leaves its lock file; the kernel released its lock."""
    proc = _holder(tmp_path, "killed")
    proc.kill()
    proc.wait()
    assert dreamlock.read(tmp_path).run == "killed"
    held = dreamlock.acquire(tmp_path, "mine", 240)
    assert held.warnings and "run killed" in held.warnings[0] and "no longer holds it" in held.warnings[0]
    assert dreamlock.read(tmp_path).run == "mine"


def test_a_live_holder_is_respected_whatever_its_file_says(tmp_path: Path) -> None:
    """Regression test (issue 16): an empty lock file counted as stale (pid 0), so with the
    holder's write delayed a second run broke a live lock and dreamed concurrently. The
    kernel lock decides: an empty file, a dead-looking pid, another host, an age past the
    TTL — the holder keeps it."""
    proc = _holder(tmp_path, "live")
    try:
        for fields in (
            {},
            {"pid": 999_999_999},
            {"host": "another-host"},
            {"started": "2000-01-01T00:00:00Z"},
        ):
            _write(tmp_path, **fields)
            with pytest.raises(LockHeld):
                dreamlock.acquire(tmp_path, "mine", 240)
        dreamlock.lock_path(tmp_path).write_text("")  # the holder has not written it yet
        with pytest.raises(LockHeld) as exc:
            dreamlock.acquire(tmp_path, "mine", 240)
        assert "another dream is starting" in exc.value.message
    finally:
        proc.kill()
        proc.wait()
    dreamlock.acquire(tmp_path, "mine", 240).release()


def test_status_tells_a_held_lock_from_a_left_one(tmp_path: Path) -> None:
    proc = _holder(tmp_path, "live")
    try:
        info = dreamlock.read(tmp_path)
        assert dreamlock.stale_reason(tmp_path, info, 240) is None
        with freeze_time("2099-01-01T00:00:00Z"):
            assert "probably hung" in (dreamlock.stale_reason(tmp_path, info, 240) or "")
    finally:
        proc.kill()
        proc.wait()
    assert "no process holds it" in (dreamlock.stale_reason(tmp_path, info, 240) or "")


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
