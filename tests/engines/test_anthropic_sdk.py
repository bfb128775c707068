"""The anthropic SDK is an optional extra (`gitdream[anthropic]`) with a real floor.

The environment without the SDK is real: a venv whose site-packages links every package
of the test interpreter except the anthropic SDK, so `import anthropic` fails there
exactly as on a machine where it was never installed."""

from __future__ import annotations

import json
import os
import subprocess
import sysconfig
import tomllib
import venv
from pathlib import Path

import pytest

from gitdream import extras
from tests.helpers import PACKAGE_ROOT, commit_all, write

LOG = "agents/ops/memory/logs/2026/03/2026-03-01.md"


def _requirements() -> tuple[list[str], dict[str, list[str]]]:
    project = tomllib.loads((PACKAGE_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return project["dependencies"], project["optional-dependencies"]


def test_the_sdk_is_an_extra_with_the_floor_the_code_checks() -> None:
    required, optional = _requirements()
    assert not any(r.startswith("anthropic") for r in required), "the default install must not pull the SDK"
    floor = ".".join(map(str, extras.ANTHROPIC_FLOOR))
    assert optional["anthropic"] == [f"anthropic>={floor}"]
    # The dev extra pulls the SDK, so `pip install -e '.[dev]'` (CI) runs the engine's tests.
    assert "gitdream[anthropic]" in optional["dev"]


@pytest.mark.parametrize(
    ("version", "problem"),
    [
        (None, "not installed"),
        ("0.60.0", "is 0.60.0; the anthropic engine needs 2.5 or newer"),
        ("2.4.0", "is 2.4.0"),
        ("2.5.0", None),
        ("2.14.0", None),
        ("3.0.0rc1", None),
    ],
)
def test_sdk_versions_below_the_floor_are_refused(version: str | None, problem: str | None) -> None:
    found = extras.sdk_version_problem(version)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found.message
        assert (found.hint or "").startswith("pip install ") and "anthropic" in (found.hint or "")


def _dist_info(site: Path, direct_url: str | None) -> list[str]:
    """A real installed-distribution folder for gitdream in `site`, as pip leaves it, with
    `direct_url.json` (PEP 610) when given; the search path to find it."""
    info = site / "gitdream-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: gitdream\nVersion: 0.1.0\n")
    if direct_url is not None:
        (info / "direct_url.json").write_text(direct_url)
    return [str(site)]


def test_the_install_hint_follows_how_gitdream_was_installed(tmp_path: Path) -> None:
    """The hint said `pip install 'gitdream[anthropic]'` to a user who installed from a
    checkout, which asks an index for a package that may be someone else's."""
    checkout = tmp_path / "my checkout"
    editable = _dist_info(
        tmp_path / "a", json.dumps({"url": checkout.as_uri(), "dir_info": {"editable": True}})
    )
    plain = _dist_info(tmp_path / "b", json.dumps({"url": checkout.as_uri(), "dir_info": {}}))
    wheel = _dist_info(
        tmp_path / "c", json.dumps({"url": "https://example.invalid/g.whl", "archive_info": {}})
    )
    index = _dist_info(tmp_path / "d", None)
    assert extras.install_extra_command(path=editable) == f"pip install -e '{checkout}[anthropic]'"
    assert extras.install_extra_command(path=plain) == f"pip install '{checkout}[anthropic]'"
    assert extras.install_extra_command(path=wheel) == "pip install 'gitdream[anthropic]'"
    assert extras.install_extra_command(path=index) == "pip install 'gitdream[anthropic]'"
    assert extras.install_extra_command(path=[str(tmp_path / "none")]) == "pip install 'anthropic>=2.5'"
    # This test environment is the README's editable install of this checkout.
    assert extras.installed_from() == (PACKAGE_ROOT, True)


def test_the_installed_sdk_meets_the_floor() -> None:
    assert extras.anthropic_problem() is None, "the test environment must have the SDK (the dev extra)"


@pytest.fixture(scope="module")
def python_without_sdk(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with every package of the test interpreter except the anthropic SDK."""
    root = tmp_path_factory.mktemp("nosdk")
    venv.EnvBuilder(with_pip=False, symlinks=True).create(root / "venv")
    python = root / "venv" / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = Path(sysconfig.get_paths()["purelib"])
    for item in ours.iterdir():
        if item.name.casefold().startswith("anthropic"):
            continue
        target = Path(site) / item.name
        if not target.exists():
            target.symlink_to(item)
    probe = subprocess.run([str(python), "-c", "import anthropic"], capture_output=True, text=True)
    assert probe.returncode != 0 and "No module named 'anthropic'" in probe.stderr
    return python


def _gitdream(python: Path, cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ, PYTHONPATH=str(PACKAGE_ROOT), **env)
    return subprocess.run(
        [str(python), "-m", "gitdream", *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=120
    )


def test_without_the_sdk_demo_and_the_offline_engine_work(python_without_sdk: Path, tmp_path: Path) -> None:
    demo = _gitdream(python_without_sdk, tmp_path, "demo", str(tmp_path / "demo"))
    assert demo.returncode == 0, demo.stderr
    assert "Traceback" not in demo.stderr


def test_without_the_sdk_the_anthropic_engine_says_how_to_install_it(
    python_without_sdk: Path, agent_repo: Path
) -> None:
    write(agent_repo, LOG, "- Promote only after the smoke test passes.\n")
    commit_all(agent_repo, "log")
    result = _gitdream(
        python_without_sdk, agent_repo, "run", "--engine", "anthropic", ANTHROPIC_API_KEY="sk-ant-x"
    )
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines()[-2:] == [
        "error: the anthropic engine needs the anthropic SDK, which is not installed "
        "(it is an optional extra of gitdream)",
        f"hint: pip install -e '{PACKAGE_ROOT}[anthropic]' (in the environment gitdream runs in), "
        "or use --engine offline",
    ]
    status = _gitdream(python_without_sdk, agent_repo, "status", GITDREAM_ENGINE="anthropic")
    assert "NOT usable: the anthropic engine needs the anthropic SDK" in status.stdout
    # The offline engine dreams in the same environment.
    offline = _gitdream(python_without_sdk, agent_repo, "run", "--engine", "offline")
    assert offline.returncode == 0, offline.stderr


def test_an_estimate_needs_no_sdk(python_without_sdk: Path, agent_repo: Path) -> None:
    write(agent_repo, LOG, "- Promote only after the smoke test passes.\n")
    commit_all(agent_repo, "log")
    result = _gitdream(python_without_sdk, agent_repo, "run", "--engine", "anthropic", "--estimate")
    assert result.returncode == 0, result.stderr
    assert "nothing was sent" in result.stdout
