"""New material from the watermark: tree diffs on real repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitdream import config
from gitdream.agents import list_agents
from gitdream.dream.material import changed_sources, read_watermark, resolve_base
from gitdream.errors import RepoStateError
from gitdream.git.repo import Repo
from tests.helpers import commit_all, git, head, write

LOG = "agents/ops/memory/logs/2026/03/2026-03-01.md"
LOG2 = "agents/ops/memory/logs/2026/03/2026-03-02.md"
SESSION = "agents/ops/sessions/s1.jsonl"


def _material(root: Path, base: str | None, pending=()):
    repo = Repo.open(root)
    agent = list_agents(root, config.load(root, env={}))[0]
    return changed_sources(repo, agent, base, head(root), pending)


def _mark(root: Path, commit: str) -> None:
    git(root, "update-ref", "refs/gitdream/watermark/ops", commit)


def test_added_files_count_whole(agent_repo: Path) -> None:
    base = head(agent_repo)
    write(agent_repo, LOG, "- one\n- two\n")
    write(agent_repo, SESSION, '{"role": "user", "text": "hi", "ts": 1}\n')
    write(agent_repo, "agents/ops/memory/notes.md", "not a source\n")
    commit_all(agent_repo, "logs")
    material = _material(agent_repo, base)
    assert [(f.path, f.kind, f.status, f.added_lines) for f in material.files] == [
        (LOG, "log", "added", None),
        (SESSION, "transcript", "added", None),
    ]
    assert material.sessions == 2


def test_added_files_are_found_without_reading_their_blobs(agent_repo: Path) -> None:
    """O(changed): an added file needs no patch, so its blob is never loaded (with it, a
    patch would also look up diff attributes, which makes libgit2 read the whole index)."""
    base = head(agent_repo)
    write(agent_repo, LOG, "- one\n- two\n")
    commit_all(agent_repo, "log")
    blob = git(agent_repo, "rev-parse", f"HEAD:{LOG}").strip()
    (agent_repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # a loose object
    (only,) = _material(agent_repo, base).files
    assert (only.path, only.status, only.blob) == (LOG, "added", blob)


def test_only_appended_lines_of_modified_files_count(agent_repo: Path) -> None:
    write(agent_repo, LOG, "- one\n- two\n")
    base = commit_all(agent_repo, "day 1")
    write(agent_repo, LOG, "- one\n- two\n- three\n\n- four\n")
    commit_all(agent_repo, "append")
    (only,) = _material(agent_repo, base).files
    assert only.status == "modified" and only.added_lines == frozenset({3, 4, 5})


def test_deleted_and_renamed_only_files_add_nothing(agent_repo: Path) -> None:
    write(agent_repo, LOG, "- a fairly long line so that rename detection is confident\n" * 5)
    write(agent_repo, LOG2, "- other\n")
    base = commit_all(agent_repo, "logs")
    git(agent_repo, "mv", LOG, "agents/ops/memory/logs/2026/03/2026-03-09.md")
    git(agent_repo, "rm", "-q", LOG2)
    commit_all(agent_repo, "rename and delete")
    assert _material(agent_repo, base).files == []


def test_dream_outputs_are_never_material(agent_repo: Path) -> None:
    write(agent_repo, "gitdream.toml", 'log_globs = ["memory/**/*.md", "*.md"]\n')
    base = commit_all(agent_repo, "greedy globs")
    write(agent_repo, "agents/ops/memory/MEMORY.md", "changed index\n")
    write(agent_repo, "agents/ops/memory/topic.md", "topic\n")
    write(agent_repo, "agents/ops/memory/archive/2026-01.md", "archived\n")
    write(agent_repo, "agents/ops/SKILL.md", "skills\n")
    write(agent_repo, LOG, "- real log\n")
    commit_all(agent_repo, "outputs and a log")
    # (`gitdream run` refuses globs that match its own outputs — agents.check_layout; the
    # material is computed without that check here, to show outputs are excluded anyway)
    from gitdream.agents import make_agent

    agent = make_agent("agents/ops", config.load(agent_repo, env={}))
    found = changed_sources(Repo.open(agent_repo), agent, base, head(agent_repo))
    assert [f.path for f in found.files] == [LOG]


def test_other_agents_changes_are_not_material(agent_repo: Path) -> None:
    base = head(agent_repo)
    write(agent_repo, "agents/qa/memory/logs/2026/03/2026-03-01.md", "- qa\n")
    commit_all(agent_repo, "qa log")
    assert _material(agent_repo, base).files == []


def test_pending_paths_are_read_again_from_their_base(agent_repo: Path) -> None:
    write(agent_repo, LOG, "- one\n")
    first = commit_all(agent_repo, "day 1")
    write(agent_repo, LOG, "- one\n- two\n")
    second = commit_all(agent_repo, "day 1 more")
    write(agent_repo, LOG2, "- new day\n")
    commit_all(agent_repo, "day 2")
    material = _material(agent_repo, second, pending=[(LOG, first)])
    assert {f.path: f.added_lines for f in material.files} == {LOG: frozenset({2}), LOG2: None}


def test_resolve_base_first_dream_full_and_since(agent_repo: Path) -> None:
    repo = Repo.open(agent_repo)
    agent = list_agents(agent_repo, config.load(agent_repo, env={}))[0]
    now = head(agent_repo)
    assert resolve_base(repo, agent, now) == (None, [])
    _mark(agent_repo, now)
    assert read_watermark(repo, agent) == now
    assert resolve_base(repo, agent, now) == (now, [])
    assert resolve_base(repo, agent, now, full=True) == (None, [])
    assert resolve_base(repo, agent, now, since="HEAD~1")[0] == git(agent_repo, "rev-parse", "HEAD~1").strip()
    with pytest.raises(RepoStateError, match="--since nope: no such revision"):
        resolve_base(repo, agent, now, since="nope")


def test_watermark_not_an_ancestor_uses_the_merge_base(agent_repo: Path) -> None:
    fork = head(agent_repo)
    write(agent_repo, LOG, "- one\n")
    old_tip = commit_all(agent_repo, "will be rewritten")
    _mark(agent_repo, old_tip)
    git(agent_repo, "reset", "-q", "--hard", fork)
    write(agent_repo, LOG, "- one, rewritten\n")
    new_tip = commit_all(agent_repo, "rewritten")
    repo = Repo.open(agent_repo)
    agent = list_agents(agent_repo, config.load(agent_repo, env={}))[0]
    base, warnings = resolve_base(repo, agent, new_tip)
    assert base == fork
    assert warnings and "not an ancestor of HEAD" in warnings[0]


def test_shallow_clone_with_unreachable_watermark_is_an_error(agent_repo: Path, tmp_path: Path) -> None:
    for day in range(1, 4):
        write(agent_repo, f"agents/ops/memory/logs/2026/03/2026-03-0{day}.md", f"- day {day}\n")
        commit_all(agent_repo, f"day {day}")
    old = git(agent_repo, "rev-parse", "HEAD~2").strip()
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{agent_repo}", str(clone))
    git(clone, "update-ref", "refs/gitdream/watermark/ops", head(clone))
    # Point the watermark at a commit the shallow clone does not have.
    (clone / ".git" / "refs" / "gitdream" / "watermark" / "ops").write_text(old + "\n")
    repo = Repo.open(clone)
    agent = list_agents(clone, config.load(clone, env={}))[0]
    with pytest.raises(RepoStateError) as info:
        resolve_base(repo, agent, head(clone))
    assert "shallow clone" in info.value.message
    assert "--unshallow" in (info.value.hint or "")


def test_material_cost_does_not_depend_on_unrelated_history(agent_repo: Path) -> None:
    """Only the agent's subtree is diffed: a change elsewhere is not even looked at."""
    base = head(agent_repo)
    for i in range(30):
        write(agent_repo, f"elsewhere/{i}.md", f"{i}\n")
    write(agent_repo, LOG, "- one\n")
    commit_all(agent_repo, "many unrelated files")
    assert [f.path for f in _material(agent_repo, base).files] == [LOG]
