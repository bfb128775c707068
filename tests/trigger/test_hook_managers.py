"""gitdream's hooks next to hook managers — the pre-commit framework, lefthook, Husky, a
tracked hooks folder — and chained hooks with CRLF line ends, driven by real `git commit`
and `git pull` (and the real `pre-commit` and `lefthook` programs where installed).

`gitdream` on PATH is a wrapper that runs this source tree, as a hook manager would find
an installed gitdream.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gitdream.git.repo import Repo
from gitdream.trigger import hookscripts
from tests.conftest import AGENT_MD
from tests.helpers import cli, commit_all, git, gitdream_env, init_repo, write

BAD_AGENT_MD = "# ops\n\n" + "a" * 2100 + "\n\n## Notes\n"
PRE_COMMIT = Path(sys.executable).parent / "pre-commit"
LEFTHOOK = shutil.which("lefthook", path=str(Path(sys.executable).parent)) or shutil.which("lefthook")
# Husky 9.1.7's stub and runner `h` (typicode/husky: index.js and the file `husky`), as
# `husky` writes them into .husky/_/.
HUSKY_STUB = '#!/usr/bin/env sh\n. "$(dirname "$0")/h"'
HUSKY_RUNNER = """#!/usr/bin/env sh
[ "$HUSKY" = "2" ] && set -x
n=$(basename "$0")
s=$(dirname "$(dirname "$0")")/$n

[ ! -f "$s" ] && exit 0

i="${XDG_CONFIG_HOME:-$HOME/.config}/husky/init.sh"
[ -f "$i" ] && . "$i"

[ "${HUSKY-}" = "0" ] && exit 0

export PATH="node_modules/.bin:$PATH"
sh -e "$s" "$@"
c=$?

[ $c != 0 ] && echo "husky - $n script failed (code $c)"
[ $c = 127 ] && echo "husky - command not found in PATH=$PATH"
exit $c
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The environment of git commands: this source tree's gitdream first on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "gitdream"
    wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} -m gitdream "$@"\n')
    wrapper.chmod(0o755)
    base = gitdream_env({"PRE_COMMIT_ALLOW_NO_CONFIG": "1"})
    base["PATH"] = f"{bin_dir}:{Path(sys.executable).parent}:{base['PATH']}"
    return base


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = init_repo(tmp_path / "repo")
    write(root, "agents/ops/agent.md", AGENT_MD)
    commit_all(root, "initial")
    return root


def commit(root: Path, env: dict[str, str], content: str) -> subprocess.CompletedProcess[str]:
    write(root, "agents/ops/agent.md", content)
    git(root, "add", "-A")
    return subprocess.run(
        ["git", "commit", "-q", "-m", "x"], cwd=root, env=env, capture_output=True, text=True
    )


def states(root: Path) -> dict[str, str]:
    document = json.loads(cli(root, "hooks", "status", "--json").stdout)
    return {h["name"]: h["status"] for h in document["hooks"]}


def guards(root: Path, env: dict[str, str]) -> None:
    """A broken agent.md is blocked by gitdream's check, a good one is committed."""
    blocked = commit(root, env, BAD_AGENT_MD)
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    assert "prefix-section" in blocked.stderr
    passed = commit(root, env, AGENT_MD + "\nMore.\n")
    assert passed.returncode == 0, passed.stdout + passed.stderr


# --- the pre-commit framework ---------------------------------------------------------------


def pre_commit(root: Path, env: dict[str, str], *args: str) -> None:
    subprocess.run([str(PRE_COMMIT), "install", *args], cwd=root, env=env, check=True, capture_output=True)


@pytest.mark.skipif(not PRE_COMMIT.is_file(), reason="the pre-commit framework is not installed")
def test_pre_commit_then_gitdream_then_pre_commit_again_works(repo: Path, env: dict[str, str]) -> None:
    """Regression test for #17: `pre-commit install` → `gitdream hooks install` →
    `pre-commit install` made every commit fail ("migration mode")."""
    pre_commit(repo, env)
    result = hookscripts.install(Repo.open(repo), hooks=["pre-commit"], python=sys.executable)
    (action,) = result.hooks
    assert action.path == repo / ".git" / "hooks" / "pre-commit.legacy"
    assert "pre-commit's hook" in action.note
    pre_commit(repo, env)
    assert hookscripts.is_pre_commit_framework(repo / ".git" / "hooks" / "pre-commit")
    assert states(repo)["pre-commit"] == "chained-by-other"
    guards(repo, env)
    hookscripts.uninstall(Repo.open(repo), hooks=["pre-commit"])
    assert not (repo / ".git" / "hooks" / "pre-commit.legacy").exists()
    assert commit(repo, env, BAD_AGENT_MD).returncode == 0  # pre-commit alone, no gitdream


