"""Runs: every dream (and revert) of a repository, and how a user names one.

A run is known from two places (DESIGN §4, §6):

- its **receipt** (a JSON note under `refs/notes/gitdream`): every run has one, no-op,
  failed and aborted runs included — unless notes were not fetched;
- the **trailers** of its commits (`Gitdream-Run`, `Gitdream-Kind`, …): only runs that
  committed, but they travel with the branch.

`list_runs` merges both. The commits of a run come from its receipt (`commits`); the
trailers are found by a bounded walk of HEAD's history (`WALK_LIMIT` commits, newest
first), so a run whose receipt is missing is still listed, with status `unknown`, when
its commits are among the last `WALK_LIMIT` commits of HEAD. Reverts are runs too
(`trigger: revert`); annotations of a receipt (`reverted_by`) are folded in.

A **run reference** (`resolve`) is, like a git object name:

- a whole run id, or any unique prefix of one (case-insensitive);
- `last`: the newest run (of one agent when an agent is given), `last~N`: the N-th run
  before it. `show`, `audit --run` and `revert` count only runs that made a commit
  (`changed`), so `last` is the newest dream that changed something, never the no-op of
  an idle agent, and means the same to all three.

An ambiguous prefix is an error naming the candidates; an unknown one an error pointing
at `gitdream log`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gitdream import clock, ids
from gitdream.dream import receipts as receipts_mod
from gitdream.dream import runjournal
from gitdream.errors import GitdreamError
from gitdream.git import history, notes

if TYPE_CHECKING:
    from gitdream.dream.receipts import Receipt
    from gitdream.git.history import TrailerCommit
    from gitdream.git.repo import Repo

WALK_LIMIT = 2000
"""How many commits of HEAD's history `list_runs` reads for trailers (newest first)."""
KINDS = ("experience", "definition")
STATUSES = ("ok", "partial", "noop", "failed", "aborted", "unknown")
_LAST = re.compile(r"^last(?:~(?P<n>[0-9]+))?$")
MAX_CANDIDATES = 10


class UnknownRun(GitdreamError):
    """A run reference names no run."""

    kind = "unknown_run"


class AmbiguousRun(GitdreamError):
    """A run id prefix matches more than one run."""

    kind = "ambiguous_run"

    def __init__(self, message: str, hint: str | None = None, candidates: list[str] | None = None):
        super().__init__(message, hint)
        self.candidates = list(candidates or [])


@dataclass
class Run:
    """One run, merged from its receipt and its commits' trailers.

    `run` (id), `agent`, `time` (ISO UTC start: the receipt's `started`, else the time
    in the run id), `trigger`, `engine`, `status` (ok, noop, failed, aborted; `unknown`
    when only trailers were found), `counts` (from the receipt), `commits`
    (`{"experience": oid|None, "definition": oid|None}`), `input_commit`, `reverts` (the
    run a revert undid), `reverted_by` (`[{"run", "only"}]`), `receipt` (the whole
    receipt, or None), `trailer_commits` (kind → oid of commits found in HEAD's
    history by trailer).
    """

    run: str
    agent: str | None = None
    time: str | None = None
    trigger: str | None = None
    engine: str | None = None
    status: str = "unknown"
    counts: dict[str, Any] = field(default_factory=dict)
    commits: dict[str, str | None] = field(default_factory=lambda: {"experience": None, "definition": None})
    input_commit: str | None = None
    branch: str | None = None
    reverts: str | None = None
    only: str | None = None
    reverted_by: list[dict[str, Any]] = field(default_factory=list)
    receipt: Receipt | None = None
    trailer_commits: dict[str, str] = field(default_factory=dict)
    completed_by: str | None = None
    """The run that finished this one after it was killed before its receipt."""
    unfinished: str | None = None
    """For a run without a receipt whose plan is kept on this machine (`runjournal`):
    "interrupted" (killed before its receipt; the agent's next run finishes it) or
    "running"; None otherwise."""

    def lists(self, oid: str) -> bool:
        """Whether this run's receipt lists commit `oid` among its commits: what makes a
        commit a run's. Trailers alone are text anyone can copy into a commit message
        (issue 16), so without a receipt nothing is listed."""
        return self.receipt is not None and oid in self.commits.values()

    @property
    def shown_counts(self) -> dict[str, int]:
        """The counts `log` shows: memories improved (`receipts.improved`, the number of
        the run's summary), facts created, corroborated, units rejected."""
        counts = self.counts or {}
        shown = {key: int(counts.get(key, 0) or 0) for key in ("created", "corroborated", "rejected")}
        return {"improved": receipts_mod.improved(counts), **shown}

    def to_json(self) -> dict[str, Any]:
        """The run as `gitdream log --json` lists it (shape in docs/json.md)."""
        document = {
            "run": self.run,
            "agent": self.agent,
            "time": self.time,
            "trigger": self.trigger,
            "engine": self.engine,
            "status": self.status,
            "counts": self.shown_counts,
            "commits": dict(self.commits),
            "input_commit": self.input_commit,
            "branch": self.branch,
            "reverts": self.reverts,
            "only": self.only,
            "reverted_by": [dict(r) for r in self.reverted_by],
            "receipt": self.receipt is not None,
        }
        if self.completed_by:
            document["completed_by"] = self.completed_by
        if self.unfinished:
            document["unfinished"] = self.unfinished
        return document


