"""The idle path imports only what it needs (DEVELOPING.md, rule 3, and bench/RESULTS.md:
import time is most of what a closed gate costs). A closed `run --auto` loads neither the
pipeline, the engines, the commit builder, the lock, the hook installer nor `subprocess`;
`status` and `check` never load the pipeline or an engine."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import commit_all, git, gitdream_env, run_gitdream, write

NEVER_IDLE = (
    "gitdream.dream.pipeline",
    "gitdream.engines",
    "gitdream.dream.integrate",
    "gitdream.dream.readers",
    "anthropic",
)
NOT_ON_A_CLOSED_GATE = (
    "gitdream.git.commitbuilder",
    "gitdream.git.writegate",
    "gitdream.trigger.dreamlock",
    "gitdream.trigger.hookscripts",
    "gitdream.ids",
    "subprocess",
    "difflib",
)


def _loaded(root: Path, args: list[str]) -> set[str]:
    code = (
        "import sys\n"
        "from gitdream.cli import cli\n"
        "try:\n"
        f"    cli({args!r}, prog_name='gitdream')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('LOADED', ' '.join(sorted(sys.modules)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=gitdream_env(), capture_output=True, text=True
    )
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("LOADED "))
    return set(line.split()[1:])


def _heavy(loaded: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in loaded if any(m == n or m.startswith(n + ".") for n in names))


def test_a_closed_gate_imports_only_the_gates(agent_repo: Path) -> None:
    write(agent_repo, "agents/ops/memory/logs/2026/03/2026-03-01.md", "- one session\n")
    commit_all(agent_repo, "one session: fewer than min_sessions")
    loaded = _loaded(agent_repo, ["run", "--auto", "--trigger", "post-merge"])
    assert "gitdream.trigger.gates" in loaded  # it did get as far as the gates
    assert _heavy(loaded, NEVER_IDLE + NOT_ON_A_CLOSED_GATE) == []


def test_a_clone_without_gitdreams_refs_is_a_closed_gate_too(agent_repo: Path, tmp_path: Path) -> None:
    """An agent that dreamed, in a clone without its watermark: the sessions gate cannot
    count and stays closed — on the idle path, not a dream that fails."""
    for day in range(1, 6):
        write(
            agent_repo,
            f"agents/ops/memory/logs/2026/03/2026-03-0{day}.md",
            f"- Lesson: the deploy of day {day} needs the cache warmed first, because cold starts time out.\n",
        )
    commit_all(agent_repo, "five sessions")
    assert run_gitdream(agent_repo, "run").returncode == 0
    assert git(agent_repo, "log", "-1", "--format=%s").startswith("dream(ops): experience")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(agent_repo), str(clone))
    write(clone, "agents/ops/memory/logs/2026/03/2026-03-06.md", "- one session\n")
    commit_all(clone, "one more session")
    loaded = _loaded(clone, ["run", "--auto", "--trigger", "post-merge"])
    assert "gitdream.trigger.gates" in loaded
    assert _heavy(loaded, NEVER_IDLE + NOT_ON_A_CLOSED_GATE) == []


@pytest.mark.parametrize("args", [["status"], ["check"]])
def test_status_and_check_never_import_the_pipeline_or_an_engine(agent_repo: Path, args: list[str]) -> None:
    assert _heavy(_loaded(agent_repo, args), NEVER_IDLE) == []
