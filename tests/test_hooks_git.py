"""The installed hooks driven by real git: `git commit` (as-is, -a, <paths>), `git merge`,
and `git pull` from a local bare remote.

The post-merge family starts a stand-in for the baked Python interpreter (`fake_python`)
that records its arguments, environment and session; `_GITDREAM_HOOK_FOREGROUND=1` runs
it in the foreground so counts are deterministic, except in the tests of detaching.
The pre-commit tests run the real `python -m gitdream check` from this source tree.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gitdream.git.gitenv import LOCAL_ENV_VARS
from gitdream.git.repo import Repo
from gitdream.trigger import hookscripts
from tests.conftest import AGENT_MD
from tests.helpers import commit_all, git, gitdream_env, head, init_repo, run_gitdream, write

BAD_AGENT_MD = "# ops\n\n" + "a" * 2100 + "\n\n## Notes\n"
SYSTEM_PATH = "/usr/bin:/bin"
POST_HOOKS = ["post-merge", "post-rewrite", "post-commit"]

FAKE_PYTHON = r"""#!/bin/sh
# Stands in for the interpreter baked into the hooks: records how it was started.
out="$FAKE_RECORD_DIR/run-$$"
{
    printf 'argv:'
    for a in "$@"; do printf ' %s' "$a"; done
    printf '\n'
    printf 'cwd: %s\n' "$PWD"
    printf 'pid: %s\n' "$$"
    printf 'sid: %s\n' "$(cut -d' ' -f6 /proc/$$/stat 2>/dev/null)"
    if [ -d .git/rebase-merge ] || [ -d .git/rebase-apply ]; then echo 'rebase: yes'; else echo 'rebase: no'; fi
    env | sed -n 's/^\(GIT_[A-Za-z0-9_]*\|_GITDREAM[A-Za-z0-9_]*\)=.*/env: \1/p'
} >"$out.tmp"
mv "$out.tmp" "$out"
[ -n "${FAKE_SLEEP:-}" ] && sleep "$FAKE_SLEEP"
exit "${FAKE_EXIT:-0}"
"""


@dataclass
class Run:
    argv: str
    cwd: str
    pid: str
    sid: str
    rebase: str
    env: list[str]


def runs(record_dir: Path) -> list[Run]:
    out = []
    for path in sorted(record_dir.glob("run-*")):
        if path.name.endswith(".tmp"):
            continue
        fields: dict[str, str] = {}
        env = []
        for line in path.read_text().splitlines():
            key, _, value = line.partition(": ")
            if key == "env":
                env.append(value)
            else:
                fields[key.rstrip(":")] = value
        out.append(
            Run(
                fields.get("argv", ""),
                fields["cwd"],
                fields["pid"],
                fields["sid"],
                fields["rebase"],
                env,
            )
        )
    return out


@pytest.fixture
def fake_python(tmp_path: Path) -> Path:
    path = tmp_path / "bin" / "python"
    path.parent.mkdir()
    path.write_text(FAKE_PYTHON)
    path.chmod(0o755)
    return path


@pytest.fixture
def record_dir(tmp_path: Path) -> Path:
    path = tmp_path / "records"
    path.mkdir()
    return path


@dataclass
class Pull:
    """A bare remote, an upstream clone that pushes, and a local clone with the hooks."""

    remote: Path
    upstream: Path
    local: Path
    env: dict[str, str]

    def push(self, name: str, content: str = "x\n") -> None:
        write(self.upstream, name, content)
        commit_all(self.upstream, f"upstream {name}")
        git(self.upstream, "push", "-q", "origin", "main")

    def commit(self, name: str, content: str = "y\n") -> None:
        write(self.local, name, content)
        commit_all(self.local, f"local {name}")

    def git(self, *args: str, check: bool = True, **extra: str) -> subprocess.CompletedProcess[str]:
        env = {**self.env, **extra}
        proc = subprocess.run(
            ["git", *args], cwd=self.local, env={**os.environ, **env}, capture_output=True, text=True
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)}: {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
        return proc


@pytest.fixture
def pull(tmp_path: Path, fake_python: Path, record_dir: Path) -> Pull:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    upstream = tmp_path / "upstream"
    git(tmp_path, "clone", "-q", str(remote), str(upstream))
    write(upstream, "agents/ops/agent.md", AGENT_MD)
    commit_all(upstream, "initial")
    git(upstream, "push", "-q", "origin", "main")
    local = tmp_path / "local"
    git(tmp_path, "clone", "-q", str(remote), str(local))
    hookscripts.install(Repo.open(local), hooks=POST_HOOKS, python=str(fake_python))
    env = {"FAKE_RECORD_DIR": str(record_dir), "_GITDREAM_HOOK_FOREGROUND": "1"}
    return Pull(remote, upstream, local, env)


def stamp(common_dir: Path, opens_in: int, worktree: Path | None = None) -> None:
    """Write the time-gate stamp as gitdream does (real clock: the hook is another
    process), for the worktree `worktree` (default: the one of `common_dir`)."""
    from gitdream.trigger import state as state_mod

    opening = datetime.fromtimestamp(int(time.time()) + opens_in, UTC)
    state_mod.write_stamp(common_dir, opening, workdir=worktree or common_dir.parent)


# --- every kind of pull triggers exactly once ---------------------------------------------


def test_fast_forward_pull_triggers_once(pull: Pull, record_dir: Path) -> None:
    pull.push("a.md")
    pull.git("pull", "--no-rebase")
    (run,) = runs(record_dir)
    assert run.argv == "-m gitdream run --auto --trigger post-merge --quiet"
    assert Path(run.cwd) == pull.local


def test_merge_pull_triggers_once(pull: Pull, record_dir: Path) -> None:
    pull.push("a.md")
    pull.commit("b.md")
    pull.git("-c", "pull.rebase=false", "pull", "--no-edit")
    assert len(git(pull.local, "log", "-1", "--format=%P").split()) == 2
    assert len(runs(record_dir)) == 1


def test_rebase_pull_with_local_commits_triggers_once(pull: Pull, record_dir: Path) -> None:
    pull.push("a.md")
    pull.commit("b.md")
    pull.git("pull", "--rebase")
    assert git(pull.local, "log", "-1", "--format=%s").strip() == "local b.md"
    (run,) = runs(record_dir)  # post-rewrite rebase; the rebase's own picks ran post-commit
    assert run.argv.endswith("--trigger post-merge --quiet")


def test_rebase_pull_with_nothing_to_replay_triggers_once(pull: Pull, record_dir: Path) -> None:
    pull.push("a.md")
    pull.git("pull", "--rebase")
    assert len(runs(record_dir)) == 1


def test_pull_with_nothing_new_triggers_nothing(pull: Pull, record_dir: Path) -> None:
    pull.git("pull")
    assert runs(record_dir) == []


def test_conflicted_merge_triggers_only_when_concluded(pull: Pull, record_dir: Path) -> None:
    pull.push("c.md", "upstream\n")
    pull.commit("c.md", "local\n")
    stopped = pull.git("-c", "pull.rebase=false", "pull", "--no-edit", check=False)
    assert stopped.returncode != 0
    assert (pull.local / ".git" / "MERGE_HEAD").exists()
    assert runs(record_dir) == []
    write(pull.local, "c.md", "both\n")
    pull.git("add", "c.md")
    pull.git("commit", "--no-edit")
    assert len(runs(record_dir)) == 1


def test_conflicted_rebase_triggers_only_when_finished(pull: Pull, record_dir: Path) -> None:
    pull.push("c.md", "upstream\n")
    pull.commit("c.md", "local\n")
    pull.commit("d.md")
    stopped = pull.git("pull", "--rebase", check=False)
    assert stopped.returncode != 0
    write(pull.local, "c.md", "both\n")
    pull.git("add", "c.md")
    pull.git("-c", "core.editor=true", "rebase", "--continue")
    assert len(runs(record_dir)) == 1


def test_amend_and_ordinary_commits_trigger_nothing(pull: Pull, record_dir: Path) -> None:
    pull.commit("a.md")
    pull.git("commit", "--amend", "-m", "amended")
    write(pull.local, "b.md", "b\n")
    pull.git("add", "b.md")
    pull.git("commit", "-m", "b")
    assert runs(record_dir) == []


def test_squash_merge_triggers_nothing(pull: Pull, record_dir: Path) -> None:
    pull.push("a.md")
    pull.git("fetch", "-q")
    pull.git("merge", "--squash", "origin/main")
    assert runs(record_dir) == []


def test_plain_merge_of_a_branch_triggers_once(pull: Pull, record_dir: Path) -> None:
    pull.git("switch", "-q", "-c", "side")
    pull.commit("side.md")
    pull.git("switch", "-q", "main")
    pull.git("merge", "--no-ff", "--no-edit", "side")
    assert len(runs(record_dir)) == 1


# --- fast path ----------------------------------------------------------------------------


def test_closed_time_gate_starts_no_python_and_logs_why(pull: Pull, record_dir: Path, isolate: Path) -> None:
    stamp(pull.local / ".git", 3600)
    until = (pull.local / ".git" / "gitdream" / "stamp").read_text().split()[1]
    pull.push("a.md")
    pull.git("pull", "--no-rebase")
    assert runs(record_dir) == []
    (line,) = (isolate / "gitdream-home" / "logs" / "hooks.log").read_text().splitlines()
    when, hook, where, decision = line.split("\t")
    assert (hook, where) == ("post-merge", str(pull.local))
    assert decision == f"gate 'time' closed until {until} (the stamp; no Python started)"
    assert when[:4].isdigit() and when.endswith("Z")


def test_a_configuration_change_reaches_the_hook_on_its_next_firing(pull: Pull, record_dir: Path) -> None:
    """Regression test for #17: after `min_hours = 0` in gitdream.toml the hooks' stamp
    stayed 24 h ahead until `gitdream status` rewrote it."""
    stamp(pull.local / ".git", 3600)
    pull.push("a.md")
    pull.git("pull", "--no-rebase")
    assert runs(record_dir) == []
    pull.push("gitdream.toml", "min_hours = 0\n")  # the pull brings the change itself
    pull.git("pull", "--no-rebase")
    assert len(runs(record_dir)) == 1


def test_the_stamp_is_not_trusted_with_another_environment_or_worktree(
    pull: Pull, record_dir: Path, tmp_path: Path
) -> None:
    stamp(pull.local / ".git", 3600)
    pull.push("a.md")
    pull.git("pull", "--no-rebase", GITDREAM_MIN_HOURS="0")
    assert len(runs(record_dir)) == 1
    stamp(pull.local / ".git", 3600, worktree=tmp_path)  # computed for another worktree
    pull.push("b.md")
    pull.git("pull", "--no-rebase")
    assert len(runs(record_dir)) == 2


def test_a_user_config_change_reaches_the_hook(pull: Pull, record_dir: Path, isolate: Path) -> None:
    stamp(pull.local / ".git", 3600)
    past = time.time() - 5
    os.utime(pull.local / ".git" / "gitdream" / "stamp", (past, past))
    write(isolate / "gitdream-home", "config.toml", "min_hours = 1\n")
    pull.push("a.md")
    pull.git("pull", "--no-rebase")
    assert len(runs(record_dir)) == 1


@pytest.mark.parametrize("content", ["0\n", "garbage\n", "", "99999999999999999999999\n"])
def test_past_or_unreadable_stamp_asks_python(pull: Pull, record_dir: Path, content: str) -> None:
    (pull.local / ".git" / "gitdream").mkdir()
    (pull.local / ".git" / "gitdream" / "stamp").write_text(content)
    pull.push("a.md")
    pull.git("pull", "--no-rebase")
    assert len(runs(record_dir)) == 1


def test_stamp_of_the_common_dir_gates_a_linked_worktree(
    pull: Pull, record_dir: Path, tmp_path: Path
) -> None:
    worktree = tmp_path / "wt"
    pull.git("worktree", "add", "-q", str(worktree), "-b", "wt")
    stamp(pull.local / ".git", 3600, worktree)
    pull.push("a.md")
    proc = subprocess.run(
        ["git", "pull", "--no-rebase", "origin", "main"],
        cwd=worktree,
        env={**os.environ, **pull.env},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert runs(record_dir) == []
    stamp(pull.local / ".git", -10, worktree)
    pull.push("b.md")
    subprocess.run(
        ["git", "pull", "--no-rebase", "origin", "main"],
        cwd=worktree,
        env={**os.environ, **pull.env},
        check=True,
        capture_output=True,
    )
    (run,) = runs(record_dir)
    assert Path(run.cwd) == worktree


def test_disabled_by_environment_starts_nothing(pull: Pull, record_dir: Path) -> None:
    for value in ("0", "false", "No", "OFF", ""):
        pull.push(f"a{value}.md")
        pull.git("pull", "--no-rebase", GITDREAM_ENABLED=value)
    assert runs(record_dir) == []
    pull.push("b.md")
    pull.git("pull", "--no-rebase", GITDREAM_ENABLED="1")
    assert len(runs(record_dir)) == 1


def test_disabled_by_gitdream_toml_top_level_only(pull: Pull, record_dir: Path) -> None:
    write(pull.local, "gitdream.toml", "# gitdream\nmin_hours = 1\n  enabled   =  false # off for now\n")
    pull.push("a.md")
    pull.git("pull", "--no-rebase")
    assert runs(record_dir) == []
    # the environment wins over the file
    pull.push("b.md")
    pull.git("pull", "--no-rebase", GITDREAM_ENABLED="true")
    assert len(runs(record_dir)) == 1
    # a key of a [section] is not the top-level switch
    write(pull.local, "gitdream.toml", "[anthropic]\nenabled = false\n")
    pull.push("c.md")
    pull.git("pull", "--no-rebase")
    assert len(runs(record_dir)) == 2


def test_disabled_by_user_config(pull: Pull, record_dir: Path, isolate: Path) -> None:
    write(isolate / "gitdream-home", "config.toml", "enabled = false\n")
    pull.push("a.md")
    pull.git("pull", "--no-rebase")
    assert runs(record_dir) == []
    write(pull.local, "gitdream.toml", "enabled = true\n")  # the repository's file wins
    pull.push("b.md")
    pull.git("pull", "--no-rebase")
    assert len(runs(record_dir)) == 1


# --- never fails the merge; clean environment ----------------------------------------------


def test_merge_succeeds_when_gitdream_fails(pull: Pull, record_dir: Path) -> None:
    pull.push("a.md")
    before = head(pull.upstream)
    proc = pull.git("pull", "--no-rebase", FAKE_EXIT="3")
    assert proc.returncode == 0
    assert head(pull.local) == before
    assert len(runs(record_dir)) == 1


def test_merge_succeeds_and_says_one_line_when_gitdream_is_missing(pull: Pull) -> None:
    hookscripts.install(Repo.open(pull.local), hooks=POST_HOOKS, python="/nonexistent/python")
    pull.push("a.md")
    proc = pull.git("pull", "--no-rebase", PATH=SYSTEM_PATH)
    assert proc.returncode == 0
    lines = [line for line in proc.stderr.splitlines() if "gitdream" in line]
    assert lines == [
        "gitdream: post-merge hook: gitdream is not installed (no /nonexistent/python, no gitdream "
        "on PATH); no dream started — reinstall gitdream or run `gitdream hooks uninstall`"
    ]
    assert head(pull.local) == head(pull.upstream)


def test_gitdream_on_path_when_the_baked_interpreter_is_gone(
    pull: Pull, record_dir: Path, fake_python: Path, tmp_path: Path
) -> None:
    hookscripts.install(Repo.open(pull.local), hooks=POST_HOOKS, python="/nonexistent/python")
    bin_dir = tmp_path / "pathbin"
    bin_dir.mkdir()
    (bin_dir / "gitdream").write_text(fake_python.read_text())
    (bin_dir / "gitdream").chmod(0o755)
    pull.push("a.md")
    pull.git("pull", "--no-rebase", PATH=f"{bin_dir}:{SYSTEM_PATH}")
    (run,) = runs(record_dir)
    assert run.argv == "run --auto --trigger post-merge --quiet"


def test_git_environment_does_not_leak(pull: Pull, record_dir: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    pull.git("worktree", "add", "-q", str(worktree), "-b", "wt")
    pull.push("a.md")
    # A linked worktree makes git export GIT_DIR to hooks; -c adds GIT_CONFIG_PARAMETERS.
    subprocess.run(
        ["git", "-c", "user.name=Other", "pull", "--no-rebase", "origin", "main"],
        cwd=worktree,
        env={**os.environ, **pull.env},
        check=True,
        capture_output=True,
    )
    pull.push("b.md")
    pull.git("pull", "--no-rebase", GIT_DIR=".git")
    found = runs(record_dir)
    assert len(found) == 2
    for run in found:
        leaked = set(run.env) & (set(LOCAL_ENV_VARS) | {"GIT_REFLOG_ACTION", "GIT_PREFIX", "GIT_EDITOR"})
        assert leaked == set(), run.env
        assert not [name for name in run.env if name.startswith("_GITDREAM_HOOK_PREV")]


# --- detached ------------------------------------------------------------------------------


def wait_for_runs(record_dir: Path, count: int, timeout: float = 10) -> list[Run]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = runs(record_dir)
        if len(found) >= count:
            return found
        time.sleep(0.05)
    return runs(record_dir)


def test_open_gate_starts_a_detached_run(pull: Pull, record_dir: Path, isolate: Path) -> None:
    stamp(pull.local / ".git", -60)
    pull.push("a.md")
    start = time.monotonic()
    # Pipes on stdout/stderr: had the child kept them, this call would wait for its exit.
    proc = pull.git("pull", "--no-rebase", _GITDREAM_HOOK_FOREGROUND="0", FAKE_SLEEP="6")
    elapsed = time.monotonic() - start
    assert proc.returncode == 0
    assert elapsed < 4, "the pull waited for the dream"
    (run,) = wait_for_runs(record_dir, 1)
    assert run.sid == run.pid, "not a new session"
    assert "_GITDREAM_HOOK" in run.env  # the run writes its decision to the hooks log
    assert (isolate / "gitdream-home" / "logs" / "hooks.log").exists()


def test_detached_run_after_rebase_waits_for_the_rebase_to_finish(pull: Pull, record_dir: Path) -> None:
    pull.push("a.md")
    pull.commit("b.md")
    pull.git("pull", "--rebase", _GITDREAM_HOOK_FOREGROUND="0")
    (run,) = wait_for_runs(record_dir, 1)
    assert run.rebase == "no"


def test_detached_run_waits_while_a_rebase_is_in_progress(pull: Pull, record_dir: Path) -> None:
    """post-rewrite runs before git removes the rebase state; the detached child waits.
    The hook is started by hand here so the rebase state can be held open."""
    state = pull.local / ".git" / "rebase-merge"
    state.mkdir()
    hook = pull.local / ".git" / "hooks" / "post-rewrite"
    env = {**os.environ, **pull.env, "_GITDREAM_HOOK_FOREGROUND": "0"}
    proc = subprocess.run([str(hook), "rebase"], cwd=pull.local, env=env, input="", capture_output=True)
    assert proc.returncode == 0
    time.sleep(0.6)
    assert runs(record_dir) == []
    state.rmdir()
    (run,) = wait_for_runs(record_dir, 1)
    assert run.rebase == "no"


def test_merges_inside_a_rebase_start_nothing_until_it_ends(pull: Pull, record_dir: Path) -> None:
    pull.git("switch", "-q", "-c", "side")
    pull.commit("side.md")
    pull.git("switch", "-q", "main")
    pull.commit("one.md")
    pull.commit("two.md")
    pull.git("rebase", "-q", "HEAD~2", "--force-rebase", "-x", "git merge -q --no-ff --no-edit side")
    assert len(runs(record_dir)) == 1  # post-rewrite at the end; the merges inside: nothing


def test_a_previous_hook_that_reenters_does_not_loop(pull: Pull, record_dir: Path) -> None:
    """Recursion guard: the chained hook runs this hook again (for example a hook manager
    that calls every hook in the directory)."""
    hooks = pull.local / ".git" / "hooks"
    hookscripts.uninstall(Repo.open(pull.local))
    hooks.mkdir(exist_ok=True)
    (hooks / "post-merge").write_text('#!/bin/sh\nexec .git/hooks/post-merge "$@"\n')
    (hooks / "post-merge").chmod(0o755)
    hookscripts.install(
        Repo.open(pull.local),
        hooks=POST_HOOKS,
        python=str(Path(pull.env["FAKE_RECORD_DIR"]).parent / "bin" / "python"),
    )
    pull.push("a.md")
    proc = subprocess.run(
        ["git", "pull", "--no-rebase"],
        cwd=pull.local,
        env={**os.environ, **pull.env},
        capture_output=True,
        timeout=30,
    )
    assert proc.returncode == 0
    assert len(runs(record_dir)) == 1


# --- pre-commit ----------------------------------------------------------------------------


@pytest.fixture
def committer(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A repository with agent ops and the real pre-commit hook of this source tree."""
    root = init_repo(tmp_path / "repo")
    write(root, "agents/ops/agent.md", AGENT_MD)
    write(root, "agents/ops/soul.md", "# soul\n")
    commit_all(root, "initial")
    hookscripts.install(Repo.open(root), hooks=["pre-commit"], python=sys.executable)
    return root, gitdream_env()


