"""One dream of one agent, phase by phase (DESIGN §5).

    orient → gather → distill → verify → screen → experience (integrate + commit)
           → definitions (integrate + check + commit) → finish (watermark + receipt)

Each phase is isolated: a failure is recorded in the receipt with its reason, and the
run goes on only where that is safe (a refused experience commit stops the run; a refused
definition commit does not undo the experience commit). Material that was not consumed
(an engine batch that failed, units over `max_units`, definition units whose file was
refused) is named in the receipt as `pending` and read again by the next run.

The watermark moves to the input commit, and the receipt note is written, after the
commits — also for a no-op run. A failed or aborted run leaves the watermark where it was.
SIGINT/SIGTERM (see `gitdream.trigger.interrupt`) stop the run before its next write.
"""

from __future__ import annotations

import difflib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

from gitdream import clock, faults
from gitdream.contract import DistillContext, MemoryView
from gitdream.dream import receipts
from gitdream.dream.options import Reporter, RunOptions  # also imported from here
from gitdream.errors import GitdreamError, Interrupted
from gitdream.units import DEFINITION_TARGETS

if TYPE_CHECKING:
    from gitdream.agents import Agent
    from gitdream.config import Config
    from gitdream.contract import Engine
    from gitdream.git.commitbuilder import Identity
    from gitdream.git.repo import Repo
    from gitdream.units import Entry

MAX_RECEIPT_UNITS = 500
MAX_MESSAGE_UNITS = 40


@dataclass
class Outcome:
    """The result of one agent's run: its receipt (a JSON-able dict), the unified diff
    for --dry-run, the estimate for --estimate, and the one-line summary."""

    agent: str
    receipt: dict[str, Any]
    summary: str
    diff: str = ""
    estimate: dict[str, Any] | None = None

    @property
    def status(self) -> str:
        return str(self.receipt["status"])

    @property
    def problem(self) -> bool:
        """True when the run failed, was aborted, or a phase was refused."""
        if self.status in ("failed", "aborted", "partial"):
            return True
        return any(p.get("status") == "refused" for p in self.receipt.get("phases", {}).values())


@dataclass
class _State:
    run_id: str
    agent: Agent
    cfg: Config
    opts: RunOptions
    started: datetime
    receipt: dict[str, Any]
    engine: Engine
    warnings: list[str] = field(default_factory=list)
    pending: list[dict[str, Any]] = field(default_factory=list)


# --- reading the input commit -----------------------------------------------------------


def _files_at(repo: Repo, commit: str, folder: str, keep: Callable[[str], bool]) -> dict[str, str]:
    """Text of the files under `folder` at `commit` for which `keep(path)` holds (UTF-8,
    invalid bytes replaced)."""
    import pygit2

    out: dict[str, str] = {}
    tree = repo.raw[commit].peel(pygit2.Tree)
    try:
        top = tree[folder] if folder else tree
    except KeyError:
        return out
    if not isinstance(top, pygit2.Tree):
        return out
    stack: list[tuple[str, pygit2.Tree]] = [(folder, top)]
    while stack:
        prefix, node = stack.pop()
        for item in node:
            path = f"{prefix}/{item.name}" if prefix else item.name
            if isinstance(item, pygit2.Tree):
                stack.append((path, item))
            elif isinstance(item, pygit2.Blob) and item.filemode in (0o100644, 0o100755) and keep(path):
                out[path] = item.data.decode("utf-8", "replace")
    return out


def memory_view(repo: Repo, agent: Agent, commit: str) -> dict[str, str]:
    """The agent's memory (index, topics, archive; no raw sources) and definition files
    at `commit`, as `{path: text}`."""
    files = _files_at(repo, commit, agent.memory_dir, lambda p: p.endswith(".md") and not agent.is_source(p))
    for path in agent.definition_files:
        files.update(
            _files_at(repo, commit, path.rsplit("/", 1)[0] if "/" in path else "", lambda p, t=path: p == t)
        )
    return files


def _commit_date(repo: Repo, commit: str) -> date:
    import pygit2

    obj = repo.raw[commit].peel(pygit2.Commit)
    return datetime.fromtimestamp(obj.commit_time, UTC).date()


# --- phases -------------------------------------------------------------------------------


def _phase(state: _State, name: str, **details: Any) -> None:
    entry = state.receipt["phases"].setdefault(name, {"status": "ok"})
    entry.update(details)


