"""`gitdream log`, `gitdream show RUN` and `gitdream audit [AGENT]`: reviewing dreams.

All three only read: receipts (notes), commits and trees. They never write objects, refs,
notes, the index, files or gitdream's state, and work with `enabled = false` too.

- `log`: every run, newest first, from receipts and trailers (`gitdream.dream.runs`).
- `show`: one run's receipt, its commits with diffstat (and patch), units with sources,
  rejected units with reasons, tokens and duration.
- `audit`: every fact gitdream wrote into an agent's memory (the `facts` and `superseded`
  blocks of topic files, `archived-*` blocks of the archive, `learned` blocks of definition files, as
  committed at HEAD) beside the source text it cites. A source reference
  `<path>#Lstart-Lend@<commit>` is resolved at *that* commit — so a log deleted or
  rewritten later still resolves — with git's line numbering (lines end at LF; see
  `gitdream.dream.decode`). A source that does not resolve is shown as missing, never
  dropped; a `fact:<id>` source is a reference to another fact, not a missing source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gitdream.agents import list_agents, select
from gitdream.dream import runs as runs_mod
from gitdream.dream.decode import decode_lines
from gitdream.dream.facts import one_line
from gitdream.dream.facts import parse as parse_facts
from gitdream.dream.memoryfiles import superseded_text
from gitdream.dream.orient import memory_view
from gitdream.dream.runs import KINDS, Run, collect, resolve
from gitdream.dream.transcript import parse_messages
from gitdream.dream.verify import FACT_ID_RE, fact_id
from gitdream.errors import BlockError, GitdreamError, RepoStateError
from gitdream.git import history
from gitdream.text import blocks
from gitdream.units import parse_entry_id, parse_source_ref

if TYPE_CHECKING:
    from gitdream.agents import Agent
    from gitdream.config import Config
    from gitdream.git.history import CommitView
    from gitdream.git.repo import Repo

FACT_BLOCKS = ("facts", "learned", "superseded")
"""Managed blocks that hold facts; `archived-<n>` blocks (the archive) hold them too. A fact
of a `superseded` block is audited under its own text (without "— superseded … by: …")."""


# --- log --------------------------------------------------------------------------------


@dataclass
class LogResult:
    """The runs `gitdream log` lists (newest first), whether the trailer walk was cut
    short (`walk_truncated`, after `walk_limit` commits), and how many no-op runs were
    left out (`hidden`)."""

    runs: list[Run]
    walk_limit: int
    walk_truncated: bool
    total: int
    hidden: int = 0

    def to_json(self) -> dict[str, Any]:
        """`{"runs": [run…], "total", "hidden", "walk": {"limit", "truncated"}}`; a run is
        `Run.to_json()`."""
        return {
            "runs": [r.to_json() for r in self.runs],
            "total": self.total,
            "hidden": self.hidden,
            "walk": {"limit": self.walk_limit, "truncated": self.walk_truncated},
        }


def log(
    repo: Repo,
    *,
    agent_id: str | None = None,
    limit: int | None = None,
    status: str | None = None,
    walk_limit: int | None = None,
    noops: bool = False,
) -> LogResult:
    """Runs newest first, optionally only of `agent_id`, with `status`, at most `limit`.

    No-op runs (an agent with nothing new: one per idle agent per dream) are left out
    unless `noops` is true or `status` is "noop"; `hidden` counts them. `total` counts
    the runs that matched before `limit`. Never raises for malformed receipts or commit
    messages.
    """

    walk = runs_mod.WALK_LIMIT if walk_limit is None else walk_limit
    runs, truncated = collect(repo, walk_limit=walk)
    picked = [
        r
        for r in runs
        if (agent_id is None or r.agent == agent_id) and (status is None or r.status == status)
    ]
    hidden = 0
    if not noops and status is None:
        shown = [r for r in picked if r.status != "noop"]
        hidden = len(picked) - len(shown)
        picked = shown
    total = len(picked)
    if limit is not None:
        picked = picked[: max(limit, 0)]
    return LogResult(picked, walk, truncated, total, hidden)


# --- show -------------------------------------------------------------------------------


@dataclass
class ShownCommit:
    """One commit of a shown run: its `kind`, `oid`, the `view` (None when the commit is
    missing from the repository), whether it is in HEAD's history, and whether the patch
    was asked for."""

    kind: str
    oid: str
    view: CommitView | None
    in_head: bool = False
    with_patch: bool = False

    def to_json(self) -> dict[str, Any]:
        view = self.view
        if view is None:
            return {"kind": self.kind, "oid": self.oid, "missing": True}
        document: dict[str, Any] = {
            "kind": self.kind,
            "oid": view.oid,
            "subject": view.subject,
            "time": view.time,
            "in_head": self.in_head,
            "files": [f.to_json() for f in view.files],
            "insertions": view.insertions,
            "deletions": view.deletions,
            "stat": view.stat,
        }
        if self.with_patch:
            document["patch"] = view.patch or ""
        return document


@dataclass
class ShowResult:
    """One run in full: the run (as `log` lists it), its receipt, and its commits."""

    run: Run
    commits: list[ShownCommit] = field(default_factory=list)

    def written(self, kind: str) -> bool:
        """Whether the run committed its `kind` units ("experience" or "definition"): a
        failed, refused or dry run lists the units it distilled, but wrote only those of
        a kind whose commit it made."""
        receipt = self.run.receipt
        return bool(self.run.commits.get(kind)) and not (receipt is not None and receipt.dry_run)

    def units(self) -> list[dict[str, Any]]:
        """The receipt's units, experience then definition, each with `written` (bool)."""
        receipt = self.run.receipt
        if receipt is None:
            return []
        return [{**unit, "written": self.written("experience")} for unit in receipt.units] + [
            {**unit, "written": self.written("definition")} for unit in receipt.definition_units
        ]

    def not_written(self) -> list[str]:
        """The kinds ("experience", "definition") whose units the run lists but did not
        commit, in KINDS order; empty when every listed unit was written."""
        receipt = self.run.receipt
        if receipt is None:
            return []
        listed = {"experience": receipt.units, "definition": receipt.definition_units}
        return [kind for kind in KINDS if listed[kind] and not self.written(kind)]

    def to_json(self) -> dict[str, Any]:
        """See docs/json.md, "gitdream show"."""
        receipt = self.run.receipt
        return {
            "run": self.run.to_json(),
            "receipt": receipt.to_json() if receipt else None,
            "commits": [c.to_json() for c in self.commits],
            "units": self.units(),
            "not_written": self.not_written(),
            "rejected": list(receipt.rejected) if receipt else [],
            "tokens": receipt.tokens if receipt else None,
            "duration_seconds": receipt.duration_seconds if receipt else None,
            "warnings": list(receipt.warnings) if receipt else [],
            "pending": list(receipt.pending) if receipt else [],
            "error": receipt.error if receipt else None,
        }


