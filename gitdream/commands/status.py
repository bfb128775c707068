"""`gitdream status`: per agent, when it last dreamed and when it will dream next.

On the idle path: reads refs, the state file, the lock, the hooks log and the working
tree of the agents' folders; imports neither the engines nor the anthropic SDK. When
gitdream is enabled it rewrites the stamp the hooks read (DESIGN: "rewritten by every run
and by status"); when disabled it writes nothing at all. NEXT (`next` in JSON) comes from
`gitdream.trigger.gates.next_dream`, the same rules `run --auto` applies: the time gate
from the last dream that consolidated material, then the session count (which the throttle
never hides once something was committed), then what blocks every dream (repository
state, a held lock).

The result is typed rows (`StatusResult` of `AgentStatus`...), rendered by
`gitdream.render.status` and serialised by their `to_json` (the shape in docs/json.md).
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from gitdream import clock
from gitdream.agents import Agent, list_agents
from gitdream.dream import material
from gitdream.errors import BlockError, GitdreamError
from gitdream.git import lockfiles, subtrees
from gitdream.trigger import dreamlock, gates, hooklog, hookscripts
from gitdream.trigger import state as state_mod

if TYPE_CHECKING:
    from datetime import datetime

    from gitdream.config import Config
    from gitdream.git.repo import Repo
    from gitdream.trigger.hooklog import Decision
    from gitdream.trigger.hookscripts import HooksStatus
    from gitdream.trigger.state import AgentState

# What stops every `run --auto` of the repository; NEXT reads "after <it>" instead of "now".
BLOCKED_UNBORN = "the first commit"
"""No commit yet: the agent files are to be committed (`gitdream init --commit`)."""
BLOCKED_STATE = "the repository is fixed"
"""A merge, rebase (or other operation) in progress, or a detached HEAD."""
BLOCKED_LOCK = "the running dream"
"""Another dream holds the repository lock."""


# Typed records as NamedTuples, not dataclasses: `status` imports this module, and a
# dataclass costs 0.3-0.5 ms to create at import (generated methods), a NamedTuple ~0.07 ms.
class RepositoryStatus(NamedTuple):
    """The worktree, its common git directory, the checked-out `branch` (short name, None
    when detached) and `head` (None before the first commit); `problem`/`hint`: what closes
    the repository gate of `run --auto` (an operation in progress, an unusable index), or
    None."""

    workdir: str
    common_dir: str
    branch: str | None
    head: str | None
    problem: str | None
    hint: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "workdir": self.workdir,
            "common_dir": self.common_dir,
            "branch": self.branch,
            "head": self.head,
            "problem": self.problem,
            "hint": self.hint,
        }


class EngineStatus(NamedTuple):
    """The configured engine's `name`, whether a dream could use it, and if not why
    (`reason`, with the fix)."""

    name: str
    usable: bool
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "usable": self.usable, "reason": self.reason}


class LockStatus(NamedTuple):
    """The dream lock's holder: its run id, pid, host and start (ISO 8601 UTC), each None
    when the lock file names no holder yet (empty: being written, or left by a crash);
    `stale`: why the lock no longer protects a running dream, or None while it does."""

    run: str | None
    pid: int | None
    host: str | None
    since: str | None
    stale: str | None

    @property
    def recorded(self) -> bool:
        """Whether the lock file names its holder."""
        return self.pid is not None

    def to_json(self) -> dict[str, Any]:
        return {"run": self.run, "pid": self.pid, "host": self.host, "since": self.since, "stale": self.stale}


class HooksLogStatus(NamedTuple):
    """Where the hooks log is, and its last decision for this worktree (None: none yet)."""

    path: str
    last: Decision | None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "last": self.last.to_json() if self.last is not None else None}


class AgentStatus(NamedTuple):
    """One agent's row. `last_run_*`: its last run (id, ISO 8601 time, status), None when
    it never ran, and `last_run_source` where that was learnt ("machine": this machine's
    state; "repository": the receipt note of its watermark, in a clone; None: never ran);
    `last_dream`: the last run that consolidated material; `next`: when it
    will dream, in words (`gates.next_dream`, or "never (disabled)"); `time_gate_opens`:
    None when the time gate is open; `sessions`: new sessions since the watermark (None:
    not counted, see `sessions_error`), `needed` of them, `pending` paths left by the last
    dream; `uncommitted_raw`: raw files the next dream ignores (None: git could not list
    them); `failures`/`interval_hours`: the back-off after failed runs."""

    id: str
    dir: str
    watermark: str | None
    last_run: str | None
    last_run_time: str | None
    last_run_status: str | None
    last_run_source: str | None
    last_dream: str | None
    next: str
    time_gate_open: bool
    time_gate_opens: str | None
    hours_until_open: float
    sessions: int | None
    needed: int
    pending: int
    sessions_error: str | None
    uncommitted_raw: list[str] | None
    failures: int
    interval_hours: float

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "dir": self.dir,
            "watermark": self.watermark,
            "last_run": {
                "run": self.last_run,
                "time": self.last_run_time,
                "status": self.last_run_status,
                "source": self.last_run_source,
            },
            "last_dream": self.last_dream,
            "next": self.next,
            "time_gate": {
                "open": self.time_gate_open,
                "opens": self.time_gate_opens,
                "hours_until_open": self.hours_until_open,
            },
            "sessions": {
                "new": self.sessions,
                "needed": self.needed,
                "pending": self.pending,
                "error": self.sessions_error,
            },
            "uncommitted_raw": self.uncommitted_raw,
            "backoff": {"failures": self.failures, "interval_hours": self.interval_hours},
        }


@dataclass
class StatusResult:
    """The whole status document (see `to_json` for its shape). `hooks`: None when the
    hooks could not be told, with the reason in `hooks_error`."""

    enabled: bool
    enabled_source: str
    repository: RepositoryStatus
    engine: EngineStatus
    lock: LockStatus | None = None
    hooks: HooksStatus | None = None
    hooks_error: str | None = None
    agents: list[AgentStatus] = field(default_factory=list)
    stamp: int | None = None
    hooks_log: HooksLogStatus | None = None
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        hooks = (
            self.hooks.to_json()
            if self.hooks is not None
            else {"installed": False, "hooks": [], "error": self.hooks_error}
        )
        return {
            "enabled": self.enabled,
            "enabled_source": self.enabled_source,
            "repository": self.repository.to_json(),
            "engine": self.engine.to_json(),
            "lock": self.lock.to_json() if self.lock is not None else None,
            "hooks": hooks,
            "agents": [agent.to_json() for agent in self.agents],
            "stamp": self.stamp,
            "hooks_log": self.hooks_log.to_json() if self.hooks_log is not None else {},
            "warnings": self.warnings,
        }


def engine_status(cfg: Config) -> EngineStatus:
    """The configured engine and whether a dream could use it, without importing it."""
    name = cfg.str("engine")
    if name == "anthropic":
        from gitdream.extras import anthropic_problem  # idle path: only for the anthropic engine

        sdk = anthropic_problem()
        if sdk is not None:
            return EngineStatus(name, False, f"{sdk.message}: {sdk.hint}")
        if not (cfg.str("anthropic.api_key").strip() or cfg.str("anthropic.auth_token").strip()):
            return EngineStatus(
                name,
                False,
                "no API key: set ANTHROPIC_API_KEY (or anthropic.api_key, or ANTHROPIC_AUTH_TOKEN)",
            )
    return EngineStatus(name, True)


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


def _lock(repo: Repo, cfg: Config) -> LockStatus | None:
    """The dream lock's holder, or None when the lock is free."""

    holder = dreamlock.read(repo.common_dir)
    if holder is None:
        return None
    stale = dreamlock.stale_reason(repo.common_dir, holder, cfg.float("lock_ttl_minutes"))
    if holder.pid <= 0:  # an empty or unreadable lock file: no holder recorded yet
        return LockStatus(None, None, None, None, stale)
    return LockStatus(holder.run, holder.pid, holder.host, holder.started, stale)


