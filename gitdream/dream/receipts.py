"""Receipts: one JSON record per run, kept as a git note on the run's input commit.

Notes live under `refs/notes/gitdream` (DESIGN §4) and travel with push/fetch like any
ref. Several runs (of several agents, or a failed run and its retry) can share an input
commit, so a note holds JSON Lines: one object per line, appended, never rewritten. Each
object has a `type`: "receipt" (a run; shape documented in docs/json.md) or "annotation"
(a later fact about a run, e.g. `{"type": "annotation", "run": R, "reverted_by": S}`).

`Receipt` is the one type of a receipt: the pipeline fills it during a run and
`finish()`es it once (calls and token totals, pending material, warnings, times, rejected
units, redaction of free text); the same object is then the git note, `run --json` and,
read back with `Receipt.from_json`, what `log`, `show`, `audit` and `revert` see. A
receipt read from a note is untrusted: a value of the wrong type reads as its default.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from gitdream import clock
from gitdream.dream.receiptlog import NOTES_REF, iter_records, latest_dream, read
from gitdream.errors import ConfigError
from gitdream.git import notes
from gitdream.units import parse_entry_id

if TYPE_CHECKING:
    from gitdream.config import Config
    from gitdream.git.commitbuilder import Identity
    from gitdream.git.repo import Repo
    from gitdream.units import Rejected

SCHEMA_VERSION = 1
MAX_WARNINGS = 200
MAX_UNITS = 500
"""A receipt lists at most this many facts written (`units`); `units_truncated` counts the rest."""
MAX_REJECTED = 500
"""…and at most this many rejected units (`rejected`); `rejected_truncated` counts the rest."""
MAX_PENDING_IDS = 200
"""A pending path lists at most this many entry ids; beyond, their line ranges (`lines`)."""
MAX_PENDING_RANGES = 200
"""…at most this many line ranges; beyond, the whole path is read again from `since`."""

TOKEN_KINDS = ("input", "output", "cache_creation", "cache_read")
_CALL_TOKENS = {
    "input": "input_tokens",
    "output": "output_tokens",
    "cache_creation": "cache_creation_input_tokens",
    "cache_read": "cache_read_input_tokens",
}
WITHHELD = "(withheld: the unit held a secret)"
PIECE = 8
"""A title sharing this many characters with a secret found in its unit is withheld."""
KINDS = ("experience", "definition")
EXPERIENCE_IMPROVED = ("created", "corroborated", "refined", "superseded")
"""The counts of facts the experience commit improved: its title's "improved N memories"."""
IMPROVED = (*EXPERIENCE_IMPROVED, "definition")
"""…and with the facts written into definitions: the run's "Improved N memories" and the
IMPROVED column of `gitdream log` (docs/review-and-undo.md, "What the counts count")."""
__all__ = [
    "NOTES_REF",
    "Receipt",
    "RevertDetails",
    "append",
    "iter_records",
    "latest",
    "read",
    "receipts",
    "tokens_used_since",
    "tokens_used_today",
    "write",
]


def _no_commits() -> dict[str, str | None]:
    return {"experience": None, "definition": None}


def _no_tokens() -> dict[str, int]:
    return dict.fromkeys(TOKEN_KINDS, 0)


@dataclass
class RevertDetails:
    """What a revert's receipt says beyond a dream's: the run it `reverts`, its `only`
    (experience, definition or None for both), whether it moved the watermark back
    (`replay`) and the `paths` it changed per kind."""

    reverts: str
    only: str | None = None
    replay: bool = False
    paths: dict[str, list[str]] = field(default_factory=dict)


NOT_KEPT = "not kept: "
"""The prefix of a `skipped` reason for an entry read and not kept (below the salience bar)."""