def commit(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "commit", "-q", *args], cwd=root, env=env, capture_output=True, text=True)


def test_bad_staged_agent_md_blocks_the_commit(committer: tuple[Path, dict[str, str]]) -> None:
    root, env = committer
    before = head(root)
    write(root, "agents/ops/agent.md", BAD_AGENT_MD)
    git(root, "add", "-A")
    proc = commit(root, env, "-m", "bad")
    assert proc.returncode == 1
    # git sends a pre-commit hook's stdout to stderr
    assert proc.stderr.splitlines() == [
        "agents/ops/agent.md:1: prefix-section: section '# ops' ends at character 2107, past 2000: "
        "move it up or shorten what comes before it",
        "gitdream check: 1 problem in 1 of 1 file",
        "gitdream: pre-commit hook: commit blocked; fix the problems above and commit again "
        "(`git commit --no-verify` skips the check)",
    ]
    assert head(root) == before


def test_good_staged_agent_md_passes(committer: tuple[Path, dict[str, str]]) -> None:
    root, env = committer
    write(root, "agents/ops/agent.md", AGENT_MD + "\nMore.\n")
    git(root, "add", "-A")
    proc = commit(root, env, "-m", "good")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_staged_content_is_judged_not_the_working_tree(committer: tuple[Path, dict[str, str]]) -> None:
    root, env = committer
    write(root, "agents/ops/agent.md", BAD_AGENT_MD)
    git(root, "add", "-A")
    write(root, "agents/ops/agent.md", AGENT_MD + "\nfixed in the working tree only\n")
    assert commit(root, env, "-m", "bad staged").returncode == 1
    git(root, "add", "-A")
    write(root, "agents/ops/agent.md", BAD_AGENT_MD)
    proc = commit(root, env, "-m", "good staged, broken working copy")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_commit_all_judges_the_locked_index(committer: tuple[Path, dict[str, str]]) -> None:
    """`git commit -a` exports GIT_INDEX_FILE=.git/index.lock (builtin/commit.c)."""
    root, env = committer
    write(root, "agents/ops/agent.md", BAD_AGENT_MD)  # not staged; -a stages it
    assert commit(root, env, "-a", "-m", "bad").returncode == 1
    write(root, "agents/ops/agent.md", AGENT_MD + "\nok\n")
    assert commit(root, env, "-a", "-m", "good").returncode == 0