def _agent_status(
    repo: Repo,
    cfg: Config,
    agent: Agent,
    entry: AgentState,
    *,
    head: str | None,
    changed: set[str] | None,
    enabled: bool,
    blocked: str | None,
    now: datetime,
    warnings: list[str],
) -> AgentStatus:
    """One agent's row: its watermark, sessions since it, its gates and what the next
    dream would ignore. Never raises for an agent's broken ref or receipt: that stops only
    its row (`sessions_error`, and a line in `warnings`); a status must still print, and
    the run reports it properly."""

    base_hours = cfg.float("min_hours")
    mark = None
    sessions: int | None = None
    sessions_error = None
    pending = 0
    uncountable = False
    record = None
    try:
        mark = material.read_watermark(repo, agent)
        if head is not None:
            sessions = gates.count(repo, agent, head, entry)
        if mark is not None:
            record = gates.last_dream_record(repo, agent)
            pending = gates.pending_count(record) if head is not None else 0
    except GitdreamError as exc:
        uncountable = isinstance(exc, gates.Uncountable)  # run --auto's sessions gate stays closed
        sessions_error = exc.message
        warnings.append(f"{agent.id}: {exc.message}" + (f"; {exc.hint}" if exc.hint else ""))
    opens = state_mod.time_gate_opens(entry, base_hours)
    over = _index_over_limits(repo.workdir, agent, cfg)
    if over is not None:
        warnings.append(over)
    needed = cfg.int("min_sessions")
    last = _last_run(entry, record, mark)
    return AgentStatus(
        id=agent.id,
        dir=agent.dir or ".",
        watermark=mark,
        last_run=last.run,
        last_run_time=last.time,
        last_run_status=last.status,
        last_run_source=last.source,
        last_dream=last.dream,
        next=gates.next_dream(
            opens,
            sessions,
            needed,
            pending,
            blocked=blocked or (gates.UNCOUNTABLE_NEXT if uncountable else None),
            now=now,
        )
        if enabled
        else "never (disabled)",
        time_gate_open=opens is None or opens <= now,
        time_gate_opens=clock.iso(opens) if opens else None,
        hours_until_open=round(max(0.0, (opens - now).total_seconds() / 3600), 2) if opens else 0.0,
        sessions=sessions,
        needed=needed,
        pending=pending,
        sessions_error=sessions_error,
        uncommitted_raw=None if changed is None else _uncommitted_sources(repo, agent, changed),
        failures=entry.failures,
        interval_hours=state_mod.interval_hours(base_hours, entry.failures),
    )


