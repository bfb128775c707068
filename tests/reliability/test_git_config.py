"""Signing and identity from where git reads them (issue 16, case 7).

`commit.gpgsign`, `gpg.format`, `user.signingkey` and `user.name`/`user.email` set in the
places git reads and libgit2 does not — `GIT_CONFIG_GLOBAL`, `GIT_CONFIG_COUNT` with
`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`, `git -c` (GIT_CONFIG_PARAMETERS, through a real
git alias), XDG, and an `includeIf` — make `git commit` sign and name the user; a dream's
commits must then be signed (verified by `git verify-commit`) and name the same committer.
Before, they were unsigned and committed by `gitdream`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import git, gitdream_env
from tests.reliability.support import agent_repo, material, prepared

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is not installed")

NAME, EMAIL = "Ada Lovelace", "ada@analytical.example"


def _key(tmp_path: Path) -> tuple[Path, Path]:
    key = tmp_path / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"{EMAIL} {key.with_suffix('.pub').read_text()}")
    return key, allowed


SETTINGS = {
    "commit.gpgsign": "true",
    "gpg.format": "ssh",
    "user.name": NAME,
    "user.email": EMAIL,
}


def _file(path: Path, settings: dict[str, str]) -> None:
    lines = []
    for name, value in settings.items():
        section, key = name.rsplit(".", 1)
        lines += [f"[{section}]", f"\t{key} = {value}"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def _dream(root: Path, tmp_path: Path, where: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    key, allowed = _key(tmp_path)
    settings = {**SETTINGS, "user.signingkey": str(key), "gpg.ssh.allowedSignersFile": str(allowed)}
    env = gitdream_env()
    cmd = [sys.executable, "-m", "gitdream", "run"]
    if where == "GIT_CONFIG_GLOBAL":
        other = tmp_path / "other-gitconfig"
        _file(other, settings)
        env["GIT_CONFIG_GLOBAL"] = str(other)
    elif where == "GIT_CONFIG_COUNT":
        env["GIT_CONFIG_COUNT"] = str(len(settings))
        for n, (name, value) in enumerate(settings.items()):
            env[f"GIT_CONFIG_KEY_{n}"] = name
            env[f"GIT_CONFIG_VALUE_{n}"] = value
    elif where == "git -c":
        # a real `git -c … <alias>`: git passes the settings on in GIT_CONFIG_PARAMETERS
        git(root, "config", "alias.dream", f"!{sys.executable} -m gitdream run")
        cmd = ["git"]
        for name, value in settings.items():
            cmd += ["-c", f"{name}={value}"]
        cmd.append("dream")
    elif where == "XDG":
        env.pop("GIT_CONFIG_GLOBAL", None)  # no global file: git reads $XDG_CONFIG_HOME/git/config
        home = tmp_path / "home"
        home.mkdir()
        env["HOME"] = str(home)
        env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")
        _file(tmp_path / "xdg" / "git" / "config", settings)
    elif where == "includeIf":
        extra = tmp_path / "work.gitconfig"
        _file(extra, settings)
        other = tmp_path / "other-gitconfig"
        other.write_text(
            Path(os.environ["GIT_CONFIG_GLOBAL"]).read_text()
            + f'[includeIf "gitdir:{root.resolve()}/"]\n\tpath = {extra}\n'
        )
        env["GIT_CONFIG_GLOBAL"] = str(other)
    return subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True), allowed


@pytest.mark.parametrize("where", ["GIT_CONFIG_GLOBAL", "GIT_CONFIG_COUNT", "git -c", "XDG", "includeIf"])
def test_dream_commits_are_signed_and_named_as_git_would(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, where: str
) -> None:
    root, _ = prepared(tmp_path_factory, "ops-material", lambda r: material(agent_repo(r)), tmp_path / "repo")
    done, allowed = _dream(root, tmp_path, where)
    assert done.returncode == 0, done.stderr
    commits = git(root, "rev-list", "HEAD~2..HEAD").split()
    assert len(commits) == 2
    for commit in commits:
        assert git(root, "log", "-1", "--format=%cn <%ce>", commit).strip() == f"{NAME} <{EMAIL}>"
        verified = subprocess.run(
            ["git", "-c", f"gpg.ssh.allowedSignersFile={allowed}", "verify-commit", commit],
            cwd=root,
            capture_output=True,
            text=True,
        )
        assert verified.returncode == 0, (
            f"{where}: dream commit {commit[:7]} is not signed: {verified.stderr}"
        )
