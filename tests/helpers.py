"""Plain helper functions for tests: drive real git, write files, snapshot state."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import gitdream

GITCONFIG = """[user]
\tname = Test User
\temail = test@example.invalid
[init]
\tdefaultBranch = main
[commit]
\tgpgsign = false
[core]
\tautocrlf = false
[advice]
\tdetachedHead = false
[protocol "file"]
\tallow = always
"""

PACKAGE_ROOT = Path(gitdream.__file__).resolve().parent.parent
# ../shared next to a checkout (/work/main → /work/shared); a linked worktree one level deeper
# (/work/wt/<name>) finds the same folder two levels up.
SHARED = next(
    (p for p in (PACKAGE_ROOT.parent / "shared", PACKAGE_ROOT.parent.parent / "shared") if p.is_dir()),
    PACKAGE_ROOT.parent / "shared",
)


def git(
    cwd: Path, *args: str, env: dict[str, str] | None = None, check: bool = True, input: bytes | None = None
) -> str:
    """Run git in `cwd` and return stdout as text; raises on failure when `check`."""
    full = dict(os.environ)
    if env:
        full.update(env)
    proc = subprocess.run(["git", *args], cwd=cwd, env=full, capture_output=True, input=input)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"git {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout.decode()}\n{proc.stderr.decode()}"
        )
    return proc.stdout.decode("utf-8", "replace")


def init_repo(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    return root


def write(root: Path, rel: str, content: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8", newline="")
    else:
        path.write_bytes(content)
    return path


def commit_all(root: Path, message: str, date: str | None = None) -> str:
    """`git add -A && git commit`; returns the new HEAD id."""
    env = {}
    if date:
        env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", message, env=env)
    return git(root, "rev-parse", "HEAD").strip()


def head(root: Path) -> str:
    return git(root, "rev-parse", "HEAD").strip()


def snapshot(root: Path) -> dict[str, object]:
    """Index entries, `git status`, and the bytes of every working-tree file outside .git."""
    files = {}
    for path in sorted(root.rglob("*")):
        if ".git" in path.relative_to(root).parts or not path.is_file() or path.is_symlink():
            continue
        files[path.relative_to(root).as_posix()] = path.read_bytes()
    return {
        "index": git(root, "ls-files", "-s"),
        "status": git(root, "status", "--porcelain=v1", "--untracked-files=all"),
        "files": files,
    }


def gitdream_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for a gitdream subprocess that imports this source tree."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(PACKAGE_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    if extra:
        env.update(extra)
    return env


def run_gitdream(
    cwd: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run `python -m gitdream ARGS` in a subprocess (real process, real signals)."""
    return subprocess.run(
        [sys.executable, "-m", "gitdream", *args],
        cwd=cwd,
        env=gitdream_env(env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def dream_until_done(repo: Path, attempts: int = 5) -> list[dict[str, object]]:
    """`gitdream run --engine offline --json` in `repo` until no run of an invocation
    leaves entries pending (at most `attempts` invocations); asserts each exits 0.
    Returns every run record of every invocation, in order."""
    runs: list[dict[str, object]] = []
    for _ in range(attempts):
        proc = run_gitdream(repo, "run", "--engine", "offline", "--json")
        assert proc.returncode == 0, proc.stderr
        these = json.loads(proc.stdout)["runs"]
        runs += these
        if not any(r.get("pending") for r in these):
            break
    return runs


def popen(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """`python -m gitdream ARGS` started in the background in `root`."""
    return subprocess.Popen(
        [sys.executable, "-m", "gitdream", *args],
        cwd=root,
        env=gitdream_env(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def start_paused(root: Path, folder: Path, point: str, *args: str) -> subprocess.Popen[str]:
    """Start `gitdream ARGS` with fault point `point` set to pause (`gitdream.faults`:
    files `<point>.reached` / `<point>.continue` in `folder`) and return once it waits
    there. Fails when the process exits first or 60 s pass."""
    folder.mkdir(exist_ok=True)
    env = {"GITDREAM_FAULT": f"{point}:pause", "GITDREAM_FAULT_DIR": str(folder)}
    proc = popen(root, *args, env=env)
    reached = folder / f"{point.partition('@')[0]}.reached"
    deadline = time.monotonic() + 60
    while not reached.exists():
        if proc.poll() is not None:
            raise AssertionError(f"{point} was never reached: {proc.communicate()}")
        assert time.monotonic() < deadline, f"{point} was not reached within 60 s"
        time.sleep(0.005)
    return proc


def resume(proc: subprocess.Popen[str], folder: Path, point: str) -> tuple[str, str]:
    """Let a process paused by `start_paused` go on; its (stdout, stderr) once it exits."""
    (folder / f"{point.partition('@')[0]}.continue").write_text("")
    return proc.communicate(timeout=60)


def cli(cwd: Path, *args: str, input: str | None = None, env: dict[str, str] | None = None):
    """Run the click CLI in-process from `cwd` (-C), stdout and stderr kept apart."""
    from click.testing import CliRunner

    from gitdream.cli import cli as group

    runner = CliRunner()
    return runner.invoke(group, ["-C", str(cwd), *args], input=input, env=env, catch_exceptions=False)


@contextlib.contextmanager
def deadline(seconds: int, what: str = "the call"):
    """Fail (TimeoutError) when the block runs longer than `seconds`: for regressions of
    runaway (quadratic or exponential) work, which would otherwise hang the suite instead
    of failing it. Not a speed test: give a wide margin. Main thread only (SIGALRM); a long
    regular-expression match is interrupted within a few seconds of the alarm."""

    def expired(_signum: int, _frame: object) -> None:
        raise TimeoutError(f"{what} did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