class LastRun(NamedTuple):
    """An agent's last run as `status` shows it: its id, ISO 8601 start, status, the last
    run that consolidated material (`dream`), and where it was learnt (`source`)."""

    run: str | None
    time: str | None
    status: str | None
    dream: str | None
    source: str | None


SOURCE_MACHINE = "machine"
"""The last run comes from this machine's state file (its own runs)."""
SOURCE_REPOSITORY = "repository"
"""The last run comes from the repository: the receipt note of the agent's watermark."""


def _last_run(entry: AgentState, record: dict[str, Any] | None, mark: str | None) -> LastRun:
    """This machine's last run of the agent; when it never ran it here but the repository
    has its watermark (a clone that fetched gitdream's refs), the dream that set it, from
    the receipt note on the watermark commit (`record`, `gates.last_dream_record`) — its
    run id, start and status — or only that a watermark exists when the note was not
    fetched (time and status None). The time gate still counts from this machine's runs
    (docs/troubleshooting.md)."""
    if entry.last_run is not None or entry.last_attempt is not None:
        return LastRun(
            entry.last_run, entry.last_attempt, entry.last_status, entry.last_dream, SOURCE_MACHINE
        )
    if mark is None:
        return LastRun(None, None, None, None, None)
    if record is None:
        return LastRun(None, None, None, None, SOURCE_REPOSITORY)
    run, started, status = (record.get(k) for k in ("run", "started", "status"))
    started = started if isinstance(started, str) else None
    status = status if isinstance(status, str) else None
    return LastRun(
        run if isinstance(run, str) else None,
        started,
        status,
        started if status in ("ok", "partial") else None,
        SOURCE_REPOSITORY,
    )


