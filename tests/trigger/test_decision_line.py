"""The hook's decision line stays short and readable whatever the number of agents, and
`status` always finds the last one (issue #17, the new user's item 2: with 33 agents a
decision was 5 KB, with 6 000 agents 389 KB and `status` lost it).

Real repositories, real hooks fired by a real `git merge`, a real clone that did not
fetch gitdream's refs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from gitdream.git.repo import Repo
from gitdream.trigger import hooklog, hookscripts
from tests.conftest import AGENT_MD
from tests.helpers import cli, commit_all, git, gitdream_env, run_gitdream, write

QUIET = [f"agent{n:02d}" for n in range(30)]
DREAMED = ["kit", "bookminder"]


def _log(day: int, agent: str) -> str:
    return (
        f"- Lesson: the {agent} deploy of day {day} needs the cache warmed first, because cold "
        f"starts time out.\n- Decision: keep the {agent} release notes of day {day} in the wiki.\n"
    )


def _clone_with_many_agents(tmp_path: Path) -> Path:
    """An upstream where kit and bookminder dreamed and 30 agents have no sessions, and a
    clone of it (without refs/gitdream/*) with the post-merge hook installed."""
    upstream = tmp_path / "upstream"
    git(tmp_path, "init", "-q", "-b", "main", str(upstream))
    for agent in [*QUIET, *DREAMED]:
        write(upstream, f"agents/{agent}/agent.md", AGENT_MD)
        write(upstream, f"agents/{agent}/memory/MEMORY.md", f"# {agent} — memory index\n")
    for agent in DREAMED:
        for day in range(1, 4):
            write(upstream, f"agents/{agent}/memory/logs/2026/03/2026-03-0{day}.md", _log(day, agent))
    commit_all(upstream, "agents")
    for agent in DREAMED:
        done = run_gitdream(upstream, "run", "--agent", agent)
        assert done.returncode == 0, done.stderr
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(upstream), str(clone))
    hookscripts.install(Repo.open(clone), hooks=["post-merge"], python=sys.executable)
    return clone


def _decisions(log: Path, workdir: Path) -> list[str]:
    if not log.exists():
        return []
    here = os.path.realpath(workdir)
    return [
        f[3]
        for f in (line.split("\t") for line in log.read_text().splitlines())
        if len(f) == 4 and f[2] == here
    ]


def _merge(clone: Path, log: Path) -> str:
    """Commit on a branch and `git merge --no-ff` it: the real post-merge hook fires."""
    before = len(_decisions(log, clone))
    git(clone, "checkout", "-q", "-b", "side")
    write(clone, "notes.txt", f"side {before}\n")
    commit_all(clone, "side")
    git(clone, "checkout", "-q", "main")
    proc = subprocess.run(
        ["git", "merge", "-q", "--no-ff", "--no-edit", "side"],
        cwd=clone,
        env=gitdream_env(),
        capture_output=True,
    )
    assert proc.returncode == 0, proc.stderr
    git(clone, "branch", "-q", "-D", "side")
    deadline = time.monotonic() + 120
    while len(_decisions(log, clone)) <= before:
        assert time.monotonic() < deadline, log.read_text() if log.exists() else "no hooks log"
        time.sleep(0.1)
    (decision,) = _decisions(log, clone)[before:]
    return decision


def test_a_hook_decision_groups_agents_by_reason_the_ones_needing_action_first(
    tmp_path: Path, isolate: Path
) -> None:
    clone = _clone_with_many_agents(tmp_path)
    log = isolate / "gitdream-home" / "logs" / "hooks.log"
    decision = _merge(clone, log)

    assert len(decision) < 1000, decision  # one reason per agent was 150 characters each
    first, second = decision.split(f"; {len(QUIET)} agents")
    # The two agents that need the user (fetch gitdream's refs) come first, by name.
    assert first.startswith("gate 'sessions' closed: bookminder, kit: cannot count new sessions"), decision
    assert "git fetch" in first
    assert second == (
        f" (agent00, agent01, agent02 and {len(QUIET) - 3} more): 0 new sessions since the watermark, 5 needed"
    ), decision

    # --verbose says the same short line; --json keeps every agent's own reason.
    verbose = cli(clone, "run", "--auto", "--verbose")
    # (asked again at once, the 30 agents' counts are the throttle's, and it says so)
    said = decision.replace(" closed:", " is closed:", 1) + " (counts reused; nothing committed since)"
    assert verbose.stderr.strip() == said, verbose.stderr
    document = json.loads(cli(clone, "run", "--auto", "--json").stdout)
    assert set(document["gate"]["agents"]) == {*QUIET, *DREAMED}
    assert "agent kit has dreamed before" in document["gate"]["agents"]["kit"]["reason"]

    status = json.loads(cli(clone, "status", "--json").stdout)
    assert status["hooks_log"]["last"]["message"] == decision


def test_status_finds_the_last_decision_past_a_long_line(tmp_path: Path, isolate: Path) -> None:
    """A line longer than the part of the log read at once (an older version's 389 KB
    decision, another repository's) does not hide the decision before it, and a long
    message of this worktree is cut, saying so."""
    clone = _clone_with_many_agents(tmp_path)
    log = isolate / "gitdream-home" / "logs" / "hooks.log"
    decision = _merge(clone, log)
    other = "2026-12-01T21:52:00Z\tpost-merge\t/elsewhere\tgate 'sessions' closed: " + "x: 0 new; " * 60_000
    with log.open("a") as handle:
        handle.write(other + "\n")
    assert len(other) > 2 * hooklog.TAIL_BYTES
    text = cli(clone, "status").stdout
    (shown,) = [line for line in text.splitlines() if line.strip().startswith("last: ")]
    assert shown.endswith(f"post-merge: {decision}"), text

    here = os.path.realpath(clone)
    with log.open("a") as handle:  # an older version's unbounded line for this worktree
        handle.write(
            f"2026-12-01T21:53:00Z\tpost-merge\t{here}\tgate 'sessions' closed: " + "y; " * 200_000 + "\n"
        )
        handle.write(other + "\n")
    last = json.loads(cli(clone, "status", "--json").stdout)["hooks_log"]["last"]
    assert last["time"] == "2026-12-01T21:53:00Z"
    assert len(last["message"]) <= hooklog.MESSAGE_CHARS and last["message"].endswith(hooklog.CUT), last


def test_a_recorded_decision_is_bounded(isolate: Path, tmp_path: Path) -> None:
    hooklog.record(tmp_path, "post-merge", "gate 'sessions' closed: " + "a: b; " * 10_000)
    (line,) = (isolate / "gitdream-home" / "logs" / "hooks.log").read_text().splitlines()
    message = line.split("\t")[3]
    assert len(message) == hooklog.MESSAGE_CHARS and message.endswith(hooklog.CUT)


def test_a_dreamed_decision_names_a_few_agents_and_counts_the_rest(tmp_path: Path, isolate: Path) -> None:
    """A dream of many agents at once is one short line too: five runs named, the rest
    counted by status."""
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    names = [f"agent{n}" for n in range(hooklog.DREAMS_SHOWN + 1)]
    for agent in names:
        write(repo, f"agents/{agent}/agent.md", AGENT_MD)
        write(repo, f"agents/{agent}/memory/MEMORY.md", f"# {agent} — memory index\n")
        write(repo, f"agents/{agent}/memory/logs/2026/03/2026-03-01.md", _log(1, agent))
    write(repo, "gitdream.toml", "min_sessions = 1\n")
    commit_all(repo, "agents")
    done = run_gitdream(
        repo, "run", "--auto", "--trigger", "post-merge", env={hooklog.HOOK_ENV: "post-merge"}
    )
    assert done.returncode == 0, done.stderr
    (decision,) = _decisions(isolate / "gitdream-home" / "logs" / "hooks.log", repo)
    assert decision.startswith("dreamed: agent0 ok (run "), decision
    assert decision.count(" ok (run ") == hooklog.DREAMS_SHOWN
    assert decision.endswith("; and 1 more agent (1 ok; `gitdream log` lists each run)"), decision