def _check_time(state: _State) -> None:
    limit = state.cfg.float("max_run_minutes") * 60
    if (clock.now() - state.started).total_seconds() > limit:
        raise GitdreamError(
            f"the run has taken longer than max_run_minutes ({state.cfg.float('max_run_minutes'):g})",
            hint="raise max_run_minutes, or dream more often so each run has less material",
        )


def _gather(repo: Repo, state: _State, input_commit: str) -> tuple[list[Entry], Any]:
    from gitdream.dream import material as material_mod
    from gitdream.dream import noise, readers

    agent = state.agent
    watermark = material_mod.read_watermark(repo, agent)
    state.receipt["watermark_before"] = watermark
    base, warnings = material_mod.resolve_base(
        repo, agent, input_commit, since=state.opts.since, full=state.opts.full
    )
    state.warnings += warnings
    state.receipt["base"] = base
    pending_in: list[dict[str, Any]] = []
    if not state.opts.full and state.opts.since is None:
        last = receipts.latest(repo, agent.id, watermark)
        if last:
            pending_in = [p for p in last.get("pending", []) if isinstance(p, dict) and "path" in p]
    material = material_mod.changed_sources(
        repo, agent, base, input_commit, [(p["path"], p.get("since")) for p in pending_in]
    )
    state.warnings += material.warnings
    only_ids: dict[str, set[str]] = {}
    for item in pending_in:
        if item.get("entries") and item["path"] not in only_ids:
            only_ids[item["path"]] = set(item["entries"])
    fallback = _commit_date(repo, input_commit)
    entries: list[Entry] = []
    dropped: dict[str, int] = {}
    skipped_files: list[dict[str, str]] = []
    max_file_bytes = state.cfg.int("max_file_bytes")
    for source in material.files:
        # The size first, from the object header: a 50 MB log is not loaded to be skipped.
        size = repo.raw.odb.read_header(source.blob)[1]
        result = readers.skip_too_large(source.path, size, max_file_bytes) or readers.read_source(
            source.path,
            bytes(repo.raw[source.blob].data),
            kind=source.kind,
            fallback_date=fallback,
            added_lines=set(source.added_lines) if source.added_lines is not None else None,
            max_file_bytes=max_file_bytes,
        )
        state.warnings += result.warnings
        for key, count in result.dropped.items():
            dropped[key] = dropped.get(key, 0) + count
        if result.skipped:
            skipped_files.append({"path": source.path, "reason": result.skipped})
        if result.skipped and readers.TOO_LARGE in result.skipped:
            # Not consumed: read again by the next run, so raising max_file_bytes loses nothing.
            state.pending.append(
                {
                    "path": source.path,
                    "since": material.since_of(source.path),
                    "entries": [],
                    "reason": readers.TOO_LARGE,
                }
            )
        found = result.entries
        # A path pending with explicit entries: those entries, and the lines added since
        # the base (new material in the same file, e.g. a daily log that grew).
        if source.path in only_ids and base is not None:
            wanted = only_ids[source.path]
            if wanted:
                found = [e for e in found if e.id in wanted or material.is_fresh(source.path, e.start, e.end)]
        entries.extend(found)
    kept, noise_counts = noise.filter_noise(entries)
    _phase(
        state,
        "gather",
        files=len(material.files),
        entries=len(entries),
        kept=len(kept),
        noise=noise_counts,
        dropped=dropped,
        skipped_files=skipped_files,
    )
    state.receipt["sessions"] = material.sessions
    return kept, material


def _pend(state: _State, entry_ids: list[str], material: Any, reason: str) -> None:
    """Name entries (by id) whose material must be read again by the next run."""
    from gitdream.units import parse_entry_id

    by_path: dict[str, list[str]] = {}
    for entry_id in entry_ids:
        parsed = parse_entry_id(entry_id)
        if parsed is not None:
            by_path.setdefault(parsed[0], []).append(entry_id)
    for path, ids in sorted(by_path.items()):
        state.pending.append(
            {
                "path": path,
                "since": material.since_of(path),
                "entries": sorted(set(ids), key=lambda i: (parse_entry_id(i) or (path, 0, 0))[1:]),
                "reason": reason,
            }
        )