def status(repo: Repo, cfg: Config) -> StatusResult:
    """Collect the status of every agent. Writes only the stamp (when enabled)."""

    config_seen = clock.epoch()
    head = repo.head()
    state_problem = repo.state_problem()  # what closes the repository gate of run --auto
    problem = state_problem or repo.index_problem()
    result = StatusResult(
        cfg.bool("enabled"),
        cfg.source("enabled"),
        repository=RepositoryStatus(
            workdir=str(repo.workdir),
            common_dir=str(repo.common_dir),
            branch=head.short_branch,
            head=head.oid,
            problem=problem.message if problem else None,
            hint=problem.hint if problem else None,
        ),
        engine=engine_status(cfg),
    )
    result.warnings.extend(_git_lock_files(repo, head.branch))
    result.lock = _lock(repo, cfg)
    result.hooks, result.hooks_error = _hooks(repo)
    result.hooks_log = HooksLogStatus(str(hooklog.log_path()), hooklog.last(repo.workdir))
    blocked = None
    if state_problem is not None:
        blocked = BLOCKED_UNBORN if head.unborn and repo.in_progress() is None else BLOCKED_STATE
    elif result.lock is not None and not result.lock.stale:
        blocked = BLOCKED_LOCK
    state = state_mod.load(repo.common_dir)
    # Counting remembers watermark trees it had to find (`git.subtrees`); disabled, a
    # status writes nothing.
    subtrees.for_repo(repo).writable = result.enabled
    agents = list_agents(repo.workdir, cfg, result.warnings)
    changed: set[str] | None = set()
    if agents:
        try:
            changed = repo.changed_paths([agent.dir for agent in agents])
        except GitdreamError as exc:  # e.g. a corrupt index: the rest of the status still prints
            changed = None
            result.warnings.append(f"uncommitted raw files not listed: {exc.message}")
    now = clock.now()
    for agent in agents:
        entry = state.agents.get(agent.id) or state_mod.AgentState()
        row = _agent_status(
            repo,
            cfg,
            agent,
            entry,
            head=head.oid,
            changed=changed,
            enabled=result.enabled,
            blocked=blocked,
            now=now,
            warnings=result.warnings,
        )
        result.agents.append(row)
    if result.enabled:
        opening = state_mod.next_opening(state, [a.id for a in agents], cfg.float("min_hours"))
        try:
            state_mod.write_stamp(repo.common_dir, opening, workdir=repo.workdir, config_seen=config_seen)
        except OSError as exc:  # a read-only or full file system: the status still prints
            from gitdream.git.environment import translate  # idle path: only where it is used

            known = translate(exc)
            result.warnings.append(f"the stamp was not rewritten: {known.message if known else exc}")
        result.stamp = state_mod.read_stamp(repo.common_dir)
    return result


def _index_over_limits(workdir: str | os.PathLike[str], agent: Agent, cfg: Config) -> str | None:
    """The warning a dream gives when the part of `agent`'s MEMORY.md outside gitdream's
    index block is already over `memory_max_lines` / `memory_max_bytes`: gitdream then
    lists its topics in `gitdream-topics.md` beside it (docs/memory.md). None when it fits,
    or when there is no readable MEMORY.md. Reads the work tree's file; never raises."""

    path = f"{agent.memory_dir}/MEMORY.md" if agent.memory_dir else "MEMORY.md"
    try:
        text = Path(workdir, path).read_text(encoding="utf-8", errors="surrogateescape")
    except (OSError, ValueError):
        return None
    max_lines, max_bytes = cfg.int("memory_max_lines"), cfg.int("memory_max_bytes")
    if _lines(text) <= max_lines and len(text.encode("utf-8", "surrogateescape")) <= max_bytes:
        return None  # the whole file fits, so the part outside the block does (no parse)
    from gitdream.text import blocks  # idle path: only for a MEMORY.md over its limits

    try:
        block = blocks.find(text, "index", path)
    except BlockError:  # broken markers: `gitdream check` names them
        block = None
    human = text if block is None else text[: block.start] + text[block.end :]
    lines = _lines(human)
    size = len(human.encode("utf-8", "surrogateescape"))
    if lines <= max_lines and size <= max_bytes:
        return None
    overflow = path[: -len("MEMORY.md")] + "gitdream-topics.md"
    where = (
        "are indexed"
        if Path(workdir, overflow).is_file()
        else "will be indexed (by the next dream that writes one)"
    )
    return (
        f"{agent.id}: {path} is over its limits without gitdream's block ({lines} lines, {size} bytes; "
        f"limits {max_lines} lines, {max_bytes} bytes): gitdream's topics {where} in {overflow}; "
        "shorten it by hand, or raise memory_max_lines/memory_max_bytes"
    )


def _lines(text: str) -> int:
    """Lines of `text`, a last one without its newline included."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _hooks(repo: Repo) -> tuple[HooksStatus | None, str | None]:
    """Which of gitdream's hooks are installed (`hookscripts.status`), or None and the
    reason it could not be told."""

    try:
        return hookscripts.status(repo), None
    except GitdreamError as exc:
        return None, exc.message
