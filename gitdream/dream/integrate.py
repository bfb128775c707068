"""Integration: units become new texts of memory files (phase 6) and definition files (phase 8).

Pure: texts in, texts out — no git, no file system, no clock (`today` is an argument). The
pipeline commits `changes` through the commit builder.

Invariants (DESIGN §3 ownership, §5 phases 6 and 8, §6 managed blocks):

- **Ownership.** gitdream writes only inside its managed blocks — `facts` in topic files,
  `index` in `MEMORY.md`, `learned` in SKILL.md/soul.md/agent.md — and in files it created:
  dream-owned topics (front matter `origin: gitdream`) and `archive/<YYYY-MM>.md`. Every byte
  of a human-written file outside those blocks stays; this is checked on the result before
  it is returned (`LossGuardError` when violated), not assumed.
- **Nothing is deleted.** The only `None` in `changes` is a dream-owned topic that demotion
  moved, whole, into the archive in the same result.
- **Loss guard.** Facts (in `facts` and `archived-*` blocks) and index lines are counted before
  and after; text moved to the archive counts as kept, and so does an index line left out of
  `MEMORY.md` for size while its topic file stays. A result that would drop more than
  `max_loss_fraction` of either is refused with `LossGuardError`.
- **Idempotence.** The same units integrated twice corroborate (the fact's `seen` grows, its
  sources are de-duplicated) and never add a second line; no units and nothing to demote
  means no changes at all.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from gitdream.dream import describe, grouping
from gitdream.dream import memoryfiles as mf
from gitdream.dream.facts import Fact, cites, merge_sources, one_line, render
from gitdream.dream.facts import parse as parse_facts
from gitdream.dream.supersede import Candidates, Superseded, subject_names
from gitdream.errors import BlockError, LossGuardError
from gitdream.text import blocks
from gitdream.text.clip import clip
from gitdream.text.similarity import normalise
from gitdream.units import Rejected, TopicProposal, Unit, parse_entry_id, parse_source_ref, source_ref

if TYPE_CHECKING:
    from gitdream.agents import Agent
    from gitdream.config import Config

FACT_MAX_CHARS = 1000
"""Longest fact text integration writes, in characters ("…" included); longer unit bodies
are clipped (the offline engine already stops at 400)."""
TITLE_MAX_CHARS = 80
"""Longest `# Title` / front matter `name` of a new topic, in characters."""
DESCRIPTION_MAX_CHARS = 120
"""Longest front matter `description` of a new topic (its first fact, clipped), in characters."""
INDEX_LINE_MAX_CHARS = 150
"""Index lines gitdream writes are at most this many characters (the description is clipped)."""
INDEX_HEADER = (
    "# Memory index\n\n"
    "One line per topic file in this folder. gitdream keeps the block below up to date;\n"
    "lines outside it are yours and it never changes them.\n"
)
_OVERFLOW = re.compile(r"^- … and \d+ more topics? (?:are|is) not listed here")
_PARAGRAPH_OR_ITEM = re.compile(r"\n\s*\n|\n(?=[ \t]*(?:[-*+]|\d+[.)])\s)")
"""Where a person's topic text divides into the paragraphs and list items `relate` reads."""


# --- results -------------------------------------------------------------------------------


@dataclass
class FactWritten:
    """A fact this run created or touched: `path` of the file, the fact `text`, the source
    references this run cited for it (`<entry id>@<12 hex>`), `action` (created,
    corroborated, refined) and the resulting `seen` count."""

    path: str
    text: str
    sources: list[str]
    action: str
    seen: int

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "text": self.text,
            "sources": list(self.sources),
            "action": self.action,
            "seen": self.seen,
        }


@dataclass
class LossReport:
    """Counts behind the loss guard. Facts: in `facts` and `archived-*` blocks of the memory
    files. Index: lines of the `index` block whose topic existed (or that are not links)."""

    facts_before: int = 0
    facts_after: int = 0
    index_before: int = 0
    index_kept: int = 0
    max_fraction: float = 0.25

    @property
    def facts_lost(self) -> int:
        return max(0, self.facts_before - self.facts_after)

    @property
    def index_lost(self) -> int:
        return max(0, self.index_before - self.index_kept)

    def to_json(self) -> dict[str, object]:
        return {
            "facts_before": self.facts_before,
            "facts_after": self.facts_after,
            "index_before": self.index_before,
            "index_kept": self.index_kept,
            "max_fraction": self.max_fraction,
        }


@dataclass
class ExperienceResult:
    """What `integrate_experience` computed.

    `changes`: repository-relative path → new full text, or None for a dream-owned topic
    moved to the archive. Counters: `created`, `corroborated`, `refined` (facts),
    `topics_created` (paths), `demoted` (one dict per topic: slug, path, archive, last).
    `facts_written`: every fact touched, for the receipt and `gitdream audit`. `rejected`:
    units not integrated, with the reason. `waiting`: the sources of units rejected only
    because their topic file cannot be written safely (malformed markers, unreadable front
    matter) — material to read again once the file is fixed. `warnings`: things a person
    should know (MEMORY.md over its limits, a malformed file left alone). `index`: size of MEMORY.md after the run
    (lines, bytes, topics listed, topics left out for size). `loss`: the loss-guard counts.
    """

    changes: dict[str, str | None] = field(default_factory=dict)
    created: int = 0
    corroborated: int = 0
    refined: int = 0
    superseded: int = 0
    topics_created: list[str] = field(default_factory=list)
    demoted: list[dict[str, str]] = field(default_factory=list)
    facts_written: list[FactWritten] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)
    loss: LossReport = field(default_factory=LossReport)

    def to_json(self) -> dict[str, object]:
        return {
            "changes": {p: ("deleted" if t is None else "written") for p, t in sorted(self.changes.items())},
            "created": self.created,
            "corroborated": self.corroborated,
            "refined": self.refined,
            "superseded": self.superseded,
            "topics_created": list(self.topics_created),
            "demoted": [dict(d) for d in self.demoted],
            "facts_written": [f.to_json() for f in self.facts_written],
            "rejected": [r.to_json() for r in self.rejected],
            "warnings": list(self.warnings),
            "index": dict(self.index),
            "loss": self.loss.to_json(),
        }


@dataclass
class Refusal:
    """A definition file left unchanged: its `path` (None when the agent has no file for the
    target), the unit `target`, why (`reason`), the next step (`hint`) and the titles of
    the units that were not written."""

    path: str | None
    target: str
    reason: str
    hint: str
    units: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "target": self.target,
            "reason": self.reason,
            "hint": self.hint,
            "units": list(self.units),
        }


@dataclass
class DefinitionResult:
    """What `integrate_definitions` computed: `changes` (path → new full text; definition
    files are never created or deleted), `refused` files with reasons, counters, the facts
    written, units rejected on their own (bad target, no sources) and warnings."""

    changes: dict[str, str] = field(default_factory=dict)
    refused: list[Refusal] = field(default_factory=list)
    created: int = 0
    corroborated: int = 0
    refined: int = 0
    facts_written: list[FactWritten] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "changes": sorted(self.changes),
            "refused": [r.to_json() for r in self.refused],
            "created": self.created,
            "corroborated": self.corroborated,
            "refined": self.refined,
            "facts_written": [f.to_json() for f in self.facts_written],
            "rejected": [r.to_json() for r in self.rejected],
            "warnings": list(self.warnings),
        }


