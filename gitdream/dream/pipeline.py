"""One dream of one agent, phase by phase (DESIGN §5).

    orient → gather → distill → verify → screen → experience (integrate + commit)
           → definitions (integrate + check + commit) → finish (watermark + receipt)

`run_agent` is that list; each phase is a method of `DreamRun` run inside
`with run.phase(name):`, which keeps the books in one place: the phase a failure is
attributed to, its record in the receipt (`failed`/`aborted` with the reason), and the
run's deadline (`max_run_minutes`, checked as the phases that do the work end). A failing
phase is recorded and the run goes on only where that is safe (a refused experience
commit stops the run; a refused definition commit does not undo the experience commit).
Material that was not consumed (an engine batch that failed, units over `max_units`,
definition units whose file was refused) is named in the receipt as `pending` and read
again by the next run.

The watermark moves to the input commit, and the receipt note is written, after the
commits — also for a no-op run. A failed or aborted run leaves the watermark where it was.
SIGINT/SIGTERM (see `gitdream.trigger.interrupt`) stop the run before its next write.
The receipt (`gitdream.dream.receipts.Receipt`) is finalised once, before it is written:
the note and `run --json` are the same document.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from gitdream import clock, faults
from gitdream.contract import DistillContext, MemoryView
from gitdream.dream import gather, material, memoryfiles, receipts, runjournal
from gitdream.dream.gather import carried_units, unit_record
from gitdream.dream.options import Reporter, RunOptions, Silent  # also imported from here
from gitdream.dream.orient import memory_view
from gitdream.dream.receipts import Receipt
from gitdream.errors import GitdreamError, Interrupted
from gitdream.git.commitbuilder import Change, format_message
from gitdream.units import DEFINITION_TARGETS, Rejected, TopicProposal, Unit, parse_entry_id

if TYPE_CHECKING:
    from gitdream.agents import Agent
    from gitdream.config import Config
    from gitdream.contract import Engine
    from gitdream.dream.material import Material
    from gitdream.git.chain import CommitChain
    from gitdream.git.commitbuilder import Identity
    from gitdream.git.repo import Repo
    from gitdream.units import Entry

MAX_MESSAGE_UNITS = 40
TIMED = frozenset({"gather", "distill", "screen", "experience"})
"""Phases after which a run past `max_run_minutes` stops (before its next phase)."""

__all__ = ["Outcome", "Reporter", "RunOptions", "run_agent"]


@dataclass
class Outcome:
    """The result of one agent's run: its receipt, the unified diff for --dry-run, the
    estimate for --estimate, the one-line summary, and `warnings` that could not go into
    the receipt (writing it failed)."""

    agent: str
    receipt: Receipt
    summary: str
    diff: str = ""
    estimate: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        return self.receipt.status

    @property
    def problem(self) -> bool:
        """True when the run failed, was aborted, or a phase was refused."""
        return self.receipt.problem


# The topic of a definition unit kept as memory (`DreamRun._route`): not the target's own
# name, which is a definition file's (SKILL.md) and no topic may take it.
ROUTED_TOPICS = {"skill": "skills", "soul": "persona", "agent": "instructions"}


class DreamRun:
    """The books of one agent's dream: its receipt, warnings, pending material, rejected
    units, the phase running now; and the phases themselves (`run_agent` calls them in
    order). Writes go through `chain` (shared by the agents of one invocation)."""

    def __init__(
        self,
        repo: Repo,
        agent: Agent,
        cfg: Config,
        opts: RunOptions,
        run_id: str,
        ident: Identity,
        engine: Engine,
        chain: CommitChain,
        reporter: Reporter,
        checkpoint: Callable[[], None],
    ) -> None:
        self.repo, self.agent, self.cfg, self.opts = repo, agent, cfg, opts
        self.run_id, self.ident, self.engine, self.chain = run_id, ident, engine, chain
        self.reporter, self.checkpoint = reporter, checkpoint
        self.started = clock.now()
        self.t0 = time.monotonic()
        self.current = "orient"
        self.warnings: list[str] = []
        self.pending: list[dict[str, Any]] = []
        self.rejected: list[Rejected] = []
        self.failures: list[str] = []  # failed model calls: the run is partial
        self.receipt = Receipt(
            run=run_id,
            agent=agent.id,
            agent_dir=agent.dir or ".",
            trigger=opts.trigger,
            engine=engine.name,
            started=clock.iso(self.started),
            dry_run=opts.dry_run,
        )
        self.outcome = Outcome(agent.id, self.receipt, "")
        self.input_commit = ""
        self.memory: dict[str, str] = {}
        self.entries: list[Entry] = []
        self.outline: list[Entry] = []
        self.carried: list[dict[str, Any]] = []  # the last run's units its screener could not judge
        self.topics: list[TopicProposal] | None = None  # the engine's names of topics
        self.slots: frozenset[str] = frozenset()  # the engine's template slots (labels)
        self.kept: list[Unit] = []
        self.diff_parts: list[str] = []
        self.material_digest = ""
        self.completes: str | None = None  # the killed run this one finishes (`runjournal`)

    # --- the books ------------------------------------------------------------------

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Run phase `name`: a failure inside is that phase's (recorded as `failed` with
        its message, or `aborted` on Interrupted) and propagates; so is an environment's
        failure (a full disk, a read-only file system, a partial clone's missing blob:
        `git.environment.translate`), raised as the GitdreamError that names it. Anything
        else is a bug and propagates as it is. A phase of TIMED that ends past
        `max_run_minutes` fails the run there."""
        self.current = name
        try:
            yield
            if name in TIMED:
                self._check_time()
        except Interrupted:
            self.receipt.phase(name, status="aborted")
            raise
        except GitdreamError as exc:
            self.receipt.phase(name, status="failed", error=exc.message)
            raise
        except Exception as exc:
            from gitdream.git.environment import translate  # idle path: only after an unexpected error

            problem = translate(exc, self.repo)
            if problem is None:
                raise
            self.receipt.phase(name, status="failed", error=problem.message)
            raise problem from exc

    def _check_time(self) -> None:
        limit = self.cfg.float("max_run_minutes")
        if (clock.now() - self.started).total_seconds() > limit * 60:
            raise GitdreamError(
                f"the run has taken longer than max_run_minutes ({limit:g})",
                hint="raise max_run_minutes, or dream more often so each run has less material",
            )

    def pend(self, entry_ids: list[str], material: Material, reason: str) -> None:
        """Name entries (by id) whose material must be read again by the next run."""

        by_path: dict[str, list[str]] = {}
        for entry_id in entry_ids:
            parsed = parse_entry_id(entry_id)
            if parsed is not None:
                by_path.setdefault(parsed[0], []).append(entry_id)
        for path, found in sorted(by_path.items()):
            self.pending.append(
                {
                    "path": path,
                    "since": material.since_of(path),
                    "entries": sorted(set(found), key=lambda i: (parse_entry_id(i) or (path, 0, 0))[1:]),
                    "reason": reason,
                }
            )

    def finalise(self) -> None:
        """Finalise the receipt (once; see `Receipt.finish`)."""
        if not self.receipt.finalised:
            self.receipt.finish(
                calls=self.engine.calls,
                pending=self.pending,
                warnings=self.warnings,
                rejected=self.rejected,
                duration_seconds=time.monotonic() - self.t0,
                cfg=self.cfg,
            )

    def close(self) -> Outcome:
        """The outcome, with the receipt finalised and a summary."""
        self.finalise()
        if not self.outcome.summary:
            self.outcome.summary = _summary(self.agent, self.receipt)
        return self.outcome

    # --- phases ---------------------------------------------------------------------

    def orient(self) -> None:
        """The input commit (HEAD, which must be writable unless the run reads only) and
        the agent's memory at it."""

        repo, opts = self.repo, self.opts
        head = repo.head()
        # A review branch, a dry run and an estimate write nothing on HEAD's branch: a
        # detached HEAD does not stop them.
        reads_only = opts.branch is not None or opts.dry_run or opts.estimate
        if not reads_only or head.unborn or repo.in_progress():
            head = repo.require_writable()
        assert head.oid is not None
        self.input_commit = self.receipt.input_commit = head.oid
        self.receipt.branch = f"refs/heads/{opts.branch}" if opts.branch else head.branch
        self.reporter.phase(self.agent.id, "orient")
        self.memory = memory_view(repo, self.agent, self.input_commit)
        self.receipt.phase("orient", files=len(self.memory))

    def gather(self) -> Material:
        """New material since the watermark (and what earlier runs left pending), read
        into entries; certain noise dropped."""

        self.reporter.phase(self.agent.id, "gather")
        receipt = self.receipt
        receipt.watermark_before = material.read_watermark(self.repo, self.agent)
        found = gather.gather(
            self.repo, self.agent, self.cfg, self.opts, self.input_commit, receipt.watermark_before
        )
        receipt.base, receipt.sessions = found.base, found.sessions
        self.warnings += found.warnings
        self.pending += found.pending
        self.entries = found.entries
        self.outline = found.outline
        self.carried = found.carried
        receipt.phase("gather", **found.details)
        if self._plans():
            self._finish_a_killed_run(found.material, found.finishes)
        return found.material

    def _plans(self) -> bool:
        """Whether this run keeps a plan (`runjournal`): it writes the current branch."""
        return not (self.opts.dry_run or self.opts.estimate or self.opts.branch)

    def _finish_a_killed_run(self, found: Material, finishes: str | None) -> None:
        """A run of this agent killed after deciding, before its receipt, on the same
        material: decide as it decided — its entries, its pending material — so this run
        ends where it would have (`runjournal`). `finishes`: a run killed after its
        watermark moved, whose pending material gather read from its plan: this run
        finishes it (its receipt says so)."""

        self.material_digest = runjournal.digest(found)
        if finishes is not None:  # killed after its watermark moved: its pending was read again
            self.receipt.completes = finishes
            self.warnings.append(
                f"finishing run {finishes}, which was interrupted after its watermark moved, before its receipt"
            )
        plan = runjournal.unfinished(self.repo, self.agent.id, self.receipt.watermark_before, found)
        if plan is None:
            return
        chosen = set(plan.entries)
        self.entries = [e for e in self.entries if e.id in chosen]
        self.pending = [dict(p) for p in plan.pending]
        self.completes = plan.run
        self.receipt.completes = plan.run
        if plan.receipt_error:
            why = f"whose receipt could not be written ({plan.receipt_error})"
        else:
            why = "which was interrupted before its receipt"
        self.warnings.append(f"finishing run {plan.run}, {why}")

    def noop(self) -> None:
        """Nothing new: the receipt says so, and the watermark still moves (finish)."""
        self.receipt.status = "noop"
        self.receipt.counts = {"entries": 0, "units": 0, "created": 0, "corroborated": 0, "rejected": 0}
        base = str(self.receipt.base or "")[:7] or "the beginning"
        self.outcome.summary = f"Nothing new for agent {self.agent.id} since {base}"

    def context(self, entries: list[Entry] | None = None, waiting: int = 0) -> DistillContext:
        return DistillContext(
            self.agent,
            self.entries if entries is None else entries,
            MemoryView(self.memory),
            self.cfg,
            self.input_commit,
            clock.now().date(),
            waiting=waiting,
            outline=self.outline,
        )

    def estimate(self) -> None:
        """`--estimate`: what distilling would cost; sends nothing, needs no key."""
        self.outcome.estimate = self.engine.estimate(self.context())
        self.receipt.status = "noop"
        self.outcome.summary = f"Estimate for agent {self.agent.id}: {self.outcome.estimate}"

    def distill(self, material: Material) -> list[Unit]:
        """The engine's units for the material, after the units the last run's screener
        could not judge (screened again as they were: their entries, read again as
        pending, are not distilled a second time); a failed batch's entries stay pending."""

        carried = carried_units(self.carried, {e.id for e in self.entries})
        taken = {s for u in carried for s in u.sources}
        entries = [e for e in self.entries if e.id not in taken]
        self.reporter.phase(self.agent.id, "distill", f"{len(entries)} entries")
        distilled = self.engine.distill(self.context(entries, waiting=len(carried)))
        for _entry, reason in distilled.skipped:
            self.receipt.skipped[reason] = self.receipt.skipped.get(reason, 0) + 1
        # Every entry read is counted once in the summary: entries a list fact cites beside
        # its first are "folded" into it; skips that are neither "not kept" nor deferred
        # (already consolidated, empty) are "skipped".
        left = set(distilled.failed_entries) | {entry_id for entry_id, _ in distilled.deferred}
        self.receipt.counts["folded"] = int(distilled.stats.get("folded", 0) or 0)
        self.receipt.counts["skipped"] = sum(
            1
            for entry_id, why in distilled.skipped
            if not why.startswith("not kept: ") and entry_id not in left
        )
        record = self.receipt.phase(
            "distill", units=len(distilled.units), stats=distilled.stats, errors=distilled.errors
        )
        if carried:
            record["carried"] = len(carried)
        if distilled.errors:
            record["status"] = "partial"
            self.warnings += [
                f"distill: {e} (its material will be read again next run)" for e in distilled.errors
            ]
        if distilled.failed_entries:
            self.pend(distilled.failed_entries, material, "not processed by the engine")
        by_reason: dict[str, list[str]] = {}
        for entry_id, why in distilled.deferred:
            by_reason.setdefault(why, []).append(entry_id)
        for why, ids in by_reason.items():
            self.pend(ids, material, why)
        self.failures += [f"distill: {e}" for e in distilled.errors]
        self.topics = distilled.topics
        self.slots = distilled.slots
        return carried + distilled.units

    def verify(self, units: list[Unit]) -> list[Unit]:
        """Units that rest only on this run's material (or existing facts)."""
        from gitdream.dream import screen, verify  # idle path: a run with nothing new never loads them

        facts = verify.existing_facts(MemoryView(self.memory), self.agent)
        notes: list[dict[str, Any]] = []
        kept, rejected = verify.verify(
            units, [e.id for e in self.entries], [f.id for f in facts], notes=notes
        )
        for note in notes:  # the titles of units not screened yet
            note["title"] = screen.elide_tokens(str(note.get("title", "")))
        self.rejected += rejected
        self.receipt.phase("verify", kept=len(kept), rejected=len(rejected), dropped_sources=notes[:50])
        return self._route(kept)

    def _route(self, units: list[Unit]) -> list[Unit]:
        """Units for a definition target the agent has no file for in `definition_files`
        (a `#skill` entry where only `CLAUDE.md` is configured) become memory: no later run
        could write them, so waiting for the file would leave every run `partial`. A
        configured file that is absent at the input commit is another matter: its units
        wait for it (`integrate_definitions`)."""
        routed: dict[str, int] = {}
        out: list[Unit] = []
        for unit in units:
            if (
                unit.target in DEFINITION_TARGETS
                and memoryfiles.definition_path(self.agent, unit.target) is None
            ):
                routed[unit.target] = routed.get(unit.target, 0) + 1
                if unit.topic and unit.topic != unit.target:
                    unit = replace(unit, target="experience")
                else:  # a new topic takes a unit's title as its name: give it the topic's
                    topic = ROUTED_TOPICS[unit.target]
                    unit = replace(unit, target="experience", topic=topic, title=topic.capitalize())
            out.append(unit)
        for target, n in routed.items():
            self.warnings.append(
                f"agent {self.agent.id} has no definition file for target {target!r} in definition_files: "
                f"{n} unit{'s' if n != 1 else ''} kept as memory instead (add the file to definition_files "
                "in gitdream.toml to have them written there)"
            )
        return out

    def screen(self, units: list[Unit], material: Material) -> list[Unit]:
        """The deterministic scanner, then the engine's own screen; at most `max_units`
        kept (the rest stays pending)."""
        from gitdream.dream import screen  # idle path: a run with nothing new never loads the scanner

        self.reporter.phase(self.agent.id, "screen", f"{len(units)} units")
        scanned = screen.screen_units(units, self.cfg, sources={e.id: e.text for e in self.entries})
        kept = scanned.kept
        self.rejected += scanned.rejected
        unjudged, errors = 0, []
        if kept:
            second = self.engine.screen(kept)
            kept = second.kept
            self.rejected += second.rejected
            unjudged, errors = len(second.unjudged), list(second.errors)
            if second.unjudged:
                # Not judged is not rejected: the units are not written, their material is
                # read again, and the next run (the screener back) screens them as they are.

                self.pend([s for u in second.unjudged for s in u.sources], material, "not screened")
                self.receipt.unjudged = [unit_record(u) for u in second.unjudged]
            self.failures += [f"screen: {e}" for e in errors]
            self.warnings += [f"screen: {e}" for e in errors]
        self.receipt.phase("screen", kept=len(kept), rejected=len(scanned.rejected), unjudged=unjudged)
        if unjudged:
            self.receipt.phase("screen", status="partial", errors=errors)
        limit = self.cfg.int("max_units")
        if len(kept) > limit:
            self.pend([s for u in kept[limit:] for s in u.sources], material, "over max_units")
            kept = kept[:limit]
        if self._plans():
            plan = runjournal.RunPlan(
                self.completes or self.run_id,
                self.agent.id,
                self.input_commit,
                self.receipt.watermark_before,
                self.material_digest,
                entries=sorted({s for u in kept for s in u.sources}),
                pending=[dict(p) for p in self.pending],
            )
            runjournal.record(self.repo, plan)
        self.receipt.counts = {
            **{k: v for k, v in self.receipt.counts.items() if k in ("folded", "skipped")},
            "entries": len(self.entries),
            "units": len(kept),
            "created": 0,
            "corroborated": 0,
            "definition": sum(1 for u in kept if u.target in DEFINITION_TARGETS),
            "rejected": len(self.rejected),
        }
        return kept

    def experience(self, units: list[Unit], material: Material) -> None:
        """Integrate the experience units into memory files and commit them."""
        from gitdream.dream import integrate  # idle path: a run with nothing new never loads it

        self.reporter.phase(self.agent.id, "experience", f"{len(units)} units")
        today = clock.now().date()
        dated = [e.date for e in self.entries if e.date is not None]
        stale_before = min(today, max(dated)) if dated else today
        exp = integrate.integrate_experience(
            self.agent,
            self.memory,
            units,
            input_commit=self.chain.source_commit(self.input_commit),
            today=today,
            cfg=self.cfg,
            stale_before=stale_before,
            topics=None if self.topics is None else {t.slug: t for t in self.topics},
            slots=self.slots,
        )
        counts = self.receipt.counts
        counts.update(
            created=exp.created,
            corroborated=exp.corroborated,
            refined=exp.refined,
            superseded=exp.superseded,
            demoted=len(exp.demoted),
        )
        self.warnings += list(exp.warnings)
        if exp.waiting:
            self.pend(exp.waiting, material, "topic file left alone")
        self.rejected += exp.rejected
        counts["rejected"] = len(self.rejected)
        written = [f.to_json() for f in exp.facts_written]
        self.receipt.record_units(written)
        changes = dict(exp.changes)
        if changes:
            parts = [
                f"{counts[k]} {word}"
                for k, word in zip(
                    receipts.EXPERIENCE_IMPROVED,
                    ("new", "corroborated", "refined", "superseded"),
                    strict=True,
                )
                if counts[k]
            ]
            improved = _memories(receipts.improved(counts, receipts.EXPERIENCE_IMPROVED))
            if parts:
                improved += f" ({', '.join(parts)})"
            tail = f", {counts['demoted']} archived" if counts.get("demoted") else ""
            self._commit("experience", improved + tail, changes, written)
        self.receipt.phase("experience", changes=len(changes))

    def definitions(self, units: list[Unit], material: Material) -> None:
        """Integrate the definition units into managed blocks (behind the definition
        checks) and commit them; a refused file or commit leaves its units pending."""
        from gitdream.dream import integrate  # idle path: a run with nothing new never loads it
        from gitdream.text.checks import Limits, check_text, kind_by_name  # idle path: as integrate

        limits = Limits.from_config(self.cfg)
        self.reporter.phase(self.agent.id, "definitions", f"{len(units)} units")
        defs = integrate.integrate_definitions(
            self.agent,
            self.memory,
            units,
            input_commit=self.chain.source_commit(self.input_commit),
            check=lambda path, text: check_text(path, text, limits, kind_by_name(path)).lines(),
        )
        self.warnings += list(defs.warnings)
        for path in sorted(defs.changes):
            # What `gitdream check` warns about in a file the dream writes into (an
            # unreadable front matter, say) is worth a word, with its line.
            self.warnings += check_text(path, self.memory[path], limits, kind_by_name(path)).warning_lines()
        counts = self.receipt.counts
        if defs.rejected:
            self.rejected += defs.rejected
            counts["rejected"] = len(self.rejected)
        # `definition` counts the facts written into definition files (set to 0 below when
        # the definition commit is not made); `created`/`corroborated` are experience only.
        counts["definition"] = defs.created + defs.corroborated + defs.refined
        written = [f.to_json() for f in defs.facts_written]
        changes: dict[str, str | None] = dict(defs.changes)
        if defs.refused:
            self.receipt.phase("definitions", status="refused", refused=[r.to_json() for r in defs.refused])
            self.warnings += [f"definitions not written: {r.reason} ({r.hint})" for r in defs.refused]
            refused = {r.target for r in defs.refused}
            self.pend(
                [s for u in units if u.target in refused for s in u.sources], material, "definition refused"
            )
        if changes:
            names = ", ".join(p.rsplit("/", 1)[-1] for p in sorted(changes))
            try:
                made = self._commit("definition", names, changes, written)
            except (Interrupted, faults.FaultInjected):
                raise
            except GitdreamError as exc:
                counts["definition"] = 0
                self.receipt.phase("definitions", status="refused", error=exc.to_json())
                hint = f" ({exc.hint})" if exc.hint else ""
                self.warnings.append(f"definitions not written: {exc.message}{hint}")
                self.pend([s for u in units for s in u.sources], material, "definition refused")
            else:
                if made:
                    # The facts written into `learned` blocks, for `gitdream show`/`audit`.
                    self.receipt.definition_units = written[: receipts.MAX_UNITS]
        self.receipt.phase("definitions", changes=len(changes))

    def _commit(
        self, kind: str, subject_tail: str, changes: dict[str, str | None], written: list[Any]
    ) -> bool:
        """Commit `changes` as the run's `kind` commit (through the chain), or add their
        diff with --dry-run. Returns whether a commit was made."""

        if self.opts.dry_run:
            self.diff_parts.append(_diff_text(self.memory, changes))
            return False
        faults.point(f"before-{kind}-commit")
        self.checkpoint()
        trailers = [
            ("Gitdream-Run", self.run_id),
            ("Gitdream-Kind", kind),
            ("Gitdream-Agent", self.agent.id),
            ("Gitdream-Input", self.input_commit),
            ("Gitdream-Engine", self.engine.name),
        ]
        subject = "experience" if kind == "experience" else "definitions"
        message = _commit_message(self.agent, subject, subject_tail, written, trailers)
        change_list = [
            Change(p, t.encode("utf-8") if t is not None else None) for p, t in sorted(changes.items())
        ]
        done = self.chain.commit(
            self.repo, self.agent, kind, change_list, message, self.ident, self.input_commit
        )
        self.receipt.commits[kind] = done.oid
        self.warnings += list(done.warnings)
        faults.point(f"after-{kind}-commit")
        return True

    def done(self) -> None:
        """Every phase ran: the run is ok — or partial when a model call failed or the
        definitions were refused (their material is pending: the run made progress, and
        the exit status is 1; see `Receipt.partial_causes`)."""
        self.receipt.status = "partial" if self.failures or self.receipt.partial_causes else "ok"
        self.outcome.diff = "".join(self.diff_parts)
        self.receipt.pending = self.pending  # the summary counts what is left for the next run
        self.outcome.summary = _summary(self.agent, self.receipt)

    def finish(self) -> None:
        """Move the watermark — with a review branch, publish it in the same transaction —
        then finalise and write the receipt."""
        self.checkpoint()
        faults.point("before-watermark")
        message = f"gitdream: dream {self.run_id}"
        watermark = (self.agent.watermark_ref, self.receipt.watermark_before, self.input_commit)
        self.chain.publish(self.repo, message, also=[watermark])
        self.receipt.watermark_after = self.input_commit
        faults.point("before-receipt")
        self.finalise()
        receipts.write(self.repo, self.receipt, self.ident)
        self._drop_plan()

    def _drop_plan(self) -> None:

        if self._plans():
            runjournal.drop(self.repo, self.agent.id)

    def stopped(self, exc: GitdreamError, aborted: bool) -> None:
        """After a failure or an interruption: record it, publish the review commits
        already made (without the watermark: the current branch keeps the commits a
        failed run made too), and write the receipt; a failure to write it is a warning."""
        receipt = self.receipt
        receipt.status = "aborted" if aborted else "failed"
        receipt.error = exc.to_json()
        if aborted:
            self.outcome.summary = f"Dream for agent {self.agent.id} aborted before its next write"
        else:
            self.outcome.summary = f"Dream for agent {self.agent.id} failed in {self.current}: {exc.message}"
            if self.opts.dry_run or self.opts.estimate:
                return
        if self.chain.unpublished() is not None:
            try:
                self.chain.publish(self.repo, f"gitdream: dream {self.run_id}")
            except GitdreamError as failed:
                self.warnings.append(f"the review branch was not published: {failed.message}")
                receipt.commits = {"experience": None, "definition": None}
        if receipt.input_commit is None:
            return
        self.finalise()
        try:
            receipts.write(self.repo, receipt, self.ident)
        except Exception as failed:  # the receipt of a failure: its own failure is a warning
            from gitdream.git.environment import translate  # idle path: only after an unexpected error

            known = failed if isinstance(failed, GitdreamError) else translate(failed, self.repo)
            if known is None:
                raise
            self.outcome.warnings.append(f"could not write the receipt: {known.message}")
            if self._plans():
                runjournal.receipt_failed(self.repo, self.agent.id, known.message)
            return
        self._drop_plan()


