"""Patterns a repository supplies cannot hang a dream (issue 16, trust boundaries).

A committed `gitdream.toml` is written by whoever can push. Its `screen.deny` regular
expressions and its globs (`agents`, `log_globs`, `session_globs`) are run over the
material by every dream — the one a plain `git pull` starts through the post-merge hook
included. With Python's backtracking `re`, `(a+)+$` or `(x|x)*y` over a line holding a
long run of `a` or `x` takes time exponential in the run's length: the dream never ended.
Repository patterns are matched with RE2 in linear time; the user's own patterns keep
Python `re`'s full syntax (look-around, backreferences).

Each case is bounded by a subprocess timeout (generous: a hang is minutes to years, a
dream here is seconds), and on a timeout the whole process group is ended.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import commit_all, git, gitdream_env, write
from tests.reliability.support import LOGS, agent_repo, clone_with_hooks, material

BOUND = 240
"""Seconds after which a dream counts as hung (it takes a few here, on a loaded machine)."""

RUNS = "- [deploy] Build ids aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa! and xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx! are kept.\n"
"""A line on which `(a+)+$` and `(x|x)*Q` backtrack 2^48 times at every run."""


def _bounded(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run `args` in a session of its own; after BOUND seconds end its whole process group
    (the hook's dream too) and fail the test as a hang."""
    proc = subprocess.Popen(
        args,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=BOUND)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"{' '.join(args)} did not finish in {BOUND} s: the dream hung on a repository pattern")
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def _hooks_log() -> str:
    path = Path(os.environ["GITDREAM_HOME"]) / "logs" / "hooks.log"
    return path.read_text() if path.exists() else ""


def _receipt(root: Path) -> dict[str, object]:
    note = git(root, "notes", "--ref", "gitdream", "show", "refs/gitdream/watermark/ops")
    return json.loads(note.strip().splitlines()[-1])


def _rejected_rules(receipt: dict[str, object]) -> set[str]:
    text = json.dumps(receipt)
    return {rule for rule in ("deny[0]", "deny[1]", "deny[2]") if rule in text}


def test_a_pulled_catastrophic_screen_deny_does_not_hang_the_dream(tmp_path: Path) -> None:
    upstream, local = clone_with_hooks(tmp_path)

    # a collaborator pushes catastrophic deny patterns and a line they backtrack on
    write(
        upstream,
        "gitdream.toml",
        "min_hours = 0\nmin_sessions = 1\n[screen]\n"
        "deny = ['(a+)+$', '(x|x)*Q', 'canary needs (approval)']\n",
    )
    write(upstream, f"{LOGS}/2026-03-05.md", RUNS + "- [deploy] Day 05: the canary needs approval.\n")
    commit_all(upstream, "day 05; configure gitdream")
    git(upstream, "push", "-q", "origin", "main")

    env = gitdream_env({"_GITDREAM_HOOK_FOREGROUND": "1"})
    pulled = _bounded(["git", "pull", "-q", "--no-rebase"], local, env)
    assert pulled.returncode == 0, pulled.stderr
    tip = git(upstream, "rev-parse", "HEAD").strip()
    assert git(local, "rev-parse", "refs/gitdream/watermark/ops").strip() == tip, _hooks_log()
    receipt = _receipt(local)
    assert receipt["status"] == "ok", receipt
    # the repository's patterns still screen (matched in linear time, not dropped)
    assert "deny[2]" in _rejected_rules(receipt), receipt
    topics = "".join(p.read_text() for p in (local / "agents/ops/memory").glob("*.md"))
    assert "canary needs approval" not in topics


def test_the_user_config_keeps_python_re_for_its_own_deny_patterns(tmp_path: Path) -> None:
    root = agent_repo(tmp_path / "repo")
    write(root, "gitdream.toml", "min_hours = 0\nmin_sessions = 1\n")
    write(root, f"{LOGS}/2026-03-05.md", "- [deploy] Day 05: the canary needs approval.\n")
    commit_all(root, "day 05")
    user = Path(os.environ["GITDREAM_HOME"]) / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    # a look-behind and a backreference: Python `re` only, the user's own choice
    user.write_text("[screen]\ndeny = ['(?<=the )canary', '(needs) (?!\\1)approval']\n")
    done = _bounded([sys.executable, "-m", "gitdream", "run"], root, gitdream_env())
    assert done.returncode == 0, done.stderr
    receipt = _receipt(root)
    assert {"deny[0]", "deny[1]"} <= _rejected_rules(receipt), receipt
    topics = "".join(p.read_text() for p in (root / "agents/ops/memory").glob("*.md"))
    assert "canary needs approval" not in topics


def test_a_repository_pattern_re2_cannot_match_stops_with_what_to_do(tmp_path: Path) -> None:
    root = agent_repo(tmp_path / "repo")
    material(root)
    write(root, "gitdream.toml", "min_hours = 0\nmin_sessions = 1\n[screen]\ndeny = ['(?<=the )canary']\n")
    commit_all(root, "a look-behind in the repository config")
    done = _bounded([sys.executable, "-m", "gitdream", "run"], root, gitdream_env())
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    assert "key 'screen.deny' has the pattern '(?<=the )canary', which RE2 cannot match" in done.stderr
    assert "so that a committed pattern cannot hang a dream" in done.stderr
    # gitdream.toml outranks the user config: the way out removes it there first
    assert "remove 'screen.deny' from gitdream.toml (it outranks your user config)" in done.stderr
    assert git(root, "for-each-ref", "refs/gitdream/watermark").strip() == ""


@pytest.mark.parametrize(
    "key, globs",
    [
        ("agents", "['" + "/".join(["**"] * 14) + "/ops']"),
        ("log_globs", "['memory/logs/**/" + "*a" * 12 + "*b.md']"),
    ],
    ids=["agents-double-star", "log-globs-stars"],
)
def test_a_committed_backtracking_glob_does_not_hang_a_dream(tmp_path: Path, key: str, globs: str) -> None:
    root = agent_repo(tmp_path / "repo")
    material(root)
    # a deep tree for `**` to search again and again, and a long name for `*a*a…b`
    deep = "agents/ops/memory/logs/" + "/".join(f"d{i}" for i in range(12))
    write(root, f"{deep}/{'a' * 200}.md", "- [deploy] Deep in the tree.\n")
    write(root, f"{deep}/{'a' * 60}b.md", "- [deploy] Rollbacks need the previous image tag.\n")
    write(root, "gitdream.toml", f"min_hours = 0\nmin_sessions = 1\n{key} = {globs}\n")
    commit_all(root, f"a backtracking {key} glob")
    done = _bounded([sys.executable, "-m", "gitdream", "run", "--json"], root, gitdream_env())
    assert done.returncode == 0, done.stderr
    # the glob still means what it says: the agent is found, and its material read
    [run] = json.loads(done.stdout)["runs"]
    assert (run["agent"], run["status"]) == ("ops", "ok"), run