def _commit_message(
    agent: Agent, kind: str, subject_tail: str, facts: list[dict[str, Any]], trailers: list[tuple[str, str]]
) -> str:
    from gitdream.git.commitbuilder import format_message

    lines = []
    for item in facts[:MAX_MESSAGE_UNITS]:
        text = str(item.get("text", ""))
        if len(text) > 160:
            text = text[:159] + "…"
        sources = ", ".join(item.get("sources", [])[:3])
        more = len(item.get("sources", [])) - 3
        lines.append(f"- {text}\n  sources: {sources}{f' (+{more} more)' if more > 0 else ''}")
    if len(facts) > MAX_MESSAGE_UNITS:
        lines.append(f"- … and {len(facts) - MAX_MESSAGE_UNITS} more (see `gitdream show`)")
    return format_message(f"dream({agent.id}): {kind} — {subject_tail}", "\n".join(lines), trailers)


def _diff_text(old: dict[str, str], changes: dict[str, str | None]) -> str:
    out: list[str] = []
    for path in sorted(changes):
        before = old.get(path)
        after = changes[path]
        out.extend(
            difflib.unified_diff(
                (before or "").splitlines(keepends=True),
                (after or "").splitlines(keepends=True),
                fromfile=f"a/{path}" if before is not None else "/dev/null",
                tofile=f"b/{path}" if after is not None else "/dev/null",
            )
        )
    text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in out)
    return text


