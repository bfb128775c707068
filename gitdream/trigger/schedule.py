"""Scheduled runs: render, install and uninstall a cron line, a systemd user timer, and a
GitHub Actions or GitLab CI pipeline.

Every schedule only *asks* gitdream (`gitdream run --auto --trigger schedule`); the gates
(enabled, min_hours, min_sessions, lock) decide whether a dream runs, so asking hourly
costs little. Templates live in `templates/schedule/` (cron.txt, gitdream.service,
gitdream.timer; `string.Template` placeholders) and `templates/ci/` (github-actions.yml,
gitlab-ci.yml, copied as they are).

Installed files carry a `# gitdream schedule: <repository>` line (CI files: `# gitdream
schedule: GitHub Actions|GitLab CI`); install rewrites only such files (or the matching
crontab entry) and refuses to replace anything else, and uninstall removes only those.
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
GITLAB_TEMPLATE = "ci/gitlab-ci.yml"
GITLAB_TARGET = ".gitlab/gitdream.yml"
CI_KINDS = {"github": (CI_TEMPLATE, CI_TARGET), "gitlab": (GITLAB_TEMPLATE, GITLAB_TARGET)}
ENV_FILE = "environment"  # next to the user config: what the systemd service reads


class ScheduleError(GitdreamError):
    """A schedule could not be installed."""

    kind = "schedule"


@dataclass(frozen=True)
class Job:
    """What a schedule runs: the repository's worktree root, the interpreter, the log
    file (cron output; systemd logs to the journal), the unit name, the cron minute, and
    `home`: the `GITDREAM_HOME` in force at install time (None when unset), which the
    job sets again — cron and systemd start jobs without the installing shell's
    environment, so without it the job would read another user config."""

    repo: Path
    python: str
    log: Path
    unit: str
    minute: int
    home: str | None = None


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
        home=os.path.abspath(os.environ["GITDREAM_HOME"]) if os.environ.get("GITDREAM_HOME") else None,
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
    """The crontab entry: a `# gitdream schedule: <repo>` line and the job line, which
    creates the log folder first (cron's shell cannot append to a file in a folder that
    does not exist)."""
    for name, value in (("repository path", str(t.repo)), ("interpreter", t.python), ("log", str(t.log))):
        _check_value(name, value)
    if t.home is not None:
        _check_value("GITDREAM_HOME", t.home)
    text = resources.read_template("schedule/cron.txt")
    return string.Template(text).substitute(
        repo=str(t.repo),
        minute=str(t.minute),
        repo_sh=_cron_escape(shlex.quote(str(t.repo))),
        python_sh=_cron_escape(shlex.quote(t.python)),
        home_sh="" if t.home is None else _cron_escape("GITDREAM_HOME=" + shlex.quote(t.home) + " "),
        log_sh=_cron_escape(shlex.quote(str(t.log))),
        logdir_sh=_cron_escape(shlex.quote(str(t.log.parent))),
    )


def env_file() -> Path:
    """The file the systemd service reads its environment from (`EnvironmentFile=`): an
    ANTHROPIC_API_KEY, GITDREAM_* variables. Next to the user config; may not exist."""
    return paths.user_config_file().parent / ENV_FILE


def render_systemd(t: Job) -> dict[str, str]:
    """`{file name: content}` of the systemd user service and timer."""
    for name, value in (("repository path", str(t.repo)), ("interpreter", t.python)):
        _check_value(name, value)
    environment = str(env_file())
    _check_value("environment file", environment)
    home = ""
    if t.home is not None:
        _check_value("GITDREAM_HOME", t.home)
        # systemd.exec(5): Environment= takes one double-quoted "VAR=value" with % escaped.
        quoted = t.home.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
        home = f'Environment="GITDREAM_HOME={quoted}"\n'

    values = {
        "repo": str(t.repo),
        "repo_unit": _unit_path(str(t.repo)),
        "python_exec": _exec_word(t.python),
        "unit": t.unit,
        "envfile_unit": _unit_path(environment),
        "envfile_comment": environment,
        "home_environment": home,
    }
    out = {}
    for suffix in ("service", "timer"):
        text = resources.read_template(f"schedule/gitdream.{suffix}")
        out[f"{t.unit}.{suffix}"] = string.Template(text).substitute(values)
    return out


def render_ci(kind: str = "github") -> str:
    """The CI pipeline of `kind` ("github": a GitHub Actions workflow; "gitlab": a GitLab CI
    job), as shipped (no placeholders)."""
    return resources.read_template(CI_KINDS[kind][0])


def systemd_user_dir() -> Path:
    """`$XDG_CONFIG_HOME/systemd/user`, else `~/.config/systemd/user` (systemd.unit(5),
    user unit search path)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "systemd" / "user"