def run_agent(
    repo: Repo,
    agent: Agent,
    cfg: Config,
    opts: RunOptions,
    run_id: str,
    ident: Identity,
    engine: Engine,
    chain: CommitChain,
    *,
    reporter: Reporter | None = None,
    checkpoint: Callable[[], None] = lambda: None,
) -> Outcome:
    """Dream once for `agent` with `engine` (built for this run by the caller, who
    closes it) and return its Outcome (receipt, summary, diff). Commits go through
    `chain`, shared by the agents of one invocation (the review branch is created once).

    Never raises for a failure of the run itself: the receipt says `failed` (or
    `aborted` for Interrupted) with the error. Raises only for what must stop all agents
    (FaultInjected in tests). `checkpoint()` is called before every write and raises
    Interrupted when a stop was requested.
    """
    run = DreamRun(repo, agent, cfg, opts, run_id, ident, engine, chain, reporter or Silent(), checkpoint)
    try:
        with run.phase("orient"):
            run.orient()
        with run.phase("gather"):
            material = run.gather()
        if not material.files:
            run.noop()
            if not opts.dry_run and not opts.estimate:
                with run.phase("finish"):
                    run.finish()
            return run.close()
        if opts.estimate:
            with run.phase("distill"):
                run.estimate()
            return run.close()
        with run.phase("distill"):
            units = run.distill(material)
        with run.phase("verify"):
            units = run.verify(units)
        with run.phase("screen"):
            units = run.screen(units, material)
        with run.phase("experience"):
            run.experience([u for u in units if u.target == "experience"], material)
        with run.phase("definitions"):
            run.definitions([u for u in units if u.target in DEFINITION_TARGETS], material)
        run.done()
        if not opts.dry_run:
            with run.phase("finish"):
                run.finish()
    except Interrupted as exc:
        run.stopped(exc, aborted=True)
    except GitdreamError as exc:  # an environment's failure too (`DreamRun.phase`): this agent only
        run.stopped(exc, aborted=False)
    return run.close()