@pytest.mark.skipif(not PRE_COMMIT.is_file(), reason="the pre-commit framework is not installed")
def test_a_chain_that_loops_into_pre_commit_is_repaired_by_install(repo: Path, env: dict[str, str]) -> None:
    """The state an earlier gitdream left after that order: pre-commit's hook runs ours as
    .legacy, and ours runs a copy of pre-commit's hook."""
    hooks = repo / ".git" / "hooks"
    pre_commit(repo, env)
    shutil.copy2(hooks / "pre-commit", hooks / "pre-commit.gitdream-prev")
    (hooks / "pre-commit.legacy").write_bytes(hookscripts.render("pre-commit", sys.executable))
    (hooks / "pre-commit.legacy").chmod(0o755)
    assert states(repo)["pre-commit"] == "chain-loop"
    failed = commit(repo, env, AGENT_MD + "\nx\n")
    assert failed.returncode != 0 and "migration mode" in failed.stderr
    (action,) = hookscripts.install(Repo.open(repo), hooks=["pre-commit"], python=sys.executable).hooks
    assert "removed pre-commit.gitdream-prev" in action.note
    assert states(repo)["pre-commit"] == "chained-by-other"
    guards(repo, env)


# --- lefthook -----------------------------------------------------------------------------


LEFTHOOK_YML = """pre-commit:
  commands:
    gitdream:
      run: gitdream hook pre-commit
post-merge:
  commands:
    gitdream:
      run: gitdream hook post-merge {0}
"""


@pytest.mark.skipif(LEFTHOOK is None, reason="lefthook is not installed (pip install lefthook)")
def test_hooks_status_names_lefthooks_old_rename_and_the_fix_works(repo: Path, env: dict[str, str]) -> None:
    """Regression test for #17: lefthook renamed gitdream's hook to pre-commit.old and
    never ran it, and `hooks status` reported it as fine."""
    write(repo, "lefthook.yml", "pre-commit:\n  commands:\n    hello:\n      run: echo hello\n")
    commit_all(repo, "lefthook")
    hookscripts.install(Repo.open(repo), python=sys.executable)
    subprocess.run([LEFTHOOK, "install"], cwd=repo, env=env, check=True, capture_output=True)
    assert (repo / ".git" / "hooks" / "pre-commit.old").is_file()
    assert commit(repo, env, BAD_AGENT_MD).returncode == 0  # the silent failure
    assert states(repo)["pre-commit"] == "renamed-by-lefthook"
    shown = cli(repo, "hooks", "status").stdout
    assert (
        "lefthook renamed gitdream's hook to pre-commit.old and never runs it: in lefthook.yml, "
        "give pre-commit a command `run: gitdream hook pre-commit`" in shown
    )

    # The fix the status names: gitdream in lefthook.yml, then `hooks uninstall` removes
    # gitdream's renamed hook, and status reports the entry point as running gitdream.
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    write(repo, "lefthook.yml", LEFTHOOK_YML)
    removed = hookscripts.uninstall(Repo.open(repo))
    assert ("removed", "pre-commit.old") in [(a.action, a.path.name) for a in removed.hooks]
    assert not (repo / ".git" / "hooks" / "pre-commit.old").exists()
    subprocess.run([LEFTHOOK, "install"], cwd=repo, env=env, check=True, capture_output=True)
    found = states(repo)
    assert (found["pre-commit"], found["post-merge"]) == ("via-lefthook", "via-lefthook")
    assert "run by lefthook" in cli(repo, "hooks", "status").stdout
    guards(repo, env)