def apply_changes(files: dict[str, str], changes: dict[str, str | None]) -> dict[str, str]:
    """`files` (path → text) with `changes` applied: a text replaces or adds, None removes."""
    out = dict(files)
    for path, text in changes.items():
        if text is None:
            out.pop(path, None)
        else:
            out[path] = text
    return out


# --- facts of one block ----------------------------------------------------------------------


def _refs(unit: Unit, input_commit: str) -> list[str] | None:
    """Source references of a unit: entry ids become `<id>@<12 hex>`; existing references
    stay. None when a source cannot be written into the fact format."""
    out: list[str] = []
    for source in unit.sources:
        source = source.strip()
        if not source or "`" in source or "\n" in source or "<!--" in source:
            return None
        if parse_source_ref(source) is None and parse_entry_id(source) is not None:
            source = source_ref(source, input_commit)
        if source not in out:
            out.append(source)
    return out


def _fact_text(unit: Unit) -> str:
    return clip(mf.neutral(one_line(unit.body or unit.title)), FACT_MAX_CHARS)


MAX_SOURCES = 12
"""At most this many source references are kept per fact (the oldest third and the newest)."""


class _FactList:
    """The facts of one block, with lookup by normalised text (see text.similarity)."""

    def __init__(self, facts: list[Fact], names: tuple[str, ...] = ()) -> None:
        """`names`: the topic's title and slug, which a label naming only the subject
        repeats (`supersede.subject_names`)."""
        self.facts = facts
        self._by_text: dict[str, Fact] = {}
        for fact in facts:
            self._by_text.setdefault(_norm(fact.text), fact)
        # what a new fact may supersede, kept in step
        self.candidates = Candidates(facts, subject_names(*names))

    def find(self, text: str | None) -> Fact | None:
        return self._by_text.get(_norm(text)) if text else None

    def add(self, text: str, refs: list[str], when: date | None) -> Fact:
        fact = Fact(text=text, sources=list(refs), seen=1, first=when, last=when)
        self.facts.append(fact)
        self._by_text.setdefault(_norm(text), fact)
        self.candidates.add(fact)
        return fact

    def touch(self, fact: Fact, refs: list[str], when: date | None, new_text: str | None = None) -> None:
        """Corroborate (`new_text` None: seen + 1) or refine (replace the text)."""
        if fact.raw is not None:  # a hand-edited line: adopt it as a fact with metadata
            fact.raw = None
            fact.seen = 0
        if new_text is not None:
            self._by_text.pop(_norm(fact.text), None)
            seq = self.candidates.remove(fact)
            fact.text = new_text
            self.candidates.add(fact, seq)
            self._by_text.setdefault(_norm(new_text), fact)
        elif not refs or any(not _cited_by(fact, ref) for ref in refs):
            fact.seen += 1  # an entry already cited (read again) is not a new corroboration
        for ref in refs:
            if ref not in fact.sources and not _lines_cited(fact, ref):
                fact.sources.append(ref)
        fact.sources[:] = merge_sources(fact.sources)  # consecutive lines: one range
        if len(fact.sources) > MAX_SOURCES:
            # Keep the first sources (where the fact came from) and the newest ones; `seen`
            # still counts every corroboration. Unbounded, one fact seen 136 times carried a
            # 9.5 KB citation line.
            head = MAX_SOURCES // 3
            fact.sources[:] = fact.sources[:head] + fact.sources[-(MAX_SOURCES - head) :]
        if when is not None:
            fact.first = min(fact.first, when) if fact.first else when
            fact.last = max(fact.last, when) if fact.last else when

    def supersede(self, old: Fact, text: str, refs: list[str], when: date | None) -> Fact:
        """Put a new fact in `old`'s place; `old` leaves the list (the caller keeps it in
        the `superseded` block)."""
        fact = Fact(text=text, sources=list(refs), seen=1, first=when, last=when)
        position = self.facts.index(old)  # the first fact equal to `old`
        self.candidates.add(fact, self.candidates.remove(self.facts[position]))
        self.facts[position] = fact
        if self._by_text.get(_norm(old.text)) is old:
            del self._by_text[_norm(old.text)]
        self._by_text.setdefault(_norm(text), fact)
        return fact


def _lines_cited(fact: Fact, ref: str) -> bool:
    """True when a source of `fact` already cites every line `ref` cites, of the same file
    (read at any commit): the same entry read again adds no source."""
    parsed = parse_source_ref(ref)
    entry = parse_entry_id(parsed[0] if parsed else ref)
    if entry is None:
        return False
    for source in fact.sources:
        known = parse_source_ref(source)
        cited = parse_entry_id(known[0] if known else source)
        if cited is not None and cited[0] == entry[0] and cited[1] <= entry[1] and entry[2] <= cited[2]:
            return True
    return False


def _cited_by(fact: Fact, ref: str) -> bool:
    """True when `fact` already cites the lines of source reference `ref` (`facts.cites`:
    the same entry, or a range of the same file overlapping it)."""
    parsed = parse_source_ref(ref)
    entry = parse_entry_id(parsed[0] if parsed else ref)
    return ref in fact.sources if entry is None else cites(fact.sources, *entry)


def _norm(text: str) -> str:
    return normalise(text) or " ".join(text.casefold().split())


def _apply(
    facts: _FactList,
    unit: Unit,
    text: str,
    refs: list[str],
    when: date | None,
    locate: Callable[[str], Any],
    superseded: list[Superseded] | None = None,
    today: date | None = None,
) -> tuple[str, Fact]:
    """Apply one unit to a fact list; returns (action done, fact). `locate` finds the fact a
    corroborate/refine/correct unit names in this list (None when absent).

    With a `superseded` list (topic files), a `correct` unit and a `create` unit whose text
    states a different value for the subject of an existing fact (`supersede.supersedes`)
    replace that fact, which goes into `superseded` dated by the newer statement (`when`,
    else `today`) — unless the unit's statement is the older of the two (`when` before the
    fact's `last`): then the fact stands and the unit's text goes into `superseded`;
    without one (definition
    files), `correct` replaces the text like `refine`."""
    if unit.action in ("corroborate", "refine", "correct"):
        fact = locate(unit.corroborates or "") if unit.corroborates else None
        if fact is None and unit.action == "corroborate":
            fact = facts.find(text)
        if fact is not None:
            if unit.action == "corroborate":
                facts.touch(fact, refs, when)
                return "corroborated", fact
            if unit.action == "correct" and superseded is not None and fact.raw is None:
                superseded.append(Superseded(fact, when or today or date.min, text))
                return "superseded", facts.supersede(fact, text, refs, when)
            facts.touch(fact, refs, when, new_text=text)
            return "refined", fact
    same = facts.find(text)
    if same is not None:
        facts.touch(same, refs, when)
        return "corroborated", same
    if superseded is not None:
        found = facts.candidates.find(text)  # as find_superseded(text, facts.facts)
        if found is not None and when is not None and found[0].last is not None and when < found[0].last:
            # An older statement read late (a backfilled log, a lower salience): the fact
            # it contradicts is the newer one and stands; the older value is kept as
            # superseded by it, on the day the newer one was stated.
            outdated = Fact(text=text, sources=list(refs), seen=1, first=when, last=when)
            superseded.append(Superseded(outdated, found[0].last, found[0].text))
            return "superseded", outdated
        if found is not None:
            superseded.append(Superseded(found[0], when or today or date.min, text))
            return "superseded", facts.supersede(found[0], text, refs, when)
    return "created", facts.add(text, refs, when)


