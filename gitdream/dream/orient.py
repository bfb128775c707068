"""Orient (DESIGN §5, phase 1): the agent's memory and definitions at the input commit."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitdream.git import trees

if TYPE_CHECKING:
    from gitdream.agents import Agent
    from gitdream.git.repo import Repo


def memory_view(repo: Repo, agent: Agent, commit: str) -> dict[str, str]:
    """The agent's memory (index, topics, archive; no raw sources) and definition files
    at `commit`, as `{path: text}`."""
    files = trees.files_under(
        repo, commit, agent.memory_dir, lambda p: p.endswith(".md") and not agent.is_source(p)
    )
    for path in agent.definition_files:
        folder = path.rsplit("/", 1)[0] if "/" in path else ""
        files.update(trees.files_under(repo, commit, folder, path.__eq__))
    return files