def run_agent(
    repo: Repo,
    agent: Agent,
    cfg: Config,
    opts: RunOptions,
    run_id: str,
    ident: Identity,
    engine: Engine,
    *,
    reporter: Reporter | None = None,
    checkpoint: Callable[[], None] = lambda: None,
    target_state: dict[str, Any] | None = None,
) -> Outcome:
    """Dream once for `agent` with `engine` (built for this run by the caller, who
    closes it) and return its Outcome (receipt, summary, diff).

    Never raises for a failure of the run itself: the receipt says `failed` (or
    `aborted` for Interrupted) with the error. Raises only for what must stop all agents
    (FaultInjected in tests). `checkpoint()` is called before every write and raises
    Interrupted when a stop was requested. `target_state` is shared between agents of one
    invocation (the review branch is created once).
    """
    from gitdream.git import commitbuilder

    reporter = reporter or Reporter()
    target_state = target_state if target_state is not None else {}
    started = clock.now()
    t0 = time.monotonic()
    engine_name = engine.name
    receipt: dict[str, Any] = {
        "type": "receipt",
        "version": receipts.SCHEMA_VERSION,
        "run": run_id,
        "agent": agent.id,
        "agent_dir": agent.dir or ".",
        "trigger": opts.trigger,
        "engine": engine_name,
        "status": "failed",
        "started": clock.iso(started),
        "phases": {},
        "commits": {"experience": None, "definition": None},
        "counts": {},
        "units": [],
        "rejected": [],
        "skipped": {},
        "pending": [],
        "calls": [],
        "tokens": {"input": 0, "output": 0, "cache_creation": 0, "cache_read": 0},
        "warnings": [],
        "error": None,
        "dry_run": opts.dry_run,
        "branch": None,
    }
    state = _State(run_id, agent, cfg, opts, started, receipt, engine)
    outcome = Outcome(agent.id, receipt, "")
    current = "orient"
    try:
        head = repo.head()
        # A review branch, a dry run and an estimate write nothing on HEAD's branch: a
        # detached HEAD does not stop them.
        reads_only = opts.branch is not None or opts.dry_run or opts.estimate
        if not reads_only or head.unborn or repo.in_progress():
            head = repo.require_writable()
        input_commit = head.oid
        assert input_commit is not None
        receipt["input_commit"] = input_commit
        receipt["branch"] = f"refs/heads/{opts.branch}" if opts.branch else head.branch

        reporter.phase(agent.id, "orient")
        memory = memory_view(repo, agent, input_commit)
        _phase(state, "orient", files=len(memory))

        current = "gather"
        reporter.phase(agent.id, "gather")
        entries, material = _gather(repo, state, input_commit)
        _check_time(state)

        if not material.files:
            receipt["status"] = "noop"
            receipt["counts"] = {"entries": 0, "units": 0, "created": 0, "corroborated": 0, "rejected": 0}
            outcome.summary = (
                f"Nothing new for agent {agent.id} since {str(material.base or '')[:7] or 'the beginning'}"
            )
            if not opts.dry_run and not opts.estimate:
                current = "finish"
                _finish(repo, state, input_commit, ident, checkpoint, target_state)
            return _close(outcome, state, t0)

        current = "distill"
        context = DistillContext(agent, entries, MemoryView(memory), cfg, input_commit, clock.now().date())
        if opts.estimate:
            outcome.estimate = engine.estimate(context)
            receipt["status"] = "noop"
            outcome.summary = f"Estimate for agent {agent.id}: {outcome.estimate}"
            return _close(outcome, state, t0)
        reporter.phase(agent.id, "distill", f"{len(entries)} entries")
        distilled = engine.distill(context)
        receipt["calls"].extend(distilled.calls)
        for reason in distilled.skipped:
            receipt["skipped"][reason[1]] = receipt["skipped"].get(reason[1], 0) + 1
        _phase(state, "distill", units=len(distilled.units), stats=distilled.stats, errors=distilled.errors)
        if distilled.errors:
            state.receipt["phases"]["distill"]["status"] = "partial"
            state.warnings += [
                f"distill: {e} (its material will be read again next run)" for e in distilled.errors
            ]
        if distilled.failed_entries:
            _pend(state, distilled.failed_entries, material, "not processed by the engine")
        by_reason: dict[str, list[str]] = {}
        for entry_id, why in distilled.deferred:
            by_reason.setdefault(why, []).append(entry_id)
        for why, ids in by_reason.items():
            _pend(state, ids, material, why)
        failures = [f"distill: {e}" for e in distilled.errors]
        _check_time(state)

        current = "verify"
        from gitdream.dream import screen, verify

        facts = verify.existing_facts(context.memory, agent)
        notes: list[dict[str, Any]] = []
        kept, rejected = verify.verify(
            distilled.units, [e.id for e in entries], [f.id for f in facts], notes=notes
        )
        for note in notes:  # the titles of units not screened yet
            note["title"] = screen.elide_tokens(str(note.get("title", "")))
        _phase(state, "verify", kept=len(kept), rejected=len(rejected), dropped_sources=notes[:50])

        current = "screen"
        reporter.phase(agent.id, "screen", f"{len(kept)} units")
        screened = screen.screen_units(kept, cfg, sources={e.id: e.text for e in entries})
        kept, rejected = screened.kept, rejected + screened.rejected
        unjudged = 0
        if kept:
            second = engine.screen(kept)
            receipt["calls"].extend(second.calls)
            kept, rejected = second.kept, rejected + second.rejected
            unjudged = len(second.unjudged)
            if second.unjudged:
                # Not judged is not rejected: the units are not written and their material
                # is read again, so the next run (the screener back) judges it.
                _pend(state, [s for u in second.unjudged for s in u.sources], material, "not screened")
            if second.errors:
                failures += [f"screen: {e}" for e in second.errors]
                state.warnings += [f"screen: {e}" for e in second.errors]
        _phase(state, "screen", kept=len(kept), rejected=len(screened.rejected), unjudged=unjudged)
        if unjudged:
            _phase(state, "screen", status="partial", errors=list(second.errors))
        if len(kept) > cfg.int("max_units"):
            over = kept[cfg.int("max_units") :]
            kept = kept[: cfg.int("max_units")]
            _pend(state, [s for u in over for s in u.sources], material, "over max_units")
        receipt["rejected"] = _rejected_json(rejected, cfg)
        _check_time(state)

        experience_units = [u for u in kept if u.target == "experience"]
        definition_units = [u for u in kept if u.target in DEFINITION_TARGETS]
        counts = {
            "entries": len(entries),
            "units": len(kept),
            "created": 0,
            "corroborated": 0,
            "definition": len(definition_units),
            "rejected": len(rejected),
        }
        receipt["counts"] = counts

        current = "experience"
        from gitdream.dream import integrate

        reporter.phase(agent.id, "experience", f"{len(experience_units)} units")
        today = clock.now().date()
        dated = [e.date for e in entries if e.date is not None]
        stale_before = min(today, max(dated)) if dated else today
        exp = integrate.integrate_experience(
            agent,
            memory,
            experience_units,
            input_commit=input_commit,
            today=today,
            cfg=cfg,
            stale_before=stale_before,
        )
        counts["created"] = exp.created
        counts["corroborated"] = exp.corroborated
        counts["refined"] = exp.refined
        counts["demoted"] = len(exp.demoted)
        state.warnings += list(exp.warnings)
        if exp.waiting:
            _pend(state, exp.waiting, material, "topic file left alone")
        rejected += exp.rejected
        counts["rejected"] = len(rejected)
        receipt["rejected"] = _rejected_json(rejected, cfg)
        written = [f.to_json() for f in exp.facts_written]
        receipt["units"] = written[:MAX_RECEIPT_UNITS]
        if len(written) > MAX_RECEIPT_UNITS:
            receipt["units_truncated"] = len(written) - MAX_RECEIPT_UNITS
        exp_changes = {p: t for p, t in exp.changes.items()}
        trailers_base = [
            ("Gitdream-Run", run_id),
            ("Gitdream-Agent", agent.id),
            ("Gitdream-Input", input_commit),
            ("Gitdream-Engine", engine_name),
        ]
        diff_parts = []
        if exp_changes:
            if opts.dry_run:
                diff_parts.append(_diff_text(memory, exp_changes))
            else:
                faults.point("before-experience-commit")
                checkpoint()
                message = _commit_message(
                    agent,
                    "experience",
                    _memories(counts["created"] + counts["corroborated"] + counts["refined"])
                    + (f", {counts['demoted']} archived" if counts.get("demoted") else ""),
                    written,
                    [trailers_base[0], ("Gitdream-Kind", "experience"), *trailers_base[1:]],
                )
                change_list = [
                    commitbuilder.Change(p, t.encode("utf-8") if t is not None else None)
                    for p, t in sorted(exp_changes.items())
                ]
                dest = _destination(repo, opts, input_commit, target_state)
                done = commitbuilder.commit(repo, agent, "experience", change_list, message, ident, dest)
                receipt["commits"]["experience"] = done.oid
                state.warnings += list(done.warnings)
                _advance(dest, done, target_state, input_commit)
                faults.point("after-experience-commit")
        _phase(state, "experience", changes=len(exp_changes))
        _check_time(state)

        current = "definitions"
        from gitdream.text.checks import Limits, check_text, kind_by_name

        limits = Limits.from_config(cfg)
        reporter.phase(agent.id, "definitions", f"{len(definition_units)} units")
        defs = integrate.integrate_definitions(
            agent,
            memory,
            definition_units,
            input_commit=input_commit,
            check=lambda path, text: check_text(path, text, limits, kind_by_name(path)).lines(),
        )
        state.warnings += list(defs.warnings)
        for path in sorted(defs.changes):
            # What `gitdream check` warns about in a file the dream writes into (an
            # unreadable front matter, say) is worth a word, with its line.
            state.warnings += check_text(path, memory[path], limits, kind_by_name(path)).warning_lines()
        if defs.rejected:
            rejected += defs.rejected
            counts["rejected"] = len(rejected)
            receipt["rejected"] = _rejected_json(rejected, cfg)
        # `definition` counts the facts written into definition files (set to 0 below when
        # the definition commit is not made); `created`/`corroborated` are experience only.
        counts["definition"] = defs.created + defs.corroborated + defs.refined
        def_written = [f.to_json() for f in defs.facts_written]
        def_changes = dict(defs.changes)
        if defs.refused:
            _phase(state, "definitions", status="refused", refused=[r.to_json() for r in defs.refused])
            refused_targets = {r.target for r in defs.refused}
            refused_ids = [s for u in definition_units if u.target in refused_targets for s in u.sources]
            _pend(state, refused_ids, material, "definition refused")
        if def_changes:
            if opts.dry_run:
                diff_parts.append(_diff_text(memory, dict(def_changes)))
            else:
                faults.point("before-definition-commit")
                checkpoint()
                names = ", ".join(p.rsplit("/", 1)[-1] for p in sorted(def_changes))
                message = _commit_message(
                    agent,
                    "definitions",
                    names,
                    def_written,
                    [trailers_base[0], ("Gitdream-Kind", "definition"), *trailers_base[1:]],
                )
                change_list = [
                    commitbuilder.Change(p, t.encode("utf-8")) for p, t in sorted(def_changes.items())
                ]
                try:
                    dest = _destination(repo, opts, input_commit, target_state)
                    done = commitbuilder.commit(repo, agent, "definition", change_list, message, ident, dest)
                except (Interrupted, faults.FaultInjected):
                    raise
                except GitdreamError as exc:
                    counts["definition"] = 0
                    _phase(state, "definitions", status="refused", error=exc.to_json())
                    state.warnings.append(f"definitions not written: {exc.message}")
                    _pend(
                        state,
                        [s for u in definition_units for s in u.sources],
                        material,
                        "definition refused",
                    )
                else:
                    receipt["commits"]["definition"] = done.oid
                    # The facts written into `learned` blocks, for `gitdream show`/`audit`.
                    receipt["definition_units"] = def_written[:MAX_RECEIPT_UNITS]
                    state.warnings += list(done.warnings)
                    _advance(dest, done, target_state, input_commit)
                    faults.point("after-definition-commit")
        _phase(state, "definitions", changes=len(def_changes))
        # A failed model call leaves its material pending: the run made progress, but is
        # not ok, and the back-off counts it.
        receipt["status"] = "partial" if failures else "ok"
        outcome.diff = "".join(diff_parts)
        receipt["pending"] = state.pending  # the summary counts what is left for the next run
        outcome.summary = _summary(agent, receipt)
        if not opts.dry_run:
            current = "finish"
            _finish(repo, state, input_commit, ident, checkpoint, target_state)
    except Interrupted as exc:
        receipt["status"] = "aborted"
        receipt["error"] = exc.to_json()
        _phase(state, current, status="aborted")
        outcome.summary = f"Dream for agent {agent.id} aborted before its next write"
        _publish_quietly(repo, state, target_state)
        _write_receipt_quietly(repo, state, ident)
    except GitdreamError as exc:
        receipt["status"] = "failed"
        receipt["error"] = exc.to_json()
        _phase(state, current, status="failed", error=exc.message)
        outcome.summary = f"Dream for agent {agent.id} failed in {current}: {exc.message}"
        if not opts.dry_run and not opts.estimate:
            _publish_quietly(repo, state, target_state)
            _write_receipt_quietly(repo, state, ident)
    return _close(outcome, state, t0)