def show(
    repo: Repo, ref: str, *, agent_id: str | None = None, patch: bool = False, width: int = 80
) -> ShowResult:
    """The run `ref` names (see `runs.resolve`; `last` is the newest run that made a
    commit, as for `gitdream revert`), with its commits' diffstats (`width` columns) and,
    with `patch`, their patches. A commit recorded in the receipt but
    missing from the repository is listed with `"missing": true`.

    Raises UnknownRun or AmbiguousRun.
    """

    runs, _truncated = collect(repo)
    run = resolve(runs, ref, agent_id, changed=True)
    result = ShowResult(run)
    head = repo.head().oid
    for kind in KINDS:
        oid = run.commits.get(kind)
        if not oid:
            continue
        view = history.commit_view(repo, oid, patch=patch, width=width)
        in_head = view is not None and history.in_history(repo, head, oid)
        result.commits.append(ShownCommit(kind, oid, view, in_head, patch))
    return result


# --- audit ------------------------------------------------------------------------------


@dataclass
class AuditSource:
    """One source reference of a fact and what it resolved to.

    `status`: "resolved" (`text` holds the cited lines), "missing" (`reason` says why),
    or "reference" (a `fact:<id>` source; `fact` is the fact it names when it is still in
    memory, as `{"path", "text"}`). For a transcript (`.jsonl`) source, `message` is what
    the cited records say — role and text, as the readers extracted it — since the raw JSON
    lines are unreadable.
    """

    ref: str
    status: str
    path: str | None = None
    start: int | None = None
    end: int | None = None
    commit: str | None = None
    text: list[str] | None = None
    reason: str | None = None
    fact: dict[str, str] | None = None
    message: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "ref": self.ref,
            "status": self.status,
            "path": self.path,
            "start": self.start,
            "end": self.end,
            "commit": self.commit,
            "text": self.text,
            "reason": self.reason,
            "fact": self.fact,
        }