@pytest.mark.skipif(LEFTHOOK is None, reason="lefthook is not installed (pip install lefthook)")
def test_a_lefthook_configuration_without_gitdream_is_not_taken_for_one_with_it(
    repo: Path, env: dict[str, str]
) -> None:
    """Only a configuration line that calls `gitdream hook NAME` counts: a comment naming
    it, or the call for another hook, does not."""
    write(
        repo,
        "lefthook.yml",
        "pre-commit:\n  commands:\n    hello:\n      run: echo hello  # not gitdream hook pre-commit\n"
        "post-merge:\n  commands:\n    gitdream:\n      run: gitdream hook post-merge {0}\n",
    )
    subprocess.run([LEFTHOOK, "install"], cwd=repo, env=env, check=True, capture_output=True)
    found = states(repo)
    assert (found["pre-commit"], found["post-merge"]) == ("foreign", "via-lefthook")
    assert "run `gitdream hooks install` to chain it" in cli(repo, "hooks", "status").stdout


@pytest.mark.skipif(LEFTHOOK is None, reason="lefthook is not installed (pip install lefthook)")
def test_lefthooks_post_merge_runs_gitdream_hook(tmp_path: Path, env: dict[str, str], isolate: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    upstream = tmp_path / "upstream"
    git(tmp_path, "clone", "-q", str(remote), str(upstream))
    write(upstream, "agents/ops/agent.md", AGENT_MD)
    write(upstream, "lefthook.yml", LEFTHOOK_YML)
    commit_all(upstream, "initial")
    git(upstream, "push", "-q", "origin", "main")
    local = tmp_path / "local"
    git(tmp_path, "clone", "-q", str(remote), str(local))
    subprocess.run([LEFTHOOK, "install"], cwd=local, env=env, check=True, capture_output=True)
    write(upstream, "agents/ops/memory/logs/2026/03/2026-03-01.md", "- a log\n")
    commit_all(upstream, "log")
    git(upstream, "push", "-q", "origin", "main")
    pulled = subprocess.run(
        ["git", "pull", "-q"],
        cwd=local,
        env={**env, "_GITDREAM_HOOK_FOREGROUND": "1"},
        capture_output=True,
        text=True,
    )
    assert pulled.returncode == 0, pulled.stderr
    log = (isolate / "gitdream-home" / "logs" / "hooks.log").read_text()
    assert f"\tpost-merge\t{os.path.realpath(local)}\tgate 'sessions' closed: ops: 1 new session" in log


# --- Husky ---------------------------------------------------------------------------------


@pytest.fixture
def husky(repo: Path) -> Path:
    """A Husky 9 setup: core.hooksPath=.husky/_ with its stubs, runner and .gitignore."""
    hooks = repo / ".husky" / "_"
    write(repo, ".husky/_/.gitignore", "*")
    write(repo, ".husky/_/h", HUSKY_RUNNER)
    (hooks / "h").chmod(0o755)
    for name in ("pre-commit", "post-merge", "post-rewrite", "post-commit"):
        write(repo, f".husky/_/{name}", HUSKY_STUB)
        (hooks / name).chmod(0o755)
    git(repo, "config", "core.hooksPath", ".husky/_")
    return hooks


def test_husky_reinstall_dropping_gitdream_is_named_with_the_fix(
    repo: Path, husky: Path, env: dict[str, str]
) -> None:
    """Regression test for #17: Husky's reinstall dropped gitdream's hook and `hooks
    status` reported it as fine."""
    result = hookscripts.install(Repo.open(repo), python=sys.executable)
    assert [w for w in result.warnings if "Husky rewrites them on every install" in w]
    guards(repo, env)
    for name in ("pre-commit", "post-merge", "post-rewrite", "post-commit"):  # `npm install`: husky again
        (husky / name).write_text(HUSKY_STUB)
    assert set(states(repo).values()) == {"dropped-by-husky"}
    assert "put `gitdream hook pre-commit` in .husky/pre-commit" in cli(repo, "hooks", "status").stdout
    assert commit(repo, env, BAD_AGENT_MD).returncode == 0  # the silent failure

    # The fix the status names: the tracked Husky script calls gitdream; stale copies go.
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    write(repo, ".husky/pre-commit", "gitdream hook pre-commit\n")
    removed = hookscripts.uninstall(Repo.open(repo))
    assert {a.action for a in removed.hooks} == {"removed"}
    assert not list(husky.glob("*.gitdream-prev"))
    found = states(repo)
    assert (found["pre-commit"], found["post-merge"]) == ("via-husky", "husky")
    assert "run by Husky" in cli(repo, "hooks", "status").stdout
    guards(repo, env)


# --- a tracked hooks folder -----------------------------------------------------------------


def test_a_tracked_hooks_folder_calls_gitdream_hook(repo: Path, env: dict[str, str]) -> None:
    write(repo, ".githooks/pre-commit", '#!/bin/sh\nexec gitdream hook pre-commit "$@"\n')
    (repo / ".githooks" / "pre-commit").chmod(0o755)
    git(repo, "config", "core.hooksPath", ".githooks")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "tracked hooks", env=env)  # its own hook runs: gitdream via PATH
    refused = cli(repo, "hooks", "install", "--hook", "pre-commit")
    assert refused.exit_code == 1
    assert 'hint: end that hook with the line `exec gitdream hook pre-commit "$@"`' in refused.stderr
    assert states(repo)["pre-commit"] == "via-hook"
    guards(repo, env)


