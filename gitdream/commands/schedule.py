"""`gitdream schedule show|install|uninstall`: scheduled runs (see gitdream.trigger.schedule)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitdream.trigger import schedule


@dataclass
class ScheduleShow:
    """The rendered schedules of one repository (also the `--json` document)."""

    repository: str
    python: str
    cron: str
    systemd_dir: str
    systemd: dict[str, str]
    ci_path: str
    ci: str
    gitlab_path: str
    gitlab: str
    log: str
    env_file: str

    def to_json(self) -> dict[str, Any]:
        return {
            "repository": self.repository,
            "python": self.python,
            "cron": self.cron,
            "log": self.log,
            "systemd": {
                "dir": self.systemd_dir,
                "files": dict(self.systemd),
                "environment_file": self.env_file,
            },
            "ci": {"path": self.ci_path, "content": self.ci},
            "gitlab": {"path": self.gitlab_path, "content": self.gitlab},
        }


@dataclass
class ScheduleInstall:
    """What `install` wrote, and the commands that remain for the user."""

    kind: str
    written: list[schedule.Written]
    next_steps: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "written": [{"path": w.path, "action": w.action} for w in self.written],
            "next_steps": list(self.next_steps),
        }


def show(workdir: Path, python: str | None = None) -> ScheduleShow:
    """Render every schedule for the repository at `workdir`; writes nothing."""
    t = schedule.job(workdir, python)
    return ScheduleShow(
        repository=str(t.repo),
        python=t.python,
        cron=schedule.render_cron(t),
        systemd_dir=str(schedule.systemd_user_dir()),
        systemd=schedule.render_systemd(t),
        ci_path=schedule.CI_TARGET,
        ci=schedule.render_ci("github"),
        gitlab_path=schedule.GITLAB_TARGET,
        gitlab=schedule.render_ci("gitlab"),
        log=str(t.log),
        env_file=str(schedule.env_file()),
    )


KINDS = ("cron", "systemd", "github", "gitlab")


def install(workdir: Path, kind: str, python: str | None = None) -> ScheduleInstall:
    """Install the `kind` schedule (one of KINDS). Raises ScheduleError."""
    t = schedule.job(workdir, python)
    if kind == "systemd":
        written = schedule.install_systemd(t)
        steps = ["systemctl --user daemon-reload", f"systemctl --user enable --now {t.unit}.timer"]
        if all(w.action == "unchanged" for w in written):
            steps = [f"systemctl --user enable --now {t.unit}.timer  (if it is not enabled yet)"]
        steps.append('loginctl enable-linger "$USER"  (so the timer runs while you are not logged in)')
        steps.append(
            f'put ANTHROPIC_API_KEY=... in {schedule.env_file()} (mode 600) for engine = "anthropic"'
        )
        return ScheduleInstall("systemd", written, steps)
    if kind == "cron":
        steps = [f"its output goes to {t.log}", "cron's PATH is /usr/bin:/bin: git must be found there"]
        return ScheduleInstall("cron", [schedule.install_cron(t)], steps)
    if kind in schedule.CI_KINDS:
        pipeline = schedule.install_ci(t.repo, kind)
        steps = [f"review and commit {schedule.CI_KINDS[kind][1]}"]
        if kind == "github":
            steps.append("allow Actions to create pull requests (Settings > Actions > General)")
        else:
            steps.append(
                "include it from .gitlab-ci.yml, add the GITDREAM_GITLAB_TOKEN variable and a pipeline schedule"
            )
        return ScheduleInstall(kind, [pipeline], steps)
    raise ValueError(f"unknown schedule kind {kind!r}")


def uninstall(workdir: Path, kind: str, python: str | None = None) -> ScheduleInstall:
    """Remove the `kind` schedule (one of KINDS) of the repository at `workdir`: only what
    gitdream installed. Raises ScheduleError for a file that is not gitdream's."""
    t = schedule.job(workdir, python)
    if kind == "systemd":
        written = schedule.uninstall_systemd(t)
        steps = []
        if any(w.action == "removed" for w in written):
            steps = [f"systemctl --user stop {t.unit}.timer", "systemctl --user daemon-reload"]
        return ScheduleInstall("systemd", written, steps)
    if kind == "cron":
        return ScheduleInstall("cron", [schedule.uninstall_cron(t)])
    if kind in schedule.CI_KINDS:
        pipeline = schedule.uninstall_ci(t.repo, kind)
        steps = (
            [f"commit the removal of {schedule.CI_KINDS[kind][1]}"] if pipeline.action == "removed" else []
        )
        if kind == "github" and pipeline.action == "removed":
            steps.append(
                "refs/gitdream/review/* on the remote hold dreams still under review; delete them when done"
            )
        return ScheduleInstall(kind, [pipeline], steps)
    raise ValueError(f"unknown schedule kind {kind!r}")
