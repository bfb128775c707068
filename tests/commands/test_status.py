"""`gitdream status`: raw files not committed yet (`uncommitted_raw`), found with one
status pass over the repository."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import cli, commit_all, git, write

LOGS = "agents/ops/memory/logs/2026/03"


def _uncommitted(root: Path) -> dict[str, list[str]]:
    result = cli(root, "status", "--json")
    assert result.exit_code == 0, result.stderr
    return {a["id"]: a["uncommitted_raw"] for a in json.loads(result.stdout)["agents"]}


def test_uncommitted_raw_lists_untracked_modified_and_staged_sources(agent_repo: Path) -> None:
    write(agent_repo, f"{LOGS}/2026-03-01.md", "- committed\n")
    write(agent_repo, f"{LOGS}/2026-03-02.md", "- committed, then edited\n")
    write(agent_repo, f"{LOGS}/2026-03-03.md", "- committed, then deleted\n")
    write(agent_repo, "agents/ops/sessions/2026-03-01.jsonl", '{"role": "user", "text": "hi"}\n')
    write(agent_repo, "agents/dev/agent.md", "# dev\n")
    write(agent_repo, ".gitignore", "*.tmp.md\n")
    commit_all(agent_repo, "logs")

    write(agent_repo, f"{LOGS}/2026-03-02.md", "- committed, then edited\n- more\n")  # modified
    (agent_repo / f"{LOGS}/2026-03-03.md").unlink()  # deleted: nothing to read
    write(agent_repo, f"{LOGS}/2026-03-04.md", "- new\n")  # untracked
    write(agent_repo, f"{LOGS}/2026-03-05.md", "- new, staged\n")
    git(agent_repo, "add", f"{LOGS}/2026-03-05.md")
    write(agent_repo, "agents/ops/memory/logs/new/deep/2026-03-06.md", "- in an untracked folder\n")
    write(agent_repo, f"{LOGS}/scratch.tmp.md", "- ignored\n")
    write(agent_repo, "agents/ops/sessions/2026-03-02.jsonl", '{"role": "user", "text": "new"}\n')
    write(agent_repo, "agents/ops/memory/MEMORY.md", "edited index, not a raw source\n")
    write(agent_repo, "agents/ops/notes.txt", "not a source\n")
    write(agent_repo, "agents/dev/memory/logs/2026/03/2026-03-01.md", "- dev's own\n")

    found = _uncommitted(agent_repo)
    assert found["ops"] == [
        f"{LOGS}/2026-03-02.md",
        f"{LOGS}/2026-03-04.md",
        f"{LOGS}/2026-03-05.md",
        "agents/ops/memory/logs/new/deep/2026-03-06.md",
        "agents/ops/sessions/2026-03-02.jsonl",
    ]
    assert found["dev"] == ["agents/dev/memory/logs/2026/03/2026-03-01.md"]


def test_uncommitted_raw_is_empty_when_everything_is_committed(agent_repo: Path) -> None:
    write(agent_repo, f"{LOGS}/2026-03-01.md", "- committed\n")
    commit_all(agent_repo, "log")
    assert _uncommitted(agent_repo) == {"ops": []}


def test_a_file_unstaged_from_the_index_but_present_counts(agent_repo: Path) -> None:
    write(agent_repo, f"{LOGS}/2026-03-01.md", "- committed\n")
    commit_all(agent_repo, "log")
    git(agent_repo, "rm", "-q", "--cached", f"{LOGS}/2026-03-01.md")
    assert _uncommitted(agent_repo) == {"ops": [f"{LOGS}/2026-03-01.md"]}