def test_gitdream_hook_refuses_an_unknown_hook(repo: Path) -> None:
    result = cli(repo, "hook", "pre-push")
    assert result.exit_code == 2 and "pre-push" in result.stderr


# --- CRLF -------------------------------------------------------------------------------------


def test_a_chained_crlf_hook_is_converted_and_runs(repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    """Regression test for #17: a chained CRLF hook failed on every pull with
    `…gitdream-prev: not found` and nothing pointed to the `\\r`."""
    marker = tmp_path / "previous-ran"
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "pre-commit").write_bytes(f"#!/bin/sh\r\necho ran > {marker}\r\nexit 0\r\n".encode())
    (hooks / "pre-commit").chmod(0o750)
    (action,) = hookscripts.install(Repo.open(repo), hooks=["pre-commit"], python=sys.executable).hooks
    assert action.action == "chained"
    assert action.note.startswith("converted pre-commit.gitdream-prev from CRLF to LF line ends")
    prev = hooks / "pre-commit.gitdream-prev"
    assert prev.read_bytes() == f"#!/bin/sh\necho ran > {marker}\nexit 0\n".encode()
    assert prev.stat().st_mode & 0o777 == 0o750
    shown = cli(repo, "hooks", "install", "--hook", "pre-commit")  # nothing left to convert
    assert shown.exit_code == 0
    passed = commit(repo, env, AGENT_MD + "\nfine\n")
    assert passed.returncode == 0, passed.stderr
    assert marker.read_text() == "ran\n"


def test_hooks_install_says_it_converted_a_crlf_hook(repo: Path) -> None:
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "post-merge").write_bytes(b"#!/bin/sh\r\nexit 0\r\n")
    (hooks / "post-merge").chmod(0o755)
    shown = cli(repo, "hooks", "install", "--hook", "post-merge")
    assert shown.exit_code == 0, shown.stderr
    assert "kept as post-merge.gitdream-prev; converted post-merge.gitdream-prev from CRLF" in shown.stdout


def test_a_crlf_hook_behind_a_symlink_is_refused(repo: Path, tmp_path: Path) -> None:
    target = tmp_path / "shared-hook"
    target.write_bytes(b"#!/bin/sh\r\nexit 0\r\n")
    target.chmod(0o755)
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "post-merge").symlink_to(target)
    result = cli(repo, "hooks", "install")
    assert result.exit_code == 1
    assert "is a symbolic link to a script with CRLF (\\r\\n) line ends" in result.stderr
    assert f"hint: convert the file it points to ({target})" in result.stderr
    assert (hooks / "post-merge").is_symlink() and not (hooks / "pre-commit").exists()


def test_a_crlf_hook_that_appears_later_is_named_at_run_time(repo: Path, env: dict[str, str]) -> None:
    hookscripts.install(Repo.open(repo), hooks=["pre-commit"], python=sys.executable)
    prev = repo / ".git" / "hooks" / "pre-commit.gitdream-prev"
    prev.write_bytes(b"#!/bin/sh\r\nexit 0\r\n")
    prev.chmod(0o755)
    failed = commit(repo, env, AGENT_MD + "\nfine\n")
    assert failed.returncode != 0
    assert (
        "gitdream: .git/hooks/pre-commit.gitdream-prev has CRLF (\\r\\n) line ends, so it cannot run here; "
        "convert it to LF: sed -i 's/\\r$//' .git/hooks/pre-commit.gitdream-prev"
    ) in failed.stderr