@dataclass
class Receipt:
    """One run's receipt (the table in docs/json.md, "Receipts", is its JSON shape).

    Every key is always in the JSON (null where it does not apply), except
    `definition_units`, `units_truncated`, `rejected_truncated` and `completes`, present
    only when not empty, and the keys
    of `revert` (`reverts`, `only`, `replay`, `paths`), present only on a revert's
    receipt. `annotations` (later facts about the run) are folded in when reading and
    never written. `extra` keeps keys this version does not know, so `show` shows them.
    """

    run: str
    agent: str | None = None
    agent_dir: str | None = None
    trigger: str | None = None
    engine: str | None = None
    status: str = "failed"
    started: str | None = None
    finished: str | None = None
    duration_seconds: float | None = None
    input_commit: str | None = None
    base: str | None = None
    watermark_before: str | None = None
    watermark_after: str | None = None
    branch: str | None = None
    dry_run: bool = False
    commits: dict[str, str | None] = field(default_factory=_no_commits)
    sessions: int | None = None
    phases: dict[str, dict[str, Any]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    units: list[dict[str, Any]] = field(default_factory=list)
    units_truncated: int = 0
    definition_units: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)
    rejected_truncated: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    pending: list[dict[str, Any]] = field(default_factory=list)
    unjudged: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    tokens: dict[str, int] = field(default_factory=_no_tokens)
    warnings: list[str] = field(default_factory=list)
    error: dict[str, Any] | None = None
    completes: str | None = None
    revert: RevertDetails | None = None
    annotations: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    finalised: bool = field(default=False, compare=False)

    # --- during a run ---------------------------------------------------------------

    def phase(self, name: str, **details: Any) -> dict[str, Any]:
        """The record of phase `name` (created "ok"), updated with `details`."""
        entry = self.phases.setdefault(name, {"status": "ok"})
        entry.update(details)
        return entry

    def record_units(self, written: list[dict[str, Any]]) -> None:
        """The facts the experience phase wrote (at most MAX_UNITS kept)."""
        self.units = written[:MAX_UNITS]
        self.units_truncated = max(len(written) - MAX_UNITS, 0)

    def finish(
        self,
        *,
        calls: list[dict[str, Any]],
        pending: list[dict[str, Any]],
        warnings: list[str],
        rejected: list[Rejected],
        duration_seconds: float,
        cfg: Config | None,
    ) -> None:
        """Finalise the receipt, once: the engine's `calls` and their token totals, the
        `pending` material, the `warnings` (de-duplicated, at most MAX_WARNINGS), the
        finishing time and duration, the `rejected` units — and, with `cfg`, every
        string of free text masked by the secret scanner (`redact`)."""
        if self.finalised:
            raise AssertionError(f"the receipt of run {self.run} is finalised already")
        self.finalised = True
        if calls:
            self.calls = list(calls)
        self.tokens = _totals(self.calls)
        self.pending = bounded_pending(pending)
        self.warnings = list(dict.fromkeys(self.warnings + warnings))[:MAX_WARNINGS]
        self.finished = clock.iso(clock.now())
        self.duration_seconds = round(duration_seconds, 3)
        self.rejected_truncated = max(len(rejected) - MAX_REJECTED, 0)
        rejected = rejected[:MAX_REJECTED]
        if cfg is not None:
            self.rejected = rejected_json(rejected, cfg)
            redact(self, cfg)
        else:
            self.rejected = [r.to_json() for r in rejected]

    # --- reading --------------------------------------------------------------------

    @property
    def total_tokens(self) -> int:
        """Input, output and cache tokens together (what the daily budget counts)."""
        return sum(int(self.tokens.get(kind, 0) or 0) for kind in TOKEN_KINDS)

    @property
    def all_units(self) -> list[dict[str, Any]]:
        """The experience facts and then the definition facts the run wrote."""
        return [*self.units, *self.definition_units]

    @property
    def partial_causes(self) -> list[str]:
        """The phases that make a run that went to its end `partial`: `distill` or `screen`
        (a model call failed) and `definitions` (a definition file or commit refused). In
        each case the material concerned is in `pending`, read again next run."""
        return [name for name, info in self.phases.items() if info.get("status") in ("partial", "refused")]

    @property
    def consolidated(self) -> bool:
        """True when the run took material in: it wrote a memory, or read an entry and let
        it go for good (read and not kept, folded into a fact). What the time gate counts
        from (`trigger.state.record_run`; issue 17: a run that consolidated nothing — a
        no-op, or a run whose only units wait for a definition file — is no consolidation)."""
        return bool(improved(self.counts) or self.counts.get("folded") or bool(self.not_kept))

    @property
    def not_kept(self) -> dict[str, int]:
        """The entries read and not kept, per reason (the engine's "not kept: <reason>"
        skips, reason without the prefix), most first: `{"status snapshot": 142, …}`."""
        found = {
            reason.removeprefix(NOT_KEPT): n
            for reason, n in self.skipped.items()
            if reason.startswith(NOT_KEPT) and isinstance(n, int) and not isinstance(n, bool) and n > 0
        }
        return dict(sorted(found.items(), key=lambda item: (-item[1], item[0])))

    @property
    def problem(self) -> bool:
        """True when the run failed, was aborted, or a phase was refused."""
        if self.status in ("failed", "aborted", "partial"):
            return True
        return any(p.get("status") == "refused" for p in self.phases.values())

    def to_json(self) -> dict[str, Any]:
        """The receipt as written to its note (and printed by `run --json`)."""
        document: dict[str, Any] = {"type": "receipt", "version": SCHEMA_VERSION, **self.extra}
        for item in fields(self):
            if item.name in ("revert", "annotations", "extra", "finalised"):
                continue
            value = getattr(self, item.name)
            if (
                item.name in ("definition_units", "units_truncated", "rejected_truncated", "completes")
                and not value
            ):
                continue
            document[item.name] = value
        if self.revert is not None:
            document.update(
                reverts=self.revert.reverts,
                only=self.revert.only,
                replay=self.revert.replay,
                paths=self.revert.paths,
            )
        return document

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> Receipt | None:
        """The receipt in `record` (a note's JSON object), or None when it is not one
        (no `"type": "receipt"`, no string `run`). Values of the wrong type read as their
        defaults: a hand-edited note must not break `gitdream log`."""
        if record.get("type") != "receipt" or not isinstance(record.get("run"), str):
            return None
        receipt = cls(run=record["run"])
        known = {"type", "version", "reverts", "only", "replay", "paths"}
        for item in fields(cls):
            known.add(item.name)
            if item.name in ("run", "revert", "annotations", "extra", "finalised") or item.name not in record:
                continue
            value = record[item.name]
            default = getattr(receipt, item.name)
            if _same_kind(value, default, item.type):
                setattr(receipt, item.name, value)
        if isinstance(record.get("reverts"), str):
            paths = record.get("paths")
            receipt.revert = RevertDetails(
                record["reverts"],
                record["only"] if record.get("only") in KINDS else None,
                record.get("replay") is True,
                paths if isinstance(paths, dict) else {},
            )
        if not isinstance(record.get("status"), str):
            receipt.status = "unknown"
        receipt.extra = {k: v for k, v in record.items() if k not in known}
        return receipt


