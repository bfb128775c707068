"""`gitdream run`: dream for every agent (or the selected ones), one after another.

Each agent is isolated: one agent's failure is recorded and reported, and the others go
on. The whole invocation holds the repository lock (except `--dry-run` and `--estimate`,
which write nothing) and repairs an interrupted commit first.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from gitdream import clock, config
from gitdream.agents import list_agents, own_repository, select
from gitdream.errors import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    ConfigError,
    GitdreamError,
    LockHeld,
    RepoStateError,
    WriteRefused,
)
from gitdream.git import sparse
from gitdream.git.repo import Repo
from gitdream.trigger import gates
from gitdream.trigger import state as state_mod

if TYPE_CHECKING:
    from gitdream.agents import Agent
    from gitdream.dream.options import Reporter, RunOptions
    from gitdream.dream.pipeline import Outcome

_SPARSE_AGENTS = (
    "with a sparse checkout only the agent folders it checks out are seen: "
    "add one with `git sparse-checkout add agents/<id>`"
)


@dataclass(eq=False)  # eq=False: never compared; less to build at import
class RunResult:
    """Outcomes per agent, warnings of the invocation, and whether gitdream was disabled
    (`disabled` names the setting's source)."""

    outcomes: list[Outcome] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    disabled: str | None = None
    gate: dict[str, Any] | None = None

    @property
    def exit_code(self) -> int:
        if any(o.status == "aborted" for o in self.outcomes):
            return EXIT_INTERRUPTED
        if any(o.problem for o in self.outcomes):
            return EXIT_FAILURE
        return EXIT_OK

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "runs": [o.receipt.to_json() for o in self.outcomes],
            "warnings": [*self.warnings, *(f"{o.agent}: {w}" for o in self.outcomes for w in o.warnings)],
        }
        if self.disabled:
            document["disabled"] = self.disabled
        if self.gate is not None:
            document["gate"] = self.gate
        if any(o.estimate is not None for o in self.outcomes):
            document["estimates"] = {o.agent: o.estimate for o in self.outcomes}
        return document


def run(
    repo: Repo,
    cfg: config.Config,
    agent_ids: Sequence[str],
    opts: RunOptions,
    reporter: Reporter | None = None,
    *,
    auto: bool = False,
) -> RunResult:
    """Dream for the selected agents (all when `agent_ids` is empty).

    `auto` applies the gates of `gitdream.trigger.gates` first; a closed gate returns a
    result with `gate` set (exit 0), and so does a held lock. With `enabled = false`
    nothing is read or written beyond the configuration.

    Raises ConfigError (unknown agent, bad config), RepoStateError (repository state,
    manual mode; a lock file git left behind), LockHeld (manual mode). Per-agent
    failures do not raise: they are in the outcomes' receipts.
    """

    result = RunResult()
    config_seen = clock.epoch()  # the stamp is valid for the configuration as read by now
    if not cfg.bool("enabled"):
        result.disabled = cfg.source("enabled")
        return result
    repo.require_own_index()

    try:
        found = select(list_agents(repo.workdir, cfg, result.warnings), list(agent_ids))
    except ConfigError as exc:
        if sparse.enabled(repo) and exc.message.startswith("no agent with id"):
            exc.hint = f"{exc.hint}; {_SPARSE_AGENTS}"
        raise
    agents = _skip_own_repositories(repo, found, bool(agent_ids), result.warnings)
    if found and not agents:  # each was a submodule: the warnings say where to dream
        return result
    if not agents:
        fix = _SPARSE_AGENTS if sparse.enabled(repo) else "create one with `gitdream init --agent ID`"
        result.warnings.append(f"no agents found (agents = {cfg.list('agents')}); {fix}")
        return result
    writes = not (opts.dry_run or opts.estimate)
    state = state_mod.load(repo.common_dir)
    ids_all = [a.id for a in agents]
    if auto:
        verdict = gates.evaluate(repo, cfg, agents, state)
        if writes:
            _save(repo, cfg, state, ids_all, config_seen)
        if not verdict.open:
            result.gate = verdict.to_json()
            return result
        result.gate = verdict.to_json()
        agents = verdict.ready
    elif opts.branch is None:
        problem = repo.state_problem()
        # A dry run or an estimate writes nothing: a detached HEAD does not stop them.
        if problem is not None and not (not writes and repo.head().detached and not repo.in_progress()):
            raise problem
    # Past the gates: what a dream needs (kept off the idle path, where a closed gate
    # returns above without importing any of it).
    from gitdream import ids  # idle path: only where it is used
    from gitdream.git import commitbuilder, lockfiles  # idle path: only where it is used
    from gitdream.trigger import dreamlock  # idle path: only where it is used

    engine_name = _check_up_front(repo, cfg, opts)
    if not auto:
        result.warnings.extend(_uncommitted_raw(repo, agents))
    held = None
    if writes:
        try:
            held = dreamlock.acquire(repo.common_dir, ids.new_run_id(), cfg.float("lock_ttl_minutes"))
        except LockHeld as exc:
            if not auto:
                raise
            result.gate = {"open": False, "gate": "lock", "reason": exc.message, "agents": {}}
            return result
        result.warnings.extend(held.warnings)
    try:
        if writes:
            result.warnings.extend(commitbuilder.repair(repo))
            lockfiles.require_free(repo, _written_refs(repo, agents, opts))
        saver = _Saver(lambda: _save(repo, cfg, state, ids_all, config_seen)) if writes else None
        try:
            _dream_each(repo, cfg, agents, opts, engine_name, reporter, result, state, saver)
        finally:
            if saver is not None:
                saver.flush()
    finally:
        if held is not None:
            held.release()
    return result


