"""The offline engine: deterministic consolidation with no key and no network (DESIGN §9).

Per raw entry, in input order:

1. **Clean up** (`clean_text`): drop the list marker (`-`, `*`, `+`, `1.`, `1)`, a task box
   `[ ]`/`[x]`), leading `[YYYY-MM-DD]` dates and leading `[tag]`s, `#tag`s at the very start
   or end when they are the entry's tags; rewrite relative dates to absolute ones from the
   entry's date (`absolutize`); collapse to one line; escape `<!--`; cap at `FACT_MAX_CHARS`
   characters with "…" (never inside a grapheme, never inside a run of ASCII without spaces —
   a key or token is kept whole or not at all). An entry with no letter, digit or symbol
   left is skipped as "empty after clean-up" (or `TOKEN_ONLY` when all it held was one
   token longer than a fact). Short entries are never skipped: one line of Chinese can be a
   whole sentence.
2. **Route**: an entry tagged `#skill`, `#soul` or `#agent` (the first such tag wins) becomes
   a definition unit (target `skill`/`soul`/`agent`, topic = the target) for the `learned`
   block of SKILL.md/soul.md/agent.md. Everything else is experience.
3. **Topic** (experience): the first explicit tag other than the routing tags; else the
   nearest heading above the entry (`entry.context`, innermost first) that is not *generic*
   — a heading left empty once dates, times, weekday and month names, numbers and the words
   in `GENERIC_HEADING_WORDS` (log, daily, notes, journal, heartbeat, session, summary, …)
   are taken out, such as "2026-02-10 Daily Log", "Heartbeat ~00:33 UTC" or "Notes"; else
   `journal`. A tag or heading longer than `NAME_MAX_CHARS`, or holding something the secret
   scanner finds (checked as written, before it is clipped or lower-cased), is passed over.
   The name maps to an existing topic file when its slug, or the normalised front
   matter `name`/file name, matches one (case-insensitive), so facts land in the existing
   (possibly human-written) topic's facts block; otherwise `slugify(name, taken)` gives a new
   safe slug (`taken` holds every existing topic file name, the reserved names and the slugs
   given out earlier in the run).
4. **Near-duplicates**: the cleaned text is compared with the facts of the agent's topics
   (`facts` blocks) — or, for definition units, the `learned` block of the target file — and
   with the facts created earlier in the same run, by character n-gram Jaccard similarity
   (`gitdream.text.similarity`; bigrams inside CJK/no-space runs, trigrams elsewhere). Only
   facts stating the same numbers are compared ("disk 80%" never corroborates "disk 95%").
   When the most similar of them is at or above `offline.similarity`, the entry becomes a
   `corroborate` unit naming that fact
   (`Unit.corroborates`, `Unit.topic` = where the fact lives) and carrying the entry as its
   source; below, a `create` unit. When a fact that already cites this very entry id is
   similar to it at or above the threshold (material read again), the entry is skipped as
   "already consolidated" and uses no budget.
5. **Budget**: at most `max_units` units. Once reached, this entry and every later one are
   *deferred*: listed in `skipped` with the reason "over max_units (N); left for the next run"
   and in `failed_entries`, so the pipeline does not move the watermark past material that
   was not processed. Re-reading the processed part next time costs nothing (step 4).

Experience units have `title` = the topic's display name (the new topic file's `# Title`)
and `body` = the fact text; definition units have `title` = the fact text clipped to
DEFINITION_TITLE_MAX_CHARS. Stats: `entries`, `created`, `corroborated` (experience),
`definition` (definition units, create or corroborate), `skipped`, `deferred`.

Scale: two passes over the material (the first counts shingle frequencies), one prefix-filter
index — no pairwise comparison; see `bench/offline_engine.py`.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from gitdream.contract import DistillContext, DistillResult, ScreenResult
from gitdream.dream import memoryfiles
from gitdream.dream.facts import one_line, parse
from gitdream.errors import BlockError
from gitdream.text import blocks
from gitdream.text.clip import clip
from gitdream.text.similarity import ShingleIndex, Vocabulary, jaccard
from gitdream.units import DEFINITION_TARGETS, Entry, Unit, parse_source_ref

if TYPE_CHECKING:
    from gitdream.config import Config

FACT_MAX_CHARS = 400
"""Longest fact text, in characters (code points), "…" included."""
NAME_MAX_CHARS = 200
"""A tag or heading longer than this (as written) never names a topic: it is not a name."""
TOPIC_NAME_MAX_CHARS = 80
"""Longest topic display name taken from a heading or tag, in characters."""
DEFINITION_TITLE_MAX_CHARS = 60
"""Definition units are titled by their text, clipped to this many characters."""
DEFAULT_TOPIC = "journal"
TOKEN_ONLY = f"nothing but an unbroken token longer than {FACT_MAX_CHARS} characters (never kept in part)"
ROUTING_TAGS = DEFINITION_TARGETS  # ("skill", "soul", "agent")
_GENERIC = """
    log logs daily diary journal journals notes note misc miscellaneous entries entry
    heartbeat heartbeats session sessions today yesterday tomorrow summary summaries update
    updates standup stand up day days week weekly morning afternoon evening night utc
    gmt am pm z t at on of the a an and
    mon tue tues wed thu thur thurs fri sat sun monday tuesday wednesday thursday friday
    saturday sunday jan feb mar apr may jun jul aug sep sept oct nov dec january february
    march april june july august september october november december
    日志 日誌 笔记 筆記 日记 日記 今天 昨天 记录 記録 ログ メモ 日報 ノート 作業ログ
    年 月 日 时 時 分 秒 第 天 号 號 周 週 星期 曜日 月曜日 火曜日 水曜日 木曜日 金曜日 土曜日 日曜日