def improved(counts: dict[str, Any], kinds: tuple[str, ...] = IMPROVED) -> int:
    """The memories a run improved: the sum of `counts[kind]` for `kinds` (IMPROVED for
    the run, EXPERIENCE_IMPROVED for its experience commit); a count that is not a whole
    number (a hand-edited note) counts 0."""
    return sum(v for v in (counts.get(k, 0) for k in kinds) if isinstance(v, int) and not isinstance(v, bool))


def bounded_pending(pending: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`pending` records bounded in size (issue 16: a run over a 1-million-line log wrote a
    62.8 MB receipt): each keeps `count`, the number of its entries; more than
    MAX_PENDING_IDS entry ids become merged line ranges `lines` (`[[start, end], …]`), and
    more than MAX_PENDING_RANGES ranges become `entries: []` — the whole path read again
    from `since`, which reads more than needed, never less."""

    out = []
    for item in pending:
        ids = item.get("entries") or []
        record = {**item, "count": len(ids)}
        if len(ids) > MAX_PENDING_IDS:
            spans = sorted(s[1:] for s in (parse_entry_id(i) for i in ids) if s is not None)
            merged: list[list[int]] = []
            for start, end in spans:
                if merged and start <= merged[-1][1] + 1:
                    merged[-1][1] = max(merged[-1][1], end)
                else:
                    merged.append([start, end])
            record["entries"] = []
            if len(merged) <= MAX_PENDING_RANGES:
                record["lines"] = merged
        out.append(record)
    return out


def _same_kind(value: Any, default: Any, declared: Any) -> bool:
    """Whether `value` (from a note) may stand for a field whose default is `default`
    and whose declared type (a string: annotations are postponed) is `declared`."""
    text = str(declared)
    if value is None:
        return "None" in text
    if isinstance(default, bool) or text.startswith("bool"):
        return isinstance(value, bool)
    if text.startswith(("float", "int")) or isinstance(default, int):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if text.startswith("str"):
        return isinstance(value, str)
    if text.startswith("dict") or isinstance(default, dict):
        return isinstance(value, dict)
    if text.startswith("list") or isinstance(default, list):
        return isinstance(value, list)
    return False


def _totals(calls: list[dict[str, Any]]) -> dict[str, int]:
    tokens = _no_tokens()
    for call in calls:
        for kind, key in _CALL_TOKENS.items():
            tokens[kind] += int(call.get(key, 0) or 0)
    return tokens


# --- redaction ------------------------------------------------------------------------

# Receipt fields that hold identifiers, or facts already screened and written to memory
# (`gitdream audit --run` matches them against the topic files); every other string of a
# receipt passes through the scanner's masks.
_RECEIPT_IDS = frozenset(
    {"run", "agent", "agent_dir", "input_commit", "commits", "base", "watermark_before"}
    | {"watermark_after", "branch", "started", "finished", "pending", "units", "definition_units"}
    | {"revert", "annotations", "extra", "finalised"}
)
_WORD = re.compile(r"[A-Za-z_]{0,16}")


def redact(receipt: Receipt, cfg: Config) -> None:
    """Mask, in place, whatever the secret scanner finds in the receipt's free text —
    warnings, errors, phase details (a model's schema violations quote its answer), model
    calls, rejected units — so a receipt never becomes the leak the scanner prevents.
    A receipt whose free text is only short words (a no-op's) is left as it is without
    loading the scanner: the idle path stays cheap, and short of the lock."""
    free = [item.name for item in fields(receipt) if item.name not in _RECEIPT_IDS]
    if not any(_free_text(getattr(receipt, name)) for name in free):
        return
    from gitdream.dream.screen import redact_json  # idle path: a no-op's receipt never loads the scanner

    allow, deny = _patterns(cfg)
    for name in free:
        setattr(receipt, name, redact_json(getattr(receipt, name), allow=allow, deny=deny))


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
    from gitdream.dream.screen import user_patterns  # idle path: a no-op's receipt never loads the scanner

    try:
        return user_patterns(cfg)
    except ConfigError:
        return [], []


def rejected_json(rejected: list[Rejected], cfg: Config) -> list[dict[str, Any]]:
    """Rejected units for the receipt. A unit holding a secret anywhere (title, body or
    topic) is recorded with its sources, its topic withheld, and its title masked — or
    withheld too when it holds a piece of the secret the scanner cannot see as one (cut
    short, lower-cased): an engine carries secrets into titles and topics in such forms."""
    if not rejected:
        return []
    from gitdream.dream.screen import elide_tokens, scan_text  # idle path: a no-op never loads the scanner
    from gitdream.dream.screen import redact as mask  # idle path: a no-op never loads the scanner

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
            title = elide_tokens(mask(unit.title, allow=allow, deny=deny))
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


# --- the notes ---------------------------------------------------------------------------


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def append(repo: Repo, commit: str, record: dict[str, Any], ident: Identity) -> None:
    """Append `record` (a JSON-serialisable dict) to the note on `commit`.

    Retries when another process moved the notes ref meanwhile; raises GitdreamError
    after repeated failures.
    """
    line = json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    # A lone surrogate (a file name that is not UTF-8, read with surrogateescape) cannot be
    # written as UTF-8: it is kept as its JSON escape, which reads back the same.
    line = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", line)
    notes.append_line(repo, NOTES_REF, commit, line, ident)


def write(repo: Repo, receipt: Receipt, ident: Identity) -> None:
    """Append the finalised `receipt` to the note on its input commit."""
    assert receipt.finalised and receipt.input_commit is not None
    append(repo, receipt.input_commit, receipt.to_json(), ident)


def receipts(repo: Repo) -> list[Receipt]:
    """All receipts (with annotations folded in as `annotations`), newest first by run id."""
    found: dict[str, Receipt] = {}
    annotations: dict[str, list[dict[str, Any]]] = {}
    for _commit, record in iter_records(repo):
        receipt = Receipt.from_json(record)
        if receipt is not None:
            found[receipt.run] = receipt
        elif record.get("type") == "annotation" and isinstance(record.get("run"), str):
            annotations.setdefault(record["run"], []).append(record)
    for run, items in annotations.items():
        if run in found:
            found[run].annotations = items
    return sorted(found.values(), key=lambda r: r.run, reverse=True)


def latest(repo: Repo, agent_id: str, commit: str | None) -> Receipt | None:
    """The newest completed dream receipt of `agent_id` in the note on `commit` (its
    watermark), or None. "Completed" means status ok, partial or noop; receipts of reverts
    (`trigger: revert`) are not dreams and are skipped (their `pending` is always empty)."""
    record = latest_dream(repo, agent_id, commit)
    return Receipt.from_json(record) if record is not None else None


def tokens_used_since(repo: Repo, since_iso: str) -> int:
    """Model tokens (input, output and cache tokens) of all receipts that finished at or
    after `since_iso` (an ISO 8601 UTC time): the repository's daily budget counter."""
    total = 0
    for _commit, record in iter_records(repo):
        receipt = Receipt.from_json(record)
        if receipt is None or str(receipt.finished or "") < since_iso:
            continue
        total += receipt.total_tokens
    return total


def tokens_used_today(repo: Repo) -> int:
    """`tokens_used_since` the start of today's UTC day (`clock.now()`): what counts
    against `anthropic.max_tokens_per_day`."""
    midnight = clock.now().replace(hour=0, minute=0, second=0, microsecond=0)
    return tokens_used_since(repo, clock.iso(midnight))
