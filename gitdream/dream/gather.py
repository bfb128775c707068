"""Gather (DESIGN §5, phase 2): the new material of one agent, read into raw entries.

Material since the watermark (`gitdream.dream.material`), plus what the last completed
dream left pending (read again from the base that run used); each source file read
(`gitdream.dream.readers`, a file over `max_file_bytes` skipped — and left pending, so
raising the limit loses nothing); then only certain noise dropped
(`gitdream.dream.noise`), never a guess at importance.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from gitdream.dream import material as material_mod
from gitdream.dream import noise, readers, receipts, runjournal
from gitdream.git import notes, trees
from gitdream.units import Unit

if TYPE_CHECKING:
    from gitdream.agents import Agent
    from gitdream.config import Config
    from gitdream.dream.material import Material
    from gitdream.dream.options import RunOptions
    from gitdream.git.repo import Repo
    from gitdream.units import Entry, Unit

MAX_CARRIED = 500
"""At most this many units of the last receipt's `unjudged` are carried into a run."""


@dataclass
class Gathered:
    """What gather found: the `material`, its `entries` after noise, the `watermark` and
    `base` it was measured between, the `pending` records of files it skipped, the units
    the last dream's screener could not judge (`carried`: its receipt's `unjudged`
    records, untrusted), every entry read from the material's files (`outline`, the
    engine's `DistillContext.outline`), warnings, and the phase's `details` for the
    receipt."""

    material: Material
    watermark: str | None
    entries: list[Entry] = field(default_factory=list)
    pending: list[dict[str, Any]] = field(default_factory=list)
    carried: list[dict[str, Any]] = field(default_factory=list)
    finishes: str | None = None
    """A run killed after its watermark moved, before its receipt, whose pending material
    this run read from its plan (`runjournal.moved_on`): this run finishes it."""
    outline: list[Entry] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def base(self) -> str | None:
        return self.material.base

    @property
    def sessions(self) -> int:
        return self.material.sessions


def _last(repo: Repo, agent: Agent, opts: RunOptions, watermark: str | None) -> receipts.Receipt | None:
    """The last completed dream's receipt (none with --full or --since: all is read again)."""
    if opts.full or opts.since is not None:
        return None
    return receipts.latest(repo, agent.id, watermark)


def unit_record(unit: Unit) -> dict[str, Any]:
    """A unit as a receipt keeps it for the next run (`unjudged`)."""
    return {**unit.to_json(), "corroborates": unit.corroborates}


def carried_units(records: list[Any], entry_ids: set[str]) -> list[Unit]:
    """The units of `records` (the last receipt's `unjudged`) with a source among
    `entry_ids` (this run's material: their pending entries were read again). A receipt
    is repository content, so a malformed record is left out; verify and both screens
    still judge every unit."""

    units = []
    for record in records[:MAX_CARRIED]:
        try:
            text = {k: record[k] for k in ("title", "body", "target", "action", "topic")}
            sources = tuple(str(s) for s in record["sources"])
            when = date.fromisoformat(record["date"]) if record.get("date") else None
        except (KeyError, TypeError, ValueError, AttributeError):
            continue
        if not all(isinstance(v, str) for v in text.values()) or not entry_ids & set(sources):
            continue
        corroborates = record.get("corroborates")
        units.append(
            Unit(
                **text,
                sources=sources,
                date=when,
                corroborates=corroborates if isinstance(corroborates, str) else None,
            )
        )
    return units


def _secret_names(names: list[str], agent_id: str, cfg: Config) -> dict[str, str]:
    """`{path: warning}` for each of the raw files `names` whose name holds what the
    scanner finds (`screen.scan_text` with the user's `screen.allow`/`deny`); the warning
    masks it and says how to have the file read."""
    from gitdream.dream import screen  # idle path: a run with nothing new never loads the scanner

    allow, deny = screen.user_patterns(cfg)
    return {
        path: (
            f"{screen.redact(path, allow=allow, deny=deny)}: the file name holds a secret or personal data, "
            "so gitdream cannot cite it; skipped (rename it with `git mv`, then `gitdream run --agent "
            f"{agent_id} --full` reads it: a rename alone is not new material, and what was read "
            "before is recognised)"
        )
        for path in names
        if screen.scan_text(path, allow=allow, deny=deny)
    }


