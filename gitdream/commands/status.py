"""`gitdream status`: per agent, when it last dreamed and when it will dream next.

On the idle path: reads refs, the state file, the lock, the hooks log and the working
tree of the agents' folders; imports neither the engines nor the anthropic SDK. When
gitdream is enabled it rewrites the stamp the hooks read (DESIGN: "rewritten by every run
and by status"); when disabled it writes nothing at all. NEXT (`next` in JSON) comes from
`gitdream.trigger.gates.next_dream`, the same rules `run --auto` applies: the time gate
from the last dream that consolidated material, then the session count (which the throttle
never hides once something was committed), then what blocks every dream (repository
state, a held lock).
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitdream import clock
from gitdream.agents import Agent, list_agents
from gitdream.errors import BlockError, GitdreamError

if TYPE_CHECKING:
    from gitdream.config import Config
    from gitdream.git.repo import Repo


@dataclass
class StatusResult:
    """The whole status document (see `to_json` for its shape)."""

    enabled: bool
    enabled_source: str
    repository: dict[str, Any] = field(default_factory=dict)
    engine: dict[str, Any] = field(default_factory=dict)
    lock: dict[str, Any] | None = None
    hooks: dict[str, Any] = field(default_factory=dict)
    agents: list[dict[str, Any]] = field(default_factory=list)
    stamp: int | None = None
    hooks_log: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            "enabled_source": self.enabled_source,
            "repository": self.repository,
            "engine": self.engine,
            "lock": self.lock,
            "hooks": self.hooks,
            "agents": self.agents,
            "stamp": self.stamp,
            "hooks_log": self.hooks_log,
            "warnings": self.warnings,
        }


def engine_status(cfg: Config) -> dict[str, Any]:
    """`{"name", "usable", "reason"}` for the configured engine, without importing it."""
    name = cfg.str("engine")
    if name == "anthropic":
        from gitdream.extras import anthropic_problem

        sdk = anthropic_problem()
        if sdk is not None:
            return {"name": name, "usable": False, "reason": f"{sdk.message}: {sdk.hint}"}
        if not (cfg.str("anthropic.api_key").strip() or cfg.str("anthropic.auth_token").strip()):
            return {
                "name": name,
                "usable": False,
                "reason": "no API key: set ANTHROPIC_API_KEY (or anthropic.api_key, or ANTHROPIC_AUTH_TOKEN)",
            }
    return {"name": name, "usable": True, "reason": None}


def _uncommitted_sources(repo: Repo, agent: Agent, changed: set[str]) -> list[str]:
    """Raw source files of `agent` that differ from HEAD (untracked, modified or staged)
    and exist in the working tree: the next dream ignores them, since it reads committed
    content only. `changed` is the status of the agents' folders (`Repo.changed_paths`)."""
    found = []
    for rel in changed:
        if agent.is_source(rel) and os.path.lexists(repo.workdir / rel):
            found.append(rel)
    return sorted(found)


def _git_lock_files(repo: Repo, branch: str | None) -> list[str]:
    """One warning per lock file of git's that a dream needs free — `index.lock`,
    `HEAD.lock`, the checked-out branch's `.lock` (`gitdream.git.lockfiles`) — with its age:
    while one exists every dream refuses to write, and a git command killed mid-write
    leaves it behind for good."""
    from gitdream.git import lockfiles

    found = []
    for name in (lockfiles.INDEX, "HEAD", *([branch] if branch else [])):
        path = lockfiles.lock_path(repo, name)
        try:
            age = clock.now().timestamp() - path.stat().st_mtime
        except OSError:
            continue
        found.append(
            f"{path} exists ({age / 60:.0f} minutes old): dreams refuse to write while it does; "
            f"if no git command is running, remove it: rm {shlex.quote(str(path))}"
        )
    return found


