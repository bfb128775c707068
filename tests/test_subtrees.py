"""The folder-tree cache of `gitdream.git.subtrees` (issue 16: `status` of 10 000 agents
loaded the `agents/` tree of every watermark): a pure cache, so every count is the one
found without it, whether the file is missing, stale, edited or came from elsewhere."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gitdream.git import subtrees
from gitdream.git.repo import open_repo
from tests.helpers import cli, commit_all, git, write

LOGS = "agents/ops/memory/logs/2026/03"
NEW = 3


def _log(root: Path, day: int) -> None:
    write(root, f"{LOGS}/2026-03-{day:02d}.md", f"- Lesson: deploy {day} needs the cache warmed first.\n")


def _dreamed(root: Path) -> str:
    """Dream agent ops once, then commit NEW more daily logs; returns its watermark."""
    for day in (1, 2):
        _log(root, day)
    commit_all(root, "two sessions")
    result = cli(root, "run")
    assert result.exit_code == 0, result.stderr
    for day in range(3, 3 + NEW):
        _log(root, day)
    commit_all(root, "more sessions")
    return git(root, "rev-parse", "refs/gitdream/watermark/ops").strip()


def _sessions(root: Path, env: dict[str, str] | None = None) -> int | None:
    result = cli(root, "status", "--json", env=env)
    assert result.exit_code == 0, result.stderr
    (agent,) = json.loads(result.stdout)["agents"]
    return agent["sessions"]["new"]


def _cache(root: Path) -> Path:
    return subtrees.cache_path(open_repo(root).common_dir)


def _line(key: bytes, commit: str, tree: str, folder: str = "agents/ops") -> str:
    return f"{commit} {tree} {subtrees.tag(key, commit, tree, folder)} {folder}\n"


def test_a_dream_remembers_its_input_commits_folder_tree_and_status_then_finds_it(agent_repo: Path) -> None:
    mark = _dreamed(agent_repo)
    tree = git(agent_repo, "rev-parse", f"{mark}:agents/ops").strip()
    assert _line(subtrees.key_path().read_bytes(), mark, tree) in _cache(agent_repo).read_text()
    before = _cache(agent_repo).read_bytes()
    assert _sessions(agent_repo) == NEW
    assert _cache(agent_repo).read_bytes() == before  # a hit: nothing found again
    assert oct(subtrees.key_path().stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize(
    "case",
    ["missing", "garbage", "another key", "bad tag", "tree not in the repository", "a blob", "key replaced"],
)
def test_every_count_is_the_uncached_one_when_the_cache_is_missing_stale_or_tampered_with(
    agent_repo: Path, case: str
) -> None:
    mark = _dreamed(agent_repo)
    # A tree that would count 0 new sessions: the folder as it is at HEAD.
    wrong = git(agent_repo, "rev-parse", "HEAD:agents/ops").strip()
    blob = git(agent_repo, "rev-parse", "HEAD:agents/ops/agent.md").strip()
    key = subtrees.key_path().read_bytes()
    cache = _cache(agent_repo)
    if case == "missing":
        cache.unlink()
    elif case == "garbage":
        cache.write_bytes(b"\x00\xff not a line\n" + _line(key, mark, wrong).encode()[:50] + b"\n")
    elif case == "another key":  # a cache that came with a copied repository
        cache.write_text(_line(os.urandom(32), mark, wrong))
    elif case == "bad tag":  # edited by hand
        cache.write_text(f"{mark} {wrong} {'0' * 32} agents/ops\n")
    elif case == "tree not in the repository":
        cache.write_text(_line(key, mark, "1" * 40))
    elif case == "a blob":
        cache.write_text(_line(key, mark, blob))
    elif case == "key replaced":
        cache.write_text(_line(key, mark, wrong))
        subtrees.key_path().write_bytes(os.urandom(32))
    assert _sessions(agent_repo) == NEW
    # ... and the entry found again replaces it.
    good = git(agent_repo, "rev-parse", f"{mark}:agents/ops").strip()
    assert _line(subtrees.key_path().read_bytes(), mark, good) in cache.read_text(errors="replace")
    assert _sessions(agent_repo) == NEW


def test_an_entry_tagged_with_this_machines_key_is_what_counting_reads(agent_repo: Path) -> None:
    """The cache is really read (what makes `status` of many agents fast): so its tag,
    keyed outside the repository, is what keeps a planted entry out."""
    mark = _dreamed(agent_repo)
    head_tree = git(agent_repo, "rev-parse", "HEAD:agents/ops").strip()
    _cache(agent_repo).write_text(_line(subtrees.key_path().read_bytes(), mark, head_tree))
    assert _sessions(agent_repo) == 0


def test_a_disabled_status_writes_no_cache(agent_repo: Path) -> None:
    _dreamed(agent_repo)
    _cache(agent_repo).unlink()
    assert _sessions(agent_repo, env={"GITDREAM_ENABLED": "false"}) == NEW
    assert not _cache(agent_repo).exists()


def test_the_file_is_compacted_to_the_newest_commits_of_each_folder(
    agent_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(subtrees, "MIN_LINES", 4)
    commits = []
    for day in range(1, 12):
        _log(agent_repo, day)
        commits.append(commit_all(agent_repo, f"day {day}"))
    repo = open_repo(agent_repo)
    found = subtrees.for_repo(repo)
    for commit in commits:
        assert found.tree(commit, "agents/ops", remember=True) is not None
        assert found.tree(commit, "agents", remember=True) is not None
        lines = _cache(agent_repo).read_text().splitlines()
        assert len(lines) <= subtrees.COMPACT_FACTOR * subtrees.KEEP * 2
    fresh = subtrees.Subtrees(open_repo(agent_repo))
    for commit in commits[-subtrees.KEEP :]:
        for folder in ("agents/ops", "agents"):
            tree = git(agent_repo, "rev-parse", f"{commit}:{folder}").strip()
            assert fresh._entries()[(commit, folder)] == tree
    assert (commits[0], "agents/ops") not in fresh._entries()