def _from_receipt(receipt: Receipt) -> Run:
    commits = receipt.commits
    time = receipt.started
    if time is None:
        when = ids.run_time(receipt.run)
        time = clock.iso(when) if when else None
    return Run(
        run=receipt.run,
        agent=receipt.agent,
        time=time,
        trigger=receipt.trigger,
        engine=receipt.engine,
        status=receipt.status or "unknown",
        counts=dict(receipt.counts),
        commits={k: (str(commits[k]) if commits.get(k) else None) for k in KINDS},
        input_commit=receipt.input_commit,
        branch=receipt.branch,
        reverts=receipt.revert.reverts if receipt.revert else None,
        only=receipt.revert.only if receipt.revert else None,
        receipt=receipt,
    )


def _from_trailers(commit: TrailerCommit) -> Run:
    when = ids.run_time(commit.run)
    return Run(
        run=commit.run,
        agent=commit.agent,
        time=clock.iso(when) if when else commit.time,
        trigger="revert" if commit.reverts else None,
        engine=commit.engine,
        status="unknown",
        input_commit=commit.input,
        reverts=commit.reverts,
    )


def list_runs(repo: Repo, *, walk_limit: int = WALK_LIMIT) -> list[Run]:
    """Every run of the repository, newest first (by run id, which sorts by start time).

    Reads all receipts and the trailers of the last `walk_limit` commits of HEAD's
    history. Never raises for malformed notes or messages (they are skipped).
    """
    return collect(repo, walk_limit=walk_limit)[0]


def collect(repo: Repo, *, walk_limit: int = WALK_LIMIT) -> tuple[list[Run], bool]:
    """`list_runs`, plus whether the walk for trailers stopped at `walk_limit` with
    history left (older runs without a receipt are then not listed)."""

    runs: dict[str, Run] = {}
    for receipt in receipts_mod.receipts(repo):
        run = _from_receipt(receipt)
        runs[run.run] = run
        for note in receipt.annotations:
            if isinstance(note, dict) and note.get("reverted_by"):
                _add_reverted_by(run, str(note["reverted_by"]), note.get("only"))
    head = repo.head().oid
    found, truncated = history.trailer_commits(repo, head, walk_limit)
    for commit in found:
        known = runs.get(commit.run)
        run = known if known is not None else runs.setdefault(commit.run, _from_trailers(commit))
        # A run with a receipt has the commits it lists: a commit carrying its trailers
        # is kept only as a possible copy (a rebase) of a commit of a kind it lists, and
        # `gitdream revert` takes it only when it makes the very same change. A commit
        # with the trailers of a kind the receipt does not list is a person's.
        listed = run.receipt is None or run.commits.get(commit.kind or "") is not None
        if commit.kind in KINDS and listed:
            if run.commits.get(commit.kind) == commit.oid or commit.kind not in run.trailer_commits:
                run.trailer_commits[commit.kind] = commit.oid
            if run.receipt is None and run.commits.get(commit.kind) is None:
                run.commits[commit.kind] = commit.oid
        if run.receipt is None and run.reverts is None and commit.reverts:
            run.reverts = commit.reverts
    for run in list(runs.values()):
        if run.reverts and run.reverts in runs:
            _add_reverted_by(runs[run.reverts], run.run, run.only)
        completes = run.receipt.completes if run.receipt is not None else None
        if completes and completes in runs and runs[completes].receipt is None:
            runs[completes].completed_by = run.run
    for run in runs.values():
        if run.receipt is None and run.completed_by is None and run.agent:
            run.unfinished = runjournal.kept_state(repo, run.agent, run.run)
    return sorted(runs.values(), key=lambda r: r.run, reverse=True), truncated


