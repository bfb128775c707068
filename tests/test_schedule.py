"""`gitdream schedule show|install|uninstall`: cron, systemd user timer, CI pipelines
(the CI templates themselves: tests/trigger/test_schedule_ci.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gitdream.trigger import schedule
from gitdream.trigger.schedule import ScheduleError
from tests.helpers import cli, init_repo, run_gitdream

# A stand-in for crontab(1) that keeps the table in $FAKE_CRONTAB.
FAKE_CRONTAB = """#!/bin/sh
case "$1" in
-l) if [ -f "$FAKE_CRONTAB" ]; then cat "$FAKE_CRONTAB"; else echo "no crontab for $(id -un)" >&2; exit 1; fi ;;
-) cat > "$FAKE_CRONTAB" ;;
*) exit 2 ;;
esac
"""


def files_under(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_cron_line_runs_the_scheduled_trigger(git_repo: Path) -> None:
    t = schedule.job(git_repo, "/venv/bin/python")
    marker, job = schedule.render_cron(t).splitlines()
    assert marker == f"# gitdream schedule: {git_repo}"
    assert job == (
        f"{t.minute} * * * * mkdir -p {t.log.parent} && cd {git_repo} && "
        f"GITDREAM_HOME={os.environ['GITDREAM_HOME']} /venv/bin/python -m gitdream run "
        f"--auto --trigger schedule >>{t.log} 2>&1"
    )
    assert 0 <= t.minute < 60
    assert schedule.job(git_repo).minute == t.minute  # stable per repository


def test_cron_line_quotes_and_escapes_percent(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "my agents 100%")
    job = schedule.render_cron(schedule.job(repo, "/venv/bin/python")).splitlines()[1]
    assert f"cd '{tmp_path}/my agents 100\\%' &&" in job


def test_systemd_units(git_repo: Path) -> None:
    t = schedule.job(git_repo, "/venv/bin/python")
    units = schedule.render_systemd(t)
    service, timer = units[f"{t.unit}.service"], units[f"{t.unit}.timer"]
    assert t.unit.startswith("gitdream-repo-")
    assert f"WorkingDirectory={git_repo}\n" in service
    assert "ExecStart=/venv/bin/python -m gitdream run --auto --trigger schedule\n" in service
    assert "Type=oneshot\n" in service
    for line in (
        "OnCalendar=hourly",
        "Persistent=true",
        "RandomizedDelaySec=15min",
        f"Unit={t.unit}.service",
    ):
        assert line + "\n" in timer
    assert "WantedBy=timers.target\n" in timer


def test_systemd_escapes_specifiers_spaces_and_dollars(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "a 50% repo")
    t = schedule.job(repo, "/opt/my $py/python")
    service = schedule.render_systemd(t)[f"{t.unit}.service"]
    assert f"WorkingDirectory={tmp_path}/a 50%% repo\n" in service
    assert 'ExecStart="/opt/my $$py/python" -m gitdream' in service
    assert t.unit.startswith("gitdream-a-50-repo-")


def test_line_breaks_in_paths_are_refused(tmp_path: Path) -> None:
    t = schedule.job(tmp_path, "/opt/py\nthon")
    with pytest.raises(ScheduleError):
        schedule.render_cron(t)


def test_show_prints_everything_and_writes_nothing(git_repo: Path, isolate: Path) -> None:
    before = files_under(isolate)
    result = cli(git_repo, "schedule", "show")
    assert result.exit_code == 0
    assert "# ==> crontab entry" in result.stdout
    assert "Persistent=true" in result.stdout
    assert "gh pr create" in result.stdout
    assert files_under(isolate) == before
    only_cron = cli(git_repo, "schedule", "show", "--cron").stdout
    assert only_cron.startswith("# gitdream schedule: ") and only_cron.count("\n") == 2
    document = json.loads(cli(git_repo, "schedule", "show", "--json").stdout)
    assert set(document) == {"repository", "python", "cron", "log", "systemd", "ci", "gitlab"}
    assert document["ci"]["path"] == ".github/workflows/gitdream.yml"
    assert document["gitlab"]["path"] == ".gitlab/gitdream.yml"
    assert document["log"] == str(isolate / "gitdream-home" / "logs" / "schedule.log")
    assert document["systemd"]["environment_file"] == str(isolate / "gitdream-home" / "environment")
    assert document["systemd"]["dir"] == str(isolate / "xdg_config_home" / "systemd" / "user")


def test_install_systemd_writes_user_units_idempotently(git_repo: Path, isolate: Path) -> None:
    result = cli(git_repo, "schedule", "install", "--systemd", "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    folder = isolate / "xdg_config_home" / "systemd" / "user"
    names = sorted(p.name for p in folder.iterdir())
    assert [w["action"] for w in document["written"]] == ["created", "created"]
    assert [Path(w["path"]).name for w in document["written"]] == names
    assert document["next_steps"][1].startswith("systemctl --user enable --now gitdream-")
    before = files_under(folder)
    again = json.loads(cli(git_repo, "schedule", "install", "--systemd", "--json").stdout)
    assert [w["action"] for w in again["written"]] == ["unchanged", "unchanged"]
    assert files_under(folder) == before


def test_install_systemd_refuses_a_foreign_unit(git_repo: Path, isolate: Path) -> None:
    t = schedule.job(git_repo)
    folder = isolate / "xdg_config_home" / "systemd" / "user"
    folder.mkdir(parents=True)
    (folder / f"{t.unit}.timer").write_text("[Timer]\nOnCalendar=daily\n")
    result = run_gitdream(git_repo, "schedule", "install", "--systemd")
    assert result.returncode == 1
    assert "is not gitdream's schedule" in result.stderr
    assert (folder / f"{t.unit}.timer").read_text() == "[Timer]\nOnCalendar=daily\n"


def test_install_needs_a_kind(git_repo: Path) -> None:
    assert run_gitdream(git_repo, "schedule", "install").returncode == 2


@pytest.fixture
def crontab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "cronbin"
    bin_dir.mkdir()
    (bin_dir / "crontab").write_text(FAKE_CRONTAB)
    (bin_dir / "crontab").chmod(0o755)
    table = tmp_path / "crontab.txt"
    monkeypatch.setenv("FAKE_CRONTAB", str(table))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return table


def test_install_cron_adds_one_entry_and_keeps_other_lines(git_repo: Path, crontab: Path) -> None:
    t = schedule.job(git_repo, sys.executable)
    assert schedule.install_cron(t).action == "created"
    assert crontab.read_text() == schedule.render_cron(t)
    crontab.write_text("MAILTO=me\n0 1 * * * backup\n" + crontab.read_text() + "5 5 * * * other")
    assert schedule.install_cron(t).action == "unchanged"
    moved = schedule.job(git_repo, "/new/python")
    assert schedule.install_cron(moved).action == "updated"
    assert crontab.read_text() == (
        "MAILTO=me\n0 1 * * * backup\n" + schedule.render_cron(moved) + "5 5 * * * other"
    )


def test_install_cron_without_crontab_is_a_clear_error(
    git_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(ScheduleError, match="crontab command was not found"):
        schedule.install_cron(schedule.job(git_repo, sys.executable))


def test_cli_install_cron(git_repo: Path, crontab: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "gitdream", "schedule", "install", "--cron"],
        cwd=git_repo,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[:3] == [
        "created    crontab (this repository's entry)",
        "next:",
        f"  its output goes to {Path(os.environ['GITDREAM_HOME']) / 'logs' / 'schedule.log'}",
    ]
    assert "--trigger schedule" in crontab.read_text()


def test_the_cron_job_creates_its_log_folder_on_a_fresh_account(git_repo: Path, tmp_path: Path) -> None:
    """Regression test for #17: the cron job died on a fresh account ("Directory
    nonexistent"): its log folder was never created. Run the line as cron does."""
    fresh = tmp_path / "fresh-home"
    t = schedule.Job(git_repo, sys.executable, fresh / ".local/state/gitdream/log/schedule.log", "u", 1)
    command = schedule.render_cron(t).splitlines()[1].split(" ", 5)[5].replace("\\%", "%")
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(fresh),
        "GITDREAM_HOME": str(tmp_path / "gd"),
        "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
    }
    proc = subprocess.run(["/bin/sh", "-c", command], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert t.log.parent.is_dir()


def test_jobs_keep_the_gitdream_home_they_were_installed_with(
    git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """cron and systemd start a job without the installing shell's environment: a job
    installed under GITDREAM_HOME must read that home's config, not the default one."""
    home = tmp_path / "my home 5%"
    monkeypatch.setenv("GITDREAM_HOME", str(home))
    t = schedule.job(git_repo, sys.executable)
    assert t.home == str(home)
    service = schedule.render_systemd(t)[f"{t.unit}.service"]
    assert f'Environment="GITDREAM_HOME={tmp_path}/my home 5%%"\n' in service
    command = schedule.render_cron(t).splitlines()[1].split(" ", 5)[5].replace("\\%", "%")
    # Run the job line as cron does, with an environment that has no GITDREAM_HOME: the
    # job writes its log under the installing home and reads that home's config.
    (home).mkdir()
    (home / "config.toml").write_text("enabled = false\n", encoding="utf-8")
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path / "cron-home"),
        "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
    }
    proc = subprocess.run(["/bin/sh", "-c", command], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "disabled" in t.log.read_text(encoding="utf-8")
    monkeypatch.delenv("GITDREAM_HOME")
    unset = schedule.job(git_repo, sys.executable)
    assert unset.home is None
    assert "GITDREAM_HOME" not in schedule.render_cron(unset)
    assert "Environment=" not in schedule.render_systemd(unset)[f"{unset.unit}.service"]


def test_install_cron_creates_the_log_folder_and_uninstall_removes_only_its_entry(
    git_repo: Path, crontab: Path, isolate: Path
) -> None:
    t = schedule.job(git_repo, sys.executable)
    assert not t.log.parent.exists()
    schedule.install_cron(t)
    assert t.log.parent.is_dir()
    crontab.write_text("MAILTO=me\n" + crontab.read_text() + "5 5 * * * other\n")
    assert schedule.uninstall_cron(t).action == "removed"
    assert crontab.read_text() == "MAILTO=me\n5 5 * * * other\n"
    assert schedule.uninstall_cron(t).action == "absent"
    result = cli(git_repo, "schedule", "uninstall", "--cron", "--json")
    assert json.loads(result.stdout)["written"] == [{"path": "crontab", "action": "absent"}]


def test_systemd_service_reads_an_environment_file_and_the_timer_names_linger(
    git_repo: Path, isolate: Path
) -> None:
    t = schedule.job(git_repo, "/venv/bin/python")
    units = schedule.render_systemd(t)
    environment = isolate / "gitdream-home" / "environment"
    assert f"EnvironmentFile=-{environment}\n" in units[f"{t.unit}.service"]
    assert "ANTHROPIC_API_KEY" in units[f"{t.unit}.service"]
    assert "loginctl enable-linger $USER" in units[f"{t.unit}.timer"]
    result = cli(git_repo, "schedule", "install", "--systemd")
    assert (
        '  loginctl enable-linger "$USER"  (so the timer runs while you are not logged in)' in result.stdout
    )
    assert f"  put ANTHROPIC_API_KEY=... in {environment} (mode 600)" in result.stdout


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_units_pass_systemd_analyze_verify(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "a 50% repo")
    t = schedule.job(repo, sys.executable)
    for name, content in schedule.render_systemd(t).items():
        (tmp_path / name).write_text(content)
    proc = subprocess.run(
        ["systemd-analyze", "verify", str(tmp_path / f"{t.unit}.service"), str(tmp_path / f"{t.unit}.timer")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if "Failed to initialize manager" in proc.stderr:
        pytest.skip(f"systemd-analyze cannot run here: {proc.stderr.strip()}")
    assert (proc.returncode, proc.stderr) == (0, "")


def test_uninstall_systemd_removes_the_units_and_their_enable_link(git_repo: Path, isolate: Path) -> None:
    t = schedule.job(git_repo, sys.executable)
    schedule.install_systemd(t)
    folder = schedule.systemd_user_dir()
    wants = folder / "timers.target.wants"
    wants.mkdir()
    (wants / f"{t.unit}.timer").symlink_to(folder / f"{t.unit}.timer")  # what `systemctl enable` makes
    (folder / "other.service").write_text("[Service]\n")
    result = cli(git_repo, "schedule", "uninstall", "--systemd")
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in folder.rglob("*")) == ["other.service", "timers.target.wants"]
    assert f"systemctl --user stop {t.unit}.timer" in result.stdout
    (folder / f"{t.unit}.timer").write_text("mine\n")
    refused = cli(git_repo, "schedule", "uninstall", "--systemd")
    assert refused.exit_code == 1 and "is not gitdream's schedule" in refused.stderr
    assert (folder / f"{t.unit}.timer").read_text() == "mine\n"


@pytest.mark.parametrize(
    ("kind", "target"), [("github", ".github/workflows/gitdream.yml"), ("gitlab", ".gitlab/gitdream.yml")]
)
def test_ci_install_and_uninstall_write_only_gitdreams_file(git_repo: Path, kind: str, target: str) -> None:
    result = cli(git_repo, "schedule", "install", f"--{kind}")
    assert result.exit_code == 0, result.stderr
    assert (git_repo / target).read_text() == schedule.render_ci(kind)
    assert f"review and commit {target}" in result.stdout
    assert cli(git_repo, "schedule", "install", f"--{kind}").stdout.startswith("unchanged")
    assert cli(git_repo, "schedule", "uninstall", f"--{kind}").stdout.startswith("removed")
    assert not (git_repo / target).exists()
    (git_repo / target).write_text("name: mine\n")
    assert cli(git_repo, "schedule", "install", f"--{kind}").exit_code == 1
    assert cli(git_repo, "schedule", "uninstall", f"--{kind}").exit_code == 1
    assert (git_repo / target).read_text() == "name: mine\n"
