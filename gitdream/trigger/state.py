"""Machine-local run state and the stamp file, under `<git-common-dir>/gitdream/`.

`state.json` caches, per agent: when the last run started (`last_attempt`), its run id
and status; when the last run that consolidated material started (`last_dream`: status
`ok`, the time gate counts from it); the number of consecutive failed runs (`failures`,
the back-off counter) and when the last of them started (`last_failed`); and the last
count of new sessions (`last_scan`, `last_sessions`, `last_pending`) with what it was
counted at (`last_scan_key`: HEAD and the watermark), which the scan throttle reuses, and
the last count a diff made (`last_count`) with what it is a function of (`last_count_key`:
the agent folder's trees it was counted between and the agent's source rules,
`count_key`), reused exactly after commits that did not touch the agent's folder. It
is never tracked and can be rebuilt (a missing agent has simply never run here).

`stamp` lets the `post-merge`/`post-rewrite`/`post-commit` hooks decide in `sh`, without
starting Python, that the time gate is closed. Three lines:

    <epoch second the gate opens> <the same time, ISO 8601 UTC>
    <the worktree root it was computed for (physical path)>
    <GITDREAM_MIN_HOURS>|<GITDREAM_AGENTS>|<GITDREAM_ENABLED>|<GITDREAM_HOME> as they were set (STAMP_ENV)

The hook trusts it only for the same worktree and environment, and only while neither
`gitdream.toml` nor the user config is newer than the stamp file: the stamp's mtime is
set to one second before the configuration was read, so a configuration change reaches
the hook on its next firing. Since gitdream writes nothing while disabled, a trusted
stamp also tells the hook that gitdream is enabled, without reading the configuration
files (the same holds for `precommit-paths`). A missing, unreadable, past or distrusted stamp means "ask
Python", so a stale stamp can only cost a Python start, never skip a dream that is due.

Back-off (DESIGN §5): after n consecutive failed runs the time gate's interval is
min(base × 2^n, max(base, 24 h)), base being `min_hours`, counted from the last failure;
a `partial` run (a model call failed, its material left pending) counts as failed, and as
a dream; `noop` and `aborted` runs leave n as it is, an `ok` run resets it to 0.
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from gitdream import clock, paths
from gitdream.config import REPO_FILE

STATE_FILE = "state.json"
STAMP_FILE = "stamp"
PRECOMMIT_FILE = "precommit-paths"
STAMP_ENV = ("GITDREAM_MIN_HOURS", "GITDREAM_AGENTS", "GITDREAM_ENABLED", "GITDREAM_HOME")
"""Environment variables the stamp depends on: the hooks compare their values with the
stamp's third line (the sh reads them with `${NAME-}`)."""
PRECOMMIT_ENV = (
    "GITDREAM_AGENTS",
    "GITDREAM_DEFINITION_FILES",
    "GITDREAM_MEMORY_DIR",
    "GITDREAM_ENABLED",
    "GITDREAM_HOME",
)
"""Environment variables the pre-commit hook's path patterns depend on."""


@dataclass
class AgentState:
    """What this machine remembers of an agent's runs (times are ISO 8601 UTC)."""

    last_attempt: str | None = None
    last_run: str | None = None
    last_status: str | None = None
    failures: int = 0
    last_scan: str | None = None
    last_sessions: int | None = None
    last_dream: str | None = None
    last_failed: str | None = None
    last_scan_key: str | None = None
    last_pending: int = 0
    last_count_key: str | None = None
    last_count: int | None = None


@dataclass
class State:
    """The whole state file: `{agent id: AgentState}`. `encoded` caches, per agent, the
    values its entry was last saved with and their JSON line (see `save`)."""

    agents: dict[str, AgentState] = field(default_factory=dict)
    encoded: dict[str, tuple[tuple[Any, ...], bytes]] = field(default_factory=dict, repr=False, compare=False)

    def agent(self, agent_id: str) -> AgentState:
        return self.agents.setdefault(agent_id, AgentState())


def interval_hours(base_hours: float, failures: int) -> float:
    """The time gate's interval after `failures` consecutive failed runs (hours):
    min(base × 2^n, max(base, 24))."""
    if failures <= 0:
        return base_hours
    stretched = base_hours * math.pow(2, min(failures, 60))
    return min(stretched, max(base_hours, 24.0))


