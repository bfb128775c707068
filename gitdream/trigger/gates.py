"""Auto mode's gates, cheapest first (DESIGN §5).

    enabled → repository state → time since the last dream (min_hours from the last
    run that consolidated material, stretched by back-off) → new sessions since the
    watermark (min_sessions; material a previous dream left pending opens it too) → lock

The first two are checked for the repository, the next per agent; the lock is taken by
`gitdream run` once some agent passes. Counting sessions is the only scan; the throttle
(`scan_interval_minutes`) reuses the last count instead of scanning again, and only while
nothing was committed since (HEAD and the watermark are what it was counted at). When
there is no base to count from — the agent has dreamed, but a clone did not fetch its
watermark (`refs/gitdream/*`) — the sessions gate stays closed with the fetch hint
(`Uncountable`): a dream started then would only fail and back off the hooks. A closed
gate is not an error: `run --auto` exits 0 and names the gate and its reason under
--verbose, in --json and, for a hook, in the hooks log. A manual run skips the time and
session gates, never the repository state, lock or write gates. `next_dream` is the one
place that turns the gates into `status`'s NEXT.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from gitdream import clock
from gitdream.errors import GitdreamError, RepoStateError
from gitdream.trigger import state as state_mod

if TYPE_CHECKING:
    from gitdream.agents import Agent
    from gitdream.config import Config
    from gitdream.git.repo import Repo

GATES = ("enabled", "repository", "time", "sessions", "lock")


@dataclass
class AgentGate:
    """One agent's verdict: `gate` is None when all its gates are open, else the name of
    the first closed one, with the reason; `sessions` when they were counted; `opens`
    (ISO 8601 UTC) when the time gate is closed. `summary` is the reason without what is
    particular to the agent (its id, when the count was taken): agents with the same gate
    and summary are one group of the decision line (`summarize`); None: the reason."""

    agent: str
    gate: str | None
    reason: str
    sessions: int | None = None
    opens: str | None = None
    summary: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"gate": self.gate, "reason": self.reason, "sessions": self.sessions, "opens": self.opens}


@dataclass
class GateResult:
    """Which agents may dream now; `gate`/`reason` describe why none may (when closed)."""

    ready: list[Agent] = field(default_factory=list)
    agents: list[AgentGate] = field(default_factory=list)
    gate: str | None = None
    reason: str = ""

    @property
    def open(self) -> bool:
        return bool(self.ready)

    def to_json(self) -> dict[str, Any]:
        return {
            "open": self.open,
            "gate": self.gate,
            "reason": self.reason,
            "agents": {a.agent: a.to_json() for a in self.agents},
        }


def evaluate(repo: Repo, cfg: Config, agents: list[Agent], state: state_mod.State) -> GateResult:
    """Evaluate the gates for `agents`; updates `state` (the session counts) in place.

    Does not check `enabled` (the caller returns before any side effect) nor take the
    lock. Never raises for a repository problem: that is the closed `repository` gate.
    """
    result = GateResult()
    problem = repo.state_problem()
    if problem is not None:
        result.gate, result.reason = "repository", problem.message
        return result
    head = repo.head()
    assert head.oid is not None
    now = clock.now()
    base_hours = cfg.float("min_hours")
    throttle = cfg.float("scan_interval_minutes")
    minimum = cfg.int("min_sessions")
    for agent in agents:
        entry = state.agent(agent.id)
        opens = state_mod.time_gate_opens(entry, base_hours)
        if opens is not None and now < opens:
            why = state_mod.time_gate_reason(entry, base_hours, opens, now)
            summary = why.split(state_mod.OPENS_IN)[0]  # what agents closed alike share
            result.agents.append(AgentGate(agent.id, "time", why, opens=clock.iso(opens), summary=summary))
            continue
        from gitdream.git import refs  # idle path: not before the time gate

        try:
            key = state_mod.scan_key(head.oid, refs.target(repo, agent.watermark_ref))
        except GitdreamError as exc:  # a corrupt watermark: this agent only
            result.agents.append(AgentGate(agent.id, "repository", exc.message))
            continue
        counted = _parse(entry.last_scan)
        reused = (
            entry.last_scan_key == key
            and counted is not None
            and now < counted + timedelta(minutes=throttle)
            and entry.last_sessions is not None
        )
        if reused and counted is not None:  # `reused` holds `counted`; mypy needs it said
            sessions: int | None = entry.last_sessions
            pending = entry.last_pending
            note = f" (counted {(now - counted).total_seconds() / 60:.0f} min ago; nothing committed since)"
        else:
            from gitdream.git import subtrees  # idle path: not before the time gate

            subtrees.for_repo(repo).writable = True  # the gate writes its state anyway
            try:  # one agent's broken ref or receipt closes only that agent's gate
                sessions = count(repo, agent, head.oid, entry, unreadable=True)
                pending = pending_paths(repo, agent)
            except Uncountable as exc:
                result.agents.append(AgentGate(agent.id, "sessions", exc.reason, summary=exc.summary))
                continue
            except GitdreamError as exc:
                result.agents.append(AgentGate(agent.id, "repository", exc.message))
                continue
            entry.last_scan = clock.iso(now)
            entry.last_scan_key = key
            entry.last_sessions = sessions
            entry.last_pending = pending
            note = ""
        if pending:
            # The last dream left material unconsumed (over max_units, a failed batch, a
            # refused definition): it is due whatever the session count says.
            result.agents.append(
                AgentGate(agent.id, None, f"{pending} path(s) pending from the last dream", sessions)
            )
            result.ready.append(agent)
            continue
        if sessions is not None and sessions < minimum:
            counted_text = (
                f"{sessions} new session{'s' if sessions != 1 else ''} since the watermark, {minimum} needed"
            )
            result.agents.append(
                AgentGate(
                    agent.id,
                    "sessions",
                    counted_text + note,
                    sessions,
                    summary=counted_text + (" (counts reused; nothing committed since)" if note else ""),
                )
            )
            continue
        result.agents.append(AgentGate(agent.id, None, "all gates open", sessions))
        result.ready.append(agent)
    if not result.ready:
        names = {a.gate for a in result.agents}
        if not result.agents:
            result.gate, result.reason = "sessions", "no agents"
        else:
            result.gate = result.agents[0].gate if len(names) == 1 else MIXED
            result.reason = summarize(result.agents)
    return result


MIXED = "mixed"
"""The gate of a closed verdict whose agents are closed by different gates; its reason
names the gate of each group of agents ("sessions — …; time — …")."""

NAMES_PER_GROUP = 3
"""How many agents a group of the decision line names before "and N more"."""
GROUPS_SHOWN = 4
"""How many groups of agents the decision line shows; the rest are counted."""
REASON_CHARS = 700
"""The most characters of one group's reason in the decision line (reasons can quote
names and refs a repository chose)."""

# Which closed gates matter most, first: a repository problem and an uncountable session
# count need the user; then the agents nearest a dream (most sessions, soonest opening).
_RANK = {"repository": 0, "lock": 1, "sessions": 3, "time": 4}


def _closeness(gate: AgentGate) -> tuple[int, float, str]:
    rank = _RANK.get(gate.gate or "", 2)
    if gate.gate == "sessions" and gate.sessions is None:
        rank = 2  # uncountable: fetch gitdream's refs
    if gate.gate == "sessions" and gate.sessions is not None:
        return rank, -float(gate.sessions), gate.agent
    return rank, 0.0, gate.opens or ""


def summarize(agents: list[AgentGate]) -> str:
    """The decision line's reason for closed `agents`: one part per group of agents with
    the same gate and reason (`AgentGate.summary`), the groups that matter first — a
    repository problem, sessions that cannot be counted, then the agents nearest a dream
    — each naming at most NAMES_PER_GROUP agents ("31 agents (a, b, c and 28 more): …"),
    at most GROUPS_SHOWN groups, so the line stays short whatever the number of agents
    (issue #17: with 6 000 agents one line was 389 KB and `status` lost the decision).
    Agents closed by different gates have the gate before each reason. `--json` keeps
    every agent's own reason."""
    groups: dict[tuple[str | None, str], list[AgentGate]] = {}
    for verdict in sorted(agents, key=lambda g: (_closeness(g), g.agent)):
        groups.setdefault((verdict.gate, verdict.summary or verdict.reason), []).append(verdict)
    several = len({gate for gate, _ in groups}) > 1
    parts = []
    for (gate, reason), members in list(groups.items())[:GROUPS_SHOWN]:
        if len(members) == 1:
            reason = members[0].reason
        elif gate == "time" and members[0].opens:
            reason = f"{reason} (the first opens at {members[0].opens})"
        if len(reason) > REASON_CHARS:
            reason = reason[: REASON_CHARS - 1] + "…"
        names = ", ".join(m.agent[:80] for m in members[:NAMES_PER_GROUP])
        if len(members) > NAMES_PER_GROUP:
            names = f"{len(members)} agents ({names} and {len(members) - NAMES_PER_GROUP} more)"
        parts.append(f"{names}: {gate} — {reason}" if several else f"{names}: {reason}")
    rest = list(groups.values())[GROUPS_SHOWN:]
    if rest:
        count = sum(len(members) for members in rest)
        parts.append(
            f"and {count} more agent{'s' if count != 1 else ''} for {len(rest)} other reason"
            f"{'s' if len(rest) != 1 else ''} (`gitdream run --auto --json` gives each)"
        )
    return "; ".join(parts)


def _parse(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return clock.parse_iso(value)
    except ValueError:
        return None


def next_dream(
    opens: datetime | None,
    sessions: int | None,
    needed: int,
    pending: int,
    *,
    blocked: str | None = None,
    now: datetime | None = None,
) -> str:
    """`status`'s NEXT for one agent: what `run --auto` (a hook, a schedule) does next —
    "in 3.5 h" while the time gate is closed (`opens` in the future), "at 5 sessions"
    while too few sessions are new (and nothing is pending), "now" when every gate is
    open. `blocked` names what stops every dream of the repository meanwhile (a merge in
    progress, a held lock): "now" becomes "after <blocked>"."""
    now = now or clock.now()
    if opens is not None and opens > now:
        hours = (opens - now).total_seconds() / 3600
        return f"in {hours:.1f} h"
    if not pending and sessions is not None and sessions < needed:
        return f"at {needed} sessions"
    return f"after {blocked}" if blocked else "now"


def pending_paths(repo: Repo, agent: Agent) -> int:
    """How many source paths the agent's last completed dream left pending — over
    `max_units`, a failed batch, a refused definition — read from the receipt (git note)
    of its watermark commit. Such material opens the sessions gate by itself."""
    return pending_count(last_dream_record(repo, agent))


def last_dream_record(repo: Repo, agent: Agent) -> dict[str, Any] | None:
    """The receipt record (a plain dict, `receiptlog.latest_dream`) of the agent's last
    completed dream: the note on its watermark commit, or None (no watermark, or its
    note was not fetched). What the repository says about the agent's dreams, whichever
    machine ran them."""
    from gitdream.dream import receiptlog  # idle path: the sessions gate
    from gitdream.git import refs  # idle path: only where it is used

    return receiptlog.latest_dream(repo, agent.id, refs.target(repo, agent.watermark_ref))


def pending_count(record: dict[str, Any] | None) -> int:
    """How many paths the receipt `record` (`last_dream_record`) left pending (0: none)."""
    pending = record.get("pending") if record is not None else None
    return len(pending) if isinstance(pending, list) else 0


class Uncountable(GitdreamError):
    """New sessions cannot be counted: there is no base to count them from — the agent
    has dreamed, but its watermark (or the history to it) is not in this clone. `reason`
    is the closed sessions gate's reason, with the fix (fetch gitdream's refs)."""

    def __init__(self, cause: GitdreamError) -> None:
        super().__init__(cause.message, cause.hint)
        self.reason = f"cannot count new sessions without the watermark: {cause.message}" + (
            f"; {cause.hint}" if cause.hint else ""
        )
        self.summary = "cannot count new sessions without the watermark" + (
            f" — {cause.hint}" if cause.hint else ""
        )


UNCOUNTABLE_NEXT = "fetching gitdream's refs"
"""What `status`'s NEXT waits for ("after …") while `Uncountable` closes the sessions gate."""


def count_base(repo: Repo, agent: Agent, head: str) -> str | None:
    """The commit new sessions are counted from (`material.resolve_base`: the watermark,
    None before the first dream). Raises Uncountable when there is none to count from:
    a dream that cannot find its material must not be started by `run --auto`, where it
    would only fail and back the hooks off (a clone that did not fetch `refs/gitdream/*`
    dreamed after one session, then failed; the gate stays closed instead, with the fix)."""
    from gitdream.dream import material  # idle path: only where it is used

    try:
        base, _warnings = material.resolve_base(repo, agent, head)
    except RepoStateError as exc:
        raise Uncountable(exc) from None
    return base


COUNT_RULES = 1
"""The version of what counts as a session (`material.count_sessions`), part of every
count's key: a state file written by a gitdream that counted otherwise is not reused."""


def count(
    repo: Repo, agent: Agent, head: str, entry: state_mod.AgentState, *, unreadable: bool = False
) -> int | None:
    """New sessions of `agent` since its watermark, at commit `head`. Raises Uncountable
    (see `count_base`), or GitdreamError for a broken watermark or, unless `unreadable`
    (then None: the run goes ahead and reports the problem itself), a diff that cannot
    be read.

    A count is a function of the agent folder's trees at the base and at `head` and of
    its rules (`state.count_key`): when `entry` holds a count for the same key it is the
    answer, with no diff (a commit that touched only other agents' folders, a closed
    gate asked again); else the folders are diffed and `entry` records the count
    (`last_count`, `last_count_key`)."""
    from gitdream.dream import material  # idle path: only where it is used
    from gitdream.git import subtrees  # idle path: only where it is used

    base = count_base(repo, agent, head)
    found = subtrees.for_repo(repo)
    old = found.tree(base, agent.dir, cached=True) if base is not None else None
    new = found.tree(head, agent.dir)
    rules = (
        COUNT_RULES,
        agent.dir,
        agent.memory_dir,
        agent.definition_files,
        agent.log_globs,
        agent.session_globs,
    )
    key = state_mod.count_key(
        str(old.id) if old is not None else None, str(new.id) if new is not None else None, rules
    )
    if entry.last_count_key == key and isinstance(entry.last_count, int):
        return entry.last_count
    try:
        sessions = material.count_sessions(repo, agent, base, head)
    except GitdreamError:
        if not unreadable:
            raise
        return None
    entry.last_count_key, entry.last_count = key, sessions
    return sessions