def test_commit_paths_judges_the_temporary_index(committer: tuple[Path, dict[str, str]]) -> None:
    """`git commit <paths>` commits the working-tree content of the paths through a
    temporary index (next-index-*.lock); the real index is not what is committed."""
    root, env = committer
    write(root, "agents/ops/agent.md", AGENT_MD + "\nstaged and fine\n")
    git(root, "add", "-A")
    write(root, "agents/ops/agent.md", BAD_AGENT_MD)
    assert commit(root, env, "-m", "partial", "agents/ops/agent.md").returncode == 1
    write(root, "agents/ops/agent.md", AGENT_MD + "\nworking copy fine\n")
    git(root, "add", "-A")
    write(root, "agents/ops/agent.md", AGENT_MD + "\nworking copy fine, twice\n")
    proc = commit(root, env, "-m", "partial", "agents/ops/agent.md")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_pre_commit_in_a_linked_worktree(committer: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    """git exports GIT_DIR and an absolute GIT_INDEX_FILE of the worktree's own index."""
    root, env = committer
    worktree = tmp_path / "wt"
    git(root, "worktree", "add", "-q", str(worktree), "-b", "side")
    write(worktree, "agents/ops/agent.md", BAD_AGENT_MD)
    git(worktree, "add", "-A")
    blocked = commit(worktree, env, "-m", "bad")
    assert blocked.returncode == 1
    assert "agents/ops/agent.md:1: prefix-section" in blocked.stderr
    write(worktree, "agents/ops/agent.md", AGENT_MD + "\nfine\n")
    git(worktree, "add", "-A")
    assert commit(worktree, env, "-m", "good").returncode == 0


def test_unrelated_commit_is_not_blocked_by_an_old_problem(committer: tuple[Path, dict[str, str]]) -> None:
    root, env = committer
    write(root, "agents/ops/agent.md", BAD_AGENT_MD)
    git(root, "add", "-A")
    assert commit(root, env, "--no-verify", "-m", "bad, skipped").returncode == 0
    write(root, "notes.md", "unrelated\n")
    git(root, "add", "-A")
    assert commit(root, env, "-m", "unrelated").returncode == 0


def test_missing_gitdream_blocks_the_commit_with_one_line(committer: tuple[Path, dict[str, str]]) -> None:
    """Fail closed (principle 4 of docs/DEVELOPING.md): without gitdream the guard cannot judge, so it blocks."""
    root, env = committer
    hookscripts.install(Repo.open(root), hooks=["pre-commit"], python="/nonexistent/python")
    write(root, "agents/ops/agent.md", AGENT_MD + "\nfine\n")
    git(root, "add", "-A")
    proc = commit(root, {**env, "PATH": SYSTEM_PATH}, "-m", "x")
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        "gitdream: pre-commit hook: gitdream is not installed (no /nonexistent/python, no gitdream on "
        "PATH); commit blocked — reinstall gitdream, or skip the check with `git commit --no-verify` "
        "or GITDREAM_ENABLED=0"
    ]
    assert commit(root, {**env, "PATH": SYSTEM_PATH, "GITDREAM_ENABLED": "0"}, "-m", "x").returncode == 0