# --- experience ------------------------------------------------------------------------------


@dataclass
class _Live:
    """A topic the run writes to: existing (`topic` set) or new. `superseded` holds the
    facts this run superseded in it; `related` its `Related:` links once computed."""

    slug: str
    path: str
    facts: _FactList
    topic: mf.Topic | None = None
    title: str = ""
    description: str = ""
    kind: str = "project"
    touched: bool = False
    superseded: list[Superseded] = field(default_factory=list)
    related: list[str] = field(default_factory=list)

    @property
    def owned(self) -> bool:
        return self.topic is None or self.topic.owned


def _topic_type(slug: str) -> str:
    """Claude Code memory type of a new topic: the slug's prefix when it follows the
    `feedback_x` / `user-x` naming convention, else `project`."""
    head = re.split(r"[_-]", slug, maxsplit=1)[0].casefold()
    return head if head in mf.CLAUDE_TYPES and head != slug.casefold() else "project"


def _new_title(unit: Unit, slug: str) -> str:
    title = mf.neutral(one_line(unit.title))
    if not title or title.startswith("#"):
        title = re.sub(r"[-_]+", " ", slug).strip() or slug
        title = title[0].upper() + title[1:]
    return clip(title, TITLE_MAX_CHARS)


def summary_of(
    facts: list[Fact], title: str = "", slug: str = "", slot: Callable[[str], bool] | None = None
) -> str:
    """What a topic holds now, for its `description` and index line: its most salient
    current fact, shortened at a boundary of its meaning to DESCRIPTION_MAX_CHARS, or to
    the room the index line of topic `slug` titled `title` leaves when that is less, so
    the index line shows the description whole (`gitdream.dream.describe`; `slot`: which
    labels are slots of a template); "" for none."""
    room = _index_room(_index_line(title, slug, "")) if slug else DESCRIPTION_MAX_CHARS
    return describe.summary_of(facts, title, max(10, min(DESCRIPTION_MAX_CHARS, room)), slot)


def _related_line(live: _Live, titles: dict[str, str]) -> str:
    links = ", ".join(_link(titles.get(slug, slug), slug) for slug in live.related)
    return f"Related: {links}\n" if links else ""


def _link(title: str, slug: str) -> str:
    label = title.replace("[", "(").replace("]", ")")
    target = quote(f"{slug}.md", safe="-_.~!$&'*+,;=:@") if re.search(r"[\s()<>]", slug) else f"{slug}.md"
    return f"[{label}]({target})"


def _with_blocks(text: str, live: _Live, old_superseded: list[Fact], titles: dict[str, str]) -> str:
    """`text` with the facts, superseded and related blocks of `live` written (the last two
    only when they hold something, or held something before; a related block left empty
    is removed from a topic gitdream owns, and kept empty in a person's topic)."""
    text = blocks.replace(text, mf.FACTS_BLOCK, render(live.facts.facts), live.path)
    gone = old_superseded + [s.as_fact() for s in live.superseded]
    if gone:
        text = blocks.replace(text, mf.SUPERSEDED_BLOCK, render(gone), live.path)
    line = _related_line(live, titles)
    if line:
        text = blocks.replace(text, mf.RELATED_BLOCK, line, live.path)
    elif live.topic is None or live.topic.owned:  # no empty block left in a file of gitdream's
        text = blocks.remove(text, mf.RELATED_BLOCK, live.path)
    elif blocks.find(text, mf.RELATED_BLOCK, live.path) is not None:
        text = blocks.replace(text, mf.RELATED_BLOCK, "", live.path)
    return text


def _render_new_topic(live: _Live, titles: dict[str, str]) -> str:
    meta = {
        "name": live.title,
        "description": live.description,
        "type": live.kind,
        mf.ORIGIN_KEY: mf.ORIGIN_VALUE,
    }
    head = mf.render_front_matter(meta) + f"\n# {live.title}\n"
    return _with_blocks(head, live, [], titles)


def _proposed(text: str, limit: int) -> str:
    """An engine's name or description made fit for front matter and the index: one line,
    no terminal escapes, bidi overrides or comment openers (`mf.neutral`), clipped."""
    return clip(mf.neutral(one_line(text)).lstrip("#").strip(), limit)


def _label_key(label: str) -> str:
    """A label as the engine's `slots` write it: case-folded, one space between words,
    without markup or a trailing colon."""
    return " ".join(label.replace("*", " ").replace("`", " ").casefold().split()).strip(" :：-—")


def _refresh_description(text: str, description: str) -> str:
    """A dream-owned topic's text with its front matter `description` set to
    `description` (nothing else of the file changes)."""
    meta, start = mf.split_front_matter(text)
    if meta is None or meta.get("description") == description or not description:
        return text
    meta["description"] = description
    return mf.render_front_matter(meta) + text[start:]


