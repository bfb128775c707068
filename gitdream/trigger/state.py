"""Machine-local run state and the stamp file, under `<git-common-dir>/gitdream/`.

`state.json` caches, per agent: when the last run started (`last_attempt`), its run id
and status, the number of consecutive failed runs (`failures`, the back-off counter), and
when the sessions were last scanned (`last_scan`, the throttle). It is never tracked and
can be rebuilt: an agent missing from it gets its last attempt from its receipts.

`stamp` holds one line: the integer epoch second before which no agent can pass the time
and throttle gates. The `post-merge`/`post-rewrite` hooks read it in `sh` without starting
Python; a missing, unreadable or past stamp means "ask Python", so a stale stamp can only
cost a Python start, never skip a dream that is due.

Back-off (DESIGN §5): after n consecutive failed runs the time gate's interval is
min(base × 2^n, max(base, 24 h)), base being `min_hours`; a `partial` run (a model call
failed, its material left pending) counts as failed; `noop` and `aborted` runs leave n as
it is, an `ok` run resets it to 0.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from gitdream import clock, paths

STATE_FILE = "state.json"
STAMP_FILE = "stamp"


@dataclass
class AgentState:
    """What this machine remembers of an agent's runs (times are ISO 8601 UTC)."""

    last_attempt: str | None = None
    last_run: str | None = None
    last_status: str | None = None
    failures: int = 0
    last_scan: str | None = None
    last_sessions: int | None = None


@dataclass
class State:
    """The whole state file: `{agent id: AgentState}`."""

    agents: dict[str, AgentState] = field(default_factory=dict)

    def agent(self, agent_id: str) -> AgentState:
        return self.agents.setdefault(agent_id, AgentState())


def interval_hours(base_hours: float, failures: int) -> float:
    """The time gate's interval after `failures` consecutive failed runs (hours):
    min(base × 2^n, max(base, 24))."""
    if failures <= 0:
        return base_hours
    stretched = base_hours * math.pow(2, min(failures, 60))
    return min(stretched, max(base_hours, 24.0))


def time_gate_opens(agent: AgentState, base_hours: float) -> datetime | None:
    """When the time gate opens for `agent` (None: it has never run, so it is open)."""
    if not agent.last_attempt:
        return None
    try:
        last = clock.parse_iso(agent.last_attempt)
    except ValueError:
        return None
    return last + timedelta(hours=interval_hours(base_hours, agent.failures))


def throttle_opens(agent: AgentState, minutes: float) -> datetime | None:
    """When the scan throttle opens (None: never scanned, open)."""
    if not agent.last_scan:
        return None
    try:
        return clock.parse_iso(agent.last_scan) + timedelta(minutes=minutes)
    except ValueError:
        return None


def record_run(state: State, agent_id: str, run_id: str, status: str, started: datetime) -> None:
    """Update the agent's state after a run with `status` (ok/partial/noop/failed/aborted):
    a `partial` run (a model call failed; its material stays pending) counts as a failure."""
    entry = state.agent(agent_id)
    entry.last_attempt = clock.iso(started)
    entry.last_run = run_id
    entry.last_status = status
    if status in ("failed", "partial"):
        entry.failures += 1
    elif status == "ok":
        entry.failures = 0


def state_path(common_dir: Path) -> Path:
    return paths.state_dir(common_dir) / STATE_FILE


def stamp_path(common_dir: Path) -> Path:
    return paths.state_dir(common_dir) / STAMP_FILE


def load(common_dir: Path) -> State:
    """Read state.json (a missing or unreadable file is an empty state)."""
    try:
        data = json.loads(state_path(common_dir).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return State()
    state = State()
    agents = data.get("agents") if isinstance(data, dict) else None
    if isinstance(agents, dict):
        for agent_id, raw in agents.items():
            if isinstance(raw, dict):
                known = {k: v for k, v in raw.items() if k in AgentState.__dataclass_fields__}
                try:
                    state.agents[agent_id] = AgentState(**known)
                except TypeError:
                    continue
    return state


def _replace(path: Path, data: bytes) -> None:
    """`paths.atomic_write(path, data)` (creating the state directory), skipped when the
    file already holds exactly `data`: a closed gate usually changes nothing, and then
    need not pay for two fsyncs."""
    try:
        if path.read_bytes() == data:
            return
    except OSError:
        pass
    paths.ensure_dir(path.parent)
    paths.atomic_write(path, data)


def save(common_dir: Path, state: State) -> None:
    """Write state.json atomically (creates the state directory; unchanged bytes are not
    rewritten)."""
    document: dict[str, Any] = {"agents": {k: asdict(v) for k, v in sorted(state.agents.items())}}
    _replace(state_path(common_dir), (json.dumps(document, indent=1) + "\n").encode())


def next_opening(
    state: State, agent_ids: list[str], base_hours: float, throttle_minutes: float
) -> datetime | None:
    """The earliest time any of `agent_ids` can pass both the time gate and the throttle
    (None: one of them can now or has never run)."""
    best: datetime | None = None
    now = clock.now()
    for agent_id in agent_ids:
        entry = state.agents.get(agent_id)
        if entry is None:
            return None
        times = [
            t for t in (time_gate_opens(entry, base_hours), throttle_opens(entry, throttle_minutes)) if t
        ]
        opening = max(times) if times else None
        if opening is None or opening <= now:
            return None
        best = opening if best is None or opening < best else best
    return best


def write_stamp(common_dir: Path, opening: datetime | None) -> None:
    """Write the stamp: the epoch second of `opening`, or 0 ("ask Python") when None
    (unchanged bytes are not rewritten)."""
    value = int(opening.timestamp()) if opening is not None else 0
    _replace(stamp_path(common_dir), f"{value}\n".encode())


def read_stamp(common_dir: Path) -> int | None:
    """The stamp's epoch second, or None when missing or unreadable."""
    try:
        return int(stamp_path(common_dir).read_text().strip())
    except (OSError, ValueError):
        return None
