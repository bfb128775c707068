"""Scheduled runs: render and install a cron line, a systemd user timer, a CI workflow.

Every schedule only *asks* gitdream (`gitdream run --auto --trigger schedule`); the gates
(enabled, min_hours, min_sessions, lock) decide whether a dream runs, so asking hourly
costs little. Templates live in `templates/schedule/` (cron.txt, gitdream.service,
gitdream.timer; `string.Template` placeholders) and `templates/ci/github-actions.yml`
(copied as is).

Installed files carry a `# gitdream schedule: <repository>` line; install rewrites only
such files (or the matching crontab entry) and refuses to replace anything else.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import string
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from gitdream import paths, resources
from gitdream.errors import GitdreamError

MARKER = "# gitdream schedule: "
CI_TEMPLATE = "ci/github-actions.yml"
CI_TARGET = ".github/workflows/gitdream.yml"


class ScheduleError(GitdreamError):
    """A schedule could not be installed."""

    kind = "schedule"


@dataclass(frozen=True)
class Job:
    """What a schedule runs: the repository's worktree root, the interpreter, the log
    file (cron output; systemd logs to the journal), the unit name, the cron minute."""

    repo: Path
    python: str
    log: Path
    unit: str
    minute: int


def job(workdir: Path, python: str | None = None) -> Job:
    """The scheduled job for the repository at `workdir` (absolute). The unit name and the cron
    minute derive from the path, so two repositories get two timers and do not all wake
    at the same minute."""
    repo = Path(os.path.abspath(workdir))
    digest = hashlib.sha256(str(repo).encode("utf-8", "surrogateescape")).hexdigest()
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", repo.name).strip("-.") or "repo"
    return Job(
        repo=repo,
        python=python or sys.executable,
        log=paths.user_log_dir() / "schedule.log",
        unit=f"gitdream-{slug[:40]}-{digest[:8]}",
        minute=int(digest[8:16], 16) % 60,
    )


def _check_value(name: str, value: str) -> None:
    if "\n" in value or "\r" in value or "\0" in value:
        raise ScheduleError(
            f"the {name} {value!r} contains a line break; no scheduler can run it",
            hint="move the repository or the interpreter to a path without line breaks",
        )


def _cron_escape(text: str) -> str:
    # crontab(5): an unescaped % in the command ends it and starts stdin.
    return text.replace("%", "\\%")


def _unit_path(text: str) -> str:
    # systemd expands % specifiers in WorkingDirectory= and Condition*= values.
    return text.replace("%", "%%")


def _exec_word(text: str) -> str:
    """One ExecStart= word (systemd.service(5), "Command lines"): quoted when needed,
    with % and $ escaped."""
    word = text
    if not word or re.search(r"[\s\"'\\;]", word):
        word = '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return word.replace("%", "%%").replace("$", "$$")


def render_cron(t: Job) -> str:
    """The crontab entry: a `# gitdream schedule: <repo>` line and the job line."""
    for name, value in (("repository path", str(t.repo)), ("interpreter", t.python), ("log", str(t.log))):
        _check_value(name, value)
    text = resources.read_template("schedule/cron.txt")
    return string.Template(text).substitute(
        repo=str(t.repo),
        minute=str(t.minute),
        repo_sh=_cron_escape(shlex.quote(str(t.repo))),
        python_sh=_cron_escape(shlex.quote(t.python)),
        log_sh=_cron_escape(shlex.quote(str(t.log))),
    )


def render_systemd(t: Job) -> dict[str, str]:
    """`{file name: content}` of the systemd user service and timer."""
    for name, value in (("repository path", str(t.repo)), ("interpreter", t.python)):
        _check_value(name, value)
    values = {
        "repo": str(t.repo),
        "repo_unit": _unit_path(str(t.repo)),
        "python_exec": _exec_word(t.python),
        "unit": t.unit,
    }
    out = {}
    for suffix in ("service", "timer"):
        text = resources.read_template(f"schedule/gitdream.{suffix}")
        out[f"{t.unit}.{suffix}"] = string.Template(text).substitute(values)
    return out


def render_ci() -> str:
    """The GitHub Actions workflow (no placeholders)."""
    return resources.read_template(CI_TEMPLATE)


def systemd_user_dir() -> Path:
    """`$XDG_CONFIG_HOME/systemd/user`, else `~/.config/systemd/user` (systemd.unit(5),
    user unit search path)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "systemd" / "user"


@dataclass
class Written:
    """One file or entry install touched: `action` is created, updated or unchanged."""

    path: str
    action: str


def _owned_by(text: str, repo: Path) -> bool:
    return (MARKER + str(repo)) in text.splitlines()


def install_systemd(t: Job, directory: Path | None = None) -> list[Written]:
    """Write the service and timer into `directory` (default: `systemd_user_dir()`).

    A file of the same name that is not gitdream's schedule for this repository is not
    replaced: ScheduleError. Does not call systemctl (the CLI prints the commands).
    """
    folder = directory or systemd_user_dir()
    units = render_systemd(t)
    for name in units:
        path = folder / name
        if path.exists() and not _owned_by(path.read_text(encoding="utf-8", errors="replace"), t.repo):
            raise ScheduleError(
                f"{path} exists and is not gitdream's schedule for {t.repo}",
                hint="remove or rename it, then run `gitdream schedule install --systemd` again",
            )
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, content in units.items():
        path = folder / name
        if path.exists() and path.read_text(encoding="utf-8", errors="replace") == content:
            written.append(Written(str(path), "unchanged"))
            continue
        action = "updated" if path.exists() else "created"
        tmp = path.with_name(f".{name}.gitdream-tmp")
        tmp.write_text(content, encoding="utf-8")
        os.replace(tmp, path)
        written.append(Written(str(path), action))
    return written


def _crontab(args: list[str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(["crontab", *args], input=stdin, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise ScheduleError(
            "the crontab command was not found",
            hint="install cron, or add the line from `gitdream schedule show --cron` by hand",
        ) from None


def install_cron(t: Job) -> Written:
    """Add (or update) this repository's entry in the user's crontab via `crontab -l` and
    `crontab -`. Other lines are kept byte for byte. Raises ScheduleError when crontab
    is missing or fails."""
    entry = render_cron(t)
    current = _crontab(["-l"])
    # `crontab -l` exits 1 with "no crontab for <user>" when there is none yet.
    text = current.stdout if current.returncode == 0 else ""
    if current.returncode != 0 and "no crontab" not in current.stderr.lower():
        raise ScheduleError(
            f"crontab -l failed: {current.stderr.strip()}", hint="check that you may use cron"
        )
    lines = text.splitlines(keepends=True)
    marker = MARKER + str(t.repo)
    new_lines: list[str] = []
    found = False
    skip_next = False
    for line in lines:
        if skip_next:
            skip_next = False
            continue
        if line.rstrip("\n") == marker:
            if not found:
                new_lines.append(entry)
                found = True
            skip_next = True
            continue
        new_lines.append(line)
    if not found:
        if new_lines and not new_lines[-1].endswith("\n"):
            new_lines[-1] += "\n"
        new_lines.append(entry)
    new_text = "".join(new_lines)
    if new_text == text:
        return Written("crontab", "unchanged")
    done = _crontab(["-"], new_text)
    if done.returncode != 0:
        raise ScheduleError(f"crontab - failed: {done.stderr.strip()}", hint="check that you may use cron")
    return Written("crontab", "updated" if found else "created")
