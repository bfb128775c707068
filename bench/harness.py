"""The shared harness of the benchmarks: isolated environments, interleaved repeats,
medians, child processes with their own peak RSS, machine facts, Markdown tables.

Rules every figure follows (the machine is shared, so absolute times drift):

- a candidate and its baseline are measured in the same run, interleaved (A B A B …, or
  A B C A B C … for a scale series) after warm-up rounds, so load hits both alike;
- the figure is the median of the repeats; the ratio is candidate median / baseline
  median of the same run;
- a child process is measured from the parent: wall time with `time.perf_counter`, peak
  RSS from `os.wait4` (that child's own rusage, not the maximum over all children);
- the load average is recorded before and after each figure.

Nothing here imports gitdream at module level: figures do, from this checkout (see
`bench.__main__`).
"""

from __future__ import annotations

import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
"""The checkout whose gitdream is measured (children get it first on PYTHONPATH)."""

PASS = "✓"
FAIL = "✗"


# --- environment -----------------------------------------------------------------------


GITCONFIG = """[user]
\tname = bench
\temail = bench@example.invalid
[init]
\tdefaultBranch = main
[commit]
\tgpgsign = false
[core]
\tautocrlf = false
[advice]
\tdetachedHead = false
[gc]
\tauto = 0
"""


def make_env(home: Path) -> dict[str, str]:
    """An environment isolated from this machine's configuration (as the test suite's):
    HOME, XDG and GITDREAM_HOME under `home`, a private global git config, no system
    config, an empty template dir, no inherited git or gitdream variables, no Anthropic
    key, this checkout first on PYTHONPATH, bytecode cached. Also points
    libgit2 (pygit2 in this process) at the same global config."""
    from gitdream.git.gitenv import scrubbed

    env = scrubbed()
    for key in list(env):
        if key.startswith(("GITDREAM_", "_GITDREAM_", "ANTHROPIC_", "GIT_")):
            del env[key]
    # Children use cached bytecode, as an installed package does (pip compiles it): the
    # libraries' own __pycache__, and the checkout's (git-ignored) for gitdream.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPYCACHEPREFIX", None)
    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text(GITCONFIG)
    template = home / "git-template"
    template.mkdir(exist_ok=True)
    for name in ("config", "state", "cache", "data"):
        (home / name).mkdir(exist_ok=True)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_STATE_HOME=str(home / "state"),
        XDG_CACHE_HOME=str(home / "cache"),
        XDG_DATA_HOME=str(home / "data"),
        GITDREAM_HOME=str(home / "gitdream-home"),
        GIT_CONFIG_GLOBAL=str(home / ".gitconfig"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TEMPLATE_DIR=str(template),
        PYTHONPATH=str(ROOT),
        ANTHROPIC_BASE_URL="http://127.0.0.1:9",
    )
    import pygit2

    empty = home / "empty"
    empty.mkdir(exist_ok=True)
    pygit2.settings.search_path[pygit2.enums.ConfigLevel.GLOBAL] = str(home)
    pygit2.settings.search_path[pygit2.enums.ConfigLevel.XDG] = str(empty)
    pygit2.settings.search_path[pygit2.enums.ConfigLevel.SYSTEM] = str(empty)
    return env


def git(cwd: Path, *args: str, env: Mapping[str, str], input: bytes | None = None) -> str:
    """Run git in `cwd` (raises with git's stderr on failure); returns stdout as text."""
    proc = subprocess.run(["git", *args], cwd=cwd, env=dict(env), input=input, capture_output=True)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {proc.stderr.decode(errors='replace')}")
    return proc.stdout.decode("utf-8", "replace")


def gitdream_cmd(*args: str) -> list[str]:
    """`python -m gitdream ARGS` with this interpreter (PYTHONPATH from `make_env` makes it
    the checkout's gitdream)."""
    return [sys.executable, "-m", "gitdream", *args]


@contextmanager
def workspace(prefix: str = "gitdream-bench-") -> Iterator[Path]:
    """A temporary folder, removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


# --- measuring -------------------------------------------------------------------------


@dataclass(frozen=True)
class ChildResult:
    """One child process: wall seconds, its own peak RSS (MiB), exit code, output, and
    its own CPU seconds (user + sys, from `os.wait4`: under load a child waits for a core,
    and its wall time grows while its CPU time does not)."""

    seconds: float
    rss_mib: float
    returncode: int
    stdout: bytes
    stderr: bytes
    cpu_seconds: float = 0.0


def run_child(
    cmd: Sequence[str], cwd: Path, env: Mapping[str, str], *, check: bool = True, input: bytes | None = None
) -> ChildResult:
    """Run `cmd` and measure it: wall time around start-to-reap, and the peak RSS of that
    child alone (`os.wait4`; RUSAGE_CHILDREN would give the maximum over all children)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            list(cmd),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=out,
            stderr=err,
        )
        if input is not None:
            assert proc.stdin is not None
            proc.stdin.write(input)
            proc.stdin.close()
        _pid, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        result = ChildResult(
            seconds,
            usage.ru_maxrss / 1024,
            proc.returncode,
            out.read(),
            err.read(),
            usage.ru_utime + usage.ru_stime,
        )
    if check and result.returncode != 0:
        raise RuntimeError(
            f"{' '.join(cmd)} exited {result.returncode}:\n{result.stderr.decode(errors='replace')[-3000:]}"
        )
    return result