@functools.lru_cache(maxsize=1 << 16)
def _parse(value: str | None) -> datetime | None:
    """`value` as a datetime (None: missing or not ISO 8601). Cached: a run's stamp asks
    for every agent's times at each save of the state, and they rarely change."""
    if not value:
        return None
    try:
        return clock.parse_iso(value)
    except ValueError:
        return None


def time_gate_opens(agent: AgentState, base_hours: float) -> datetime | None:
    """When the time gate opens for `agent` (None: open, it never consolidated material
    here and has no failures to back off from).

    It counts `min_hours` from the last run that consolidated material (`last_dream`): a
    run that found nothing new is not a consolidation (Claude Code's gate is "hours since
    the last consolidation"). After failures, the back-off interval also counts from the
    last failed run; the later of the two openings applies."""
    openings = []
    dreamed = _parse(agent.last_dream)
    if dreamed is not None:
        openings.append(dreamed + timedelta(hours=base_hours))
    failed = _parse(agent.last_failed) if agent.failures > 0 else None
    if failed is not None:
        openings.append(failed + timedelta(hours=interval_hours(base_hours, agent.failures)))
    return max(openings) if openings else None


OPENS_IN = " (opens in "
"""Where `time_gate_reason` turns from why the gate is closed to when it opens."""


def time_gate_reason(agent: AgentState, base_hours: float, opens: datetime, now: datetime) -> str:
    """Why the time gate is closed until `opens`, for `run --auto --verbose` and the hooks log."""
    hours = (opens - now).total_seconds() / 3600
    failed = _parse(agent.last_failed) if agent.failures > 0 else None
    if failed is not None and failed + timedelta(hours=interval_hours(base_hours, agent.failures)) >= opens:
        since = (
            f"{agent.failures} failed run{'s' if agent.failures != 1 else ''} in a row back off to "
            f"{interval_hours(base_hours, agent.failures):g} h"
        )
    else:
        since = f"the last dream was less than {base_hours:g} h ago"
    return f"{since}{OPENS_IN}{hours:.1f} h, at {clock.iso(opens)})"


def record_run(
    state: State,
    agent_id: str,
    run_id: str,
    status: str,
    started: datetime,
    *,
    refused: bool = False,
    consolidated: bool = True,
) -> None:
    """Update the agent's state after a run with `status` (ok/partial/noop/failed/aborted):
    a `partial` run (a model call failed; its material stays pending) counts as a failure.
    `consolidated` (`Receipt.consolidated`): the run took material in; an `ok` or `partial`
    run that took none in (its only units wait for a definition file to be created) is not
    the last dream the time gate counts from.
    `refused`: the run failed because of the repository's state (a RepoStateError, e.g.
    the watermark is not in this clone) — recorded as the last run, but not a failed
    dream, so it does not stretch the back-off: fixing the repository (fetching
    gitdream's refs) must not leave the hooks waiting longer than `min_hours`."""
    entry = state.agent(agent_id)
    entry.last_attempt = clock.iso(started)
    entry.last_run = run_id
    entry.last_status = status
    if status == "partial" and consolidated:  # material was consolidated, and a phase failed
        entry.last_dream = clock.iso(started)
    if refused:
        return
    if status in ("failed", "partial"):
        entry.failures += 1
        entry.last_failed = clock.iso(started)
    elif status == "ok":
        entry.failures = 0
        if consolidated:
            entry.last_dream = clock.iso(started)


def state_path(common_dir: Path) -> Path:
    return paths.state_dir(common_dir) / STATE_FILE


def stamp_path(common_dir: Path) -> Path:
    return paths.state_dir(common_dir) / STAMP_FILE


def load(common_dir: Path) -> State:
    """Read state.json (a missing or unreadable file is an empty state). A file written
    before `last_dream`/`last_failed` existed gets them from its last run."""
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
                    entry = AgentState(**known)
                except TypeError:
                    continue
                if "last_dream" not in raw and entry.last_status == "ok":
                    entry.last_dream = entry.last_attempt
                if "last_failed" not in raw and entry.failures > 0:
                    entry.last_failed = entry.last_attempt
                state.agents[agent_id] = entry
    return state


