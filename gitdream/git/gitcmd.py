"""The only place gitdream runs the `git` command.

Calls always name the repository explicitly (`--git-dir`, `--work-tree`) and run with an
environment scrubbed of hook-exported variables, so an inherited `GIT_DIR` or
`GIT_INDEX_FILE` never redirects them (githooks(5): clear
`git rev-parse --local-env-vars` before running git elsewhere).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from gitdream.errors import GitdreamError
from gitdream.git import gitenv

if TYPE_CHECKING:
    import subprocess


class GitCommandError(GitdreamError):
    """A git command exited non-zero; `str()` shows command, status and output."""

    kind = "git_command"

    def __init__(self, args: Sequence[str], returncode: int, stdout: bytes, stderr: bytes):
        self.args_ = list(args)
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        err = stderr.decode("utf-8", "replace").strip()
        super().__init__(f"git {' '.join(args)} failed with status {returncode}: {err}")


def run(
    args: Sequence[str],
    *,
    cwd: Path | str | None = None,
    git_dir: Path | str | None = None,
    work_tree: Path | str | None = None,
    input: bytes | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    config_env: bool = False,
) -> subprocess.CompletedProcess[bytes]:
    """Run `git [--git-dir D] [--work-tree W] ARGS` and return the completed process.

    `env` entries are added to the scrubbed environment. With `config_env` the
    command-line configuration the process inherited (`GIT_CONFIG_PARAMETERS`, from `git
    -c`, and `GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n`) is kept: it belongs to the repository
    gitdream was started on, and git applies it there (`gitdream.git.gitconfig`). Raises
    GitCommandError when the status is non-zero and `check` is true; FileNotFoundError
    becomes a GitdreamError saying git is not installed.
    """
    import subprocess  # idle path: not at module level: opening a repository (the idle path) runs no git

    cmd = ["git"]
    if git_dir is not None:
        cmd.append(f"--git-dir={git_dir}")
    if work_tree is not None:
        cmd.append(f"--work-tree={work_tree}")
    cmd.extend(args)
    full_env = gitenv.scrubbed()
    if config_env:
        full_env.update(gitenv.command_line_config())
    if env:
        full_env.update(env)
    try:
        proc = subprocess.run(
            cmd,
            cwd=str(cwd) if cwd is not None else None,
            input=input,
            capture_output=True,
            env=full_env,
            check=False,
        )
    except FileNotFoundError as exc:
        raise GitdreamError(
            "the git command was not found", hint="install git (2.31 or newer) and put it on PATH"
        ) from exc
    if check and proc.returncode != 0:
        raise GitCommandError(list(args), proc.returncode, proc.stdout, proc.stderr)
    return proc
