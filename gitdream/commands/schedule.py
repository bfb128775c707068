"""`gitdream schedule show|install`: scheduled runs (see gitdream.trigger.schedule)."""

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

    def to_json(self) -> dict[str, Any]:
        return {
            "repository": self.repository,
            "python": self.python,
            "cron": self.cron,
            "systemd": {"dir": self.systemd_dir, "files": dict(self.systemd)},
            "ci": {"path": self.ci_path, "content": self.ci},
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
        ci=schedule.render_ci(),
    )


def install(workdir: Path, kind: str, python: str | None = None) -> ScheduleInstall:
    """Install the `kind` ("cron" or "systemd") schedule. Raises ScheduleError."""
    t = schedule.job(workdir, python)
    if kind == "systemd":
        written = schedule.install_systemd(t)
        steps = ["systemctl --user daemon-reload", f"systemctl --user enable --now {t.unit}.timer"]
        if all(w.action == "unchanged" for w in written):
            steps = [f"systemctl --user enable --now {t.unit}.timer  (if it is not enabled yet)"]
        return ScheduleInstall("systemd", written, steps)
    if kind == "cron":
        return ScheduleInstall("cron", [schedule.install_cron(t)])
    raise ValueError(f"unknown schedule kind {kind!r}")