class _Experience:
    """One integration of experience units (see `integrate_experience`)."""

    def __init__(
        self,
        agent: Agent,
        files: dict[str, str],
        input_commit: str,
        today: date,
        topics: Mapping[str, TopicProposal] | None = None,
        slots: Iterable[str] = (),
    ) -> None:
        self.agent = agent
        self.slots = frozenset(_label_key(s) for s in slots)
        # An engine's names and descriptions of topics (case-folded slug → proposal); None
        # when it names none: then descriptions follow the facts (summary_of).
        self.proposals = None if topics is None else {k.casefold(): v for k, v in topics.items()}
        self.input_commit = input_commit
        self.today = today
        self.result = ExperienceResult()
        self.memory = mf.read_memory(agent, files)
        self.live: dict[str, _Live] = {}
        self.global_facts: dict[str, str] = {}  # normalised fact text → slug
        self.folded = {slug.casefold(): slug for slug in sorted(self.memory.topics, reverse=True)}
        for slug, topic in self.memory.topics.items():
            for fact in topic.facts or ():
                self.global_facts.setdefault(_norm(fact.text), slug)
        self.left_alone: set[str] = set()
        self._slot: Callable[[str], bool] | None = None  # `slot`, once read

    def get_live(self, slug: str) -> _Live | None:
        if slug in self.live:
            return self.live[slug]
        topic = self.memory.topics.get(slug)
        if topic is not None:
            if topic.error is not None:
                return None
            facts = _FactList(list(topic.facts or []), (slug, topic.title))
            entry = _Live(slug, topic.path, facts, topic)
        else:
            entry = _Live(slug, mf.topic_path(self.agent, slug), _FactList([], (slug,)))
        self.live[slug] = entry
        return entry

    def reject(self, unit: Unit, reason: str) -> None:
        self.result.rejected.append(Rejected(unit, "integrate", reason))

    def left(self, unit: Unit, slug: str) -> None:
        """`unit` waits: its topic file cannot be written safely."""
        topic = self.memory.topics[slug]
        where = f"{topic.path}:{topic.error_line}" if topic.error_line else topic.path
        problem = (
            (topic.error or "").removeprefix(f"{topic.path}: ").removeprefix(f"line {topic.error_line}: ")
        )
        self.reject(unit, f"cannot be written safely, file left alone: {where}: {problem}")
        self.result.waiting.extend(unit.sources)
        if topic.path not in self.left_alone:
            self.left_alone.add(topic.path)
            self.result.warnings.append(
                f"{where}: {problem}; gitdream left this topic alone — fix it, and the facts "
                "waiting for it are written by the next run"
            )

    def integrate(self, unit: Unit) -> None:
        if unit.target != "experience":
            self.reject(
                unit, f"target {unit.target!r} is not experience; definitions are integrated separately"
            )
            return
        refs = _refs(unit, self.input_commit)
        if not refs:
            self.reject(unit, "no usable source: every fact must cite at least one entry")
            return
        text = _fact_text(unit)
        if not text:
            self.reject(unit, "empty fact text")
            return
        slug = self.folded.get(unit.topic.casefold(), unit.topic)  # one file per name, whatever its case
        if not mf.safe_slug(slug) or not self.agent.is_memory_path(mf.topic_path(self.agent, slug)):
            self.reject(unit, f"unsafe topic slug {slug!r}")
            return
        target = self.get_live(slug)
        if target is None:
            self.left(unit, slug)
            return
        when = unit.date or self.today
        names_fact = unit.action in ("corroborate", "refine", "correct") and unit.corroborates
        if names_fact and target.facts.find(unit.corroborates) is None:
            other = self.global_facts.get(_norm(unit.corroborates or ""))
            holder = self.get_live(other) if other else None
            if holder is not None and holder.facts.find(unit.corroborates) is not None:
                target = holder
        if target.topic is None and not target.touched:
            proposal = (self.proposals or {}).get(slug.casefold())
            target.title = _proposed(proposal.name, TITLE_MAX_CHARS) if proposal else ""
            target.title = target.title or _new_title(unit, slug)
            target.kind = _topic_type(slug)
        action, fact = _apply(
            target.facts, unit, text, refs, when, target.facts.find, target.superseded, self.today
        )
        if unit.action == "corroborate" and action == "created" and unit.corroborates:
            self.result.warnings.append(
                f"the fact a unit corroborates was not found in {target.path}; it was added as a new fact"
            )
        target.touched = True
        self.global_facts.setdefault(_norm(fact.text), target.slug)
        setattr(self.result, action, getattr(self.result, action) + 1)
        self.result.facts_written.append(FactWritten(target.path, fact.text, refs, action, fact.seen))

    def relate(self) -> None:
        """The `Related:` links of every touched topic (grouping.relations)."""

        slugs = sorted(set(self.memory.topics) | {s for s, e in self.live.items() if e.touched})
        topics: dict[str, tuple[str, list[str]]] = {}
        for slug in slugs:
            entry = self.live.get(slug)
            facts = entry.facts.facts if entry is not None else (self.memory.topics[slug].facts or [])
            topic = self.memory.topics.get(slug)
            texts = [f.text for f in facts]
            if topic and topic.facts is None:  # a person's topic: each paragraph or item a text
                texts += [p for p in _PARAGRAPH_OR_ITEM.split(mf.body_text(topic.text)) if p.strip()]
            name = (topic.name or topic.title) if topic else self.live[slug].title
            topics[slug] = (name, texts)
        touched = [slug for slug, entry in self.live.items() if entry.touched]
        for slug, links in grouping.relations(topics, touched).items():
            self.live[slug].related = links

    def description(self, entry: _Live) -> str:
        """A touched topic's description: the engine's proposal for a new or dream-owned
        topic; without proposals (an engine that names no topics) what it holds now
        (`summary_of`); an existing topic the engine did not describe again keeps its own."""
        if self.proposals is None:
            return summary_of(entry.facts.facts, entry.title, entry.slug, self.slot())
        proposal = self.proposals.get(entry.slug.casefold())
        if proposal is not None and entry.owned:
            described = _proposed(proposal.description, DESCRIPTION_MAX_CHARS)
            if described:
                return described
        if entry.topic is not None:
            return entry.topic.description
        return summary_of(entry.facts.facts, entry.title, entry.slug, self.slot())

    def slot(self) -> Callable[[str], bool]:
        """Whether a label is a slot of a template: one the engine found in the material
        (`slots`), or one that holds no name (`grouping.Casing.holds_no_name`: every word a
        common one, which the agent's memory — every topic's facts, a person's topic text —
        also writes in lower case: "Files and Code Sections"), read once the run's facts
        are in place. A sentence filling one does not describe a topic that holds another
        (`describe.summary_of`)."""
        if self._slot is None:
            texts: list[str] = []
            for slug in sorted(set(self.memory.topics) | set(self.live)):
                live = self.live.get(slug)
                topic = self.memory.topics.get(slug)
                facts = live.facts.facts if live is not None else (topic.facts if topic else None) or []
                texts += [f.text for f in facts]
                if topic is not None and not topic.owned:
                    texts.append(mf.body_text(topic.text))
            casing = grouping.Casing(texts)
            self._slot = lambda label: _label_key(label) in self.slots or casing.holds_no_name(label)
        return self._slot

    def titles(self) -> dict[str, str]:
        out = {slug: topic.title for slug, topic in self.memory.topics.items()}
        out.update({slug: e.title for slug, e in self.live.items() if e.topic is None and e.touched})
        return out

    def render(self) -> None:
        self.relate()
        titles = self.titles()
        for slug in sorted(self.live):
            entry = self.live[slug]
            if not entry.touched:
                continue
            entry.description = self.description(entry)
            if entry.topic is None:
                self.result.changes[entry.path] = _render_new_topic(entry, titles)
                self.result.topics_created.append(entry.path)
                continue
            old_gone = mf.superseded_facts(entry.topic)
            new = _with_blocks(entry.topic.text, entry, old_gone, titles)
            if entry.topic.owned:
                new = _refresh_description(new, entry.description)
            if new != entry.topic.text:
                self.result.changes[entry.path] = new