# --- texts ------------------------------------------------------------------------------


def _commit_message(
    agent: Agent, kind: str, subject_tail: str, facts: list[dict[str, Any]], trailers: list[tuple[str, str]]
) -> str:

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
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in out)


def _memories(count: int) -> str:
    """ "improved 1 memory" / "improved 3 memories"."""
    return f"improved {count} {'memory' if count == 1 else 'memories'}"


def _summary(agent: Agent, receipt: Receipt) -> str:
    """The one line a run prints: what improved (`receipts.improved`: experience facts
    created, corroborated, refined or superseded, and facts written into definitions —
    each part named, so they add up to the total), the entries folded into them (a
    list's items beside its first: one fact cites them all), what was archived, rejected,
    read and not kept (the engine's "not kept: <reason>" skips), already consolidated or
    empty, or left pending, and the commits: each entry read is counted once."""
    counts = receipt.counts
    improved = receipts.improved(counts)
    parts = [f"{kind} {oid[:7]}" for kind, oid in receipt.commits.items() if oid]
    detail = f"{counts.get('created', 0)} new, {counts.get('corroborated', 0)} corroborated"
    if counts.get("folded"):
        detail += (
            f", {counts['folded']:,} more {'entry' if counts['folded'] == 1 else 'entries'} folded into them"
        )
    if counts.get("refined"):
        detail += f", {counts['refined']} refined"
    if counts.get("definition"):
        detail += f", {counts['definition']} to definitions"
    if counts.get("demoted"):
        detail += f", {counts['demoted']} topics archived"
    if counts.get("superseded"):
        detail += f", {counts['superseded']} superseded"
    if counts.get("rejected"):
        detail += f", {counts['rejected']} rejected"
    not_kept = sum(receipt.not_kept.values())
    if not_kept:
        detail += f", {not_kept:,} read and not kept"
    if counts.get("skipped"):
        detail += f", {counts['skipped']:,} already consolidated or empty"
    pending = sum(int(p.get("count") or len(p.get("entries") or [])) or 1 for p in receipt.pending)
    if pending:
        detail += f", {pending:,} {'entry' if pending == 1 else 'entries'} left for the next run"
    tail = " — " + ", ".join(parts) if parts else " — no commit"
    if receipt.dry_run:  # a dry run commits nothing: say what a run would do
        tail = " — dry run, nothing written"
    noun = "memory" if improved == 1 else "memories"
    partial = ""
    if receipt.status == "partial":
        causes = receipt.partial_causes
        why = [
            *(["some model calls failed"] if {"distill", "screen"} & set(causes) else []),
            *(["the definitions were not written (see the warning)"] if "definitions" in causes else []),
        ]
        partial = f"; partial: {' and '.join(why or ['some model calls failed'])}, their material is read again next run"
    if not improved:  # "Improved 0 memories" reads as a failure; the run read and judged its material
        return f"No memory {'would be ' if receipt.dry_run else ''}improved for agent {agent.id} ({detail}){tail}{partial}"
    verb = "Would improve" if receipt.dry_run else "Improved"
    return f"{verb} {improved} {noun} for agent {agent.id} ({detail}){tail}{partial}"