def _destination(repo: Repo, opts: RunOptions, input_commit: str, shared: dict[str, Any] | None) -> Any:
    """Where the next commit goes. On the current branch the contents were computed at
    the input commit, so the commit builder is told so (`Destination.head(base)`): if someone
    committed to one of the dream's paths meanwhile, the commit is refused rather than
    undoing their work. After the experience commit, the definition commit builds on it."""
    from gitdream.git.commitbuilder import Destination

    shared = shared if shared is not None else {}
    if opts.branch is None:
        return Destination.head(shared.get("head_base", {}).get(input_commit, input_commit))
    # Review commits chain from the input commit (or the previous agent's part of the
    # branch); the branch is published once per agent, with the watermark (`_finish`).
    return Destination.review(opts.branch, shared.get("tip") or input_commit, "published" not in shared)


def _advance(dest: Any, done: Any, shared: dict[str, Any] | None, input_commit: str) -> None:
    """Remember the commit just made, so the next one of this run builds on it. On the
    current branch only when it was not rebuilt on commits made meanwhile: the next
    commit's contents were computed at the input commit, and the commit builder must
    compare its paths from there, or it would overwrite what those commits changed."""
    if shared is None:
        return
    if dest.review_branch is not None:
        shared["tip"] = done.oid
    elif not done.rebuilt:
        shared.setdefault("head_base", {})[input_commit] = done.oid