def test_existing_pre_commit_is_chained_and_its_failure_respected(
    committer: tuple[Path, dict[str, str]],
) -> None:
    root, env = committer
    hooks = root / ".git" / "hooks"
    hookscripts.uninstall(Repo.open(root))
    hooks.mkdir(exist_ok=True)
    prev = hooks / "pre-commit"
    prev.write_text('#!/bin/sh\necho "previous hook ran with $0" >&2\nexit "${PREV_EXIT:-0}"\n')
    prev.chmod(0o755)
    hookscripts.install(Repo.open(root), hooks=["pre-commit"], python=sys.executable)
    write(root, "agents/ops/agent.md", AGENT_MD + "\nfine\n")
    git(root, "add", "-A")
    failed = commit(root, {**env, "PREV_EXIT": "1"}, "-m", "x")
    assert failed.returncode == 1
    # run as git would have run it: the same $0 (git runs hooks as .git/hooks/<name>)
    assert failed.stderr.splitlines()[0] == "previous hook ran with .git/hooks/pre-commit"
    passed = commit(root, env, "-m", "x")
    assert passed.returncode == 0
    write(root, "agents/ops/agent.md", BAD_AGENT_MD)
    git(root, "add", "-A")
    blocked = commit(root, env, "-m", "bad")
    assert blocked.returncode == 1
    assert blocked.stderr.startswith("previous hook ran")