@dataclass
class AuditFact:
    """One fact: the agent, the file and block it is in, `kind` ("definition" in a
    definition file, else "experience"), its text and `seen` count, and its sources
    (empty for a hand-written line in the block that is not in fact form)."""

    agent: str
    path: str
    block: str
    kind: str
    text: str
    seen: int | None
    sources: list[AuditSource] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "path": self.path,
            "block": self.block,
            "kind": self.kind,
            "text": self.text,
            "seen": self.seen,
            "sources": [s.to_json() for s in self.sources],
        }


@dataclass
class AuditResult:
    """Every fact audited, the agents and the commit audited, the run filter, warnings."""

    agents: list[str]
    commit: str
    run: str | None = None
    facts: list[AuditFact] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def summary(self) -> dict[str, int]:
        """Counts: facts (experience, definition), sources (resolved, missing, references
        to facts), facts without sources."""
        sources = [s for f in self.facts for s in f.sources]
        return {
            "facts": len(self.facts),
            "experience": sum(1 for f in self.facts if f.kind == "experience"),
            "definition": sum(1 for f in self.facts if f.kind == "definition"),
            "unsourced": sum(1 for f in self.facts if not f.sources),
            "sources": len(sources),
            "resolved": sum(1 for s in sources if s.status == "resolved"),
            "missing": sum(1 for s in sources if s.status == "missing"),
            "references": sum(1 for s in sources if s.status == "reference"),
        }

    @property
    def summary_line(self) -> str:
        c = self.summary
        if len(self.agents) > 3:
            who = f"{len(self.agents)} agents"
        else:
            who = ", ".join(self.agents) if self.agents else "no agents"
        scope = f", run {self.run}" if self.run else ""
        refs = f", {c['references']} references to facts" if c["references"] else ""
        return (
            f"audit of {who}{scope} at {self.commit[:7]}: {c['facts']} fact{'s' if c['facts'] != 1 else ''}, "
            f"{c['sources']} source{'s' if c['sources'] != 1 else ''}: {c['resolved']} resolved, "
            f"{c['missing']} missing{refs}"
        )

    def to_json(self) -> dict[str, Any]:
        """`{"agents", "commit", "run", "facts": [fact…], "summary": {…}, "warnings"}`."""
        return {
            "agents": list(self.agents),
            "commit": self.commit,
            "run": self.run,
            "facts": [f.to_json() for f in self.facts],
            "summary": self.summary,
            "warnings": list(self.warnings),
        }


class _Resolver:
    """Resolves source references, reading and decoding each (commit, path) once."""

    def __init__(self, repo: Repo, fact_ids: dict[str, dict[str, str]]) -> None:
        self.repo = repo
        self.fact_ids = fact_ids
        self._files: dict[tuple[str, str], tuple[str | None, list[str] | None, str | None]] = {}

    def _lines(self, prefix: str, path: str) -> tuple[str | None, list[str] | None, str | None]:

        key = (prefix, path)
        if key not in self._files:
            found = history.file_at(self.repo, prefix, path)
            if found.data is None:
                self._files[key] = (found.commit, None, found.problem)
            else:
                decoded = decode_lines(path, found.data)
                if decoded.skipped:
                    self._files[key] = (found.commit, None, f"{path} at {prefix}: {decoded.skipped}")
                else:
                    self._files[key] = (found.commit, decoded.lines, None)
        return self._files[key]

    def resolve(self, ref: str) -> AuditSource:

        if FACT_ID_RE.match(ref):
            return AuditSource(ref, "reference", fact=self.fact_ids.get(ref))
        parsed = parse_source_ref(ref)
        if parsed is None:
            return AuditSource(
                ref, "missing", reason="not a source reference (`<path>#Lstart-Lend@<commit>`)"
            )
        entry, prefix = parsed
        location = parse_entry_id(entry)
        assert location is not None  # SOURCE_REF_RE only matches entry ids
        path, start, end = location
        source = AuditSource(ref, "missing", path=path, start=start, end=end)
        commit, lines, problem = self._lines(prefix, path)
        source.commit = commit
        if lines is None:
            source.reason = problem
            return source
        if start < 1 or end < start:
            source.reason = f"line range L{start}-L{end} is empty"
            return source
        if end > len(lines):
            source.reason = (
                f"lines {start}-{end} are past the end of {path} ({len(lines)} lines) at {str(commit)[:12]}"
            )
            return source
        source.status = "resolved"
        source.text = lines[start - 1 : end]
        if path.endswith(".jsonl"):
            source.message = _transcript_message(path, source.text)
        return source