class _Saver:
    """Save the state after a run, at most once per SAVE_SECONDS and at most one tenth of
    the time (after a save that took t seconds, the next waits at least 10 t), and once
    more at the end (`flush`): state.json holds every agent, so saving it after each of
    10 000 agents rewrote it 10 000 times, and at 10 000 agents one save takes about half
    a second (issue 16). A kill loses at most the records since the last save —
    machine-local bookkeeping the next run rebuilds (a due agent is dreamed, not skipped).
    `clock` is the monotonic clock in seconds (a parameter for the tests)."""

    SAVE_SECONDS = 1.0
    SHARE = 10  # a save may take at most 1/SHARE of the time between saves

    def __init__(self, save: Callable[[], None], clock: Callable[[], float] | None = None) -> None:

        self.save = save
        self.clock = clock or time.monotonic
        self.last = 0.0
        self.wait = 0.0
        self.dirty = False

    def __call__(self) -> None:
        self.dirty = True
        if self.clock() - self.last >= self.wait:
            self.flush()

    def flush(self) -> None:
        if self.dirty:
            start = self.clock()
            self.save()
            self.dirty = False
            self.last = self.clock()
            self.wait = max(self.SAVE_SECONDS, self.SHARE * (self.last - start))


def _dream_each(
    repo: Repo,
    cfg: config.Config,
    agents: Sequence[Agent],
    opts: RunOptions,
    engine_name: str,
    reporter: Reporter | None,
    result: RunResult,
    state: Any,
    save: Callable[[], None] | None,
) -> None:
    """Dream for each agent in turn, with one engine per run and one commit chain for the
    whole invocation; with `save` (a run that writes), record each run in the state and
    save it. Stops after an aborted run."""
    from gitdream import ids  # idle path: only where it is used
    from gitdream.contract import no_progress  # idle path: only where it is used
    from gitdream.dream import receipts  # idle path: only where it is used
    from gitdream.dream.pipeline import run_agent  # idle path: only where it is used
    from gitdream.engines import get_engine  # idle path: only where it is used
    from gitdream.git import commitbuilder  # idle path: only where it is used
    from gitdream.git.chain import CommitChain  # idle path: only where it is used
    from gitdream.trigger import interrupt  # idle path: only where it is used

    ident = commitbuilder.identity(repo, cfg)
    chain = CommitChain(review_branch=opts.branch)
    with interrupt.catch():
        for agent in agents:
            started = clock.now()
            run_id = ids.new_run_id()
            # One engine per run: its per-run budgets start afresh for each agent, and the
            # daily one counts the receipts of the agents before it.
            engine = get_engine(
                engine_name,
                cfg,
                used_today=partial(receipts.tokens_used_today, repo),
                progress=partial(reporter.progress, agent.id) if reporter is not None else no_progress,
            )
            try:
                outcome = run_agent(
                    repo,
                    agent,
                    cfg,
                    opts,
                    run_id,
                    ident,
                    engine,
                    chain,
                    reporter=reporter,
                    checkpoint=interrupt.checkpoint,
                )
            finally:
                engine.close()
            result.outcomes.append(outcome)
            if save is not None:
                # Refused for the repository's state (RepoStateError: e.g. the watermark is
                # not in this clone) or by the write gate for a change of yours to a file the
                # dream writes (WriteRefused: commit or stash it) is not a failed dream: it
                # does not back the hooks off; nor is a run partial only because its
                # definitions were refused (a file to create or fix: waiting longer does not help).
                error = outcome.receipt.error or {}
                refused = (
                    outcome.status == "failed"
                    and error.get("type") in (RepoStateError.kind, WriteRefused.kind)
                ) or (outcome.status == "partial" and outcome.receipt.partial_causes == ["definitions"])
                state_mod.record_run(
                    state,
                    agent.id,
                    run_id,
                    outcome.status,
                    started,
                    refused=refused,
                    consolidated=outcome.receipt.consolidated,
                )
                save()
            if outcome.status == "aborted":
                break


