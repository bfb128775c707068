"""The CLI contract: help, errors, exit codes, JSON errors, crash logs, docs coverage."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest

from gitdream import __version__
from gitdream.cli import cli as group
from tests.helpers import cli, run_gitdream


def _commands(command: click.Command, prefix: str = "") -> list[tuple[str, click.Command]]:
    found = []
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            if sub.hidden:
                continue
            found.append((f"{prefix}{name}", sub))
            found.extend(_commands(sub, f"{prefix}{name} "))
    return found


def test_version(tmp_path: Path) -> None:
    result = cli(tmp_path, "--version")
    assert result.exit_code == 0
    assert result.stdout == f"gitdream {__version__}\n"


def test_python_dash_m_works(tmp_path: Path) -> None:
    proc = run_gitdream(tmp_path, "--version")
    assert proc.returncode == 0 and proc.stdout.startswith("gitdream ")


def test_every_command_has_help_with_examples(tmp_path: Path) -> None:
    for name, command in _commands(group):
        assert command.help, f"{name} has no help"
        result = cli(tmp_path, *name.split(), "--help")
        assert result.exit_code == 0, name
        if not isinstance(command, click.Group):
            assert "Examples:" in command.help, f"{name} help has no examples"


def test_bare_gitdream_prints_help(tmp_path: Path) -> None:
    result = cli(tmp_path)
    assert result.exit_code in (0, 2)
    assert "Usage:" in result.stdout + result.stderr


def test_user_error_format_and_exit_code(tmp_path: Path) -> None:
    result = cli(tmp_path, "init")
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines[0].startswith("error: not a git repository")
    assert lines[1] == "hint: run gitdream inside a git repository, or create one with `git init`"
    assert result.stdout == ""


def test_user_error_json(tmp_path: Path) -> None:
    result = cli(tmp_path, "init", "--json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc == {
        "error": {"type": "repo_state", "message": doc["error"]["message"], "hint": doc["error"]["hint"]}
    }


def test_usage_error_exit_code(tmp_path: Path) -> None:
    result = cli(tmp_path, "init", "--no-such-flag")
    assert result.exit_code == 2


def test_missing_directory_for_dash_c(tmp_path: Path) -> None:
    result = cli(tmp_path / "missing", "config", "show")
    assert result.exit_code == 2


def test_unexpected_error_writes_crash_log(
    git_repo: Path, monkeypatch: pytest.MonkeyPatch, isolate: Path
) -> None:
    """An internal error exits 3 with a crash log, never a bare traceback."""
    from gitdream.commands import init as init_module

    def boom(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("kaboom")

    monkeypatch.setattr(init_module, "run_init", boom)
    monkeypatch.delenv("GITDREAM_RAISE_ERRORS")
    result = cli(git_repo, "init")
    assert result.exit_code == 3
    assert "gitdream failed unexpectedly: RuntimeError: kaboom" in result.stderr
    logs = list((isolate / "gitdream-home" / "logs").glob("crash-*.md"))
    assert len(logs) == 1
    text = logs[0].read_text()
    assert "RuntimeError: kaboom" in text and "pygit2:" in text