def _replace(path: Path, data: bytes) -> bool:
    """`paths.atomic_write(path, data)` (creating the state directory), skipped when the
    file already holds exactly `data`: a closed gate usually changes nothing, and then
    need not pay for two fsyncs. Returns True when written."""
    try:
        if path.read_bytes() == data:
            return False
    except OSError:
        pass
    paths.state_folder(path.parent.parent)  # a real folder, never a link
    paths.atomic_write(path, data)
    return True


def save(common_dir: Path, state: State) -> None:
    """Write state.json atomically (creates the state directory; unchanged bytes are not
    rewritten), one agent a line, sorted by agent id.

    A run saves it along the way and it lists every agent: at 10 000 agents encoding it
    whole took 84 ms of CPU a save (issue 16). Each agent's line is encoded again only
    when one of its values changed since the last save of `state` (compared value by
    value, so an entry changed in place is never written stale); the rest reuse their
    bytes. The write stays one atomic replace of the whole file, so a kill leaves the old
    file or the new, both complete."""
    lines = []
    cache = state.encoded
    for agent_id in sorted(state.agents):
        values = tuple(vars(state.agents[agent_id]).values())
        cached = cache.get(agent_id)
        if cached is None or cached[0] != values:
            # AgentState's fields are flat values: `vars` gives what `asdict` does,
            # without its recursive copy.
            line = f"{json.dumps(agent_id)}: {json.dumps(vars(state.agents[agent_id]))}".encode()
            cached = cache[agent_id] = (values, line)
        lines.append(cached[1])
    for gone in cache.keys() - state.agents.keys():
        del cache[gone]
    data = b'{"agents": {\n' + b",\n".join(lines) + b"\n}}\n" if lines else b'{"agents": {}}\n'
    _replace(state_path(common_dir), data)


def next_opening(state: State, agent_ids: list[str], base_hours: float) -> datetime | None:
    """The earliest time any of `agent_ids` passes the time gate (None: one of them does
    now). The throttle is left out: the hooks fire only after new commits, and the
    throttle never skips a scan then."""
    best: datetime | None = None
    now = clock.now()
    for agent_id in agent_ids:
        entry = state.agents.get(agent_id)
        opening = time_gate_opens(entry, base_hours) if entry is not None else None
        if opening is None or opening <= now:
            return None
        best = opening if best is None or opening < best else best
    return best


def env_signature(names: tuple[str, ...], env: Mapping[str, str] | None = None) -> str:
    """A line the hooks rebuild from `names` with `${NAME-}` joined by `|` (unset and
    empty alike are ""); a line break in a value makes a line they can never match."""
    env = os.environ if env is None else env
    return "|".join(env.get(name, "").replace("\n", "\\n").replace("\r", "\\r") for name in names)


def config_files(workdir: Path) -> list[Path]:
    """The files whose change must reach the hooks: the repository's gitdream.toml and the
    user config (as the hooks find them: `$GITDREAM_HOME/config.toml` or the path baked
    in at install)."""

    return [workdir / REPO_FILE, paths.user_config_file()]


def _mark_seen(path: Path, written: bool, workdir: Path | None, config_seen: float | None) -> None:
    """Set `path`'s mtime to one second before `config_seen` (default now) when it was
    just written or a configuration file is not older than it, so that the hooks' `-nt`
    test sees every later change of the configuration, even with one-second timestamps."""
    seen = clock.epoch() if config_seen is None else config_seen
    mark = seen - 1
    try:
        current = path.lstat().st_mtime
    except OSError:
        return
    newest = 0.0
    for name in config_files(workdir) if workdir is not None else []:
        try:
            newest = max(newest, name.stat().st_mtime)
        except OSError:
            continue
    if written or newest >= current:
        os.utime(path, (mark, mark), follow_symlinks=False)  # never a link's target


def write_stamp(
    common_dir: Path,
    opening: datetime | None,
    *,
    workdir: Path | None = None,
    config_seen: float | None = None,
    env: Mapping[str, str] | None = None,
) -> None:
    """Write the stamp (see the module docstring): `opening` (None: "ask Python", 0), for
    the worktree `workdir`, for the configuration read at epoch second `config_seen`
    (default: now). Unchanged bytes are not rewritten (`_mark_seen` keeps the mtime
    honest)."""
    value = int(opening.timestamp()) if opening is not None else 0
    until = clock.iso(opening) if opening is not None else "-"
    here = os.path.realpath(workdir) if workdir is not None else ""
    data = f"{value} {until}\n{here}\n{env_signature(STAMP_ENV, env)}\n".encode()
    path = stamp_path(common_dir)
    _mark_seen(path, _replace(path, data), workdir, config_seen)