def timed(func: Callable[[], object]) -> float:
    """Seconds one call of `func` takes (perf_counter)."""
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def interleave(
    cases: Mapping[str, Callable[[], float]], repeats: int, warmup: int = 1
) -> dict[str, list[float]]:
    """Call every case once per round, in order (A B C A B C …), `warmup` rounds discarded.
    Each callable returns the seconds it measured (so it can leave set-up untimed)."""
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for round_ in range(warmup + repeats):
        for name, case in cases.items():
            seconds = case()
            if round_ >= warmup:
                samples[name].append(seconds)
    return samples


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def load() -> tuple[float, float, float]:
    """The 1, 5 and 15 minute load averages."""
    return os.getloadavg()


def self_rss_mib() -> float:
    """Peak RSS of this process so far (MiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --- results ---------------------------------------------------------------------------


@dataclass
class Row:
    """One line of a figure's table: the case, its median (formatted), the baseline's,
    the ratio, the target and whether it is met (None: no target for this row)."""

    case: str
    measured: str
    baseline: str = ""
    ratio: str = ""
    target: str = ""
    ok: bool | None = None

    def cells(self) -> list[str]:
        mark = "" if self.ok is None else (PASS if self.ok else FAIL)
        return [self.case, self.measured, self.baseline, self.ratio, self.target, mark]


@dataclass
class Table:
    """A Markdown table; `columns` are the headers of `Row.cells` unless `rows` are plain
    lists (then `columns` says what they hold)."""

    caption: str
    rows: list[Row | list[str]] = field(default_factory=list)
    columns: tuple[str, ...] = ("case", "median", "baseline", "ratio", "target", "")

    def markdown(self) -> str:
        lines = [self.caption, "", "| " + " | ".join(self.columns) + " |"]
        lines.append("|" + "|".join("---" for _ in self.columns) + "|")
        for row in self.rows:
            cells = row.cells() if isinstance(row, Row) else row
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)


@dataclass
class Figure:
    """What one benchmark module returns: its tables, free-text notes, the raw samples
    (seconds, for --json), the load average before and after, and whether every target
    with a verdict was met."""

    name: str
    title: str
    tables: list[Table] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    samples: dict[str, Any] = field(default_factory=dict)
    load_before: tuple[float, float, float] = (0.0, 0.0, 0.0)
    load_after: tuple[float, float, float] = (0.0, 0.0, 0.0)
    seconds: float = 0.0

    @property
    def rows(self) -> list[Row | list[str]]:
        return [row for table in self.tables for row in table.rows]

    def markdown(self) -> str:
        parts = [f"## {self.title}", ""]
        for table in self.tables:
            parts += [table.markdown(), ""]
        for note in self.notes:
            parts += [note, ""]
        lb, la = self.load_before, self.load_after
        parts.append(
            f"Load average (1/5/15 min) before {lb[0]:.2f}/{lb[1]:.2f}/{lb[2]:.2f}, "
            f"after {la[0]:.2f}/{la[1]:.2f}/{la[2]:.2f}; this figure took {self.seconds:.0f} s."
        )
        return "\n".join(parts)


@dataclass(frozen=True)
class Settings:
    """Sizes and repeats for one invocation (`quick` shrinks everything to a smoke run);
    `compare`: another checkout whose gitdream the figures that support it (idle_path)
    measure too, interleaved with this one's ("before")."""

    quick: bool = False
    repeats: int | None = None
    compare: Path | None = None

    def pick(self, full: Any, quick: Any) -> Any:
        return quick if self.quick else full

    def reps(self, full: int, quick: int = 2) -> int:
        if self.repeats is not None:
            return self.repeats
        return quick if self.quick else full


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 0.1 else f"{seconds * 1000:.0f} ms"


def secs(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds < 10 else f"{seconds:.1f} s"


def ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}×" if base > 0 else "—"


# --- machine -------------------------------------------------------------------------


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _version(dist: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "absent"


def machine() -> dict[str, str]:
    """Facts about this machine and the software measured."""
    import pygit2

    git_version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    head = subprocess.run(
        ["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": head + (" (with uncommitted changes)" if dirty else ""),
        "cpu": _cpu_model(),
        "cores": str(os.cpu_count()),
        "memory": _mem_total(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "git": git_version.removeprefix("git version "),
        "pygit2": f"{pygit2.__version__} (libgit2 {pygit2.LIBGIT2_VERSION})",
        "click": _version("click"),
        "anthropic": _version("anthropic"),
        "sh": os.path.realpath("/bin/sh"),
    }


def _mem_total() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) // 1024} MiB"
    except OSError:
        pass
    return "?"


def busy_processes(window: float = 0.5) -> list[str]:
    """Other processes using CPU right now (by /proc, sampled over `window` seconds):
    "name (pct%)"."""

    def ticks() -> dict[int, tuple[str, int]]:
        found = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                raw = (entry / "stat").read_text()
            except OSError:
                continue
            name = raw[raw.index("(") + 1 : raw.rindex(")")]
            fields = raw[raw.rindex(")") + 2 :].split()
            found[int(entry.name)] = (name, int(fields[11]) + int(fields[12]))
        return found

    first = ticks()
    time.sleep(window)
    second = ticks()
    hz = os.sysconf("SC_CLK_TCK")
    busy = []
    for pid, (name, total) in second.items():
        if pid == os.getpid() or pid not in first:
            continue
        pct = (total - first[pid][1]) / hz / window * 100
        if pct >= 10:
            try:
                where = Path(os.readlink(f"/proc/{pid}/cwd")).name
            except OSError:
                where = "?"
            busy.append(f"{name} in {where}/ ({pct:.0f}%)")
    return sorted(busy)