def integrate_experience(
    agent: Agent,
    files: dict[str, str],
    units: list[Unit],
    *,
    input_commit: str,
    today: date,
    cfg: Config,
    stale_before: date | None = None,
    topics: Mapping[str, TopicProposal] | None = None,
    slots: Iterable[str] = (),
) -> ExperienceResult:
    """Merge experience units into the agent's memory files; demote stale topics; keep
    MEMORY.md within its limits; guard against loss (module docstring; DESIGN §5 phase 6).

    `files`: the agent's memory at the input commit, repository-relative path → text
    (MEMORY.md, topic files, archive files; other paths are ignored). `units`: experience
    units in order (other targets are rejected). `input_commit`: hex id (its first 12 hex
    digits go into source references). `today`: the run's date (archive month, dates of
    undated units). `stale_before`: the day staleness is
    measured against (default `today`): a dream-owned topic whose newest fact is
    `archive_days` older than it is demoted. The pipeline passes the newest date of the
    run's material, so the agent's own clock decides — importing an old backlog does not
    archive what it has just written. `cfg`: archive_days (days), memory_max_lines (lines),
    memory_max_bytes (UTF-8 bytes), max_loss_fraction.

    Units: `create` adds a fact to `<memory_dir>/<unit.topic>.md` (an existing file whose
    name differs only in case is used instead; a dream-owned topic file is created when
    absent; a fact with the same normalised text is corroborated instead; a fact stating a
    different value for the same subject is superseded — `gitdream.dream.supersede`);
    `corroborate` finds the fact named by `unit.corroborates` (in that topic, else in any
    topic) and adds 1 to `seen` (not when the source entry is already cited), moves `last`,
    appends the new sources; `refine` replaces that fact's text; `correct` supersedes it. A
    unit whose fact is not found is created. A superseded fact moves, with its sources, into
    the topic's `superseded` block with the date and the text that replaced it. A new
    topic's title is its name in `topics` (an engine's `TopicProposal`s by slug), else
    `unit.title`; the `description` of a dream-owned topic, and its `MEMORY.md` line, are
    the engine's description in `topics` when it gave one, else — with `topics` None —
    what it holds now (`summary_of`), refreshed whenever it changes;
    `slots` (the engine's `DistillResult.slots`) are labels of the material that are slots
    of a template: a fact filling one describes only a topic that holds nothing else;
    each touched topic gets a `related` block (`Related:` links to up to three topics
    sharing its subject's terms).

    Returns an ExperienceResult. Raises LossGuardError when the result would drop more than
    `max_loss_fraction` of the facts or index lines, or change bytes gitdream does not own.
    """
    run = _Experience(agent, files, input_commit, today, topics, slots)
    for unit in units:
        run.integrate(unit)
    run.render()
    result, memory, live = run.result, run.memory, run.live
    demoted = _demote(agent, memory, live, result, today, cfg.int("archive_days"), stale_before or today)
    described = any(e.touched and e.owned for e in live.values())
    if result.topics_created or demoted or described:
        _write_index(agent, memory, live, demoted, result, cfg)
    result.loss = check_loss(
        agent,
        files,
        result.changes,
        max_fraction=cfg.float("max_loss_fraction"),
        archived=set(demoted),
    )
    _check_ownership(agent, files, result.changes)
    return result


# --- demotion --------------------------------------------------------------------------------


def _rename_blocks(text: str, where: str, first: int) -> tuple[str, int]:
    """`text` with every managed block renamed `archived-<n>` (n from `first`); returns the
    text and the next free n. Only the two marker lines of each block change."""
    out = []
    last = 0
    number = first
    for block in blocks.parse(text, where):
        begin_line = text[block.start : block.inner_start]
        end_line = text[block.inner_end : block.end]
        newline_b = begin_line[len(begin_line.rstrip("\r\n")) :]
        newline_e = end_line[len(end_line.rstrip("\r\n")) :]
        name = f"{mf.ARCHIVED_BLOCK_PREFIX}{number}"
        out.append(text[last : block.start])
        out.append(f"<!-- gitdream:begin {name} -->{newline_b}")
        out.append(text[block.inner_start : block.inner_end])
        out.append(f"<!-- gitdream:end {name} -->{newline_e}")
        last = block.end
        number += 1
    out.append(text[last:])
    return "".join(out), number


def _without_block(text: str, name: str, where: str) -> str:
    """`text` without block `name` (markers included): a topic's `Related:` links are
    derived from the topics around it and are not carried into the archive."""
    block = blocks.find(text, name, where)
    if block is None:
        return text
    return (
        text[: block.start].rstrip("\r\n") + "\n" + text[block.end :]
        if text[block.end :].strip()
        else text[: block.start].rstrip("\r\n") + "\n"
    )


def _fence_front_matter(text: str) -> str:
    """Put a topic's front matter inside a ```yaml fence, so that inside the archive its
    `---` lines are not read as Markdown rules or headings. No byte of it is dropped."""
    meta, start = mf.split_front_matter(text)
    if meta is None or start == 0:
        return text
    head = text[:start]
    fence = "```"
    while fence in head:
        fence += "`"
    if not head.endswith("\n"):
        head += "\n"
    return f"{fence}yaml\n{head}{fence}\n{text[start:]}"


def _next_archived_number(text: str, where: str) -> int:
    numbers = [0]
    for block in blocks.parse(text, where):
        suffix = block.name.removeprefix(mf.ARCHIVED_BLOCK_PREFIX)
        if block.name.startswith(mf.ARCHIVED_BLOCK_PREFIX) and suffix.isdigit():
            numbers.append(int(suffix))
    return max(numbers) + 1


def _demote(
    agent: Agent,
    memory: mf.MemoryFiles,
    live: dict[str, _Live],
    result: ExperienceResult,
    today: date,
    archive_days: int,
    stale_before: date,
) -> list[str]:
    """Move dream-owned topics whose newest fact `last` date is `archive_days` or more days
    before `stale_before` (and that this run did not touch) into
    `archive/<today's YYYY-MM>.md`.
    Returns the demoted slugs. A human-written archive file of that month, or one with
    malformed markers, stops demotion with a warning (the topics stay)."""
    month = today.strftime("%Y-%m")
    path = mf.archive_path(agent, month)
    demoted: list[str] = []
    for slug, topic in sorted(memory.topics.items()):
        if not topic.owned or topic.error is not None or (slug in live and live[slug].touched):
            continue
        last = topic.last
        if last is None or (stale_before - last).days < archive_days:
            continue
        current = result.changes.get(path)
        if current is None:
            current = memory.archives.get(path)
        if current is not None:
            meta, _ = mf.split_front_matter(current)
            if not meta or meta.get(mf.ORIGIN_KEY) != mf.ORIGIN_VALUE:
                result.warnings.append(
                    f"{path} exists and was not written by gitdream; stale topics were not demoted"
                )
                break
        else:
            current = (
                mf.render_front_matter(
                    {
                        "name": f"Archive {month}",
                        "description": f"Topics gitdream demoted in {month} after {archive_days} days "
                        "without corroboration; full text kept",
                        "type": "reference",
                        mf.ORIGIN_KEY: mf.ORIGIN_VALUE,
                    }
                )
                + f"\n# Archive {month}\n"
            )
        try:
            first = _next_archived_number(current, path)
            body, _ = _rename_blocks(
                _without_block(topic.text, mf.RELATED_BLOCK, topic.path), topic.path, first
            )
        except BlockError as exc:
            result.warnings.append(f"{_where(path, exc)}; stale topics were not demoted")
            break
        body = _fence_front_matter(body)
        if not current.endswith("\n"):
            current += "\n"
        section = (
            f"\n## {topic.title} — {slug}.md, archived {today.isoformat()}\n\n"
            f"Last corroborated {last.isoformat()}; moved here whole by gitdream after "
            f"{archive_days} days without corroboration.\n\n"
        )
        if not body.endswith("\n"):
            body += "\n"
        result.changes[path] = current + section + body
        result.changes[topic.path] = None
        result.demoted.append({"slug": slug, "path": topic.path, "archive": path, "last": last.isoformat()})
        demoted.append(slug)
    return demoted