def _skip_own_repositories(repo: Repo, agents: list[Any], named: bool, warnings: list[str]) -> list[Any]:
    """Leave out agents whose folder is a repository of its own (a submodule): a warning
    for each, or RepoStateError when they were named with --agent."""

    kept = []
    for agent in agents:
        cloned = own_repository(repo.workdir, agent)
        if not (cloned or repo.is_gitlink(agent.dir)):
            kept.append(agent)
            continue
        message = (
            f"agent {agent.id} ({agent.dir}) is a submodule or nested repository: its files are "
            "not this repository's"
        )
        import shlex  # idle path: only for an agent that is a repository of its own

        folder = shlex.quote(agent.dir)
        fix = f"dream it inside its own repository: `gitdream -C {folder} run`"
        if not cloned:
            fix = f"initialise it (`git submodule update --init {folder}`), then {fix}"
        if named:
            raise RepoStateError(message, hint=fix)
        warnings.append(f"{message}; skipped ({fix})")
    return kept


def _uncommitted_raw(repo: Repo, agents: Sequence[Agent]) -> list[str]:
    """One warning naming the agents' raw files (logs, transcripts) that are not committed
    — untracked, modified or staged — which a dream does not read (DESIGN §4: committed
    content only; `gitdream status` lists them all); none when git cannot list them."""
    try:
        changed = repo.changed_paths([agent.dir for agent in agents])
    except GitdreamError:  # `gitdream status` says why
        return []
    found = sorted(
        rel for rel in changed if any(a.is_source(rel) for a in agents) and (repo.workdir / rel).exists()
    )
    if not found:
        return []
    more = f" and {len(found) - 1} more" if len(found) > 1 else ""
    noun, them = ("raw file is", "it") if len(found) == 1 else ("raw files are", "them")
    return [
        f"{len(found)} {noun} not committed, so this dream does not read {them}: {found[0]}{more} "
        f"(commit {them} and run again; `gitdream status` lists them)"
    ]


def _written_refs(repo: Repo, agents: Sequence[Any], opts: RunOptions) -> list[str]:
    """What a run writes, as `gitdream.git.lockfiles` names them: the index, HEAD and the
    branch (or only the review branch), the agents' watermarks and the receipts' notes ref.
    A lock file git left behind on any of them refuses the run before it writes anything."""
    from gitdream.dream.receipts import NOTES_REF  # idle path: only where it is used
    from gitdream.git import lockfiles  # idle path: only where it is used

    if opts.branch is not None:
        names = [f"refs/heads/{opts.branch}"]
    else:
        branch = repo.head().branch
        names = [lockfiles.INDEX, "HEAD", *([branch] if branch else [])]
    return [*names, *(agent.watermark_ref for agent in agents), NOTES_REF]


def _check_up_front(repo: Repo, cfg: config.Config, opts: RunOptions) -> str:
    """Refuse what would fail every agent, before any agent runs (so it leaves no receipts,
    no watermark moves and no back-off): an unknown engine, an engine that cannot run (no
    API key; an estimate needs none), a `--since` revision that does not resolve, and a
    receipts' notes ref git cannot read or that is a symbolic ref (every receipt would
    fail after its dream commit). Returns the engine's name."""
    from gitdream.engines import get_engine  # idle path: only where it is used

    engine = opts.engine or cfg.str("engine")
    probe = get_engine(engine, cfg)
    try:
        if not opts.estimate:
            probe.check()
    finally:
        probe.close()
    if opts.branch is not None:
        from gitdream.git.commitbuilder import review_branch_ref  # idle path: only where it is used

        # `--branch HEAD`, `@`, `origin/main`: refused before any agent runs
        review_branch_ref(repo, opts.branch)
    if opts.since is not None:
        from gitdream.git import graph  # idle path: only where it is used

        if graph.resolve_commit(repo, opts.since) is None:
            raise RepoStateError(
                f"--since {opts.since}: no such revision", hint="give a commit, branch or tag (see `git log`)"
            )
    if not opts.estimate:
        from gitdream.dream.receipts import NOTES_REF  # idle path: only where it is used
        from gitdream.git import refs  # idle path: only where it is used

        refs.commit_target(repo, NOTES_REF)  # the refusal of refs.broken, refs.symbolic or no commit
    return engine


def _save(repo: Repo, cfg: config.Config, state: Any, agent_ids: list[str], config_seen: float) -> None:
    """Persist the state and rewrite the stamp the hooks read (for the configuration as
    read at `config_seen`, an epoch second)."""

    state_mod.save(repo.common_dir, state)
    opening = state_mod.next_opening(state, agent_ids, cfg.float("min_hours"))
    state_mod.write_stamp(repo.common_dir, opening, workdir=repo.workdir, config_seen=config_seen)