def test_chained_hooks_both_run_on_merge(
    pull: Pull, record_dir: Path, fake_python: Path, tmp_path: Path
) -> None:
    hooks = pull.local / ".git" / "hooks"
    hookscripts.uninstall(Repo.open(pull.local))
    hooks.mkdir(exist_ok=True)
    marker = tmp_path / "previous-ran"
    (hooks / "post-merge").write_text(f'#!/bin/sh\necho "$@" > {marker}\nexit 1\n')
    (hooks / "post-merge").chmod(0o755)
    hookscripts.install(Repo.open(pull.local), hooks=POST_HOOKS, python=str(fake_python))
    pull.push("a.md")
    assert pull.git("pull", "--no-rebase").returncode == 0
    assert marker.read_text() == "0\n"
    assert len(runs(record_dir)) == 1


def test_husky_style_hooks_path_keeps_working(tmp_path: Path) -> None:
    """Husky 9: core.hooksPath=.husky/_ holds stubs that find the user's script through
    basename "$0"; the chained stub must still see its own name."""
    root = init_repo(tmp_path / "repo")
    write(root, "agents/ops/agent.md", AGENT_MD)
    write(root, ".husky/pre-commit", f"echo husky-user-hook-ran > {tmp_path / 'husky-ran'}\n")
    write(root, ".husky/_/.gitignore", "*\n")
    # A stand-in for husky's runner `h`: run ../<basename of $0> with sh -e.
    write(
        root,
        ".husky/_/h",
        '#!/usr/bin/env sh\nn=$(basename "$0")\ns=$(dirname "$(dirname "$0")")/$n\n'
        '[ ! -f "$s" ] && exit 0\nsh -e "$s" "$@"\n',
    )
    write(root, ".husky/_/pre-commit", '#!/usr/bin/env sh\n. "$(dirname "$0")/h"\n')
    (root / ".husky/_/pre-commit").chmod(0o755)
    git(root, "config", "core.hooksPath", ".husky/_")
    commit_all(root, "initial")
    before = {p: p.read_bytes() for p in sorted((root / ".husky").rglob("*")) if p.is_file()}
    result = hookscripts.install(Repo.open(root), python=sys.executable)
    assert result.hooks_dir.path == root / ".husky" / "_"
    assert not [w for w in result.warnings if "not ignored" in w]
    env = gitdream_env()
    write(root, "agents/ops/agent.md", BAD_AGENT_MD)
    git(root, "add", "-A")
    assert commit(root, env, "-m", "bad").returncode == 1
    assert (tmp_path / "husky-ran").read_text() == "husky-user-hook-ran\n"
    (tmp_path / "husky-ran").unlink()
    write(root, "agents/ops/agent.md", AGENT_MD + "\nfine\n")
    git(root, "add", "-A")
    assert commit(root, env, "-m", "good").returncode == 0
    assert (tmp_path / "husky-ran").exists()
    hookscripts.uninstall(Repo.open(root))
    after = {p: p.read_bytes() for p in sorted((root / ".husky").rglob("*")) if p.is_file()}
    assert after == before