"""
GENERIC_HEADING_WORDS = frozenset(_GENERIC.split())
"""Words that make a heading generic when nothing else is left (module docstring, step 3)."""

_NO_CODES = array("i")
Slugify = Callable[[str, set[str]], str]
Absolutize = Callable[[str, date], str]

_LIST_MARKER = re.compile(r"^\s*(?:[-*+•]|\d{1,9}[.)])\s+")
_TASK_BOX = re.compile(r"^\[[ xX]\]\s+")
_LEAD_DATE = re.compile(r"^\[\d{4}-\d{2}-\d{2}(?:[ T][0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)?\]\s*")
_LEAD_TAG = re.compile(r"^\[([^\[\]\s]{1,40})\](?![(\[:])\s*")
_HASHTAG_HEAD = re.compile(r"^#([^\s#]+)\s*")
# No leading `\s*` (the caller strips the space before the tag): with it, each position of a
# long run of spaces was tried as a start and rescanned to the run's end.
_HASHTAG_TAIL = re.compile(r"(?<!\S)#([^\s#]+)$")
# Link text holds no bracket, and the target at most one level of parentheses (a Wikipedia
# URL): with `[^\]]*` a heading of many "[" was rescanned to its end from each one.
_MD_LINK = re.compile(r"\[([^\[\]]*)\]\((?:[^()]|\([^()]*\))*\)")
_HEADING_NOISE = re.compile(r"[\d\W_]+")
# Underscore runs are matched from their first "_" only (`(?<!_)`): otherwise a long run
# followed by a letter was rescanned from each of its underscores.
_EMPHASIS = re.compile(r"[*`~]+|(?<!\w)_+|(?<!_)_+(?!\w)")
_TRAILING_COUNT = re.compile(r"\s*[(\[（]\s*[\d\s,./:#-]*[)\]）]\s*$")


_CONTENT = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "Nl", "No", "Sm", "Sc", "So"})


def _has_content(text: str) -> bool:
    """True when `text` has a letter, digit or symbol (emoji, arrows and currency count;
    backticks, carets and other modifier symbols alone do not)."""
    return any(unicodedata.category(ch) in _CONTENT for ch in text)


def clean_text(entry: Entry, absolutize: Absolutize | None) -> str:
    """The fact text of `entry` (see module docstring, step 1); "" when nothing is left."""
    tags = set(entry.tags)
    text = entry.text.strip()
    text = _LIST_MARKER.sub("", text, count=1)
    text = _TASK_BOX.sub("", text, count=1)
    while True:
        before = text
        text = _LEAD_DATE.sub("", text, count=1)
        match = _LEAD_TAG.match(text)
        if match and (match.group(1).lower() in tags or match.group(1).lower() in ROUTING_TAGS):
            text = text[match.end() :]
        match = _HASHTAG_HEAD.match(text)
        if match and match.group(1).lower() in tags:
            text = text[match.end() :]
        text = _LIST_MARKER.sub("", text, count=1)
        if text == before:
            break
    while True:
        match = _HASHTAG_TAIL.search(text)
        if not match or match.group(1).lower() not in tags:
            break
        text = text[: match.start()].rstrip()
    text = one_line(text)
    if absolutize is not None and entry.date is not None and text:
        text = one_line(absolutize(text, entry.date))
    text = memoryfiles.neutral(text)
    if not _has_content(text):
        return ""
    return clip(text, FACT_MAX_CHARS)


def clean_name(name: str) -> str:
    """A heading or tag as a topic display name: Markdown links and emphasis dropped, one
    line, a trailing count such as "(5)" and a trailing colon dropped, first letter
    upper-cased, capped at TOPIC_NAME_MAX_CHARS characters."""
    text = _MD_LINK.sub(r"\1", name)
    text = _EMPHASIS.sub("", text)
    text = _TRAILING_COUNT.sub("", one_line(text))
    text = memoryfiles.neutral(text).strip(" :：-—")
    if text[:1].islower():
        text = text[0].upper() + text[1:]
    return clip(text, TOPIC_NAME_MAX_CHARS)


def is_generic_heading(heading: str) -> bool:
    """True for headings that say when, not what (see module docstring, step 3)."""
    words = _HEADING_NOISE.sub(" ", clean_name(heading).casefold()).split()
    return all(w in GENERIC_HEADING_WORDS for w in words)


def topic_name(entry: Entry) -> str:
    """The topic display name of an experience entry (module docstring, step 3). A tag or
    heading that cannot name a topic (`_unfit_name`) is passed over."""
    for tag in entry.tags:
        if tag.lower() not in ROUTING_TAGS and not _unfit_name(_as_written(tag, entry.text)):
            name = clean_name(tag)
            if name:
                return name
    for heading in reversed(entry.context):
        if not _unfit_name(heading) and not is_generic_heading(heading):
            name = clean_name(heading)
            if name:
                return name
    return DEFAULT_TOPIC.capitalize()


def _unfit_name(written: str) -> bool:
    """True when a tag or heading, as written, must not name a topic: longer than
    NAME_MAX_CHARS, or holding something the secret scanner finds. A name becomes a file
    name, a title and an index line in lossy forms — clipped, lower-cased, punctuation made
    "-" — that the scanner, which screens units afterwards, could no longer recognise."""
    from gitdream.dream.screen import scan_text

    return len(written) > NAME_MAX_CHARS or bool(scan_text(written))


def _as_written(tag: str, text: str) -> str:
    """The word around the first occurrence of `tag` in `text`, in its original letter
    case (`find_tags` lower-cases tags; an AWS key id is only a key in capitals)."""
    match = re.search(re.escape(tag), text, re.IGNORECASE)
    if match is None:
        return tag
    start, end = match.start(), match.end()
    while start > 0 and end - start <= NAME_MAX_CHARS and not text[start - 1].isspace():
        start -= 1
    while end < len(text) and end - start <= NAME_MAX_CHARS and not text[end].isspace():
        end += 1
    return text[start:end]


def _key(name: str) -> str:
    """Loose identity of a topic name: NFKC, case-folded, non-word runs → "-"."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return re.sub(r"[\W_]+", "-", folded).strip("-")