def _add_reverted_by(run: Run, by: str, only: Any) -> None:
    if any(item["run"] == by for item in run.reverted_by):
        return
    run.reverted_by.append({"run": by, "only": only if only in KINDS else None})
    run.reverted_by.sort(key=lambda item: item["run"])


def _describe(run: Run) -> str:
    return f"{run.run} (agent {run.agent or '?'}, {run.time or 'unknown time'}, {run.status})"


def resolve(
    runs: list[Run],
    ref: str,
    agent: str | None = None,
    *,
    changed: bool = False,
    within: tuple[str, Callable[[Run], bool]] | None = None,
) -> Run:
    """The run `ref` names among `runs` (newest first, as `list_runs` returns them).

    `ref` is `last`, `last~N`, a run id or a unique prefix of one; `agent` restricts
    `last` and prefixes to that agent's runs; `changed` makes `last~N` count only runs that
    made a commit (what `gitdream revert last` means: the newest dream that changed
    something, not the no-op of an idle agent); `within` = `(scope words, predicate)`
    narrows `last~N` further, e.g. `("in HEAD's history", …)` for revert, so that a dream
    committed on another branch is not what `last` means here. Raises UnknownRun (no such run, `last~N`
    past the oldest run, malformed reference) or AmbiguousRun (prefix of several runs;
    the message names each with its agent and time).
    """
    text = ref.strip().lower()
    pool = [r for r in runs if agent is None or r.agent == agent]
    scope = f" of agent {agent}" if agent else ""
    match = _LAST.match(text)
    if match:
        if changed:
            pool = [r for r in pool if any(r.commits.values()) or r.trailer_commits]
            scope += " that made a commit"
        if within is not None:
            pool = [r for r in pool if within[1](r)]
            scope += f" {within[0]}"
        n = int(match["n"] or 0)
        if n >= len(pool):
            count = len(pool)
            if count == 0:
                raise UnknownRun(f"{ref}: there are no runs{scope} yet", hint="dream with `gitdream run`")
            raise UnknownRun(
                f"{ref}: there {'is' if count == 1 else 'are'} only {count} run{'s' if count != 1 else ''}{scope}",
                hint="list runs with `gitdream log`" + (f" --agent {agent}" if agent else ""),
            )
        return pool[n]
    if not ids.is_run_id_prefix(text):
        raise UnknownRun(
            f"{ref!r} is not a run reference: give {ids.RUN_REF_FORMS}",
            hint="list runs with `gitdream log`",
        )
    hits = [r for r in pool if r.run.startswith(text)]
    exact = [r for r in hits if r.run == text]
    if exact:
        return exact[0]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise UnknownRun(
            f"no run{scope} with an id starting with {text!r}",
            hint=f"list runs with `gitdream log`; fetch receipts with `{notes.fetch_command()}`",
        )
    shown = [_describe(r) for r in hits[:MAX_CANDIDATES]]
    more = len(hits) - len(shown)
    raise AmbiguousRun(
        f"run id prefix {text!r} is ambiguous; it matches:\n  "
        + "\n  ".join(shown)
        + (f"\n  … and {more} more" if more > 0 else ""),
        hint="give more characters of the run id",
        candidates=[r.run for r in hits],
    )
