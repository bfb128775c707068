"""The probe corpus of `bench/probe/` (the offline dream's check on other agents and languages)
stays usable: every raw entry of its logs, as gitdream's readers number them, has exactly one
hand-made label, and `bench.probe.build` lays it out as an agent repository, one commit per day.
Nothing here asserts a quality figure (`python -m bench --only probe` reports those)."""

from __future__ import annotations

import json
from pathlib import Path

import pygit2

from bench.probe import LABELS, PROBE, build
from gitdream.dream.decode import split_lines
from gitdream.dream.logentries import split_entries


def _labels() -> dict[str, str]:
    rows = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert all(row["label"] in {"keep", "transient", "noise"} and row["why"] for row in rows)
    ids = [row["id"] for row in rows]
    assert len(ids) == len(set(ids))
    return {row["id"]: row["label"] for row in rows}


def test_every_entry_of_the_probe_logs_has_one_label() -> None:
    labels = _labels()
    entry_ids = []
    for log in sorted((PROBE / "agents").rglob("logs/**/*.md")):
        path = log.relative_to(PROBE).as_posix()
        spans, warnings = split_entries(path, split_lines(log.read_text(encoding="utf-8")))
        assert not warnings
        entry_ids += [f"{path}#L{s.start}-L{s.end}" for s in spans]
    assert sorted(entry_ids) == sorted(labels)
    assert len({i.split("/")[1] for i in entry_ids}) >= 4  # several agents, not one


def test_the_probe_builds_one_commit_per_day_after_the_definitions(tmp_path: Path) -> None:
    repo = pygit2.Repository(str(build(tmp_path / "probe")))
    messages = [c.message.strip() for c in repo.walk(repo.head.target, pygit2.enums.SortMode.REVERSE)]
    assert messages == ["Agent definitions", "logs 2026-03-02", "logs 2026-03-03"]
    first = repo.revparse_single("HEAD~2")
    assert "agents/ops-cn/agent.md" in {e for e in _paths(repo, first.tree)}
    assert not any("/logs/" in p for p in _paths(repo, first.tree))


def _paths(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str = "") -> list[str]:
    out = []
    for entry in tree:
        name = prefix + entry.name
        if entry.type_str == "tree":
            out += _paths(repo, repo[entry.id], name + "/")
        else:
            out.append(name)
    return out