def status(repo: Repo, cfg: Config) -> StatusResult:
    """Collect the status of every agent. Writes only the stamp (when enabled)."""
    from gitdream.dream import material
    from gitdream.trigger import dreamlock, gates, hooklog
    from gitdream.trigger import state as state_mod

    config_seen = clock.epoch()
    result = StatusResult(cfg.bool("enabled"), cfg.source("enabled"))
    head = repo.head()
    state_problem = repo.state_problem()  # what closes the repository gate of run --auto
    problem = state_problem or repo.index_problem()
    result.repository = {
        "workdir": str(repo.workdir),
        "common_dir": str(repo.common_dir),
        "branch": head.short_branch,
        "head": head.oid,
        "problem": problem.message if problem else None,
        "hint": problem.hint if problem else None,
    }
    result.engine = engine_status(cfg)
    result.warnings.extend(_git_lock_files(repo, head.branch))
    holder = dreamlock.read(repo.common_dir)
    if holder is not None:
        result.lock = {
            "run": holder.run,
            "pid": holder.pid,
            "host": holder.host,
            "since": holder.started,
            "stale": dreamlock.stale_reason(repo.common_dir, holder, cfg.float("lock_ttl_minutes")),
        }
    result.hooks = _hooks(repo)
    decision = hooklog.last(repo.workdir)
    result.hooks_log = {
        "path": str(hooklog.log_path()),
        "last": decision.to_json() if decision is not None else None,
    }
    blocked = None
    if state_problem is not None:
        blocked = "the repository is fixed"
    elif result.lock is not None and not result.lock["stale"]:
        blocked = "the running dream"
    state = state_mod.load(repo.common_dir)
    base_hours = cfg.float("min_hours")
    now = clock.now()
    agents = list_agents(repo.workdir, cfg, result.warnings)
    changed: set[str] | None = set()
    if agents:
        try:
            changed = repo.changed_paths([agent.dir for agent in agents])
        except GitdreamError as exc:  # e.g. a corrupt index: the rest of the status still prints
            changed = None
            result.warnings.append(f"uncommitted raw files not listed: {exc.message}")
    for agent in agents:
        entry = state.agents.get(agent.id) or state_mod.AgentState()
        mark = None
        sessions: int | None = None
        sessions_error = None
        pending = 0
        try:  # one agent's broken ref or receipt stops only that agent's row
            mark = material.read_watermark(repo, agent)
            if head.oid is not None:
                base, _ = material.resolve_base(repo, agent, head.oid)
                sessions = material.count_sessions(repo, agent, base, head.oid)
                pending = gates.pending_paths(repo, agent)
        except GitdreamError as exc:  # a status must still print; the run reports it properly
            sessions_error = exc.message
            result.warnings.append(f"{agent.id}: {exc.message}" + (f"; {exc.hint}" if exc.hint else ""))
        opens = state_mod.time_gate_opens(entry, base_hours)
        needed = cfg.int("min_sessions")
        over = _index_over_limits(repo.workdir, agent, cfg)
        if over is not None:
            result.warnings.append(over)
        result.agents.append(
            {
                "id": agent.id,
                "dir": agent.dir or ".",
                "watermark": mark,
                "last_run": {
                    "run": entry.last_run,
                    "time": entry.last_attempt,
                    "status": entry.last_status,
                },
                "last_dream": entry.last_dream,
                "next": gates.next_dream(opens, sessions, needed, pending, blocked=blocked, now=now)
                if result.enabled
                else "never (disabled)",
                "time_gate": {
                    "open": opens is None or opens <= now,
                    "opens": clock.iso(opens) if opens else None,
                    "hours_until_open": round(max(0.0, (opens - now).total_seconds() / 3600), 2)
                    if opens
                    else 0.0,
                },
                "sessions": {
                    "new": sessions,
                    "needed": needed,
                    "pending": pending,
                    "error": sessions_error,
                },
                "uncommitted_raw": None if changed is None else _uncommitted_sources(repo, agent, changed),
                "backoff": {
                    "failures": entry.failures,
                    "interval_hours": state_mod.interval_hours(base_hours, entry.failures),
                },
            }
        )
    if result.enabled:
        opening = state_mod.next_opening(state, [a.id for a in agents], base_hours)
        try:
            state_mod.write_stamp(repo.common_dir, opening, workdir=repo.workdir, config_seen=config_seen)
        except OSError as exc:  # a read-only or full file system: the status still prints
            from gitdream.git.environment import translate

            known = translate(exc)
            result.warnings.append(f"the stamp was not rewritten: {known.message if known else exc}")
        result.stamp = state_mod.read_stamp(repo.common_dir)
    return result


def _index_over_limits(workdir: str | os.PathLike[str], agent: Agent, cfg: Config) -> str | None:
    """The warning a dream gives when the part of `agent`'s MEMORY.md outside gitdream's
    index block is already over `memory_max_lines` / `memory_max_bytes`: gitdream then
    lists its topics in `gitdream-topics.md` beside it (docs/memory.md). None when it fits,
    or when there is no readable MEMORY.md. Reads the work tree's file; never raises."""
    from gitdream.text import blocks

    path = f"{agent.memory_dir}/MEMORY.md" if agent.memory_dir else "MEMORY.md"
    try:
        text = Path(workdir, path).read_text(encoding="utf-8", errors="surrogateescape")
    except (OSError, ValueError):
        return None
    try:
        block = blocks.find(text, "index", path)
    except BlockError:  # broken markers: `gitdream check` names them
        block = None
    human = text if block is None else text[: block.start] + text[block.end :]
    lines = human.count("\n") + (1 if human and not human.endswith("\n") else 0)
    size = len(human.encode("utf-8", "surrogateescape"))
    max_lines, max_bytes = cfg.int("memory_max_lines"), cfg.int("memory_max_bytes")
    if lines <= max_lines and size <= max_bytes:
        return None
    overflow = path[: -len("MEMORY.md")] + "gitdream-topics.md"
    return (
        f"{agent.id}: {path} is over its limits without gitdream's block ({lines} lines, {size} bytes; "
        f"limits {max_lines} lines, {max_bytes} bytes): gitdream's topics are indexed in {overflow}; "
        "shorten it by hand, or raise memory_max_lines/memory_max_bytes"
    )


def _hooks(repo: Repo) -> dict[str, Any]:
    """Which of gitdream's hooks are installed (`hookscripts.status`), or the reason it
    could not be told."""
    from gitdream.trigger import hookscripts

    try:
        return hookscripts.status(repo).to_json()
    except GitdreamError as exc:
        return {"installed": False, "hooks": [], "error": exc.message}