def _unpublished(opts: RunOptions, shared: dict[str, Any] | None) -> tuple[str | None, str] | None:
    """`(expected, tip)` when review commits of this invocation are not on the branch yet."""
    if opts.branch is None or not shared or "tip" not in shared:
        return None
    if shared["tip"] == shared.get("published"):
        return None
    return shared.get("published"), shared["tip"]


def _publish_quietly(repo: Repo, state: _State, shared: dict[str, Any] | None) -> None:
    """After a failure or an interruption: publish the review commits already made (without
    the watermark), as the current branch keeps the commits a failed run made."""
    from gitdream.git import commitbuilder

    pending = _unpublished(state.opts, shared)
    if pending is None or shared is None:
        return
    try:
        commitbuilder.publish(
            repo, str(state.opts.branch), pending[0], pending[1], f"gitdream: dream {state.run_id}"
        )
    except GitdreamError as exc:
        state.warnings.append(f"the review branch was not published: {exc.message}")
        state.receipt["commits"] = {"experience": None, "definition": None}
    else:
        shared["published"] = pending[1]


def _memories(count: int) -> str:
    """ "improved 1 memory" / "improved 3 memories"."""
    return f"improved {count} {'memory' if count == 1 else 'memories'}"


def _summary(agent: Agent, receipt: dict[str, Any]) -> str:
    """The one line a run prints: what improved (experience facts created, corroborated or
    refined, facts written into definitions), what was archived, rejected or left pending,
    and the commits."""
    counts = receipt["counts"]
    improved = (
        counts.get("created", 0)
        + counts.get("corroborated", 0)
        + counts.get("refined", 0)
        + counts.get("definition", 0)
    )
    parts = []
    commits = receipt["commits"]
    if commits.get("experience"):
        parts.append(f"experience {commits['experience'][:7]}")
    if commits.get("definition"):
        parts.append(f"definition {commits['definition'][:7]}")
    detail = f"{counts.get('created', 0)} new, {counts.get('corroborated', 0)} corroborated"
    if counts.get("definition"):
        detail += f", {counts['definition']} to definitions"
    if counts.get("demoted"):
        detail += f", {counts['demoted']} topics archived"
    if counts.get("rejected"):
        detail += f", {counts['rejected']} rejected"
    pending = sum(len(p.get("entries") or []) or 1 for p in receipt.get("pending") or [])
    if pending:
        detail += f", {pending:,} {'entry' if pending == 1 else 'entries'} left for the next run"
    tail = " — " + ", ".join(parts) if parts else " — no commit"
    noun = "memory" if improved == 1 else "memories"
    partial = ""
    if receipt.get("status") == "partial":
        partial = "; partial: some model calls failed, their material is read again next run"
    return f"Improved {improved} {noun} for agent {agent.id} ({detail}){tail}{partial}"