# --- the index -------------------------------------------------------------------------------


def _count_lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _size(text: str) -> tuple[int, int]:
    return _count_lines(text), len(text.encode("utf-8", "surrogatepass"))


def _index_line(title: str, slug: str, description: str) -> str:
    label = title.replace("[", "(").replace("]", ")")
    link = quote(f"{slug}.md", safe="-_.~!$&'*+,;=:@") if re.search(r"[\s()<>]", slug) else f"{slug}.md"
    line = f"- [{label}]({link})"
    if description:
        room = _index_room(line)
        if room >= 10:
            line += " — " + describe.shorten(description, room)
    return line


def _index_room(line: str) -> int:
    """Characters left for the description after index line head `line` and " — "."""
    return INDEX_LINE_MAX_CHARS - len(line) - 3


def _overflow_line(count: int) -> str:
    noun, verb = ("topic", "is") if count == 1 else ("topics", "are")
    return (
        f"- … and {count} more {noun} {verb} not listed here (MEMORY.md size limit); "
        "their files are in this folder"
    )


def _write_index(
    agent: Agent,
    memory: mf.MemoryFiles,
    live: dict[str, _Live],
    demoted: list[str],
    result: ExperienceResult,
    cfg: Config,
) -> None:
    """Rebuild the `index` block of MEMORY.md (module docstring; DESIGN §3, §5 phase 6).

    Lines: the old block's lines in order, kept verbatim while their topic file exists
    (lines that are not links are kept too), then one line per dream-owned topic not yet
    listed (in the block or by a person outside it), in slug order. Lines
    of demoted topics and of topics whose file was already missing are dropped. Limits:
    when MEMORY.md's text outside the block is already over memory_max_lines or
    memory_max_bytes, a warning is given and the block does not grow (only lines that were
    there stay). Otherwise, when everything does not fit, the most recently corroborated
    topics are listed and the rest collapse into one line "- … and N more topics are not
    listed here"; their facts stay in their topic files.
    """
    path = memory.index_path
    text = memory.index_text
    max_lines, max_bytes = cfg.int("memory_max_lines"), cfg.int("memory_max_bytes")
    try:
        block = blocks.find(text, mf.INDEX_BLOCK, path) if text is not None else None
    except BlockError as exc:
        result.warnings.append(f"{_where(path, exc)}; the index was not updated")
        return
    old_lines = (
        [] if text is None or block is None else text[block.inner_start : block.inner_end].splitlines()
    )
    human = "" if text is None else (text if block is None else text[: block.start] + text[block.end :])
    exists_after = {
        slug
        for slug, topic in memory.topics.items()
        if slug not in demoted and result.changes.get(topic.path, "") is not None
    } | {s for s, entry in live.items() if entry.touched}

    def rank_key(slug: str | None) -> tuple[int, str, int, str]:
        facts: list[Fact] = []
        if slug in live:
            facts = live[slug].facts.facts
        elif slug in memory.topics:
            facts = memory.topics[slug].facts or []
        dates = [f.last for f in facts if f.last]
        newest = max(dates).isoformat() if dates else ""
        return (0 if slug is None else 1, _invert(newest), -sum(f.seen for f in facts), slug or "")

    lines: list[tuple[str | None, str]] = []  # (slug or None for non-link lines, line)
    listed: set[str] = set()
    for line in old_lines:
        if _OVERFLOW.match(line) or not line.strip():
            continue
        slug = mf.index_link_slug(line)
        if slug is None:
            lines.append((None, line))
        elif slug in exists_after and slug not in listed:
            entry = live.get(slug)
            if entry is not None and entry.touched and entry.owned:
                line = _index_line(entry.title or memory.topics[slug].title, slug, entry.description)
            lines.append((slug, line))  # a touched dream-owned topic's line says what it holds now
            listed.add(slug)
    old_kept = list(lines)
    dream_topics = {s for s, t in memory.topics.items() if t.owned and s in exists_after}
    dream_topics |= {s for s, e in live.items() if e.touched and e.topic is None}
    listed_by_human = {mf.index_link_slug(line) for line in human.splitlines()}
    for slug in sorted(dream_topics - listed - listed_by_human):
        entry = live.get(slug)
        if entry is not None and entry.topic is None:
            title, description = entry.title, entry.description
        elif entry is not None and entry.touched and entry.owned:
            # what a touched dream-owned topic holds now, as in MEMORY.md's own block
            title, description = entry.title or memory.topics[slug].title, entry.description
        else:
            topic = memory.topics[slug]
            title, description = topic.title, topic.description
        lines.append((slug, _index_line(title, slug, description)))

    human_lines, human_bytes = _size(human)
    if human_lines > max_lines or human_bytes > max_bytes:
        overflow = mf.overflow_index_path(agent)
        result.warnings.append(
            f"{path} is already over its limits without gitdream's block ({human_lines} lines, "
            f"{human_bytes} bytes; limits {max_lines} lines, {max_bytes} bytes): gitdream did not "
            f"add index lines — its topics are indexed in {overflow}, which the agent reads only if "
            f"something it loads points to it (a line near the top of {path}, or its agent.md); "
            f"shorten {path} by hand, or raise memory_max_lines/memory_max_bytes"
        )
        _write_overflow(agent, memory, [line for slug, line in lines if slug is not None], result)
        if block is None:
            result.index = {"lines": human_lines, "bytes": human_bytes, "listed": 0, "unlisted": 0}
            return
        new = blocks.replace(text or "", mf.INDEX_BLOCK, "".join(line + "\n" for _, line in old_kept), path)
        if new != text:
            result.changes[path] = new
        n_lines, n_bytes = _size(new)
        result.index = {"lines": n_lines, "bytes": n_bytes, "listed": len(old_kept), "unlisted": 0}
        return

    def compose(chosen: list[str]) -> str:
        content = "".join(line + "\n" for line in chosen)
        if text is None:
            return blocks.replace(INDEX_HEADER, mf.INDEX_BLOCK, content, path)
        return blocks.replace(text, mf.INDEX_BLOCK, content, path)

    if block is None and not lines:
        return
    chosen = [line for _, line in lines]
    new = compose(chosen)
    unlisted = 0
    if _size(new)[0] > max_lines or _size(new)[1] > max_bytes:
        new, unlisted = _fit_index(lines, compose, rank_key, max_lines, max_bytes)
        result.warnings.append(
            f"{path}: {unlisted} index line(s) left out to stay within {max_lines} lines and "
            f"{max_bytes} bytes; their topic files are unchanged"
        )
    if new != (text or ""):
        result.changes[path] = new
    n_lines, n_bytes = _size(new)
    result.index = {"lines": n_lines, "bytes": n_bytes, "listed": len(lines) - unlisted, "unlisted": unlisted}


