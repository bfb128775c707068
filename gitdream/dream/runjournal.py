"""What a dream decided, kept until it is finished, so a rerun after a kill finishes it.

A dream killed after its commits and before its watermark and receipt (its material not
consumed yet) is read again by the next run. Left to itself that rerun decides afresh: the
facts the killed run wrote are recognised, and the material the killed run had left for a
later run (over `max_units`, a failed batch) is taken now — the rerun did not end where an
uninterrupted run would have (issue 16). So once a dream knows which entries it will
write and which it leaves pending, it records that here, before its first commit:

    <git-common-dir>/gitdream/runs/<agent key>.json
    {"run", "agent", "input", "watermark", "material", "entries", "pending", "writer",
     "receipt_error"}

`material` is a digest of the material (paths, blobs, added lines). The next run of that
agent whose writer is gone, whose watermark has not moved and whose material has the
same digest completes the killed run instead of deciding again: it keeps only the killed
run's `entries` and takes over its `pending`. A run killed after its watermark moved (to
its input commit), before its receipt, is finished by the next run too: it reads what the
killed run left pending from the plan, as it would from that run's receipt (`moved_on`). The file goes when the run finishes (or
fails or is aborted: its receipt then says what happened). Machine-local, never tracked.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitdream import paths, processes
from gitdream.errors import RepoStateError

if TYPE_CHECKING:
    from gitdream.dream.material import Material
    from gitdream.git.repo import Repo


@dataclass
class RunPlan:
    """The decision of run `run` of agent `agent` (see the module docstring)."""

    run: str
    agent: str
    input: str
    watermark: str | None
    material: str
    entries: list[str] = field(default_factory=list)
    pending: list[dict[str, Any]] = field(default_factory=list)
    writer: dict[str, Any] = field(default_factory=dict)
    receipt_error: str | None = None
    """Why the run's receipt could not be written, when it ended so (not killed)."""


def plan_path(repo: Repo, agent_id: str) -> Path:
    key = hashlib.sha1(agent_id.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return paths.state_folder(repo.common_dir, "runs", create=False) / f"{key}.json"  # refuses a link


def digest(material: Material) -> str:
    """A digest of what the material is: each source file's path, blob and added lines."""
    h = hashlib.sha256()
    for item in material.files:
        lines = sorted(item.added_lines) if item.added_lines is not None else None
        h.update(json.dumps([item.path, item.blob, lines]).encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def record(repo: Repo, plan: RunPlan) -> None:
    """Keep `plan` until `drop` (atomic write)."""
    path = plan_path(repo, plan.agent)
    paths.state_folder(repo.common_dir, path.parent.name)  # a real folder, never a link
    plan.writer = processes.identity()
    paths.atomic_write(path, json.dumps(asdict(plan)).encode("utf-8"))


def receipt_failed(repo: Repo, agent_id: str, why: str) -> None:
    """Note in the kept plan of `agent_id` that its run ended but could not write its
    receipt (`why`), so the run that finishes it says that rather than "interrupted"
    (issue 16). Best effort: where the plan cannot be rewritten it stays as it was."""
    path = plan_path(repo, agent_id)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            return
        data["receipt_error"] = why
        paths.atomic_write(path, json.dumps(data).encode("utf-8"))
    except (OSError, ValueError):
        return


def drop(repo: Repo, agent_id: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        plan_path(repo, agent_id).unlink()


def planned_run(repo: Repo, agent_id: str) -> str | None:
    """The id of the run whose plan for `agent_id` is kept here (it was killed before
    finishing, or is running now), or None."""
    try:
        data = json.loads(plan_path(repo, agent_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    run = data.get("run") if isinstance(data, dict) else None
    return run if isinstance(run, str) else None


def moved_on(repo: Repo, agent_id: str, watermark: str | None) -> RunPlan | None:
    """The plan of a run of `agent_id` killed after it moved the watermark to its input
    commit (`watermark`) and before its receipt: no receipt says what it left pending, so
    the next run reads that from its plan, and finishes it (issue 16). None otherwise."""
    if watermark is None:
        return None
    try:
        plan = RunPlan(**json.loads(plan_path(repo, agent_id).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError, RepoStateError):
        return None
    if plan.writer and not processes.gone(plan.writer):
        return None
    return plan if plan.agent == agent_id and plan.input == watermark else None


def kept_state(repo: Repo, agent_id: str, run_id: str) -> str | None:
    """Whether run `run_id` of `agent_id` has its plan kept here: "interrupted" (its writer
    is gone: killed before its receipt, and the next run of the agent finishes it),
    "running" (its writer is alive), or None (no plan of that run)."""
    try:
        data = json.loads(plan_path(repo, agent_id).read_text(encoding="utf-8"))
    except (OSError, ValueError, RepoStateError):
        return None
    if not isinstance(data, dict) or data.get("run") != run_id or data.get("agent") != agent_id:
        return None
    writer = data.get("writer")
    if isinstance(writer, dict) and writer and not processes.gone(writer):
        return "running"
    return "interrupted"


def unfinished(repo: Repo, agent_id: str, watermark: str | None, material: Material) -> RunPlan | None:
    """The plan of a killed run of `agent_id` that this run finishes: its writer is gone,
    the watermark is where it found it and the material is the same. Another plan is
    stale and dropped (it cannot be finished any more: the next run decides afresh)."""
    path = plan_path(repo, agent_id)
    try:
        plan = RunPlan(**json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return None
    except (ValueError, TypeError):
        drop(repo, agent_id)
        return None
    if plan.writer and not processes.gone(plan.writer):
        return None  # a live run of this agent (another worktree): not ours to finish
    if plan.agent != agent_id or plan.watermark != watermark or plan.material != digest(material):
        drop(repo, agent_id)
        return None
    return plan