def _transcript_message(path: str, lines: list[str]) -> str | None:
    """`role: text` of the messages in transcript `lines` (None when none parse)."""

    parsed = parse_messages(path, lines)
    said = [f"{m.role}: {m.text}" for m in parsed.messages if m.text.strip()]
    return "\n\n".join(said) if said else None


def _fact_blocks(path: str, text: str) -> list[tuple[str, str]]:
    """(block name, inner text) of the fact-holding blocks of `text`."""

    found = []
    for block in blocks.parse(text, path):
        if block.name in FACT_BLOCKS or block.name.startswith("archived-"):
            found.append((block.name, text[block.inner_start : block.inner_end]))
    return found


def _matches_run(fact: AuditFact, run: Run, units: set[tuple[str, str]]) -> bool:

    if (fact.path, one_line(fact.text)) in units:
        return True
    if not run.input_commit:
        return False
    for source in fact.sources:
        parsed = parse_source_ref(source.ref)
        if parsed is not None and run.input_commit.startswith(parsed[1]):
            return True
    return False


def audit(repo: Repo, cfg: Config, agent_id: str | None = None, *, run_ref: str | None = None) -> AuditResult:
    """Audit the facts in the memory and definitions of `agent_id` (default: the run's
    agent with `run_ref`, else every agent), as committed at HEAD.

    `run_ref` keeps only the facts of that run: those citing its input commit, or listed
    in its receipt's `units`. Raises ConfigError (unknown agent), RepoStateError (no
    commits), UnknownRun/AmbiguousRun. Malformed blocks are warnings, not errors.
    """

    head = repo.head().oid
    if head is None:
        raise repo.state_problem() or RepoStateError("the repository has no commits yet")
    run: Run | None = None
    if run_ref is not None:
        runs, _truncated = collect(repo)
        run = resolve(runs, run_ref, agent_id, changed=True)
        if agent_id is None:
            agent_id = run.agent
    skipped: list[str] = []
    agents: list[Agent] = select(list_agents(repo.workdir, cfg, skipped), [agent_id] if agent_id else [])
    result = AuditResult([a.id for a in agents], head, run.run if run else None)
    result.warnings.extend(skipped)
    units: set[tuple[str, str]] = set()
    if run is not None and run.receipt is not None:
        for unit in run.receipt.all_units:
            if (
                isinstance(unit, dict)
                and isinstance(unit.get("path"), str)
                and isinstance(unit.get("text"), str)
            ):
                units.add((unit["path"], one_line(unit["text"])))
    for agent in agents:
        parsed: list[tuple[str, str, Any]] = []
        for path, text in sorted(memory_view(repo, agent, head).items()):
            try:
                found = _fact_blocks(path, text)
            except BlockError as exc:
                result.warnings.append(f"{exc.message} (its facts are not audited)")
                continue
            for name, inner in found:
                for fact in parse_facts(inner):
                    parsed.append((path, name, fact))
        fact_ids = {fact_id(p, f.text): {"path": p, "text": f.text} for p, _n, f in parsed if f.raw is None}
        resolver = _Resolver(repo, fact_ids)
        for path, name, fact in parsed:
            kind = "definition" if agent.is_definition_path(path) else "experience"
            text = superseded_text(fact.text) if name == "superseded" else fact.text
            item = AuditFact(agent.id, path, name, kind, text, fact.seen if fact.raw is None else None)
            item.sources = [resolver.resolve(ref) for ref in fact.sources]
            if run is not None and not _matches_run(item, run, units):
                continue
            result.facts.append(item)
    return result


def strict_failure(result: AuditResult) -> GitdreamError | None:
    """The error `audit --strict` exits with when a source is missing, else None."""
    missing = result.summary["missing"]
    if not missing:
        return None
    return GitdreamError(
        f"{missing} source{'s' if missing != 1 else ''} cited by gitdream's facts "
        f"{'do' if missing != 1 else 'does'} not resolve",
        hint="the cited commits are gone (history rewritten?) or the references were edited; "
        "fetch the history, or correct or remove those facts",
    )