def _finish(
    repo: Repo,
    state: _State,
    input_commit: str,
    ident: Identity,
    checkpoint: Callable[[], None],
    shared: dict[str, Any] | None,
) -> None:
    """Move the watermark — with a review branch, publish it in the same transaction —
    then write the receipt."""
    from gitdream.git import commitbuilder
    from gitdream.git.refs import compare_and_swap

    receipt = state.receipt
    checkpoint()
    faults.point("before-watermark")
    expected = receipt.get("watermark_before")
    message = f"gitdream: dream {state.run_id}"
    watermark = (state.agent.watermark_ref, expected, input_commit)
    pending = _unpublished(state.opts, shared)
    if pending is None:
        compare_and_swap(repo, *watermark, message)
    else:
        assert shared is not None
        commitbuilder.publish(repo, str(state.opts.branch), pending[0], pending[1], message, also=[watermark])
        shared["published"] = pending[1]
    receipt["watermark_after"] = input_commit
    faults.point("before-receipt")
    _write_receipt(repo, state, ident)


def _write_receipt(repo: Repo, state: _State, ident: Identity) -> None:
    receipt = state.receipt
    _engine_calls(state)
    receipt["pending"] = state.pending
    receipt["warnings"] = list(dict.fromkeys(state.warnings))[:200]
    receipt["finished"] = clock.iso(clock.now())
    receipt["duration_seconds"] = round((clock.now() - state.started).total_seconds(), 3)
    _totals(receipt)
    _redact(receipt, state.cfg)
    receipts.append(repo, receipt["input_commit"], receipt, ident)
    receipt["receipt_written"] = True


# Receipt fields that hold identifiers, or facts already screened and written to memory
# (`gitdream audit --run` matches them against the topic files); every other string of a
# receipt passes through the scanner's masks.
_RECEIPT_IDS = frozenset(
    {"run", "agent", "agent_dir", "input_commit", "commits", "base", "watermark_before"}
    | {"watermark_after", "branch", "started", "finished", "pending", "units", "definition_units"}
)
WITHHELD = "(withheld: the unit held a secret)"
PIECE = 8
"""A title sharing this many characters with a secret found in its unit is withheld."""


def _redact(receipt: dict[str, Any], cfg: Config) -> None:
    """Mask, in place, whatever the secret scanner finds in the receipt's free text —
    warnings, errors, phase details (a model's schema violations quote its answer), model
    calls, rejected units — so a receipt never becomes the leak the scanner prevents.
    A receipt whose free text is only short words (a no-op's) is left as it is without
    loading the scanner: the idle path stays cheap, and short of the lock."""
    free = [key for key in receipt if key not in _RECEIPT_IDS]
    if not any(_free_text(receipt[key]) for key in free):
        return
    from gitdream.dream.screen import redact_json

    allow, deny = _patterns(cfg)
    for key in free:
        receipt[key] = redact_json(receipt[key], allow=allow, deny=deny)