PRE_COMMIT = Path(sys.executable).parent / "pre-commit"


@pytest.mark.skipif(not PRE_COMMIT.is_file(), reason="the pre-commit framework is not installed")
@pytest.mark.parametrize("gitdream_first", [True, False])
def test_coexists_with_the_pre_commit_framework(
    committer: tuple[Path, dict[str, str]], gitdream_first: bool
) -> None:
    """Install both, in either order: both run; uninstalling gitdream leaves pre-commit's
    hook working."""
    root, env = committer
    env = {**env, "PRE_COMMIT_ALLOW_NO_CONFIG": "1"}
    hooks = root / ".git" / "hooks"
    if not gitdream_first:
        hookscripts.uninstall(Repo.open(root))
    subprocess.run([str(PRE_COMMIT), "install"], cwd=root, env=env, check=True, capture_output=True)
    theirs = (hooks / "pre-commit").read_bytes() if not gitdream_first else None
    if not gitdream_first:
        hookscripts.install(Repo.open(root), hooks=["pre-commit"], python=sys.executable)
    write(root, "agents/ops/agent.md", BAD_AGENT_MD)
    git(root, "add", "-A")
    blocked = commit(root, env, "-m", "bad")
    assert blocked.returncode == 1
    assert "prefix-section" in blocked.stderr
    result = hookscripts.uninstall(Repo.open(root), hooks=["pre-commit"])
    assert result.hooks[0].action in ("removed", "restored")
    if theirs is not None:
        assert (hooks / "pre-commit").read_bytes() == theirs
    assert not (hooks / "pre-commit.legacy").exists()
    passed = commit(root, env, "-m", "now only pre-commit's hook runs")
    assert passed.returncode == 0, passed.stderr
    assert "Skipping `pre-commit`" in passed.stderr  # pre-commit's hook ran, and only it


# --- pre-commit: Python only when something it checks is staged -----------------------------