@dataclass
class Written:
    """One file or entry install or uninstall touched: `action` is created, updated,
    unchanged (install), removed or absent (uninstall)."""

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
    paths.ensure_dir(t.log.parent)  # the job line creates it too, should it be removed later
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


def _ci_owned(text: str) -> bool:
    return text.startswith(MARKER)


def install_ci(workdir: Path, kind: str) -> Written:
    """Write the `kind` pipeline into the working tree (`CI_KINDS`: .github/workflows/
    gitdream.yml or .gitlab/gitdream.yml); not committed. A file there that is not
    gitdream's schedule is not replaced: ScheduleError."""
    content = render_ci(kind)
    path = workdir / CI_KINDS[kind][1]
    if path.is_symlink() or (
        path.exists() and not _ci_owned(path.read_text(encoding="utf-8", errors="replace"))
    ):
        raise ScheduleError(
            f"{path} exists and is not gitdream's schedule",
            hint=f"remove or rename it, or print the pipeline with `gitdream schedule show --{kind}` "
            "and merge it by hand",
        )
    if path.exists() and path.read_text(encoding="utf-8") == content:
        return Written(str(path), "unchanged")
    action = "updated" if path.exists() else "created"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.gitdream-tmp")
    tmp.write_text(content, encoding="utf-8")
    os.replace(tmp, path)
    return Written(str(path), action)


def uninstall_ci(workdir: Path, kind: str) -> Written:
    """Remove the `kind` pipeline from the working tree when it is gitdream's (action
    removed; absent when there is none). A file that is not gitdream's: ScheduleError."""
    path = workdir / CI_KINDS[kind][1]
    if not os.path.lexists(path):
        return Written(str(path), "absent")
    if path.is_symlink() or not _ci_owned(path.read_text(encoding="utf-8", errors="replace")):
        raise ScheduleError(
            f"{path} is not gitdream's schedule; left alone", hint="remove it yourself if you want it gone"
        )
    path.unlink()
    return Written(str(path), "removed")


def uninstall_systemd(t: Job, directory: Path | None = None) -> list[Written]:
    """Remove this repository's service and timer from `directory` (default:
    `systemd_user_dir()`) and the timer's `timers.target.wants/` link (what `systemctl
    --user disable` removes). A file of that name that is not gitdream's schedule for this
    repository: ScheduleError, nothing removed."""
    folder = directory or systemd_user_dir()
    names = [f"{t.unit}.service", f"{t.unit}.timer"]
    for name in names:
        path = folder / name
        if path.exists() and not _owned_by(path.read_text(encoding="utf-8", errors="replace"), t.repo):
            raise ScheduleError(
                f"{path} is not gitdream's schedule for {t.repo}; left alone",
                hint="remove it yourself if you want it gone",
            )
    done = []
    wants = folder / "timers.target.wants" / f"{t.unit}.timer"
    if wants.is_symlink():
        wants.unlink()
        done.append(Written(str(wants), "removed"))
    for name in names:
        path = folder / name
        if path.exists():
            path.unlink()
            done.append(Written(str(path), "removed"))
        else:
            done.append(Written(str(path), "absent"))
    return done


def uninstall_cron(t: Job) -> Written:
    """Remove this repository's entry (its marker line and the job line after it) from the
    user's crontab; every other line is kept byte for byte. Action removed, or absent."""
    current = _crontab(["-l"])
    if current.returncode != 0:
        if "no crontab" in current.stderr.lower():
            return Written("crontab", "absent")
        raise ScheduleError(
            f"crontab -l failed: {current.stderr.strip()}", hint="check that you may use cron"
        )
    marker = MARKER + str(t.repo)
    kept: list[str] = []
    skip_next = False
    found = False
    for line in current.stdout.splitlines(keepends=True):
        if skip_next:
            skip_next = False
            continue
        if line.rstrip("\n") == marker:
            found = skip_next = True
            continue
        kept.append(line)
    if not found:
        return Written("crontab", "absent")
    done = _crontab(["-"], "".join(kept))
    if done.returncode != 0:
        raise ScheduleError(f"crontab - failed: {done.stderr.strip()}", hint="check that you may use cron")
    return Written("crontab", "removed")