_WORD = re.compile(r"[A-Za-z_]{0,16}")


def _free_text(value: Any) -> bool:
    """True when `value` holds a string (or key) that is more than one short word."""
    if isinstance(value, str):
        return _WORD.fullmatch(value) is None
    if isinstance(value, list):
        return any(_free_text(v) for v in value)
    if isinstance(value, dict):
        return any(_free_text(str(k)) or _free_text(v) for k, v in value.items())
    return False


def _patterns(cfg: Config) -> tuple[list[Any], list[Any]]:
    """`screen.allow`/`screen.deny`; when they do not compile (the screen phase has
    already failed on that), none: masking with the built-in rules alone masks more."""
    from gitdream.dream.screen import user_patterns
    from gitdream.errors import ConfigError

    try:
        return user_patterns(cfg)
    except ConfigError:
        return [], []


def _rejected_json(rejected: list[Any], cfg: Config) -> list[dict[str, Any]]:
    """Rejected units for the receipt. A unit holding a secret anywhere (title, body or
    topic) is recorded with its sources, its topic withheld, and its title masked — or
    withheld too when it holds a piece of the secret the scanner cannot see as one (cut
    short, lower-cased): an engine carries secrets into titles and topics in such forms."""
    if not rejected:
        return []
    from gitdream.dream.screen import elide_tokens, redact, scan_text

    allow, deny = _patterns(cfg)
    out = []
    for item in rejected:
        record = item.to_json()
        unit = item.unit
        found = [
            finding.text
            for text in (unit.title, unit.body, unit.topic)
            for finding in scan_text(text, allow=allow, deny=deny)
        ]
        if found or (item.stage == "screen" and item.details.get("findings")):
            title = elide_tokens(redact(unit.title, allow=allow, deny=deny))
            pieces = {f[i : i + PIECE].casefold() for f in found for i in range(max(1, len(f) - PIECE + 1))}
            folded = title.casefold()
            record["title"] = WITHHELD if any(piece in folded for piece in pieces) else title
            record["topic"] = WITHHELD
            record["sources"] = list(unit.sources)[:20]
        else:
            record["title"] = elide_tokens(unit.title)
            record["topic"] = elide_tokens(unit.topic)
        out.append(record)
    return out


def _write_receipt_quietly(repo: Repo, state: _State, ident: Identity) -> None:
    """Write the receipt of a failed/aborted run; a failure to write it is a warning."""
    if "input_commit" not in state.receipt:
        return
    try:
        _write_receipt(repo, state, ident)
    except GitdreamError as exc:
        state.warnings.append(f"could not write the receipt: {exc.message}")


def _engine_calls(state: _State) -> None:
    """Every model call the engine made, failed ones included, so tokens spent before a
    failure still count toward the daily budget."""
    if state.engine.calls:
        state.receipt["calls"] = list(state.engine.calls)


def _totals(receipt: dict[str, Any]) -> None:
    tokens = {"input": 0, "output": 0, "cache_creation": 0, "cache_read": 0}
    for call in receipt.get("calls", []):
        tokens["input"] += int(call.get("input_tokens", 0) or 0)
        tokens["output"] += int(call.get("output_tokens", 0) or 0)
        tokens["cache_creation"] += int(call.get("cache_creation_input_tokens", 0) or 0)
        tokens["cache_read"] += int(call.get("cache_read_input_tokens", 0) or 0)
    receipt["tokens"] = tokens


def _close(outcome: Outcome, state: _State, t0: float) -> Outcome:
    receipt = state.receipt
    receipt.setdefault("duration_seconds", round(time.monotonic() - t0, 3))
    _engine_calls(state)
    receipt["pending"] = state.pending
    receipt["warnings"] = list(dict.fromkeys(state.warnings))[:200]
    receipt.setdefault("finished", clock.iso(clock.now()))
    _totals(receipt)
    _redact(receipt, state.cfg)
    if not outcome.summary:
        outcome.summary = _summary(state.agent, receipt)
    return outcome