@pytest.fixture
def gated_committer(tmp_path: Path, fake_python: Path, record_dir: Path) -> tuple[Path, dict[str, str]]:
    """A repository whose pre-commit hook starts `fake_python` (which records each start),
    with the path patterns written as `gitdream check --staged` writes them."""
    from gitdream import config
    from gitdream.trigger import state as state_mod

    root = init_repo(tmp_path / "repo")
    write(root, "agents/ops/agent.md", AGENT_MD)
    commit_all(root, "initial")
    state_mod.write_precommit_paths(root / ".git", root, config.load(root, env={}))
    hookscripts.install(Repo.open(root), hooks=["pre-commit"], python=str(fake_python))
    return root, {**os.environ, "FAKE_RECORD_DIR": str(record_dir)}


@pytest.mark.parametrize(
    ("path", "checked"),
    [
        ("code.txt", False),
        ("src/agents.py", False),
        ("agents/ops/memory/logs/2026/03/2026-03-01.md", False),  # a raw log: not checked
        ("agents/ops/sessions/s1.jsonl", False),
        ("agents/ops/agent.md", True),
        ("agents/ops/soul.md", True),
        ("agents/new/SKILL.md", True),
        ("agents/ops/memory/MEMORY.md", True),
        ("agents/ops/memory/deploys.md", True),
        ("gitdream.toml", True),
        ("agents/ops/memory/\u9002\u5f53.md", True),  # non-ASCII names are compared as they are
        ('agents/ops/memory/a"b.md', True),  # git quotes it: Python decides
    ],
)
def test_pre_commit_starts_python_only_for_a_checked_path(
    gated_committer: tuple[Path, dict[str, str]], record_dir: Path, path: str, checked: bool
) -> None:
    root, env = gated_committer
    write(root, path, "# x\n")
    git(root, "add", "-A")
    proc = commit(root, env, "-m", f"add {path}")
    assert proc.returncode == 0, proc.stderr
    assert len(runs(record_dir)) == (1 if checked else 0)


def test_pre_commit_deletion_only_starts_no_python(
    gated_committer: tuple[Path, dict[str, str]], record_dir: Path
) -> None:
    root, env = gated_committer
    git(root, "rm", "-q", "agents/ops/agent.md")
    assert commit(root, env, "-m", "remove").returncode == 0
    assert runs(record_dir) == []


def test_pre_commit_asks_python_when_its_patterns_are_stale(
    gated_committer: tuple[Path, dict[str, str]], record_dir: Path
) -> None:
    """A configuration change (a new definition file) must reach the hook at once."""
    root, env = gated_committer
    write(root, "gitdream.toml", 'definition_files = ["agent.md", "prompt.txt"]\n')
    write(root, "agents/ops/prompt.txt", "x\n")
    git(root, "add", "agents/ops/prompt.txt")
    assert commit(root, env, "-m", "prompt").returncode == 0
    assert len(runs(record_dir)) == 1  # gitdream.toml is newer than the patterns
    assert commit(root, {**env, "GITDREAM_MEMORY_DIR": "mem"}, "--allow-empty", "-m", "e").returncode == 0
    assert len(runs(record_dir)) == 2  # another environment


def test_pre_commit_patterns_are_written_by_the_real_check(committer: tuple[Path, dict[str, str]]) -> None:
    from gitdream.trigger import state as state_mod

    root, env = committer
    patterns = state_mod.precommit_path(root / ".git")
    assert not patterns.exists()
    write(root, "agents/ops/agent.md", AGENT_MD + "\nMore.\n")
    git(root, "add", "-A")
    assert commit(root, env, "-m", "x").returncode == 0
    lines = patterns.read_text().splitlines()
    assert lines[:3] == [str(root), f"||||{os.environ['GITDREAM_HOME']}", "+gitdream.toml"]
    assert "+agents/*/agent.md" in lines and "-agents/*/memory/*/*" in lines


def _memory(lines: int) -> str:
    return "# ops — memory index\n" + "".join(
        f"- note {n}: one line an agent runtime wrote\n" for n in range(lines - 1)
    )


def test_a_memory_md_already_over_its_limit_does_not_block_its_runtimes_commit(
    committer: tuple[Path, dict[str, str]],
) -> None:
    """The new user's item 4: after `hooks install`, one line added to an adopted
    MEMORY.md that was already 543 lines long blocked the agent runtime's commit. Over
    the limit at HEAD: a warning; pushed over by the commit: blocked, as before."""
    root, env = committer
    write(root, "agents/ops/memory/MEMORY.md", _memory(543))
    git(root, "add", "-A")
    assert commit(root, env, "--no-verify", "-m", "adopted memory").returncode == 0

    with open(root / "agents/ops/memory/MEMORY.md", "a") as handle:
        handle.write("- one more line\n")
    git(root, "add", "-A")
    before = head(root)
    proc = commit(root, env, "-m", "edit ops memory")
    assert proc.returncode == 0, proc.stderr
    assert head(root) != before
    assert (
        "warning: agents/ops/memory/MEMORY.md:201: memory-lines: MEMORY.md has 544 lines, over the limit "
        "of 200 (it was over before this commit, which does not block it)"
    ) in proc.stderr, proc.stderr

    # Another rule of the same file still blocks.
    with open(root / "agents/ops/memory/MEMORY.md", "a") as handle:
        handle.write("<!-- gitdream:begin index -->\n")
    git(root, "add", "-A")
    assert commit(root, env, "-m", "broken block").returncode == 1
    git(root, "checkout", "-q", "HEAD", "--", "agents/ops/memory/MEMORY.md")

    # A MEMORY.md the commit pushes over its limit is blocked.
    write(root, "agents/ops/memory/MEMORY.md", _memory(200))
    git(root, "add", "-A")
    assert commit(root, env, "--no-verify", "-m", "shortened").returncode == 0
    with open(root / "agents/ops/memory/MEMORY.md", "a") as handle:
        handle.write("- the line over the limit\n")
    git(root, "add", "-A")
    before = head(root)
    proc = commit(root, env, "-m", "over the limit")
    assert (
        proc.returncode == 1 and "memory-lines: MEMORY.md has 201 lines, over the limit of 200" in proc.stderr
    )
    assert "it was over before" not in proc.stderr and head(root) == before


