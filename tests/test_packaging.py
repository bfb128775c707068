"""The wheel carries hooks/ and templates/ and works without the source tree."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from tests.helpers import PACKAGE_ROOT


@pytest.mark.skipif(shutil.which("git") is None, reason="git is required")
def test_wheel_ships_hooks_and_templates(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(dist),
            str(PACKAGE_ROOT),
        ],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr
    wheel = next(dist.glob("gitdream-*.whl"))
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.startswith("gitdream/_data/templates/agent/") for n in names)
    assert any(n.startswith("gitdream/_data/hooks/") for n in names) or not any(
        p.is_file() for p in (PACKAGE_ROOT / "hooks").iterdir()
    )

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # Install the wheel alone into the fresh venv, and borrow the test interpreter's
    # dependencies (pygit2, click...) through a .pth file, so the test needs no network.
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--target", site, str(wheel)],
        check=True,
        capture_output=True,
    )
    Path(site, "borrowed-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    probe = (
        "import gitdream, gitdream.resources as r; "
        "print(gitdream.__file__); print(r.templates_dir()); "
        "print((r.templates_dir() / 'agent' / 'agent.md').is_file()); print(r.hooks_dir().is_dir())"
    )
    out = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, cwd=tmp_path, check=True)
    lines = out.stdout.splitlines()
    assert lines[0].startswith(site)
    assert lines[1] == str(Path(site) / "gitdream" / "_data" / "templates")
    assert lines[2:] == ["True", "True"]
    version = subprocess.run(
        [str(python), "-m", "gitdream", "--version"], capture_output=True, text=True, cwd=tmp_path
    )
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith("gitdream ")