def read_stamp(common_dir: Path) -> int | None:
    """The stamp's epoch second, or None when missing or unreadable."""
    try:
        return int(stamp_path(common_dir).read_text().split("\n", 1)[0].split()[0])
    except (OSError, ValueError, IndexError):
        return None


def scan_key(head: str, watermark: str | None) -> str:
    """What a count of new sessions depends on: the commit it was counted at and the
    agent's watermark. The throttle reuses a count only while this is unchanged."""
    return f"{head}:{watermark or '-'}"


def count_key(old_tree: str | None, new_tree: str | None, rules: object) -> str:
    """What a count of new sessions is a function of: the agent folder's tree at the
    base (None: counted from nothing) and at HEAD (tree ids, hex), and `rules` (the
    agent's folder, memory folder, definition files and globs, any `repr`-stable value),
    hashed. Equal keys, equal counts, whatever the commits or the time."""
    from gitdream.git.subtrees import blake2b  # idle path: only where sessions are counted

    digest = blake2b(repr(rules).encode(), digest_size=8).hexdigest()
    return f"{old_tree or '-'}:{new_tree or '-'}:{digest}"


def _literal(text: str) -> str:
    """`text` as an sh pattern that matches exactly it."""
    return "".join(f"[{c}]" if c in "*?[\\" else c for c in text)


def _prefixes(glob: str) -> list[str]:
    """sh pattern prefixes (ending in "/", or "" for the root) that match at least every
    folder the `agents` glob matches: sh's `*` matches across "/", so a pathlib `*` stays
    `*`, and a glob with `**` (any depth, even none) becomes "" and "*/"."""
    stripped = glob.strip().strip("/")
    if stripped in ("", "."):
        return [""]
    if "**" in stripped:
        return ["", "*/"]
    return [stripped + "/"]


def precommit_patterns(cfg: Any) -> list[str]:
    """The lines the pre-commit hook matches staged paths against, in order, first match
    wins: `+pattern` (gitdream check judges such a path: start Python) or `-pattern`
    (it does not). Together they select at least every file `gitdream check` judges for
    the configuration `cfg`: each agent's definition files, the `*.md` files directly in
    its memory folder (not in sub-folders, where the raw logs are), and gitdream.toml."""
    lines = ["+gitdream.toml"]
    memory = _literal(cfg.str("memory_dir").strip("/"))
    for glob in cfg.list("agents"):
        for prefix in _prefixes(glob):
            for name in cfg.list("definition_files"):
                lines.append(f"+{prefix}{_literal(name.strip('/'))}")
    for glob in cfg.list("agents"):
        for prefix in _prefixes(glob):
            folder = f"{prefix}{memory}/" if memory else prefix
            lines.append(f"-{folder}*/*")
            lines.append(f"+{folder}*.md")
    return list(dict.fromkeys(lines))


def precommit_path(common_dir: Path) -> Path:
    return paths.state_dir(common_dir) / PRECOMMIT_FILE


def write_precommit_paths(
    common_dir: Path,
    workdir: Path,
    cfg: Any,
    *,
    config_seen: float | None = None,
    env: Mapping[str, str] | None = None,
) -> None:
    """Write `<git-common-dir>/gitdream/precommit-paths`, which lets the pre-commit hook
    tell in sh that a commit stages nothing `gitdream check` judges: the worktree root
    (physical path), the PRECOMMIT_ENV signature, then `precommit_patterns(cfg)`, one a
    line. Like the stamp, it is valid for the configuration read at `config_seen`."""
    here = os.path.realpath(workdir)
    lines = precommit_patterns(cfg)
    path = precommit_path(common_dir)
    if any("\n" in line or "\r" in line for line in [here, *lines]):
        # A line break in a folder name or pattern cannot be written one a line: without
        # the file the hook always asks Python, which is slower but never wrong.
        path.unlink(missing_ok=True)
        return
    body = "\n".join(lines)
    data = f"{here}\n{env_signature(PRECOMMIT_ENV, env)}\n{body}\n".encode()
    _mark_seen(path, _replace(path, data), workdir, config_seen)