def _default_slugify() -> Slugify:
    from gitdream.dream.slugs import slugify

    return slugify


def _default_absolutize() -> Absolutize:
    from gitdream.dream.dates import absolutize

    return absolutize


@dataclass(eq=False)
class _Fact:
    """A fact the run may corroborate: its group ("experience" or a definition target),
    where it lives (topic slug or target), the title of that place, and its text."""

    group: str
    where: str
    title: str
    text: str


_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")


def _numbers(text: str) -> tuple[str, ...]:
    """The numbers in `text`, sorted: two texts that state different numbers (build 412 vs
    418, 80% vs 95%, 06 vs 09 minutes) are different facts however similar the words."""
    return tuple(sorted(_NUMBER.findall(text)))


def _cited(sources: list[str]) -> set[str]:
    """Entry ids cited by source references."""
    out = set()
    for ref in sources:
        parsed = parse_source_ref(ref)
        out.add(parsed[0] if parsed else ref)
    return out


class _Topics:
    """Topic name → slug, mapping onto existing topic files (module docstring, step 3).

    A name maps to an existing file when its loose key (case, width and punctuation folded)
    equals the key of a file name or front matter `name`, or when `slugify(name, set())`
    equals a file name case-insensitively. Otherwise `slugify(name, taken)` gives the slug;
    should it return an unsafe or taken slug, "topic " + name is tried, then a hashed
    `topic-<10 hex>` slug, so a faulty slugify can never escape the memory folder."""

    def __init__(self, memory: memoryfiles.MemoryFiles, slugify: Slugify) -> None:
        self._slugify = slugify
        self._by_key: dict[str, str] = {}
        self._by_fold: dict[str, str] = {}
        self.titles: dict[str, str] = {}
        for slug, topic in memory.topics.items():
            self._by_fold.setdefault(slug.casefold(), slug)
            self._by_key.setdefault(_key(slug), slug)
            if topic.name:
                self._by_key.setdefault(_key(topic.name), slug)
            self.titles[slug] = topic.title
        self._taken = {s for s in memory.topics} | set(memoryfiles.RESERVED_SLUGS)
        self._taken |= {s.upper() for s in memoryfiles.RESERVED_SLUGS} | {"MEMORY"}
        self._cache: dict[str, str] = {}

    def slug(self, name: str) -> str:
        key = _key(name)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        slug = self._by_key.get(key) if key else None
        if slug is None:
            bare = self._slugify(name, set())
            slug = self._by_fold.get(bare.casefold()) if memoryfiles.safe_slug(bare) else None
        if slug is None:
            slug = self._slugify(name, set(self._taken))
            if not memoryfiles.safe_slug(slug) or slug.casefold() in self._by_fold:
                slug = self._slugify(f"topic {name}", set(self._taken))
            if not memoryfiles.safe_slug(slug) or slug.casefold() in self._by_fold:
                slug = "topic-" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:10]
            self._taken.add(slug)
            self._by_fold[slug.casefold()] = slug
            self.titles[slug] = name
        self._cache[key] = slug
        return slug