def gather(
    repo: Repo, agent: Agent, cfg: Config, opts: RunOptions, input_commit: str, watermark: str | None
) -> Gathered:
    """Gather the agent's material between its `watermark` (`material.read_watermark`)
    and `input_commit` (module docstring). Raises RepoStateError for a watermark that
    cannot be reached (see `material.resolve_base`)."""
    base, warnings = material_mod.resolve_base(repo, agent, input_commit, since=opts.since, full=opts.full)
    last = _last(repo, agent, opts, watermark)
    rereads = not (opts.full or opts.since is not None)  # with either, all is read again anyway
    # a run killed after its watermark moved: its receipt was never written, its plan says
    killed = runjournal.moved_on(repo, agent.id, watermark) if last is None and rereads else None
    left = last.pending if last else killed.pending if killed else []
    pending_in = [p for p in left if isinstance(p, dict) and "path" in p]
    material = material_mod.changed_sources(
        repo,
        agent,
        base,
        input_commit,
        [(p["path"], p.get("since")) for p in pending_in],
        remember=not opts.dry_run,  # the watermark may move there: counting will ask
    )
    found = Gathered(material, watermark, warnings=[*warnings, *material.warnings])
    if last is None and killed is None and watermark is not None and rereads:
        # The last dream's receipt carries what it left pending; without it that material
        # would silently never be read (a clone that fetched refs/gitdream/* but not the notes).
        found.warnings.append(
            f"the receipt of agent {agent.id}'s last dream (a note on {watermark[:12]}) is not in "
            "this repository, so material that dream left for the next run is not read again: fetch "
            f"the notes ({notes.fetch_command()}), or run "
            f"`gitdream run --agent {agent.id} --full` once (what was consolidated before is recognised)"
        )
    found.carried = list(last.unjudged) if last else []
    found.finishes = killed.run if killed else None
    # A path can be pending several times over, once per reason (entries over max_units
    # and a refused definition in the same log): every record's entries are read again,
    # and a record naming none (the whole path) reads the whole path.
    only_ids: dict[str, set[str]] = {}
    only_lines: dict[str, list[tuple[int, int]]] = {}
    whole: set[str] = set()
    for item in pending_in:
        entries_in, lines_in = item.get("entries"), item.get("lines")
        if isinstance(entries_in, list) and entries_in:
            only_ids.setdefault(item["path"], set()).update(e for e in entries_in if isinstance(e, str))
        elif isinstance(lines_in, list) and lines_in:
            only_lines.setdefault(item["path"], []).extend(
                (int(r[0]), int(r[1])) for r in lines_in if isinstance(r, list) and len(r) == 2
            )
        else:
            whole.add(item["path"])
    fallback = trees.commit_date(repo, input_commit)
    entries: list[Entry] = []
    dropped: dict[str, int] = {}
    skipped_files: list[dict[str, str]] = []
    max_file_bytes = cfg.int("max_file_bytes")
    secret_names = _secret_names([s.path for s in material.files], agent.id, cfg) if material.files else {}
    for source in material.files:
        if source.path in secret_names:
            # Its name would be cited in topics, commit messages and receipts, which the
            # scanner never lets hold a secret (issue 16): only this file stops.
            found.warnings.append(secret_names[source.path])
            continue
        # The size first, from the object header: a 50 MB log is not loaded to be skipped.
        size = trees.blob_size(repo, source.blob)
        result = readers.skip_too_large(source.path, size, max_file_bytes) or readers.read_source(
            source.path,
            trees.blob_data(repo, source.blob),
            kind=source.kind,
            fallback_date=fallback,
            added_lines=set(source.added_lines) if source.added_lines is not None else None,
            max_file_bytes=max_file_bytes,
        )
        found.warnings += result.warnings
        for key, count in result.dropped.items():
            dropped[key] = dropped.get(key, 0) + count
        if result.skipped:
            skipped_files.append({"path": source.path, "reason": result.skipped})
        if result.skipped and readers.TOO_LARGE in result.skipped:
            # Not consumed: read again by the next run, so raising max_file_bytes loses nothing.
            found.pending.append(
                {
                    "path": source.path,
                    "since": material.since_of(source.path),
                    "entries": [],
                    "reason": readers.TOO_LARGE,
                }
            )
        read = result.entries
        found.outline.extend(read)
        # A path pending with explicit entries: those entries, and the lines added since
        # the base (new material in the same file, e.g. a daily log that grew).
        wanted = only_ids.get(source.path, set())
        spans = only_lines.get(source.path, [])
        if (wanted or spans) and source.path not in whole and base is not None:
            read = [
                e
                for e in read
                if e.id in wanted
                or any(s <= e.start and e.end <= t for s, t in spans)
                or material.is_fresh(source.path, e.start, e.end)
            ]
        entries.extend(read)
    found.entries, noise_counts = noise.filter_noise(entries)
    found.details = {
        "files": len(material.files),
        "entries": len(entries),
        "kept": len(found.entries),
        "noise": noise_counts,
        "dropped": dropped,
        "skipped_files": skipped_files,
    }
    return found