def test_hooks_install_says_what_each_hook_checks(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "repo")
    proc = subprocess.run(
        [sys.executable, "-m", "gitdream", "hooks", "install"],
        cwd=root,
        env=gitdream_env(),
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    said = dict(
        line.split(": ", 1) for line in proc.stdout.splitlines() if line.startswith(("pre-", "post-"))
    )
    assert "agent.md's first 2000 characters" in said["pre-commit"] and "MEMORY.md" in said["pre-commit"]
    assert "--no-verify" in said["pre-commit"]
    assert set(said) == set(hookscripts.HOOK_NAMES)


ROLE_PAST_THE_WINDOW = (
    "# ops\n\nops keeps the deployment pipeline healthy.\n\n## Background\n\n"
    + "The pipeline has a long history. " * 66
    + "\n\n## Role\n\n"
    + "- Watch the pipeline, fix what breaks, and write down what it learned.\n" * 8
    + "\n## Notes\n\nFree text.\n"
)


def test_a_problem_a_file_already_had_does_not_block_an_edit_that_leaves_it(
    committer: tuple[Path, dict[str, str]],
) -> None:
    """A second new user could not append one line to an adopted agent.md whose role
    section already ended past the 2,000-character window. The same problem at HEAD: a
    warning; an edit that moves the section further (it makes the problem worse): blocked."""
    root, env = committer
    write(root, "agents/ops/agent.md", ROLE_PAST_THE_WINDOW)
    git(root, "add", "-A")
    assert commit(root, env, "--no-verify", "-m", "adopted agent").returncode == 0

    with open(root / "agents/ops/agent.md", "a") as handle:
        handle.write("\nOne more note at the end.\n")
    git(root, "add", "-A")
    before = head(root)
    proc = commit(root, env, "-m", "a note at the end")
    assert proc.returncode == 0, proc.stderr
    assert head(root) != before
    assert (
        "prefix-section" in proc.stderr
        and "(it was there before this commit, which does not block it)" in proc.stderr
    )

    # Text added before the role moves it further out of the window: blocked.
    text = (root / "agents/ops/agent.md").read_text()
    write(
        root, "agents/ops/agent.md", text.replace("## Background\n\n", "## Background\n\nMore history. ", 1)
    )
    git(root, "add", "-A")
    before = head(root)
    proc = commit(root, env, "-m", "more history")
    assert proc.returncode == 1 and "prefix-section" in proc.stderr and head(root) == before
    assert "was there before" not in proc.stderr


def test_hooks_install_writes_the_patterns_so_the_first_commit_of_other_files_starts_no_python(
    tmp_path: Path, fake_python: Path, record_dir: Path
) -> None:
    """Issue 17: right after `gitdream hooks install`, a commit that stages no agent file
    must not start Python (before, the patterns existed only after a first check)."""
    from gitdream.trigger import state as state_mod

    root = init_repo(tmp_path / "repo")
    write(root, "agents/ops/agent.md", AGENT_MD)
    commit_all(root, "initial")
    installed = run_gitdream(root, "hooks", "install", "--hook", "pre-commit", "--python", str(fake_python))
    assert installed.returncode == 0, installed.stderr
    assert state_mod.precommit_path(root / ".git").is_file()
    write(root, "code.txt", "x\n")
    git(root, "add", "code.txt")
    env = {**os.environ, "FAKE_RECORD_DIR": str(record_dir)}
    assert commit(root, env, "-m", "code").returncode == 0
    assert runs(record_dir) == []


def test_a_gitdream_toml_typo_not_staged_does_not_block_a_commit_but_a_staged_one_does(
    committer: tuple[Path, dict[str, str]],
) -> None:
    """The pre-commit check judges what is being committed: a typo in the working tree's
    gitdream.toml that the commit does not carry is a warning, and the commit is checked
    with the gitdream.toml it commits (a problem it stages is still blocked); staged, the
    typo blocks the commit."""
    root, env = committer
    write(root, "gitdream.toml", "min_sessions = 3\n")
    commit_all(root, "a gitdream.toml")
    write(root, "gitdream.toml", "min_sessions = 3\nmin_sesions = 2\n")
    write(root, "notes.txt", "x\n")
    git(root, "add", "notes.txt")
    passed = commit(root, env, "-m", "unrelated")
    assert passed.returncode == 0, passed.stderr
    assert (
        "unknown key 'min_sesions'; it is not staged, so this commit is checked with the gitdream.toml"
        in (passed.stderr)
    )
    write(root, "agents/ops/agent.md", BAD_AGENT_MD)
    git(root, "add", "agents/ops/agent.md")
    blocked = commit(root, env, "-m", "bad agent.md")
    assert blocked.returncode == 1 and "prefix-section" in blocked.stderr
    git(root, "reset", "-q", "HEAD", "agents/ops/agent.md")
    write(root, "agents/ops/agent.md", AGENT_MD)
    git(root, "add", "gitdream.toml")
    typo = commit(root, env, "-m", "the typo itself")
    assert typo.returncode == 1 and "error: gitdream.toml: unknown key 'min_sesions'" in typo.stderr