class OfflineEngine:
    """Deterministic engine (module docstring). `slugify` and `absolutize` default to
    `gitdream.dream.slugs.slugify` and `gitdream.dream.dates.absolutize`, imported when
    `distill` runs; tests and the pipeline may pass their own."""

    name = "offline"

    def __init__(
        self,
        cfg: Config,
        *,
        slugify: Slugify | None = None,
        absolutize: Absolutize | None = None,
    ) -> None:
        self.cfg = cfg
        self.max_units = cfg.int("max_units")
        self.threshold = cfg.float("offline.similarity")
        self.calls: list[dict[str, Any]] = []  # no model, no calls
        self._slugify = slugify
        self._absolutize = absolutize

    def check(self) -> None:
        """The offline engine can always run."""

    def estimate(self, context: DistillContext) -> dict[str, Any]:
        """No model calls and no tokens, whatever the material."""
        return {"engine": self.name, "calls": 0, "input_tokens": 0, "entries": len(context.entries)}

    def screen(self, units: Sequence[Unit]) -> ScreenResult:
        """No screener of its own: the deterministic scanner has screened `units`."""
        return ScreenResult(kept=list(units))

    def close(self) -> None:
        """Nothing to release."""

    def distill(self, context: DistillContext) -> DistillResult:
        """Turn `context.entries` into units (module docstring). Reads `context.memory` for
        existing topics and facts; writes nothing. Returns a DistillResult whose `skipped`
        holds `(entry id, reason)` and whose `failed_entries` holds the deferred entry ids."""
        slugify = self._slugify or _default_slugify()
        absolutize = self._absolutize or _default_absolutize()
        agent = context.agent
        memory = memoryfiles.read_memory(agent, context.memory.files)
        topics = _Topics(memory, slugify)
        vocabulary = Vocabulary()

        existing: dict[str, list[_Fact]] = {"experience": []}
        cited: dict[str, list[_Fact]] = {}  # entry id → facts that cite it
        for slug, topic in memory.topics.items():
            for written in topic.facts or ():
                known = _Fact("experience", slug, topic.title, one_line(written.text))
                existing["experience"].append(known)
                for entry_id in _cited(written.sources):
                    cited.setdefault(entry_id, []).append(known)
        for target in DEFINITION_TARGETS:
            existing[target] = []
            path = memoryfiles.definition_path(agent, target)
            text = context.memory.files.get(path) if path else None
            if text is None or path is None:
                continue
            try:
                content = blocks.get(text, memoryfiles.LEARNED_BLOCK, path)
            except BlockError:
                continue
            for parsed in parse(content or ""):
                known = _Fact(target, target, target, one_line(parsed.text))
                existing[target].append(known)
                for entry_id in _cited(parsed.sources):
                    cited.setdefault(entry_id, []).append(known)

        cleaned: list[str] = []
        codes: list[array] = []
        for entry in context.entries:
            text = clean_text(entry, absolutize)
            cleaned.append(text)
            codes.append(vocabulary.count(text) if text else _NO_CODES)
        known_codes = {name: [vocabulary.count(f.text) for f in group] for name, group in existing.items()}
        vocabulary.freeze()

        # One index per (group, numbers stated): a fact stating other numbers can never be
        # corroborated, so it is never a candidate, and the indexes stay small.
        indexes: dict[tuple[str, tuple[str, ...]], ShingleIndex[_Fact]] = {}

        def index_for(group: str, numbers: tuple[str, ...]) -> ShingleIndex[_Fact]:
            index = indexes.get((group, numbers))
            if index is None:
                index = indexes[(group, numbers)] = ShingleIndex(vocabulary, self.threshold)
            return index

        for name, group in existing.items():
            for fact, fact_codes in zip(group, known_codes[name], strict=True):
                index_for(name, _numbers(fact.text)).add(fact, fact.text, vocabulary.ranks(fact_codes))

        result = DistillResult()
        stats = {"entries": len(context.entries), "created": 0, "corroborated": 0, "definition": 0}
        stats |= {"skipped": 0, "deferred": 0}
        for position, entry in enumerate(context.entries):
            if position % 256 == 0:
                context.stop()
            text = cleaned[position]
            if not _has_content(text):
                # clip() never keeps part of a token: one longer than a fact leaves only "…"
                reason = "empty after clean-up" if not text else TOKEN_ONLY
                result.skipped.append((entry.id, reason))
                stats["skipped"] += 1
                continue
            if len(result.units) >= self.max_units:
                reason = f"over max_units ({self.max_units}); left for the next run"
                for later in context.entries[position:]:
                    result.skipped.append((later.id, reason))
                    result.failed_entries.append(later.id)
                stats["deferred"] = len(context.entries) - position
                break
            if entry.role == "user" and text.rstrip().endswith(("?", "？")):
                result.skipped.append((entry.id, "a user's question, not a fact"))
                stats["skipped"] += 1
                continue
            tag = next((t for t in entry.tags if t.lower() in ROUTING_TAGS), None)
            target = tag.lower() if tag else "experience"
            index = index_for(target, _numbers(text))
            done = next(
                (
                    f
                    for f in cited.get(entry.id, ())
                    if f.group == target and jaccard(text, f.text) >= self.threshold
                ),
                None,
            )
            if done is not None:
                result.skipped.append((entry.id, f"already consolidated (cited by a fact in {done.where})"))
                stats["skipped"] += 1
                continue
            ids = vocabulary.ranks(codes[position])
            codes[position] = _NO_CODES
            match = index.best(text, ids)  # only facts stating the same numbers are candidates
            if match is not None:
                fact = match.key
                cited.setdefault(entry.id, []).append(fact)
                result.units.append(
                    Unit(
                        title=fact.title
                        if target == "experience"
                        else clip(text, DEFINITION_TITLE_MAX_CHARS),
                        body=text,
                        target=target,
                        action="corroborate",
                        topic=fact.where,
                        sources=(entry.id,),
                        date=entry.date,
                        corroborates=fact.text,
                    )
                )
                stats["definition" if target != "experience" else "corroborated"] += 1
                continue
            if target == "experience":
                name = topic_name(entry)
                where = topics.slug(name)
                title = topics.titles.get(where, name)
            else:
                where, title = target, clip(text, DEFINITION_TITLE_MAX_CHARS)
            fact = _Fact(target, where, title, text)
            cited.setdefault(entry.id, []).append(fact)
            index.add(fact, text, ids)
            result.units.append(
                Unit(
                    title=title,
                    body=text,
                    target=target,
                    action="create",
                    topic=where,
                    sources=(entry.id,),
                    date=entry.date,
                )
            )
            stats["definition" if target != "experience" else "created"] += 1
        result.stats = stats
        return result