def _fit_index(
    lines: list[tuple[str | None, str]],
    compose: Callable[[list[str]], str],
    rank_key: Callable[[str | None], Any],
    max_lines: int,
    max_bytes: int,
) -> tuple[str, int]:
    """`(MEMORY.md text, number of index lines left out)` when not every line fits: the
    lines that rank first (`rank_key`: lines that are not links, then the most recently
    corroborated topics) are kept, the rest collapse into one overflow line."""
    order = sorted(range(len(lines)), key=lambda i: rank_key(lines[i][0]))
    base_lines, base_bytes = _size(compose([]))
    newline_bytes = len(blocks.newline_of(compose([])).encode())
    keep: set[int] = set()
    used_lines, used_bytes = base_lines, base_bytes
    for position, i in enumerate(order):
        rest = len(order) - position - 1
        tail = _overflow_line(rest) if rest else ""
        extra_lines = 1 + (1 if tail else 0)
        extra_bytes = len(lines[i][1].encode()) + newline_bytes
        extra_bytes += len(tail.encode()) + newline_bytes if tail else 0
        if used_lines + extra_lines > max_lines or used_bytes + extra_bytes > max_bytes:
            break
        keep.add(i)
        used_lines += 1
        used_bytes += len(lines[i][1].encode()) + newline_bytes
    while True:
        unlisted = len(lines) - len(keep)
        chosen = [line for i, (_, line) in enumerate(lines) if i in keep]
        if unlisted:
            chosen.append(_overflow_line(unlisted))
        new = compose(chosen)
        n_lines, n_bytes = _size(new)
        if (n_lines <= max_lines and n_bytes <= max_bytes) or not keep:
            break
        keep.discard(max(keep, key=lambda i: rank_key(lines[i][0])))
    n_lines, n_bytes = _size(new)
    if n_lines > max_lines or n_bytes > max_bytes:
        return compose([]), len(lines)
    return new, unlisted


OVERFLOW_HEADER = (
    "# Topics gitdream keeps\n\n"
    "MEMORY.md is over its size limits without gitdream's lines, so gitdream indexes its\n"
    "topics here instead: one line per topic file in this folder. Shorten MEMORY.md and\n"
    "they move back into its index block.\n"
)


def _write_overflow(agent: Agent, memory: mf.MemoryFiles, lines: list[str], result: ExperienceResult) -> None:
    """Write the dream-owned overflow index (`<memory_dir>/gitdream-topics.md`): the index
    lines gitdream could not add to MEMORY.md because its human part is over the limits."""
    path = mf.overflow_index_path(agent)
    old = memory.overflow_text
    if old is not None:
        meta, _ = mf.split_front_matter(old)
        if not meta or meta.get(mf.ORIGIN_KEY) != mf.ORIGIN_VALUE:
            result.warnings.append(f"{path} exists and was not written by gitdream; it was left alone")
            return
    meta = {
        "name": "Topics gitdream keeps",
        "description": "Index of gitdream's topic files while MEMORY.md is over its size limits",
        "type": "reference",
        mf.ORIGIN_KEY: mf.ORIGIN_VALUE,
    }
    head = mf.render_front_matter(meta) + "\n" + OVERFLOW_HEADER
    try:
        new = blocks.replace(old or head, mf.INDEX_BLOCK, "".join(line + "\n" for line in lines), path)
    except BlockError as exc:
        result.warnings.append(f"{_where(path, exc)}; the overflow index was not updated")
        return
    if new != old:
        result.changes[path] = new


def _where(path: str, exc: BlockError) -> str:
    """`path:LINE: problem` for malformed markers (the message without its path prefix)."""
    message = exc.message.removeprefix(f"{path}: ").removeprefix(f"line {exc.line}: ")
    return f"{path}:{exc.line}: {message}" if exc.line else f"{path}: {message}"


def _invert(iso: str) -> str:
    """A string that sorts in the reverse order of ISO dates ("" — no date — sorts last)."""
    if not iso:
        return "~"
    return "".join(chr(ord("9") - int(c) + ord("0")) if c.isdigit() else c for c in iso)


# --- guards ----------------------------------------------------------------------------------


def _memory_paths(agent: Agent, texts: dict[str, str]) -> dict[str, str]:
    """Topic and archive files among `texts` (the files whose facts the guard counts)."""
    memory = mf.read_memory(agent, texts)
    out = {topic.path: topic.text for topic in memory.topics.values()}
    out.update(memory.archives)
    return out


def _index_items(path: str, text: str | None, existing: set[str]) -> list[str]:
    """Items of the index block: `slug:<slug>` for links to existing topics, `line:<text>`
    for lines that are not links. Links to missing topics are not counted."""
    if text is None:
        return []
    try:
        block = blocks.find(text, mf.INDEX_BLOCK, path)
    except BlockError:
        return []
    if block is None:
        return []
    items = []
    for line in text[block.inner_start : block.inner_end].splitlines():
        if not line.strip() or _OVERFLOW.match(line):
            continue
        slug = mf.index_link_slug(line)
        if slug is None:
            items.append("line:" + line)
        elif slug in existing:
            items.append("slug:" + slug)
    return items


def check_loss(
    agent: Agent,
    files: dict[str, str],
    changes: dict[str, str | None],
    *,
    max_fraction: float,
    archived: frozenset[str] | set[str] = frozenset(),
) -> LossReport:
    """The loss guard (DESIGN §5 phase 6). Counts facts (`facts` and `archived-*` blocks of
    topic and archive files) and index items (lines of MEMORY.md's `index` block whose topic
    exists, plus lines that are not links) in `files` and in `files` overlaid with
    `changes`. An index line counts as kept when it is still in the block, when its topic
    file still exists (left out for size) or when its topic is in `archived`.

    Returns the LossReport; raises LossGuardError when more than `max_fraction` (0-1) of
    either count would be lost.
    """
    after = apply_changes(files, changes)
    before_files = _memory_paths(agent, files)
    after_files = _memory_paths(agent, after)
    report = LossReport(max_fraction=max_fraction)
    report.facts_before = sum(mf.count_facts(p, t) for p, t in before_files.items())
    report.facts_after = sum(mf.count_facts(p, t) for p, t in after_files.items())

    def slugs(texts: dict[str, str]) -> set[str]:
        return set(mf.read_memory(agent, texts).topics)

    index = mf.index_path(agent)
    before_items = _index_items(index, files.get(index), slugs(files))
    slugs_after = slugs(after)
    after_items = set(_index_items(index, after.get(index), slugs_after))
    kept = 0
    for item in before_items:
        slug = item[5:] if item.startswith("slug:") else None
        if item in after_items or (slug is not None and (slug in slugs_after or slug in archived)):
            kept += 1
    report.index_before, report.index_kept = len(before_items), kept

    for what, lost, total in (
        ("facts", report.facts_lost, report.facts_before),
        ("index lines", report.index_lost, report.index_before),
    ):
        if total and lost / total > max_fraction:
            raise LossGuardError(
                f"loss guard: this dream would drop {lost} of {total} {what} of agent {agent.id} "
                f"({lost / total:.0%}; max_loss_fraction is {max_fraction:g}); nothing was written",
                hint="look for hand edits inside gitdream's blocks in the memory files; if the drop is "
                "intended, run once with GITDREAM_MAX_LOSS_FRACTION set higher",
            )
    return report


