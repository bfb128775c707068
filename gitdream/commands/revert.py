"""`gitdream revert RUN`: undo exactly one dream — its experience, its definitions, or both —
and keep everything that happened since (DESIGN §10).

For each commit of the run (definition first, then experience), the inverse is computed
against the current HEAD (`gitdream.git.inverse`: git revert's three-way merge, restricted
to the run's own paths). Any conflict refuses the whole revert with the paths, before
anything is written. Then the revert commits are made through the commit builder — so
the write gate applies (a dirty, staged or untracked path refuses; the user's other
staged and unstaged changes are never touched), and the branch moves by compare-and-swap.

A revert is a run of its own: it has a run id (`Gitdream-Run`), commits with the trailer
`Gitdream-Reverts: <run>`, and a receipt (`trigger: revert`), so `gitdream log` lists it
and `gitdream revert <revert run>` re-applies the dream. The reverted run's receipt is
annotated (`reverted_by`).

The watermark stays where it is: the run's material remains consumed. With `replay` it
moves back to where it was before the run (compare-and-swap), so the next dream reads that
material again — only while it still points at that run's input commit, or has moved on
through no-op dreams alone (no source of the agent changed since); a later dream that
consumed more material refuses the replay, since that material would be read twice.
`replay` of a run that is already undone (reverted without `replay`, or by a revert killed
before its watermark move) moves just the watermark back, with a receipt and no commit.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gitdream import clock, faults, ids
from gitdream.agents import list_agents, make_agent
from gitdream.dream import material, receipts, runjournal
from gitdream.dream.receipts import NOTES_REF
from gitdream.dream.runs import KINDS, Run, list_runs, resolve
from gitdream.errors import GitdreamError, RepoStateError, WriteRefused
from gitdream.git import commitbuilder, history, inverse, lockfiles, notes, writegate
from gitdream.git.chain import CommitChain
from gitdream.git.commitbuilder import format_message
from gitdream.git.refs import RefMoved, compare_and_swap
from gitdream.text.checks import Limits, check_text, kind_by_name
from gitdream.trigger import dreamlock

if TYPE_CHECKING:
    from gitdream.agents import Agent
    from gitdream.config import Config
    from gitdream.git.commitbuilder import Identity
    from gitdream.git.inverse import Inverse
    from gitdream.git.repo import Repo

ORDER = ("definition", "experience")
"""Revert order: the definition commit was made last, so it is undone first."""


class RevertConflict(WriteRefused):
    """Later commits changed the same lines as the run; nothing was written."""

    kind = "revert_conflict"

    def __init__(self, message: str, hint: str | None, conflicts: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message, hint, paths=[c["path"] for c in conflicts or []])
        self.conflicts = list(conflicts or [])

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = dict(super().to_json())
        document["conflicts"] = self.conflicts
        return document


@dataclass
class RevertedCommit:
    """One revert commit (planned for --dry-run): its `kind`, the commit it undoes
    (`reverts`), the new commit `oid` (None for --dry-run), the `paths` it changes."""

    kind: str
    reverts: str
    oid: str | None
    paths: list[str]
    subject: str

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "reverts": self.reverts,
            "oid": self.oid,
            "paths": list(self.paths),
            "subject": self.subject,
        }


@dataclass
class RevertResult:
    """What `revert` did (or would do, with `dry_run`); see `to_json`."""

    reverted: str
    agent: str
    only: str | None
    dry_run: bool
    run: str | None = None
    branch: str | None = None
    commits: list[RevertedCommit] = field(default_factory=list)
    watermark: dict[str, Any] | None = None
    patch: str = ""
    warnings: list[str] = field(default_factory=list)
    reverts_a_revert: bool = False

    def to_json(self) -> dict[str, Any]:
        """`{"run", "reverts", "agent", "only", "dry_run", "branch", "commits": [...],
        "watermark": {"ref", "from", "to"} | null, "patch", "warnings"}`."""
        return {
            "run": self.run,
            "reverts": self.reverted,
            "agent": self.agent,
            "only": self.only,
            "dry_run": self.dry_run,
            "branch": self.branch,
            "commits": [c.to_json() for c in self.commits],
            "watermark": self.watermark,
            "patch": self.patch,
            "warnings": list(self.warnings),
        }


def _in_head(repo: Repo, run: Run, head: str) -> bool:
    """True when a commit of `run` (from its receipt or found by trailer) is in HEAD's
    history."""

    found = [*run.commits.values(), *run.trailer_commits.values()]
    return any(oid and history.in_history(repo, head, oid) for oid in found)


def _vouched(repo: Repo, run: Run) -> bool:
    """A run without a receipt that gitdream's own records still vouch for: it was killed
    before its receipt, and the run that finished it names it (`completes`), or its plan is
    still kept on this machine (`runjournal`)."""

    if run.completed_by:
        return True
    return bool(run.agent) and runjournal.planned_run(repo, str(run.agent)) == run.run


def _commit_for(repo: Repo, run: Run, kind: str, head: str) -> str | None:
    """The run's `kind` commit as it is in HEAD's history: the receipt's commit when HEAD
    contains it, else the commit found there by its trailers when it makes the very same
    change (history rewritten by a rebase keeps the trailers). RepoStateError when the run
    has no receipt here — trailers alone are text anyone can write into a commit message
    (issue 16: forged trailers on a person's commit let revert undo that person's edit) —
    or when it made a commit HEAD does not have."""

    if run.receipt is None and not _vouched(repo, run):
        raise RepoStateError(
            f"run {run.run} has no receipt here, and gitdream reverts only commits a receipt names "
            "(the Gitdream-* trailers of a commit message prove nothing)",
            hint=f"fetch the receipts (`{notes.fetch_command()}`), then revert; or undo the commit "
            "yourself with `git revert`",
        )
    recorded = run.commits.get(kind)
    if recorded and history.in_history(repo, head, recorded):
        return recorded
    # with a receipt, a commit found by trailers stands only for a commit the receipt lists
    found = run.trailer_commits.get(kind) if run.receipt is None or recorded else None
    if found and history.in_history(repo, head, found):
        if recorded and history.exists(repo, recorded) and not history.same_change(repo, recorded, found):
            raise RepoStateError(
                f"commit {found[:12]} carries the trailers of run {run.run}, but it does not make the "
                f"change the run's {kind} commit {recorded[:12]} made",
                hint="revert it yourself with `git revert` if it is what you want to undo",
            )
        return found
    if recorded is None and found is None:
        return None
    where = "is not in this repository" if not history.exists(repo, recorded) else "is not in HEAD's history"
    branch = f" (it was committed to {run.branch.removeprefix('refs/heads/')})" if run.branch else ""
    raise RepoStateError(
        f"the {kind} commit of run {run.run} ({str(recorded or found)[:12]}) {where}{branch}",
        hint="check out or merge the branch that has it, then revert; for a review branch that "
        f"was never merged, `gitdream revert {run.run} --replay` hands its material back to the "
        "next dream (then delete the branch)",
    )


def _agent_for(repo: Repo, cfg: Config, run: Run) -> Agent:

    for agent in list_agents(repo.workdir, cfg, []):  # a badly named other folder is not ours to judge
        if agent.id == run.agent:
            return agent
    agent_dir = run.receipt.agent_dir if run.receipt else None
    if agent_dir is not None and run.agent:
        agent = make_agent("" if agent_dir == "." else agent_dir, cfg)
        if agent.id == run.agent:
            return agent
    raise GitdreamError(
        f"run {run.run} belongs to agent {run.agent or '(unknown)'}, which is not an agent of this "
        "repository now",
        hint="restore the agent's folder, or check the `agents` globs in gitdream.toml",
    )


def _subject(repo: Repo, oid: str) -> str:

    return history.subject(repo, oid)


def _title(subject: str) -> str:
    """`Revert "<subject>"`; the revert of a revert is `Reapply "<original>"`, as git
    (2.43+) titles it instead of nesting quotes."""
    prefix = 'Revert "'
    if subject.startswith(prefix) and subject.endswith('"'):
        return f'Reapply "{subject[len(prefix) : -1]}"'
    return f'Revert "{subject}"'


def _message(repo: Repo, run: Run, kind: str, oid: str, new_run: str, agent: Agent, input_commit: str) -> str:
    """`Revert "<subject>"` (git's form), a body naming the run, and the trailers."""

    subject = _subject(repo, oid)
    body = (
        f"This reverts commit {oid}, the {kind} commit of gitdream run {run.run} "
        f"(agent {agent.id}).\n\nUndo this revert with `gitdream revert {new_run}`."
    )
    trailers = [
        ("Gitdream-Run", new_run),
        ("Gitdream-Kind", kind),
        ("Gitdream-Agent", agent.id),
        ("Gitdream-Input", input_commit),
        ("Gitdream-Reverts", run.run),
    ]
    return format_message(_title(subject), body, trailers)


def _conflict_error(repo: Repo, run: Run, plans: list[tuple[str, str, Inverse]], head: str) -> RevertConflict:

    conflicts: list[dict[str, Any]] = []
    lines = []
    later_all: dict[str, str] = {}  # every later commit named, oid → subject
    for _kind, oid, inv in plans:
        for conflict in inv.conflicts:
            later = history.later_changes(repo, oid, head, conflict.path)
            later_all.update(later)
            conflicts.append(
                {
                    "path": conflict.path,
                    "reason": conflict.reason,
                    "later_commits": [{"oid": c, "subject": s} for c, s in later],
                }
            )
            since = ", ".join(f"{c[:7]} {s!r}" for c, s in later)
            lines.append(f"  {conflict.path}: {conflict.reason}" + (f" (by {since})" if since else ""))
    return RevertConflict(
        f"cannot revert run {run.run}: later changes conflict with it; nothing was changed\n"
        + "\n".join(lines),
        hint=_conflict_hint(repo, run, plans, later_all),
        conflicts=conflicts,
    )


def _is_commit_of(repo: Repo, run: Run, oid: str) -> bool:
    """Whether commit `oid` (which carries `run`'s trailers) is that run's: its receipt
    lists it, or it is a copy (a rebase) making the very same change as a commit the
    receipt lists, or — no receipt — gitdream's own records vouch for the run (`_vouched`).
    Otherwise it is a person's commit with copied trailers (issue 16)."""
    if run.lists(oid):
        return True
    if run.receipt is None:
        return _vouched(repo, run) and oid in run.trailer_commits.values()
    return any(
        recorded and history.exists(repo, recorded) and history.same_change(repo, recorded, oid)
        for recorded in run.commits.values()
    )


def _conflict_hint(repo: Repo, run: Run, plans: list[tuple[str, str, Inverse]], later: dict[str, str]) -> str:
    """The next step after a conflicting revert, naming what changed the files since:
    later runs are reverted first with `gitdream revert`; a commit that is not a run (a
    person's edit) is named with `git revert`; and when only one of the run's commits
    conflicts, `--only` reverts the other one alone."""
    runs, others = [], []
    known: dict[str, Run] | None = None
    for oid in later:
        found = history.trailer_commit(repo, oid)
        if found is not None and found.run and known is None:
            known = {r.run: r for r in list_runs(repo)}
        dream = known.get(found.run) if known is not None and found is not None and found.run else None
        if dream is not None and _is_commit_of(repo, dream, oid):
            runs.append(dream.run)
        else:
            others.append(oid[:7])
    agent = f" --agent {run.agent}" if run.agent else ""
    steps = []
    if runs:
        steps.append(
            f"revert the later run{'s' if len(runs) > 1 else ''} first (`gitdream revert {runs[0]}`)"
        )
    if others:
        which = " and ".join(others)
        steps.append(
            f"undo or rework the later commit{'s' if len(others) > 1 else ''} {which}, which "
            f"{'are' if len(others) > 1 else 'is'} not a dream (`git revert {others[0]}`)"
        )
    if not steps:
        steps.append(f"revert the later runs first (see `gitdream log{agent}`)")
    hint = ", or ".join([*steps, "edit these files by hand"])
    clean = [kind for kind, _oid, inv in plans if not inv.conflicts]
    if clean and len(clean) < len(plans):
        hint += f"; `gitdream revert {run.run} --only {clean[0]}` reverts the {clean[0]} commit alone"
    return hint


def definition_check(cfg: Config, path: str, old: bytes | None, new: bytes | None) -> list[str]:
    """The `gitdream check` problems (as printed lines) that reverting definition file
    `path` from `old` to `new` would *introduce*: rules the new text breaks and the old
    text did not (DESIGN §7: the check runs before every definition commit). A rule the
    file already broke before the revert does not block the undo. Pure."""

    if new is None:
        return []
    limits = Limits.from_config(cfg)
    kind = kind_by_name(path)

    def judge(data: bytes) -> Any:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("utf-8", "replace")
        return check_text(path, text, limits, kind)

    before = {p.rule for p in judge(old).problems} if old is not None else set()
    after = judge(new)
    return [
        line
        for problem, line in zip(after.problems, after.lines(), strict=True)
        if problem.rule not in before
    ]


def _replay_plan(repo: Repo, run: Run, agent: Agent) -> dict[str, Any]:
    """Where `--replay` moves the watermark: `{"ref", "from", "to"}`. Raises GitdreamError
    when the run did not move it, or a later dream moved it further."""

    receipt = run.receipt
    if receipt is None:
        raise GitdreamError(
            f"run {run.run} has no receipt here, so where its watermark was before is unknown",
            hint=f"fetch receipts (`{notes.fetch_command()}`), "
            "or revert without --replay and re-read with `gitdream run --since REV`",
        )
    if receipt.watermark_after is None:
        raise GitdreamError(
            f"run {run.run} did not move the watermark of agent {agent.id}, so there is nothing to replay",
            hint="revert without --replay",
        )
    after = receipt.watermark_after
    before = receipt.watermark_before
    current = material.read_watermark(repo, agent)
    if current != after and not _nothing_consumed_since(repo, agent, after, current):
        since = f" --since {before[:12]}" if isinstance(before, str) else " --full"
        raise GitdreamError(
            f"the watermark of agent {agent.id} is at {str(current)[:12] if current else 'nothing'}, "
            f"not at the input commit of run {run.run} ({after[:12]}): a later dream consumed more "
            "material",
            hint=f"revert that later dream first (see `gitdream log --agent {agent.id}`), "
            f"or revert without --replay and read the material again with `gitdream run --agent {agent.id}{since}`",
        )
    return {"ref": agent.watermark_ref, "from": current, "to": before if isinstance(before, str) else None}


def _nothing_consumed_since(repo: Repo, agent: Agent, after: str, current: str | None) -> bool:
    """True when the watermark moved from `after` to `current` without consuming any
    material: only no-op dreams ran since (no source of the agent changed in between),
    so moving it back loses nothing."""

    if current is None or not history.in_history(repo, current, after):
        return False
    return not material.changed_sources(repo, agent, after, current).files


@dataclass
class _Plan:
    """What a revert will do: the run's agent, `(kind, commit, inverse)` per commit in
    ORDER, and where `--replay` moves the watermark (None without it)."""

    agent: Agent
    steps: list[tuple[str, str, Inverse]]
    replay: dict[str, Any] | None
    note: str | None = None


def _unmerged_review(repo: Repo, cfg: Config, run: Run, replay: bool) -> _Plan | None:
    """`revert RUN --replay` of a dream whose commits are only on a review branch that was
    never merged: there is nothing to undo on HEAD, but the material the dream consumed
    goes back to the next dream (the watermark moves back). None when that does not apply."""
    if not replay or not run.branch:
        return None
    head = repo.head()
    if head.branch == run.branch:
        return None
    agent = _agent_for(repo, cfg, run)
    plan = _Plan(agent, [], _replay_plan(repo, run, agent))
    name = run.branch.removeprefix("refs/heads/")
    plan.note = (
        f"run {run.run} committed only to review branch {name}, which is not merged here: nothing "
        f"to undo; its material goes back to the next dream. Delete the branch with `git branch -D {name}`"
    )
    return plan


def _plan(repo: Repo, cfg: Config, run: Run, only: str | None, head_oid: str, replay: bool) -> _Plan:
    """Compute the revert of `run` on `head_oid` and check it can be written, without
    writing anything. Raises as `revert` documents."""

    kinds = [k for k in ORDER if only is None or k == only]
    try:
        commits = {k: _commit_for(repo, run, k, head_oid) for k in kinds}
    except GitdreamError:
        unmerged = _unmerged_review(repo, cfg, run, replay)
        if unmerged is None:
            raise
        return unmerged
    if not any(commits.values()):
        made = "no commit" if only is None else f"no {only} commit"
        raise GitdreamError(
            f"run {run.run} (agent {run.agent or '?'}, status {run.status}) made {made}, "
            "so there is nothing to revert",
            hint="list runs and their commits with `gitdream log`",
        )
    agent = _agent_for(repo, cfg, run)
    steps = [(k, oid, inverse.inverse(repo, oid, head_oid)) for k, oid in commits.items() if oid is not None]
    if any(inv.conflicts for _k, _o, inv in steps):
        raise _conflict_error(repo, run, steps, head_oid)
    if not any(inv.changes for _k, _o, inv in steps):
        # With --replay, an undone run whose watermark was not moved back yet (a revert
        # without --replay, or one killed before its watermark move) gets just that.
        try:
            replayed = _replay_plan(repo, run, agent) if replay else None
        except GitdreamError:
            replayed = None
        if replayed is None:
            raise GitdreamError(
                f"run {run.run} is already undone: its paths are as they were before it",
                hint=f"nothing to do; see `gitdream show {run.run}`",
            )
        return _Plan(agent, steps, replayed)
    broken = [
        line
        for kind, _oid, inv in steps
        if kind == "definition"
        for c in inv.changes
        for line in definition_check(cfg, c.path, c.old, c.data)
    ]
    if broken:
        raise WriteRefused(
            f"reverting run {run.run} would break the definition checks:\n  " + "\n  ".join(broken),
            hint="fix the file so that `gitdream check` passes and commit it, then revert again; "
            "or revert with --only experience",
            paths=sorted({line.split(":", 1)[0] for line in broken}),
        )
    return _Plan(agent, steps, _replay_plan(repo, run, agent) if replay else None)


def _newer_elsewhere(runs: list[Run], ref: str, agent_id: str | None, run: Run) -> list[str]:
    """A warning when `ref` is `last`/`last~N` and a newer dream than `run` is not in HEAD's
    history (one committed with `run --branch`, or on another worktree's branch): `gitdream
    log` and `show last` list that one first, but `revert last` means the newest dream this
    branch holds. [] otherwise."""
    if not ref.startswith("last"):
        return []
    try:
        newest = resolve(runs, "last", agent_id, changed=True)
    except GitdreamError:
        return []
    if newest.run == run.run:
        return []
    return [
        f"the newest dream, run {newest.run} ({newest.agent}), is not in HEAD's history (committed on "
        f"another branch, e.g. with `gitdream run --branch`): `{ref}` here is run {run.run}, the newest "
        "this branch holds; to drop the other dream, delete its branch or revert it there"
    ]


def revert(
    repo: Repo,
    cfg: Config,
    ref: str,
    *,
    agent_id: str | None = None,
    only: str | None = None,
    dry_run: bool = False,
    branch: str | None = None,
    replay: bool = False,
) -> RevertResult:
    """Revert run `ref` (a run reference, see `gitdream.dream.runs.resolve`; `agent_id`
    scopes `last`). `only` is "experience", "definition" or None (both). `dry_run`
    computes the patch and changes nothing (no lock, refs, notes, objects or files).
    `branch` puts the revert commits on a new review branch started at HEAD. `replay`
    also moves the watermark back (see the module docstring).

    Returns a RevertResult. Raises UnknownRun/AmbiguousRun, RepoStateError (repository
    state; the run's commit not in HEAD's history), RevertConflict (nothing changed),
    WriteRefused/HeadMoved (the write gate, the definition checks or the
    compare-and-swap; nothing changed), LockHeld, and GitdreamError (disabled, nothing
    to revert, replay refused).
    """

    if only is not None and only not in KINDS:
        raise ValueError(f"only must be one of {KINDS}, not {only!r}")
    if replay and branch is not None:
        # The watermark serves the branch dreams run on; a revert only proposed on a
        # review branch must not make the next dream re-read material still in memory.
        raise ValueError("replay cannot be combined with a review branch")
    if branch is not None:
        commitbuilder.review_branch_ref(repo, branch)  # `--branch HEAD`, `@`, `origin/main`: a usage error
    if not cfg.bool("enabled") and not dry_run:
        raise GitdreamError(
            f"gitdream is disabled (enabled = false, from {cfg.source('enabled')}); revert writes commits "
            "and state, so it does not run",
            hint="enable it for this command: GITDREAM_ENABLED=true gitdream revert …, "
            "or use --dry-run to see the patch",
        )
    repo.require_own_index()
    within = None
    current = repo.head()
    head_oid = current.oid
    if not replay and head_oid is not None and not current.detached:  # detached: refused below
        # `last` is the newest dream this branch holds: one committed on another branch
        # (a worktree's) cannot be reverted here. --replay also takes unmerged review runs.
        within = ("in HEAD's history", lambda r: _in_head(repo, r, head_oid))
    runs = list_runs(repo)
    run = resolve(runs, ref, agent_id, changed=True, within=within)
    skipped = _newer_elsewhere(runs, ref, agent_id, run) if within is not None else []
    new_run = ids.new_run_id()
    held = None
    warnings: list[str] = list(skipped)
    if not dry_run:
        held = dreamlock.acquire(repo.common_dir, new_run, cfg.float("lock_ttl_minutes"))
    try:
        if held is not None:
            # A commit a killed process left half-synced is finished first: its paths
            # would otherwise look like uncommitted changes to the plan and the gate.
            warnings = [*skipped, *held.warnings, *commitbuilder.repair(repo)]
        started = clock.now()
        t0 = time.monotonic()
        head = repo.head() if branch is not None else repo.require_writable()
        if head.oid is None:
            raise repo.state_problem() or GitdreamError("the repository has no commits yet")
        plan = _plan(repo, cfg, run, only, head.oid, replay)
        result = RevertResult(
            run.run, plan.agent.id, only, dry_run, branch=branch, watermark=plan.replay, warnings=warnings
        )
        result.reverts_a_revert = run.reverts is not None
        if plan.note:
            result.warnings.append(plan.note)
        result.patch = "".join(
            inverse.patch_text(c.path, c.old, c.data) for _k, _o, inv in plan.steps for c in inv.changes
        )
        if dry_run:
            for kind, oid, inv in plan.steps:
                if inv.changes:
                    result.commits.append(
                        RevertedCommit(kind, oid, None, inv.paths, _title(_subject(repo, oid)))
                    )
            return result
        result.run = new_run
        _apply(repo, cfg, run, plan, result, head.oid, started, t0)
        return result
    finally:
        if held is not None:
            held.release()


def _apply(
    repo: Repo,
    cfg: Config,
    run: Run,
    plan: _Plan,
    result: RevertResult,
    head_oid: str,
    started: Any,
    t0: float,
) -> None:
    """Write the planned revert: gate every path first, commit definition then
    experience, move the watermark (replay), write the receipt and the annotation."""

    assert result.run is not None
    branch = result.branch
    # Every path passes the gate before anything is written, so a refusal of the second
    # commit cannot leave the first one behind.
    for kind, _oid, inv in plan.steps:
        if inv.changes:
            writegate.require(repo, plan.agent, inv.paths, kind, tree_only=branch is not None)
    # So does a lock file git left behind on anything the revert writes.

    written = [f"refs/heads/{branch}"] if branch else [lockfiles.INDEX, "HEAD", repo.head().branch or "HEAD"]
    replayed = [plan.replay["ref"]] if plan.replay is not None else []
    lockfiles.require_free(repo, [*written, *replayed, NOTES_REF])
    ident = commitbuilder.identity(repo, cfg)
    # The contents were computed at head_oid: a branch that moved since and touched these
    # paths makes the commit builder refuse instead of undoing that work (`CommitChain`).
    chain = CommitChain(review_branch=branch)
    done: dict[str, str | None] = {"experience": None, "definition": None}
    try:
        for kind, oid, inv in plan.steps:
            if not inv.changes:
                continue
            message = _message(repo, run, kind, oid, result.run, plan.agent, head_oid)
            changes = [commitbuilder.Change(c.path, c.data) for c in inv.changes]
            faults.point(f"before-{kind}-commit")
            made = chain.commit(repo, plan.agent, kind, changes, message, ident, head_oid)
            faults.point(f"after-{kind}-commit")
            done[kind] = made.oid
            result.warnings.extend(made.warnings)
            result.commits.append(RevertedCommit(kind, oid, made.oid, inv.paths, message.split("\n", 1)[0]))
    except GitdreamError as exc:
        if not any(done.values()):
            raise
        # The definition revert is committed; the experience one was refused (a race the
        # gate check above could not see). Record what was done, then say what is left.
        chain.publish(repo, f"gitdream: revert {result.reverted} ({result.run})")
        _record(repo, run, result, plan.agent, head_oid, ident, started, t0, done, "failed", exc)
        raise GitdreamError(
            f"reverted the definitions of run {run.run} ({str(done['definition'])[:7]}), but not its "
            f"experience: {exc.message}",
            hint=(exc.hint + "; then " if exc.hint else "")
            + f"run `gitdream revert {run.run} --only experience`",
        ) from exc
    # A review branch appears with the whole revert or not at all.
    chain.publish(repo, f"gitdream: revert {result.reverted} ({result.run})")
    moved: GitdreamError | None = None
    if plan.replay is not None:
        faults.point("before-watermark")
        try:
            compare_and_swap(
                repo,
                plan.replay["ref"],
                plan.replay["from"],
                plan.replay["to"],
                f"gitdream: revert {run.run} --replay ({result.run})",
            )
        except RefMoved as exc:  # another process moved it after the check; keep its value
            moved = exc
            result.watermark = None
            result.warnings.append(f"the watermark was not moved back: {exc.message}")
    _record(repo, run, result, plan.agent, head_oid, ident, started, t0, done, "ok", None)
    if moved is not None:
        raise GitdreamError(
            f"reverted run {run.run}, but its watermark was not moved back: {moved.message}",
            hint=f"read the material again with `gitdream run --agent {plan.agent.id} --since REV`",
        )


def _record(
    repo: Repo,
    run: Run,
    result: RevertResult,
    agent: Agent,
    input_commit: str,
    ident: Identity,
    started: Any,
    t0: float,
    done: dict[str, str | None],
    status: str,
    error: GitdreamError | None,
) -> None:
    """Write the revert's own receipt (on its input commit) and annotate the reverted
    run's receipt (on that run's input commit, or the revert's when that is gone)."""

    assert result.run is not None
    paths = {c.kind: c.paths for c in result.commits}
    only = result.only
    watermark = result.watermark
    replayed = watermark is not None and status == "ok"
    receipt = receipts.Receipt(
        run=result.run,
        agent=agent.id,
        agent_dir=agent.dir or ".",
        trigger="revert",
        status=status,
        started=clock.iso(started),
        input_commit=input_commit,
        branch=f"refs/heads/{result.branch}" if result.branch else repo.head().branch,
        commits=dict(done),
        counts={"created": 0, "corroborated": 0, "rejected": 0, "files": sum(len(p) for p in paths.values())},
        error=error.to_json() if error is not None else None,
        revert=receipts.RevertDetails(run.run, only, replayed, paths),
    )
    if watermark is not None and replayed:
        receipt.watermark_before = watermark["from"]
        receipt.watermark_after = watermark["to"]
    receipt.finish(
        calls=[],
        pending=[],
        warnings=list(result.warnings),
        rejected=[],
        duration_seconds=time.monotonic() - t0,
        cfg=None,
    )
    faults.point("before-receipt")
    receipts.write(repo, receipt, ident)
    annotated = run.input_commit if history.exists(repo, run.input_commit) else input_commit
    assert annotated is not None
    note = {
        "type": "annotation",
        "run": run.run,
        "reverted_by": result.run,
        "only": only,
        "replay": replayed,
        "commits": dict(done),
        "time": receipt.finished,
    }
    faults.point("before-annotation")
    receipts.append(repo, annotated, note, ident)