def _outside_kept(old: str, new: str, name: str, where: str) -> bool:
    """True when `new` differs from `old` only inside block `name`, or by that block being
    appended at the end (after newlines only)."""
    try:
        if blocks.find(old, name, where) is not None:
            return blocks.outside(old, where) == blocks.outside(new, where)
        block = blocks.find(new, name, where)
    except BlockError:
        return False
    if block is None:
        return old == new
    rest = new[: block.start] + new[block.end :]
    return rest.startswith(old) and rest[len(old) :].strip("\r\n") == ""


TOPIC_BLOCKS = (mf.FACTS_BLOCK, mf.SUPERSEDED_BLOCK, mf.RELATED_BLOCK)
"""The blocks gitdream writes in a human-written topic file."""


def _outside_kept_all(old: str, new: str, names: tuple[str, ...], where: str) -> bool:
    """True when `new` differs from `old` only inside blocks named in `names`, or by such
    blocks being appended at the end (after newlines only)."""
    try:
        old_names = {b.name for b in blocks.parse(old, where)}
        found = blocks.parse(new, where)
    except BlockError:
        return False
    if any(b.name not in names and b.name not in old_names for b in found):
        return False
    rest = new
    for block in reversed(found):
        if block.name not in old_names:
            rest = rest[: block.start] + rest[block.end :]
    try:
        if old_names:
            return blocks.outside(old, where).rstrip("\r\n") == blocks.outside(rest, where).rstrip("\r\n")
    except BlockError:
        return False
    return rest.startswith(old) and rest[len(old) :].strip("\r\n") == ""


def _check_ownership(agent: Agent, files: dict[str, str], changes: dict[str, str | None]) -> None:
    """Raise LossGuardError when a change touches bytes gitdream does not own (module
    docstring): outside the `facts` block of an existing topic, outside the `index` block of
    MEMORY.md, anything but an append to an existing archive file, or a deletion of a file
    that is not a dream-owned topic."""
    memory = mf.read_memory(agent, files)
    by_path = {t.path: t for t in memory.topics.values()}
    for path, new in changes.items():
        old = files.get(path)
        problem: str | None
        if not agent.is_memory_path(path):
            problem = "it is not a memory file gitdream may write"
        elif old is None:
            problem = None if new is not None else "it deletes a file that does not exist"
        elif new is None:
            topic = by_path.get(path)
            problem = None if topic is not None and topic.owned else "it deletes a file gitdream does not own"
        elif path == memory.index_path:
            problem = None if _outside_kept(old, new, mf.INDEX_BLOCK, path) else "outside the index block"
        elif path in memory.archives:
            problem = None if new.startswith(old) else "an archive file may only grow"
        elif path == mf.overflow_index_path(agent):
            meta, _ = mf.split_front_matter(old)
            problem = (
                None if meta and meta.get(mf.ORIGIN_KEY) == mf.ORIGIN_VALUE else "it is not gitdream's file"
            )
        elif path in by_path and by_path[path].owned:
            problem = None  # a dream-owned topic: gitdream wrote all of it
        elif path in by_path:
            problem = None if _outside_kept_all(old, new, TOPIC_BLOCKS, path) else "outside gitdream's blocks"
        else:
            problem = "it is not a topic, archive or index file"
        if problem:
            raise LossGuardError(
                f"ownership guard: the dream's change to {path} is refused ({problem}); nothing was written",
                hint="this is a bug in gitdream; please report it with the receipt of this run",
            )


# --- definitions -----------------------------------------------------------------------------


def integrate_definitions(
    agent: Agent,
    files: dict[str, str],
    units: list[Unit],
    *,
    input_commit: str,
    check: Callable[[str, str], list[str]],
    today: date | None = None,
) -> DefinitionResult:
    """Write `skill`/`soul`/`agent` units into the `learned` block of SKILL.md/soul.md/
    agent.md (facts format; corroboration as for topics) — DESIGN §5 phase 8, §6, §7.

    `files`: the agent's definition files at the input commit (path → text); a file that is
    absent is never created: its units are refused with the next step. `check(path, text)`
    is the agent.md prefix guard; it returns problem messages. For each file the new text is
    computed, then verified: text outside managed blocks must be byte-identical (or the
    `learned` block appended at the end), and `check` must report no problem the old text
    did not already have. Otherwise the file is left unchanged and the reason reported in
    `refused`. Units with another target or without sources are in `rejected`. `today`
    (optional) dates facts of undated units; without it they carry no first/last date.
    """
    result = DefinitionResult()
    by_path: dict[str, list[Unit]] = {}
    targets: dict[str, str] = {}
    for unit in units:
        if unit.target not in ("skill", "soul", "agent"):
            result.rejected.append(Rejected(unit, "integrate", f"target {unit.target!r} is not a definition"))
            continue
        path = mf.definition_path(agent, unit.target)
        if path is None:
            result.refused.append(
                Refusal(
                    None,
                    unit.target,
                    f"agent {agent.id} has no definition file for target {unit.target!r}",
                    "add the file to definition_files in gitdream.toml",
                    [unit.title],
                )
            )
            continue
        by_path.setdefault(path, []).append(unit)
        targets[path] = unit.target

    for path, group in by_path.items():
        target = targets[path]
        titles = [u.title for u in group]
        old = files.get(path)
        if old is None:
            result.refused.append(
                Refusal(
                    path,
                    target,
                    f"{path} does not exist at the input commit; gitdream never creates definition files",
                    f"create {path}, commit it, and run gitdream again",
                    titles,
                )
            )
            continue
        try:
            content = blocks.get(old, mf.LEARNED_BLOCK, path)
        except BlockError as exc:
            result.refused.append(Refusal(path, target, exc.message, exc.hint or "fix the markers", titles))
            continue
        facts = _FactList(parse_facts(content or ""))
        written: list[FactWritten] = []
        counts: Counter[str] = Counter()
        for unit in group:
            refs = _refs(unit, input_commit)
            text = _fact_text(unit)
            if not refs or not text:
                result.rejected.append(
                    Rejected(unit, "integrate", "no usable source" if not refs else "empty fact text")
                )
                continue
            when = unit.date or today
            action, fact = _apply(facts, unit, text, refs, when, facts.find)
            counts[action] += 1
            written.append(FactWritten(path, fact.text, refs, action, fact.seen))
        if not written:
            continue
        new = blocks.replace(old, mf.LEARNED_BLOCK, render(facts.facts), path)
        if not _outside_kept(old, new, mf.LEARNED_BLOCK, path):
            result.refused.append(
                Refusal(
                    path,
                    target,
                    "the new text would change bytes outside gitdream's blocks",
                    "this is a bug in gitdream; please report it",
                    titles,
                )
            )
            continue
        fresh = list((Counter(check(path, new)) - Counter(check(path, old))).elements())
        if fresh:
            result.refused.append(
                Refusal(
                    path,
                    target,
                    f"{path} would fail `gitdream check`: " + "; ".join(fresh),
                    f"fix {path} so that `gitdream check` passes with room to spare, then run again; "
                    "the units stay in the receipt",
                    titles,
                )
            )
            continue
        if new != old:
            result.changes[path] = new
        result.created += counts["created"]
        result.corroborated += counts["corroborated"]
        result.refined += counts["refined"]
        result.facts_written.extend(written)
    return result
