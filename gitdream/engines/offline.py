"""The offline engine: an extractive consolidator, deterministic, with no key and no network
(DESIGN §9).

It cannot rewrite text the way a model does, so it **chooses**: of a run's raw entries it
keeps the few that carry durable knowledge, groups them by subject and states each in the
words it was written in. Per run and agent:

1. **Clean up** (`clean_text`): drop the layout that was only layout — the list marker
   (`-`, `*`, `+`, `1.`, a task box), leading `[YYYY-MM-DD]` dates and `[tag]`s, `#tag`s at
   the start or end, `⏺`/`⎿`/`>` prefixes, emoji status marks, bold markers around a label
   (`**Moltbook:** x` → `Moltbook: x`), trailing ids in parentheses (`(8db2b276)`,
   `(id: 2eb119e5)`); rewrite relative dates to absolute ones from the entry's date
   (`absolutize`); collapse to one line; keep the first two sentences (`FACT_SENTENCES`);
   escape `<!--`; cap at `FACT_MAX_CHARS` characters with "…" (never inside a grapheme or
   a token). An entry with nothing left is skipped as "empty after clean-up".
2. **Salience** (`gitdream.dream.salience`, whose docstring explains the model): each entry
   is scored for what it carries; below `offline.salience_threshold` it is *read and not
   kept* — counted in the receipt as "not kept: <reason>" (status snapshot, activity
   record, plan or to-do, narration, terminal or UI output, a question, nothing durable) —
   and the watermark moves past it. Among the kept, an entry that states again what
   another day's entry or an existing fact states (same numbers) ranks higher. An entry tagged
   `#skill`, `#soul` or `#agent` is the agent's own choice and is always kept.
3. **Route**: a `#skill`/`#soul`/`#agent` entry (the first such tag wins) becomes a
   definition unit for the `learned` block of SKILL.md/soul.md/agent.md. Everything else is
   experience.
4. **Already consolidated**: an entry is recognised by its content and source file — a fact
   (current or superseded) citing an entry of the same file, with a text similar at or
   above `offline.similarity` — and skipped, so a lost watermark, `--full` or a rebase that
   shifted lines never counts it twice.
5. **Corroborate or create**, highest salience first: an entry as similar as
   `offline.similarity` to an existing fact, or to one created earlier in the run (only
   facts stating the same numbers are compared: "disk 80%" never corroborates "disk 95%"),
   corroborates it; so does an entry that restates a fact of any topic of the agent — the
   fact holds most of its rare words, with the same polarity and numbers
   (`grouping.Restatements`) — so one fact gathers its sources instead of a copy of it
   appearing in a second topic; otherwise it creates a fact in the topic of its subject
   (`gitdream.dream.grouping`): the existing topic — human-written or gitdream's — whose
   name, description and facts share most of its rare terms, else a new topic named after
   its most-mentioned fit name (a file, a product, a person, a bold label), its tag or its
   nearest fit heading; never after a clock time, a date, a turn, a heartbeat, a tally or a
   template slot. Name families ("lessons", "lessons-learned") fold into one topic. No
   catch-all (`grouping`, step 7): a fact nothing the material shares names joins the topic
   most like it, else its own file, code or proper name's topic, else — after every other
   fact — its log section's topic; one that names nothing itself and is weak
   (`SUBJECTLESS_MARGIN`) is read and not kept (`NO_SUBJECT`), judged by the entry alone.
6. **Caps**: at most `max_units` units and `max_new_topics` new topics per run. An entry
   above the bar that does not fit is *deferred*: in `skipped` and in `deferred` with the
   reason (not in `failed_entries`: nothing failed), so it stays pending for the next run
   (where it is judged again, and
   the highest salience goes first again). A backlog converges in a handful of runs, each
   commit small enough to review.

Experience units have `title` = the topic's display name and `body` = the fact text;
definition units have `title` = the fact text clipped to DEFINITION_TITLE_MAX_CHARS. Stats:
`entries`, `created`, `corroborated`, `definition`, `skipped`, `not_kept`, `deferred`,
`folded` (entries a unit cites beside its first: a list's items), `new_topics`; every entry
is counted once: `entries` = `created` + `corroborated` + `definition` + `skipped` +
`not_kept` + `deferred` + `folded`.

Scale: near-duplicates through one prefix-filter index (`gitdream.text.similarity`), topic
matching against topic profiles — no pairwise comparison of entries; see
`bench/offline_engine.py`.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import re
import unicodedata
from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from gitdream.contract import DistillContext, DistillResult, ScreenResult
from gitdream.dream import describe, grouping, lexicons, lists, memoryfiles, salience, supersede, terminal
from gitdream.dream.dates import absolutize
from gitdream.dream.facts import one_line, parse
from gitdream.dream.slugs import slugify
from gitdream.errors import BlockError
from gitdream.text import blocks, markup, prose, sentences
from gitdream.text.clip import clip
from gitdream.text.similarity import ShingleIndex, Vocabulary, jaccard
from gitdream.units import DEFINITION_TARGETS, Entry, Unit, parse_entry_id, parse_source_ref

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
# A clock time opening an entry ("09:35 …", "[14:02 UTC] …") is when it was written, layout
# like a list marker: the fact states itself without it.
_LEAD_CLOCK = re.compile(
    r"^\[?~?(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?"
    r"(?:\s?(?:UTC|GMT|Z|CET|CEST|JST|KST|CST|PST|PDT|EST|EDT|BST)\b)?\]?(?:\s*[-–—:|]\s*|\s+)(?=\S)"
)
_LEAD_TAG = re.compile(r"^\[([^\[\]\s]{1,40})\](?![(\[:])\s*")
_HASHTAG_HEAD = re.compile(r"^#([^\s#]+)\s*")
# No leading `\s*` (the caller strips the space before the tag): with it, each position of a
# long run of spaces was tried as a start and rescanned to the run's end.
_HASHTAG_TAIL = re.compile(r"(?<!\S)#([^\s#]+)$")
# Link text holds no bracket, and the target at most one level of parentheses (a Wikipedia
# URL): with `[^\]]*` a heading of many "[" was rescanned to its end from each one.
_MD_LINK = re.compile(r"\[([^\[\]]*)\]\((?:[^()]|\([^()]*\))*\)")
_HEADING_NOISE = re.compile(r"[\d\W_]+")
# What emphasis leaves in a name (`markup.unemphasize` drops the rest): code-span backticks,
# strike-through tildes and a stray run of asterisks standing alone.
_NAME_MARKS = re.compile(r"`+|~~+|(?<!\S)\*+(?!\S)")
_TRAILING_ASIDE = re.compile(r"(?<=\S)\s*[(\[（][^()\[\]（）]{0,60}[)\]）]\s*$")
"""A trailing parenthetical of a heading — a count "(5)", how often "(zweites Mal)", "(2nd
time)", a status "(fixed)", an address "(<e-mail>)" — is an aside, not part of a name."""


_CONTENT = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "Nl", "No", "Sm", "Sc", "So"})


def _has_content(text: str) -> bool:
    """True when `text` has a letter, digit or symbol (emoji, arrows and currency count;
    backticks, carets and other modifier symbols alone do not)."""
    return any(unicodedata.category(ch) in _CONTENT for ch in text)


FACT_SENTENCES = 2
"""A fact keeps at most this many sentences of its entry: the most salient ones."""
SUBSTANTIAL_WORDS = 5
"""A first sentence of at least this many words (`salience.content_words`) always stays in the fact."""
SALIENT_SENTENCES_MAX = 12
"""Of a longer entry, only the first this many sentences are weighed for the fact."""
_CUES = salience.Cues()
_GLYPH = re.compile(r"^\s*(?:[⏺●⎿✻]|>(?=\s))\s*")
_STATUS_MARK = re.compile(
    "^(?:[\u2705\u274c\u26a0\u2714\u2716\u2611\u2b50\u23f3\u2757\u2753\ufe0f"
    "\U0001f534\U0001f7e0\U0001f7e1\U0001f7e2\U0001f535\U0001f6a8\U0001f525\U0001f4cc"
    "\U0001f4dd\U0001f4a1\U0001f389\U0001f680]\\s*)+"
)
_TRAILING_ID = re.compile(
    r" ?\((?:id:\s*|#)?(?=[^()\s]*\d)(?=[^()\s]*[A-Za-z])[A-Za-z0-9_-]{6,40}\)(?=\s*(?:[:：—–-]|$))"
    r"| ?\(id: ?[^()]{1,60}\)"
    # a short label and an identifier (four characters or more: "#3" counts, "(offense #3)"),
    # closing the text: "(ref: 0f3a9c)", "(msg #4412)", "(#4412)"
    r"| ?\((?:[^\W\d_]{1,12}\s*(?::\s*|#)|#)(?=[^()\s]*\d)[A-Za-z0-9_-]{4,40}\)(?=[.。!]?\s*$)"
)
_STATUS_CHARS = (
    "\u2705\u274c\u26a0\u2714\u2716\u2611\u2b50\u23f3\u2757\u2753\ufe0f"
    "\U0001f534\U0001f7e0\U0001f7e1\U0001f7e2\U0001f535\U0001f6a8\U0001f525\U0001f4cc"
    "\U0001f4dd\U0001f4a1\U0001f389\U0001f680"
)
# A status mark closing the text ("… — ✅"): the entry's status, when it is the only mark of
# the text (several mark items of a list: "typo fix ✅, drift ⚠️" — they are content).
_TRAILING_STATUS = re.compile(f"\\s*(?:[—–-]\\s*)?(?:[{_STATUS_CHARS}]\\s*)+$")
_STATUS_ANY = re.compile(f"[{_STATUS_CHARS.replace(chr(0xFE0F), '')}]")
# Full-width punctuation carries its own space: a space after it is layout ("重要： 部署").
_SPACE_AFTER_FULL_WIDTH = re.compile(r"(?<=[：；，。、！？])[ \t\u3000]+(?=\S)")
_ACKNOWLEDGEMENT = re.compile(
    r"^\s*(?:(?:"
    + "|".join(sorted(set(lexicons.ACKNOWLEDGEMENT_WORDS), key=len, reverse=True))
    + r")\s*[,，、:：.!！。—–-]+\s*)+(?=\S)",
    re.I,
)
_FULL_WIDTH_TEXT = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")  # Chinese, Japanese
_SUB_ITEM = re.compile(r"\n\s*(?:[-*+]|\d{1,3}[.)])\s+")


def strip_layout(text: str) -> str:
    """`text` without layout-only markup (module docstring, step 1): glyph prefixes,
    emoji status marks (leading, or one closing the text: "… — ✅"), the emphasis of a
    leading label of any kind (`__Rule__:`, `*Note:*`) and bold markers
    (`gitdream.text.markup`: never inside code or a name), trailing ids in parentheses
    ("(8db2b276)", "(ref: 0f3a9c)", "(msg #4412)"), a space after full-width punctuation
    ("重要： 部署" → "重要：部署"; never in code); nested list items become clauses of one
    line (`sentences.join_clauses`: "; " where an item ends with no mark, no ".;")."""
    text = _GLYPH.sub("", text, count=1)
    text = _STATUS_MARK.sub("", text)
    # single spaces: the patterns below stay linear
    text = one_line(sentences.join_clauses([one_line(part) for part in _SUB_ITEM.split(text)]))
    text = markup.unemphasize(markup.unlabel(text))
    text = _TRAILING_ID.sub("", text)
    trailing = _TRAILING_STATUS.search(text)
    if trailing is not None and not _STATUS_ANY.search(text, 0, trailing.start()):
        text = text[: trailing.start()]
    text = re.sub(r" ([:;,])", r"\1", text)
    text = "".join(
        _SPACE_AFTER_FULL_WIDTH.sub("", piece) if is_prose else piece
        for piece, is_prose in prose.segments(text)
    )
    return text.replace(":;", ":").strip()


def without_acknowledgement(text: str) -> str:
    """`text` without the acknowledgement opening it (`lexicons.ACKNOWLEDGEMENT_WORDS`: "Noted: deploys
    must …" → "Deploys must …", "好的，周五不部署" → "周五不部署", "알겠습니다. 금요일에는 …" →
    "금요일에는 …"), the first letter capitalised; `text` itself when nothing would be left."""
    match = _ACKNOWLEDGEMENT.match(text)
    if match is None:
        return text
    rest = text[match.end() :]
    return rest[:1].upper() + rest[1:] if rest[:1].islower() else rest


def first_sentences(text: str, count: int = FACT_SENTENCES) -> str:
    """The first `count` sentences of one-line `text` (`gitdream.text.sentences`)."""
    parts = sentences.split(text)
    return text if len(parts) <= count else sentences.join(parts[:count])


def salient_sentences(entry: Entry, text: str, count: int = FACT_SENTENCES) -> str:
    """At most `count` sentences of one-line `text`, in the order written: the first one
    when it is a sentence of substance (`SUBSTANTIAL_WORDS` words or more: it usually names
    the subject; not when it is talk about the session, `salience.is_session_talk`: "I
    suspect the issues were caused by …"), then those that carry the most (each scored by `salience.prior_score` as
    the entry's text; a further one only when something speaks for it) — a long message's
    point is often not in its first sentences ("Wow, OK. … Always explain the purpose of a
    file."). A short label that opened the dropped first sentence stays as the subject
    ("Moltbook: still suspended. Can read but can't post." → "Moltbook: Can read but can't
    post."). Only the first `SALIENT_SENTENCES_MAX` sentences are weighed."""
    parts = sentences.split(text)
    if len(parts) <= count:
        return text
    parts = parts[:SALIENT_SENTENCES_MAX]
    substantial = salience.content_words(parts[0]) >= SUBSTANTIAL_WORDS
    first = [0] if substantial and not salience.is_session_talk(entry, parts[0], _CUES) else []
    rest = [i for i in range(len(parts)) if i not in first]
    scores = {i: salience.prior_score(entry, parts[i], _CUES) for i in rest}
    ranked = sorted(rest, key=lambda i: (-scores[i], i))
    best = ranked[:1] + [i for i in ranked[1 : count - len(first)] if scores[i] > 0]  # no padding
    chosen = sorted(first + best[: count - len(first)])
    out = sentences.join([parts[i] for i in chosen])
    label, _ = salience.label_of(parts[0])
    if 0 not in chosen and label is not None and len(label.split()) <= 3:
        out = f"{label}: {out}"  # the subject the dropped first sentence named ("Moltbook: …")
    return out


def _written(entry: Entry) -> str:
    """What an entry says, as written: a tool block's prose, else its text."""
    return terminal.prose(entry.text) or entry.text


def _with_items(line: str, items: list[str], limit: int = FACT_MAX_CHARS) -> str:
    """Log item `line` followed by the sub-items of `items` that fit within `limit`
    characters, in the order written (`sentences.join_clauses`): the line always — it names
    what they are about —, then the items up to the first that does not fit."""
    text = line
    for item in items:
        if not item.strip():
            continue
        joined = sentences.join_clauses([text, item])
        if len(joined) > limit:
            break
        text = joined
    return text


def clean_text(entry: Entry, absolutize: Absolutize | None) -> str:
    """The fact text of `entry` (see module docstring, step 1); "" when nothing is left."""
    tags = set(entry.tags)
    text = terminal.prose(entry.text) or entry.text.strip()  # a tool block: the prose it holds
    text = _GLYPH.sub("", text, count=1)
    text = _LIST_MARKER.sub("", text, count=1)
    text = _TASK_BOX.sub("", text, count=1)
    while True:
        before = text
        text = _LEAD_DATE.sub("", text, count=1)
        text = _LEAD_CLOCK.sub("", text, count=1)
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
    # A log item's sub-items are what its line introduces: they stay with it, whole, and
    # only the line's own sentences are chosen from ("Detector on quorum theory. Chain
    # class: …; Detector: …" keeps its parts; cut by `describe.fit` at a clause's end).
    head, *items = _SUB_ITEM.split(text) if _LIST_MARKER.match(entry.text) else (text,)
    head = without_acknowledgement(strip_layout(head))
    head = supersede.without_correction_label(salience.without_kind_label(head))
    text = salience.standing_sentences(one_line(head), user=salience.said_by_user(entry))
    text = salient_sentences(entry, text)
    if items:
        text = _with_items(text, [strip_layout(item) for item in items])
    if absolutize is not None and entry.date is not None and text:
        text = one_line(absolutize(text, entry.date))
    text = memoryfiles.neutral(text)
    if not _has_content(text):
        return ""
    if items:  # the line names what its sub-items are about: they are cut, never it
        return describe.fit(text, FACT_MAX_CHARS)
    return describe.fit(text, FACT_MAX_CHARS, lambda part: salience.prior_score(entry, part, _CUES))


def _closed(text: str) -> str:
    """The text of a kept fact not ending on a colon that introduces what it does not hold
    (a command, a list left out): a last sentence of substance (`SUBSTANTIAL_WORDS` words
    or more) ends with a stop instead ("… then stage the fixed files and commit:" → "… and
    commit."; "。" after Chinese or Japanese); a shorter one ("Need to either:") leaves the
    fact when sentences precede it; `text` itself otherwise. Applied once an entry is kept:
    salience judged the text as written, colon included (a lead-in alone is rarely kept)."""
    stripped = text.rstrip()
    if not stripped.endswith((":", "：")):
        return text
    last = (sentences.split(stripped) or [stripped])[-1]
    if salience.content_words(last) >= SUBSTANTIAL_WORDS:
        body = stripped[:-1].rstrip()
        return body + ("。" if _FULL_WIDTH_TEXT.match(body[-1:]) else ".")
    return lists.without_lead_sentence(stripped) or text


ACRONYM_TAG_MAX = 2
"""A lower-case name of at most this many Latin letters (a tag: `[ci]`, `[qa]`) is an acronym."""


def clean_name(name: str) -> str:
    """A heading or tag as a topic display name: Markdown links and emphasis dropped, one
    line, a trailing aside in parentheses ("(5)", "(zweites Mal)", "(2nd time)") and a
    trailing colon dropped, a tag of `ACRONYM_TAG_MAX` letters or fewer in capitals ("ci" →
    "CI"), else first letter
    upper-cased, capped at TOPIC_NAME_MAX_CHARS characters."""
    text = _MD_LINK.sub(r"\1", name)
    text = _NAME_MARKS.sub("", markup.unemphasize(text, italic=True))
    text = _TRAILING_ASIDE.sub("", one_line(text))
    text = memoryfiles.neutral(text).strip(" :：-—")
    if len(text) <= ACRONYM_TAG_MAX and text.isascii() and text.isalpha() and text.islower():
        return text.upper()  # a tag such as [ci], [qa], [db] names an acronym: "CI", not "Ci"
    if text[:1].islower() and not re.search(r"[\w][-_./][\w]", text):
        text = (
            text[0].upper() + text[1:]
        )  # a file or code name ("pre-commit", "apple_books") stays as written
    return clip(text, TOPIC_NAME_MAX_CHARS)


def is_generic_heading(heading: str) -> bool:
    """True for headings that say when, not what (see module docstring, step 3)."""
    words = _HEADING_NOISE.sub(" ", clean_name(heading).casefold()).split()
    return all(w in GENERIC_HEADING_WORDS for w in words)


def template_slots(entries: Sequence[Entry], terms_of: Callable[[Entry], set[str]]) -> frozenset[str]:
    """The headings of `entries` that are slots of a session template, case-folded as
    `clean_name` writes them (module docstring, step 5; issue #14: never name a topic after
    a session-template slot).

    A log written from a routine repeats the same heading in every heartbeat, session or day
    ("### Non-Agent Research", "### Build Action"), and what sits under it is about something
    else each time: the heading says where in the routine an entry was, not what it is
    about. A heading is a slot when the material has at least `SLOT_MIN_SECTIONS` sections
    under it (a section: one file and the headings above it, so the same heading under
    another heartbeat's heading is another section) and no word of the sections' text —
    beside the heading's own words and the agent's everyday words (`SLOT_COMMON_SHARE`) — recurs in
    more than half of them. A heading "Slot: subject" counts as a section of "Slot" too. A
    heading whose sections share a subject ("## Moltbook" every day, each about its
    captcha) is not a slot. `entries` are every entry of the files read
    (`DistillContext.outline`), so the answer does not depend on which of them a run
    distills; `terms_of` gives an entry's terms (`grouping.terms`). Structure and word
    overlap only, so it holds in any language."""
    sections: dict[str, dict[tuple[str, tuple[str, ...]], list[Entry]]] = {}
    for entry in entries:
        for depth, heading in enumerate(entry.context):
            key = clean_name(heading).casefold()
            label = re.split(r":\s+|：", key, maxsplit=1)[
                0
            ]  # "Research: Octopus arms" is the slot "Research"
            for name in {key, label} - {""}:
                sections.setdefault(name, {}).setdefault((entry.path, entry.context[: depth + 1]), []).append(
                    entry
                )
    return frozenset(_unrelated_sections(sections, entries, terms_of))


def _unrelated_sections(
    sections: dict[str, dict[tuple[str, tuple[str, ...]], list[Entry]]],
    entries: Sequence[Entry],
    terms_of: Callable[[Entry], set[str]],
) -> set[str]:
    """The keys of `sections` (a heading or label → its sections: `(path, headings)` → the
    entries it leads there) that lead at least `SLOT_MIN_SECTIONS` sections about unrelated
    things: no word of their text — beside the key's own words and the agent's everyday
    words (`SLOT_COMMON_SHARE`, written under three headings or more) — recurs in more than
    half of them (`template_slots`, `label_slots`)."""
    candidates = {key: found for key, found in sections.items() if len(found) >= SLOT_MIN_SECTIONS}
    if not candidates:
        return set()
    words = {id(entry): terms_of(entry) for entry in entries}
    df: Counter[str] = Counter()
    spread: dict[str, set[str]] = {}  # word → the innermost headings it is written under
    for entry in entries:
        df.update(words[id(entry)])
        heading = clean_name(entry.context[-1]).casefold() if entry.context else ""
        for w in words[id(entry)]:
            under = spread.setdefault(w, set())
            if len(under) < 3:
                under.add(heading)
    everyday = {w for w, n in df.items() if n >= SLOT_COMMON_SHARE * len(words) and len(spread[w]) >= 3}
    slots = set()
    for key, found in candidates.items():
        own = set(grouping.terms(key)) | everyday
        recurring: Counter[str] = Counter()
        for section in found.values():
            recurring.update(set().union(*(words[id(e)] for e in section)) - own)
        if not any(n * 2 > len(found) for n in recurring.values()):
            slots.add(key)
    return slots


def entry_labels(entry: Entry) -> list[str]:
    """The inline labels that lead entry `entry`: the "X:" opening its text
    (`salience.label_of`: "3. Files and Code Sections:", "**Moltbook:**") and the one its
    list's lead-in is ("Pending Tasks:" above its items), as written; a heading or a tag is
    no inline label."""
    found = [salience.label_of(entry.text)[0]]
    if entry.lead_in:
        found.append(salience.label_of(entry.lead_in.rstrip() + " .")[0])
    return [label for label in found if label]


def label_slots(
    entries: Sequence[Entry],
    terms_of: Callable[[Entry], set[str]],
    casing: grouping.Casing,
    proper: set[str] | frozenset[str] = frozenset(),
) -> frozenset[str]:
    """The inline labels of `entries` (`entry_labels`) that are slots of a session template,
    case-folded as `clean_name` writes them (issue #14: never name a topic after a
    session-template slot).

    A summary or a routine written from a template opens its items with the same labels
    every time ("Files and Code Sections:", "Pending Tasks:", "Current Work:" of a
    compaction summary; "研究：" every day), and what follows is about something else each
    time: the label says which part of the template an item fills, not what it is about.
    A label is a slot when it holds no name — every word a common one, which the material
    also writes in lower case (`grouping.Casing.holds_no_name`: "Files and Code Sections",
    not "Clawk reply", "Apple Books") — or when it names nothing (`grouping.names`, with
    the material's proper names `proper`) and leads at least `SLOT_MIN_SECTIONS` sections of
    unrelated text, as a heading slot does (`template_slots`; in a script without case, the
    only test). A label with a name in it is not a slot by repetition: its sections share
    that name ("Moltbook: …" every day). A heading an author wrote ("## Memory maintenance") and a
    tag (`[deploy]`) are no inline labels and stay fine names. `entries` are every entry of
    the files read (`DistillContext.outline`), so the answer does not depend on which of
    them a run distills."""
    sections: dict[str, dict[tuple[str, tuple[str, ...]], list[Entry]]] = {}
    slots: set[str] = set()
    for entry in entries:
        for label in entry_labels(entry):
            key = clean_name(label).casefold()
            if not key:
                continue
            if casing.holds_no_name(label):
                slots.add(key)
            elif grouping.names(label, (), proper):
                continue
            sections.setdefault(key, {}).setdefault((entry.path, entry.context), []).append(entry)
    return frozenset(slots | _unrelated_sections(sections, entries, terms_of))


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
    if len(written) > NAME_MAX_CHARS:
        return True
    from gitdream.dream.screen import scan_text  # idle path: a run with nothing new never loads the scanner

    return bool(scan_text(written))


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

    return slugify


def _default_absolutize() -> Absolutize:

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


def _compatible(new: str, old: str) -> bool:
    """True when `new` may restate `old` (grouping, step 6): both negated or neither ("X is
    NOT time-based" never corroborates "X is time-based": superseding decides that), and
    the numbers of the shorter all stated by the longer (a list fact holding the item)."""
    if supersede.is_negated(new) != supersede.is_negated(old):
        return False
    short, long_ = sorted((new, old), key=len)
    return set(_numbers(short)) <= set(_numbers(long_))


NO_SUBJECT = "not kept: no subject and not durable enough to stand alone"
"""The reason of an entry read and not kept because it names no subject and is weak
(grouping, step 7)."""
SLOT_MIN_SECTIONS = 3
"""A heading under which the material has at least this many sections (one per heartbeat,
session or day) is a candidate template slot (`template_slots`)."""
SLOT_COMMON_SHARE = 0.25
"""A word of at least this share of the entries, written under three headings or more, is an
everyday word of the agent: two sections sharing it are not about one subject
(`template_slots`)."""
SUBJECTLESS_MARGIN = 0.75
"""An entry that names no subject is kept only when its salience clears the bar by this
much on the log-odds scale (a bar of 0.3 → a probability of 0.48): filed under no subject
of its own, it must be the more certainly durable."""
_HOMELESS = ("", "")
ACTIVITY_RECORD = "not kept: a one-off activity record, like no topic and alone on its subject"
"""The reason of an entry read and not kept because it only records something done once
(`salience.is_activity_record`), no topic is like it, and nothing else of the run names
its subject: a record joins a topic, it opens none alone."""
_RECORD = "\0record"


def _about_file(name: str, fact: str) -> bool:
    """True when fact text `fact` names `name` — a file, a folder or a code name of its
    entry — as a word of its own or as a path: the fact is about that file. A path the entry
    mentions in passing ("Pleare review the claude-dev-log-diary/day-002.md …") that the
    sentences kept as the fact never name is not what the fact is about."""
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", fact, re.IGNORECASE) is not None


def _in_passing(name: str, written: str, fact: str) -> bool:
    """True when `name`, found in an entry's text `written`, is a path, a folder or a file
    stem there (`grouping.poor_name`, `grouping.artifact_names`: "claude-dev-log-diary" of
    "claude-dev-log-diary/day-002.md") that its fact `fact` does not name (`_about_file`):
    mentioned in passing, it names no topic (issue #14: topics by subject)."""
    path = grouping.poor_name(name, [written]) or name in grouping.artifact_names(written)
    return path and not _about_file(name, fact)


def _may_restate(new: str, fact: _Fact) -> bool:
    """True when `new` may restate `fact` (`_compatible`) and does not correct it: a
    correction shares the words of the fact it corrects ("Use rsync instead of cp …")."""
    return _compatible(new, fact.text) and not supersede.corrects(new, fact.text)


SESSION_RESTATEMENT = 0.7
"""An assistant turn restates a fact of its own session (the user's instruction, "Never
deploy on Fridays") when this share of the fact's terms, rarer-weighted, is in the turn
("Deploys must never happen on Fridays because …"): one fact, with both sources."""
SESSION_ACKNOWLEDGED = 0.5
"""… or this share, when the turn opens by acknowledging what it was told ("Noted: …", "Got
it, …", "好的，…", "알겠습니다. …", `lexicons.ACKNOWLEDGEMENT_WORDS`): a reply that says it takes the
instruction in, then says it again in its own words."""
SESSION_MIN_SHARED = 2
"""… and they share at least this many terms."""
WORDS_WITHIN = 0.8
"""An entry a fact cites is that fact read again when this share of the words of one of
the two texts is in the other (`_words_within`)."""
_WORD = re.compile(r"\w+")


def _words_within(text: str, fact: str) -> bool:
    """True when `WORDS_WITHIN` of the words of `text` are in `fact`, or of `fact`'s in
    `text` (case folded): for an entry a fact already cites, the fact made from it however
    its text was cleaned up then ("theory.; Chain" then, "theory. Chain" now)."""
    ours, theirs = set(_WORD.findall(text.casefold())), set(_WORD.findall(fact.casefold()))
    if not ours or not theirs:
        return False
    shared = len(ours & theirs)
    return shared >= WORDS_WITHIN * len(ours) or shared >= WORDS_WITHIN * len(theirs)


OPENING_WORDS = 6
"""An entry a fact cites whose first sentence is the fact's, and at least this many words
long, is that fact read again (`_same_opening`)."""


def _same_opening(text: str, fact: str) -> bool:
    """True when `text` and `fact` open with the same first sentence of at least
    `OPENING_WORDS` words (case folded): a log item whose line the fact states, with other
    sub-items chosen after it by an earlier version."""
    ours, theirs = sentences.split(text)[:1], sentences.split(fact)[:1]
    if not ours or not theirs:
        return False
    words = _WORD.findall(ours[0].casefold())
    return len(words) >= OPENING_WORDS and words == _WORD.findall(theirs[0].casefold())


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
        self._by_family: dict[str, str] = {}
        for slug, topic in sorted(memory.topics.items()):
            name = topic.name or slug.replace("_", " ").replace("-", " ")
            if grouping.is_subject_family(name):
                self._by_family.setdefault(grouping.family(name), slug)

    def existing(self, name: str) -> str | None:
        """The slug `name` maps to without creating a topic: an existing topic (by loose key,
        file name or front matter name), or one of its name family (existing or created in
        this run); None when there is none."""
        key = _key(name)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        slug = self._by_key.get(key) if key else None
        if slug is None:
            bare = self._slugify(name, set())
            slug = self._by_fold.get(bare.casefold()) if memoryfiles.safe_slug(bare) else None
        if slug is None and not grouping.unfit_name(name):
            slug = self._by_family.get(grouping.family(name)) if grouping.is_subject_family(name) else None
        if slug is not None:
            self._cache[key] = slug
        return slug

    def slug(self, name: str) -> str:
        found = self.existing(name)
        if found is not None:
            return found
        key = _key(name)
        slug = self._slugify(name, set(self._taken))
        if not memoryfiles.safe_slug(slug) or slug.casefold() in self._by_fold:
            slug = self._slugify(f"topic {name}", set(self._taken))
        if not memoryfiles.safe_slug(slug) or slug.casefold() in self._by_fold:
            slug = "topic-" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:10]
        self._taken.add(slug)
        self._by_fold[slug.casefold()] = slug
        self.titles[slug] = name
        if grouping.is_subject_family(name):
            self._by_family.setdefault(grouping.family(name), slug)
        self._cache[key] = slug
        return slug


@dataclass
class _Candidate:
    """An entry above the salience bar, waiting for its turn (highest score first); or a
    list under a lead-in (`members`: the positions it cites, lead-in first; `entry` is its
    first item)."""

    position: int
    entry: Entry
    text: str
    score: float
    target: str
    members: tuple[int, ...] = ()
    echoes: list[_Candidate] = dataclasses.field(default_factory=list)
    """Assistant turns restating this user turn (`_Run._echoes_to_their_turn`): they
    corroborate the fact it states, and share its fate when it is deferred or not kept."""

    def positions(self) -> tuple[int, ...]:
        return self.members or (self.position,)

    def settled(self) -> tuple[int, ...]:
        """The positions this candidate settles: its own, and its echoes'."""
        return self.positions() + tuple(p for echo in self.echoes for p in echo.settled())


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
        self.max_new_topics = cfg.int("max_new_topics")
        self.threshold = cfg.float("offline.similarity")
        self.bar = cfg.float("offline.salience_threshold")
        self.cues = salience.Cues.configured(cfg.list("offline.keep_cues"), cfg.list("offline.skip_cues"))
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
        holds `(entry id, reason)` and whose `deferred` holds those of the deferred entries."""
        slugify = self._slugify or _default_slugify()
        absolutize = self._absolutize or _default_absolutize()
        memory = memoryfiles.read_memory(context.agent, context.memory.files)
        known = _Known.load(context, memory)
        cleaned = [clean_text(entry, absolutize) for entry in context.entries]
        run = _Run(self, context, memory, known, cleaned, slugify)
        candidates = run.judge()
        run.shared = Counter(t for c in candidates for t in set(grouping.terms(c.text)))
        run.select(candidates)
        run.name_new_topics()
        for below, reason in run.below:
            run.skip(context.entries[below], reason, "not_kept")
        position = {entry.id: n for n, entry in enumerate(context.entries)}
        run.result.units.sort(
            key=lambda u: position.get(u.sources[0], 0)
        )  # chosen by salience, written in log order
        run.result.stats = run.stats
        run.result.slots = run.label_slots
        return run.result


@dataclass(eq=False)
class _Known:
    """What memory already holds: facts by group (experience or a definition target), and
    the facts (current or superseded) citing each source file."""

    facts: dict[str, list[_Fact]]
    by_path: dict[str, list[_Fact]]
    by_id: dict[str, list[_Fact]]
    by_line: dict[tuple[str, int], list[_Fact]]
    """(path, line) → the facts citing an entry that starts or ends on that line."""
    by_range: dict[str, list[tuple[int, int, _Fact]]]
    """path → (start, end, fact) of each line range a fact cites: one range may cover
    several entries (`facts.merge_sources`)."""

    def citing(self, entry: Entry) -> list[_Fact]:
        """The facts citing `entry`: by its id, or by a range of its file that overlaps its
        lines (consecutive entries are cited as one range)."""
        out = list(self.by_id.get(entry.id, ()))
        for start, end, fact in self.by_range.get(entry.path, ()):
            if start <= entry.end and entry.start <= end and fact not in out:
                out.append(fact)
        return out

    @classmethod
    def load(cls, context: DistillContext, memory: memoryfiles.MemoryFiles) -> _Known:
        facts: dict[str, list[_Fact]] = {"experience": []}
        by_path: dict[str, list[_Fact]] = {}
        by_id: dict[str, list[_Fact]] = {}
        by_range: dict[str, list[tuple[int, int, _Fact]]] = {}

        def cite(fact: _Fact, sources: list[str]) -> None:
            ids = _cited(sources)
            for entry_id in ids:
                by_id.setdefault(entry_id, []).append(fact)
                cited = parse_entry_id(entry_id)
                if cited is not None and cited[2] > cited[1]:
                    by_range.setdefault(cited[0], []).append((cited[1], cited[2], fact))
            for path in {parsed[0] for parsed in map(parse_entry_id, ids) if parsed}:
                by_path.setdefault(path, []).append(fact)

        for slug, topic in memory.topics.items():
            for fact in topic.facts or ():
                known = _Fact("experience", slug, topic.title, one_line(fact.text))
                facts["experience"].append(known)
                cite(known, fact.sources)
            for fact in memoryfiles.superseded_facts(topic):
                cite(
                    _Fact("superseded", slug, topic.title, memoryfiles.superseded_text(fact.text)),
                    fact.sources,
                )
        for target in DEFINITION_TARGETS:
            facts[target] = []
            path = memoryfiles.definition_path(context.agent, target)
            text = context.memory.files.get(path) if path else None
            if text is None or path is None:
                continue
            try:
                content = blocks.get(text, memoryfiles.LEARNED_BLOCK, path)
            except BlockError:
                continue
            for fact in parse(content or ""):
                known = _Fact(target, target, target, one_line(fact.text))
                facts[target].append(known)
                cite(known, fact.sources)
        by_line: dict[tuple[str, int], list[_Fact]] = {}
        for entry_id, cited in by_id.items():
            parsed = parse_entry_id(entry_id)
            if parsed is not None:
                for line in {parsed[1], parsed[2]}:
                    by_line.setdefault((parsed[0], line), []).extend(cited)
        return cls(facts, by_path, by_id, by_line, by_range)


class _Run:
    """One distillation: judging, then choosing in salience order (module docstring)."""

    def __init__(
        self,
        engine: OfflineEngine,
        context: DistillContext,
        memory: memoryfiles.MemoryFiles,
        known: _Known,
        cleaned: list[str],
        slugify: Slugify,
    ) -> None:
        self.engine = engine
        self.context = context
        self.known = known
        self.cleaned = cleaned
        self.topics = _Topics(memory, slugify)
        self.result = DistillResult()
        self.stats = {"entries": len(context.entries), "created": 0, "corroborated": 0, "definition": 0}
        self.stats |= {"skipped": 0, "not_kept": 0, "deferred": 0, "folded": 0, "new_topics": 0}
        self.vocabulary = Vocabulary()
        self.codes = [self.vocabulary.count(t) if t else _NO_CODES for t in cleaned]
        known_codes = {g: [self.vocabulary.count(f.text) for f in group] for g, group in known.facts.items()}
        self.vocabulary.freeze()
        self.indexes: dict[tuple[str, tuple[str, ...]], ShingleIndex[_Fact]] = {}
        for group, facts in known.facts.items():
            for fact, fact_codes in zip(facts, known_codes[group], strict=True):
                self.index_for(group, _numbers(fact.text)).add(
                    fact, fact.text, self.vocabulary.ranks(fact_codes)
                )
        term_lists = [grouping.terms(t) if t else [] for t in cleaned]
        documents = [terms for terms, t in zip(term_lists, cleaned, strict=True) if t]
        self.matcher = grouping.TopicMatcher(documents)
        self.proper = grouping.proper_names(_written(e) for e in context.entries)
        known_terms = {id(e): set(terms) for e, terms in zip(context.entries, term_lists, strict=True)}
        outline = context.outline or context.entries

        def terms_of(entry: Entry) -> set[str]:
            found = known_terms.get(id(entry))
            return found if found is not None else set(grouping.terms(entry.text))

        self.slots = template_slots(outline, terms_of)
        outline_proper = (
            self.proper if outline is context.entries else grouping.proper_names(_written(e) for e in outline)
        )
        self.casing = grouping.Casing(_written(e) for e in outline)
        self.label_slots = label_slots(
            outline,
            terms_of,
            self.casing,
            outline_proper,
        )
        # What memory holds counts with the material for `_own_subject`: a run that reads only
        # the entries an earlier run deferred still knows whom the agent writes about.
        held = [f.text for topic in memory.topics.values() for f in topic.facts or ()]
        held += [memoryfiles.body_text(t.text) for t in memory.topics.values() if not t.owned]
        held = [
            line for text in [*held, memory.index_text or ""] for line in text.splitlines() if line.strip()
        ]
        self.proper_held = self.proper | grouping.proper_names(held)
        for slug, topic in memory.topics.items():
            texts = [topic.description] + [f.text for f in topic.facts or ()]
            if topic.facts is None or not topic.owned:
                texts.append(memoryfiles.body_text(topic.text))
            name = topic.name or topic.title
            self.matcher.add_topic(slug, name, texts, human=not topic.owned)
            self.matcher.add_names(slug, [name, slug.replace("_", " ")], own=True)
            for text in texts:
                self.matcher.add_names(slug, grouping.names(self._unslotted(text), (), self.proper))
        # Facts of every topic of the agent, by their terms: a new entry restating one of
        # them corroborates it, whichever topic it is in (grouping, step 6).
        self.restatements: grouping.Restatements[_Fact] = grouping.Restatements(self.matcher.idf)
        for fact in known.facts["experience"]:
            self.restatements.add(fact, fact.text)
        # The instructions facts give, by their terms: the same rule in other words is one
        # fact, whichever topic holds it (`salience.instruction_of`).
        self.instructions: grouping.Restatements[_Fact] = grouping.Restatements(
            self.matcher.idf, grouping.INSTRUCTION_CONTAINMENT, grouping.INSTRUCTION_MIN_SHARED
        )
        for fact in known.facts["experience"]:
            self._add_instruction(fact)
        self.mentions: Counter[str] = Counter()
        families: dict[tuple[str, tuple[str, ...]], list[str]] = {}  # read once per text and tags
        for entry, text in zip(context.entries, cleaned, strict=True):
            if text:
                key = (self._said(entry), entry.tags)
                found = families.get(key)
                if found is None:
                    found = families[key] = [grouping.family(n) for n in grouping.names(*key, self.proper)]
                self.mentions.update(found)
        self.held_mentions = Counter(self.mentions)
        for line in held:
            self.held_mentions.update(grouping.family(n) for n in grouping.names(line, (), self.proper_held))
        self.sections: dict[tuple[str, tuple[str, ...]], Counter[str]] = {}  # (path, headings) → topics
        self.lines: dict[
            tuple[str, int], tuple[tuple[str, ...], str]
        ] = {}  # (path, line) → (headings, topic)
        self.new_topics: set[str] = set()
        self.below: list[tuple[int, str]] = []  # (position, reason) of entries below the bar
        self.chance: dict[int, float] = {}  # position → probability of being durable
        self.shared: Counter[str] = Counter()  # term → how many of the run's candidates hold it
        self._groups: dict[int, tuple[int, ...]] | None = None  # position → its list's positions
        self._records: dict[int, bool] = {}  # position → it records something done once
        self.created: list[_Fact] = []  # experience facts this run created, in order
        self.session_facts: dict[str, list[_Fact]] = {}  # transcript → facts of its user turns

    def _unslotted(self, text: str) -> str:
        """`text` without the inline label that opens it when that label is a slot of a
        template (`label_slots`: "Files and Code Sections: `README.md` …" → "`README.md`
        …"), for reading the names it is about: a slot names no subject."""
        label, rest = salience.label_of(text)
        if label is not None and clean_name(label).casefold() in self.label_slots:
            return rest
        return text

    def _said(self, entry: Entry) -> str:
        """What entry `entry` says as written (`_written`), its slot label left out
        (`_unslotted`): the text its names are read in."""
        return self._unslotted(_written(entry))

    def _add_instruction(self, fact: _Fact) -> None:
        """Index the instruction experience fact `fact` gives, if any."""
        instruction = salience.instruction_of(fact.text, self.engine.cues)
        if instruction is not None:
            self.instructions.add(fact, instruction)

    def _instructed(self, text: str, tags: tuple[str, ...] = ()) -> _Fact | None:
        """The experience fact that gives the instruction fact text `text` (of an entry
        tagged `tags`) gives, in other words: the two instructions `_compatible` (same
        polarity and numbers), and the words only one of them holds name neither's subject
        — the entry's tags, the fact's topic — since the same rule about another thing is
        another rule ("Never restart kafka without draining it" in `kafka.md` is not
        "[redis] Never restart redis without draining it"). None when none does."""
        instruction = salience.instruction_of(text, self.engine.cues)
        if instruction is None:
            return None
        cues = self.engine.cues
        own = set(grouping.terms(instruction))
        tagged = {grouping.family(t) for t in tags}

        def same(fact: _Fact) -> bool:
            theirs = salience.instruction_of(fact.text, cues) or ""
            if not _compatible(instruction, theirs):
                return False
            subject = tagged | {grouping.family(fact.where), grouping.family(fact.title)}
            unshared = own ^ set(grouping.terms(theirs))
            return not ({grouping.family(t) for t in unshared} & (subject - {""}))

        return self.instructions.find(instruction, same)

    def _turn_restates(self, entry: Entry, fact: str) -> float | None:
        """How much of fact text `fact` assistant turn `entry` restates — the share of the
        fact's terms, rarer-weighted, that the whole turn holds (`_written`, acknowledgement
        dropped) — when it restates it (`SESSION_RESTATEMENT`, or `SESSION_ACKNOWLEDGED` for
        a turn opening with an acknowledgement; `SESSION_MIN_SHARED`; no number of the fact
        missing from the turn); None when it does not."""
        written = _written(entry)
        turn = without_acknowledgement(written)
        own, theirs = set(grouping.terms(fact)), set(grouping.terms(turn))
        shared = own & theirs
        if len(shared) < SESSION_MIN_SHARED or not set(_numbers(fact)) <= set(_numbers(turn)):
            return None
        idf = self.matcher.idf
        share = sum(map(idf, shared)) / sum(map(idf, own))
        bar = SESSION_ACKNOWLEDGED if turn != written else SESSION_RESTATEMENT
        return share if share >= bar else None

    def _session_fact(self, entry: Entry) -> _Fact | None:
        """The fact assistant turn `entry` restates among those of its own session (a
        transcript: the facts this run made of its user turns, and the facts memory cites it
        with) — the most restated; None for any other entry, or when it restates none. The
        user's instruction and the assistant's "Noted: …" of it are one fact."""
        if entry.kind != "transcript" or entry.role != "assistant":
            return None
        known = [f for f in self.known.by_path.get(entry.path, ()) if f.group == "experience"]
        best: tuple[float, _Fact] | None = None
        for fact in [*self.session_facts.get(entry.path, ()), *known]:
            share = self._turn_restates(entry, fact.text)
            if share is not None and (best is None or share > best[0]):
                best = (share, fact)
        return best[1] if best is not None else None

    def _echoes_to_their_turn(self, ranked: list[_Candidate]) -> list[_Candidate]:
        """`ranked` without the assistant turns that restate a user turn of their session
        (`_turn_restates`, the most restated one): each is an echo of that turn's candidate,
        so the user's words state the fact and the restatement corroborates it, wherever
        and whenever that fact is written."""
        users: dict[str, list[_Candidate]] = {}
        for candidate in ranked:
            entry = candidate.entry
            if entry.kind == "transcript" and entry.role == "user" and candidate.target == "experience":
                users.setdefault(entry.path, []).append(candidate)
        if not users:
            return ranked
        out: list[_Candidate] = []
        for candidate in ranked:
            entry = candidate.entry
            said = [
                (share, user)
                for user in users.get(entry.path, ())
                if entry.role == "assistant" and candidate.target == "experience"
                if user.entry.start < entry.start
                and (share := self._turn_restates(entry, user.text)) is not None
            ]
            if said:
                max(said, key=lambda pair: pair[0])[1].echoes.append(candidate)
            else:
                out.append(candidate)
        return out

    def _corrected(self, text: str) -> _Fact | None:
        """The experience fact explicit correction `text` corrects (`supersede.corrects`),
        newest first — this run's, then memory's —, so the correction joins its topic, where
        integration supersedes it; None when `text` corrects none (most texts: it is no
        correction, and nothing is scanned)."""
        if supersede.correction_of(text) is None:
            return None
        for fact in [*reversed(self.created), *reversed(self.known.facts["experience"])]:
            if supersede.corrects(text, fact.text):
                return fact
        return None

    def _same_instruction(self, text: str, fact: str) -> bool:
        """True when fact text `text` gives the instruction fact text `fact` gives, in other
        words (`_instructed`'s bar, `grouping.INSTRUCTION_CONTAINMENT`): an entry a fact
        citing it was corroborated by, so a re-read (`--full`) knows it is consolidated."""
        cues = self.engine.cues
        mine, theirs = salience.instruction_of(text, cues), salience.instruction_of(fact, cues)
        if mine is None or theirs is None or not _compatible(mine, theirs):
            return False
        a, b = set(grouping.terms(mine)), set(grouping.terms(theirs))
        return (
            len(a & b) >= grouping.INSTRUCTION_MIN_SHARED
            and grouping.containment(a, b, self.matcher.idf) >= grouping.INSTRUCTION_CONTAINMENT
        )

    def index_for(self, group: str, numbers: tuple[str, ...]) -> ShingleIndex[_Fact]:
        # One index per (group, numbers stated): a fact stating other numbers can never be
        # corroborated, so it is never a candidate, and the indexes stay small.
        index = self.indexes.get((group, numbers))
        if index is None:
            index = self.indexes[(group, numbers)] = ShingleIndex(self.vocabulary, self.engine.threshold)
        return index

    def skip(self, entry: Entry, reason: str, counter: str = "skipped") -> None:
        self.result.skipped.append((entry.id, reason))
        self.stats[counter] += 1

    def judge(self) -> list[_Candidate]:
        """Skip what is empty, already consolidated or below the bar; return the rest."""
        entries = self.context.entries
        repeated = self._repeated()
        out: list[_Candidate] = []
        for position, entry in enumerate(entries):
            if position % 256 == 0:
                self.context.stop()
            text = self.cleaned[position]
            if not _has_content(text):
                self.skip(entry, "empty after clean-up" if not text else TOKEN_ONLY)
                continue
            target = next((t.lower() for t in entry.tags if t.lower() in ROUTING_TAGS), "experience")
            done = next(
                (
                    f
                    for f in self.known.citing(entry)
                    if f.group in (target, "superseded")
                    and (
                        jaccard(text, f.text) >= self.engine.threshold
                        or text.rstrip(".;。") in f.text  # an item of a list the fact holds
                        or f.text.rstrip(".;。").casefold()
                        in text.casefold()  # part of the entry (recapitalised)
                        or lists.without_subject(f.text, entry).rstrip(".;。") in text  # led by its heading
                        or self._same_instruction(text, f.text)  # it corroborated the fact in other words
                        or _words_within(text, f.text)  # cleaned up otherwise by an earlier version
                        or _same_opening(text, f.text)  # its sub-items chosen otherwise
                    )
                ),
                None,
            ) or next(
                (
                    f
                    for f in self.known.by_path.get(entry.path, ())
                    if f.group in (target, "superseded") and f.text == text
                ),
                None,
            )
            if done is not None:
                self.skip(entry, f"already consolidated (cited by a fact in {done.where})")
                continue
            if target != "experience":
                out.append(_Candidate(position, entry, text, float("inf"), target))
                continue
            if entry.role == "user" and text.rstrip().endswith(("?", "？")):
                self.skip(entry, "not kept: a user's question", "not_kept")
                continue
            verdict = salience.judge(entry, text, self.engine.cues, self.engine.bar)
            self.chance[position] = verdict.probability
            if verdict.reason is not None:
                self.below.append((position, f"not kept: {verdict.reason}"))
                continue
            if salience.is_listed_record(entry, text, self.engine.cues) and self._in_log_of_records(position):
                # An item of a log of what was done is read as its list's other items are
                # ("Set up … with required dependencies" beside "Created requirements.txt …").
                self.below.append((position, "not kept: activity record"))
                continue
            rank = verdict.score + (salience.REPEATED_BONUS if position in repeated else 0.0)
            out.append(_Candidate(position, entry, text, rank, target))
        out = self._lists(out)
        for candidate in out:  # an item that names nothing carries its heading's subject
            context = candidate.entry.context
            if context and clean_name(context[-1]).casefold() in self.slots:
                continue  # a slot of the session template names no subject (`template_slots`)
            if not candidate.members and candidate.target == "experience":
                candidate.text = lists.with_subject(_closed(candidate.text), candidate.entry)
        out.sort(key=lambda c: (-c.score, c.position))
        return self._echoes_to_their_turn(out)

    def _lists(self, kept: list[_Candidate]) -> list[_Candidate]:
        """A list under a lead-in is one statement (`gitdream.dream.lists`; module
        docstring, step 2): kept whole — the lead-in and its items — when its items'
        average probability reaches the bar, never when its lead-in is a plan (a to-do
        list is not a fact); otherwise none of its items is kept."""
        entries = self.context.entries
        chosen = {c.position: c for c in kept}
        below = dict(self.below)
        merged: list[_Candidate] = []
        for group in lists.groups(entries):
            usable = [
                p
                for p in ([group.lead] if group.lead is not None else []) + group.items
                if p in below or (p in chosen and chosen[p].target == "experience")
            ]
            items = [p for p in usable if p != group.lead]
            if not items:
                continue
            todo = salience.is_plan(entries[group.items[0]].lead_in, self.engine.cues)
            durable = sum(self.chance[p] for p in items) / len(items) >= self.engine.bar
            if todo or not durable:
                why = "a to-do list" if todo else "a list whose items are not durable"
                for p in items:
                    if p in chosen:
                        below[p] = f"not kept: {why}"
                        self.below.append((p, below[p]))
                        del chosen[p]
                if group.lead in chosen:  # kept alone, it must not end by announcing the list
                    alone = lists.without_lead_sentence(chosen[group.lead].text)
                    if alone:
                        chosen[group.lead].text = alone
                    else:
                        self.below.append((group.lead, "not kept: fragment"))
                        below[group.lead] = "not kept: fragment"
                        del chosen[group.lead]
                continue
            first = entries[group.items[0]]
            lead = self.cleaned[group.lead] if group.lead in usable else ""
            if not lead.rstrip().endswith((":", "：")):
                lead = lists.lead_sentence(one_line(strip_layout(memoryfiles.neutral(first.lead_in))))
            score = max(salience.logit(self.chance[p]) for p in items)
            head = (group.lead,) if group.lead in usable else ()
            if salience.is_record(first.lead_in, self.engine.cues):
                # "I've cleaned up the project as requested:" says who did it, not what holds
                lead, head = "", ()
            while items:  # a list too long for one fact continues in the next, under the same lead-in
                text, count = lists.statement(lead, [self.cleaned[p] for p in items], FACT_MAX_CHARS)
                cited = head + tuple(items[:count])
                merged.append(
                    _Candidate(
                        cited[0],
                        entries[items[0]],
                        describe.fit(text, FACT_MAX_CHARS),
                        score,
                        "experience",
                        cited,
                    )
                )
                for p in cited:
                    chosen.pop(p, None)
                    below.pop(p, None)
                items, head = items[count:], ()
        self.below = [(p, reason) for p, reason in self.below if p in below]
        return list(chosen.values()) + merged

    def _repeated(self) -> set[int]:
        """Positions of entries whose statement (same numbers) appears on another day of the
        material, or is already a fact in memory.

        The most similar earlier entry counts only when it states the same numbers on
        another day, so the search is skipped when no earlier entry states them on another
        day (it could find nothing that counts; most entries with numbers state their own)."""
        found: set[int] = set()
        index: ShingleIndex[int] = ShingleIndex(self.vocabulary, self.engine.threshold)
        days: dict[tuple[str, ...], set[date | None]] = {}  # numbers → the days stating them
        for position, entry in enumerate(self.context.entries):
            text = self.cleaned[position]
            if not _has_content(text):
                continue
            ids = self.vocabulary.ranks(self.codes[position])
            numbers = _numbers(text)
            known = self.indexes.get(("experience", numbers))  # absent: no fact states them
            if known is not None and known.best(text, ids) is not None:
                found.add(position)
            stated = days.setdefault(numbers, set())
            if stated and stated != {entry.date}:
                match = index.best(text, ids)
                if match is not None:
                    other = self.context.entries[match.key]
                    if other.date != entry.date and numbers == _numbers(self.cleaned[match.key]):
                        found.update((position, match.key))
            stated.add(entry.date)
            index.add(position, text, ids)
        return found

    def defer(self, rest: list[_Candidate], reason: str) -> None:
        for later in rest:
            for position in later.settled():
                self.result.skipped.append((self.context.entries[position].id, reason))
                self.result.deferred.append((self.context.entries[position].id, reason))
                self.stats["deferred"] += 1

    def select(self, candidates: list[_Candidate]) -> None:
        """Corroborate or create, highest salience first, within the caps."""
        engine = self.engine
        waiting: list[_Candidate] = []
        homeless: list[_Candidate] = []  # experience that names no subject and is like no topic
        records: list[tuple[_Candidate, str]] = []  # lone activity records, with their subject
        subjects = self._subject_counts(candidates)
        for rank, candidate in enumerate(candidates):
            if len(self.result.units) >= engine.max_units:
                self.defer(candidates[rank:], f"over max_units ({engine.max_units}); left for the next run")
                break
            entry, text, target = candidate.entry, candidate.text, candidate.target
            if target == "experience" and self._weak_and_subjectless(candidate):
                for position in candidate.settled():
                    self.skip(self.context.entries[position], NO_SUBJECT, "not_kept")
                continue
            ids = (
                self.vocabulary.ids(text)
                if candidate.members
                else self.vocabulary.ranks(self.codes[candidate.position])
            )
            index = self.index_for(target, _numbers(text))
            match = index.best(text, ids)
            if match is not None and not supersede.corrects(text, match.key.text):
                self._corroborate(candidate, match.key)
                continue
            if target == "experience":
                restated = self._session_fact(entry)
                restated = restated or self.restatements.find(text, functools.partial(_may_restate, text))
                restated = restated or self._instructed(text, entry.tags)
                if restated is not None:
                    self._corroborate(candidate, restated)
                    continue
                corrected = self._corrected(text)
                record = not candidate.members and salience.is_activity_record(entry, text, engine.cues)
                placed = (
                    (corrected.where, corrected.title)
                    if corrected is not None
                    else self._topic_of(entry, text, record=record)
                )
                if placed is None:
                    waiting.append(candidate)
                    continue
                if placed == _HOMELESS:
                    homeless.append(candidate)
                    continue
                if placed[0] == _RECORD:
                    subject = self._record_subject(entry) or placed[1]
                    if subjects[_key(subject)] <= 1:  # the only entry of the run on its subject
                        records.append((candidate, subject))
                        continue
                    placed = self._new_topic(subject, text, [])
                    if placed is None:
                        waiting.append(candidate)
                        continue
                where, title = placed
            else:
                where, title = target, clip(text, DEFINITION_TITLE_MAX_CHARS)
            fact = _Fact(target, where, title, text)
            index.add(fact, text, ids)
            if target == "experience":
                self.created.append(fact)
                self._of_session(candidate, fact)
                self.restatements.add(fact, text)
                self._add_instruction(fact)
            self.matcher.add_text(where, text)
            self.result.units.append(
                Unit(
                    title=title,
                    body=text,
                    target=target,
                    action="create",
                    topic=where,
                    sources=self._sources(candidate),
                    date=self._date(candidate),
                )
            )
            self.stats["definition" if target != "experience" else "created"] += 1
            self.stats["folded"] += len(candidate.positions()) - 1
            if target == "experience":
                self._placed(candidate, where)
        self._place_records(records)
        for rank, candidate in enumerate(homeless):
            # Once every other fact is placed: the topic its log section went to.
            if len(self.result.units) >= engine.max_units:
                self.defer(homeless[rank:], f"over max_units ({engine.max_units}); left for the next run")
                break
            same = self._same_fact(candidate)  # one placed meanwhile, or an earlier homeless one
            if same is not None:
                self._corroborate(candidate, same)
                continue
            section = self._section_topic(candidate)
            home = (
                self._new_topic(grouping.DEFAULT_TOPIC.capitalize(), candidate.text, [])
                if section is None
                else None
            )
            if section is None and home is None:
                waiting.append(candidate)
                continue
            slug = section if section is not None else home[0] if home else ""
            self._create(candidate, slug, self.topics.titles.get(slug, slug))
        if waiting:
            self.defer(
                waiting,
                f"its subject needs a new topic, over max_new_topics ({engine.max_new_topics}); "
                "left for the next run",
            )

    def name_new_topics(self) -> None:
        """Name each topic this run created after the subject its facts share
        (`grouping.subject_of`), not after the word, heading or path that opened it: its
        units move to the new name's slug. A name that is an existing topic's, or that the
        run gave another topic, is left alone (its facts stay where they are)."""
        for slug in sorted(self.new_topics):
            units = [u for u in self.result.units if u.topic == slug and u.target == "experience"]
            texts = [self._unslotted(u.body) for u in units if u.action == "create"]
            current = self.topics.titles.get(slug, slug)
            ids = {source for u in units for source in u.sources}
            raw = [self._unslotted(e.text) for e in self.context.entries if e.id in ids]
            better = grouping.subject_of(texts, current, self.proper, raw)
            if better is None:
                continue
            name = clean_name(better)
            if not name or _unfit_name(name) or self.topics.existing(name) is not None:
                continue
            renamed = self.topics.slug(name)
            self.new_topics.add(renamed)
            self.result.units = [
                dataclasses.replace(u, topic=renamed, title=name) if u in units else u
                for u in self.result.units
            ]
            self.new_topics.discard(slug)

    def _subject_counts(self, candidates: list[_Candidate]) -> Counter[str]:
        """How many of the run's candidates (kept or over the caps) name each subject, by
        `_key`: the names their text holds and the files or tools their headings name."""
        counts: Counter[str] = Counter()
        for candidate in candidates:
            entry = candidate.entry
            names = grouping.names(self._said(entry), entry.tags, self.proper)
            names += [n for h in entry.context for n in grouping.artifact_names(h)]
            counts.update({_key(clean_name(n)) for n in names} - {""})
        return counts

    def _list_groups(self) -> dict[int, tuple[int, ...]]:
        """Position → the positions of the list it is an item of: list items next to each
        other (a blank line between them at most) under the same headings of the same file
        and the same lead-in. Built once, in one pass over the material."""
        if self._groups is None:
            entries = self.context.entries
            groups: dict[int, tuple[int, ...]] = {}
            run: list[int] = []

            def close() -> None:
                for p in run:
                    groups[p] = tuple(run)

            for position, entry in enumerate(entries):
                if not _LIST_MARKER.match(entry.text):
                    close()
                    run = []
                    continue
                if run:
                    last = entries[run[-1]]
                    if not (
                        entry.path == last.path
                        and entry.context == last.context
                        and entry.lead_in == last.lead_in
                        and entry.start - last.end in (1, 2)
                    ):
                        close()
                        run = []
                run.append(position)
            close()
            self._groups = groups
        return self._groups

    def _in_log_of_records(self, position: int) -> bool:
        """True when entry `position` is an item of a log of what was done: most of the
        other items of its list (`_list_groups`) record something done once
        (`salience.is_activity_record`), as "Created requirements.txt …" beside "Set up
        Python 3.13 virtual environment …" does. Decided by the material alone, when the
        entry is first read (its list is read with it), so an entry read again (`--full`) is
        judged the same."""
        group = self._list_groups().get(position, ())
        others = [p for p in group if p != position]
        if not others:
            return False
        cues = self.engine.cues
        records = 0
        for p in others:
            if p not in self._records:
                text = self.cleaned[p]
                self._records[p] = bool(text) and salience.is_activity_record(
                    self.context.entries[p], text, cues
                )
            records += self._records[p]
        return records * 2 > len(others)

    def _record_subject(self, entry: Entry) -> str | None:
        """The subject of an activity record: the file or tool its nearest heading that
        names one names ("Build: attestation-signer.py v2" → attestation-signer), the work
        it records being on that; None when no heading names one."""
        for heading in reversed(entry.context):
            for name in grouping.artifact_names(heading):
                if not _unfit_name(name):
                    return clean_name(name)
        return None

    def _place_records(self, records: list[tuple[_Candidate, str]]) -> None:
        """Place the activity records that are the only entry of the run on their subject,
        once every other fact is placed: in the topic of their subject if one was created
        meanwhile, else in the topic most like them (`grouping.NEAREST_COSINE`), else they
        are read and not kept (`ACTIVITY_RECORD`): a lone record joins a topic, it opens
        none."""
        for rank, (candidate, subject) in enumerate(records):
            if len(self.result.units) >= self.engine.max_units:
                over = [c for c, _ in records[rank:]]
                self.defer(over, f"over max_units ({self.engine.max_units}); left for the next run")
                return
            same = self._same_fact(candidate)
            if same is not None:
                self._corroborate(candidate, same)
                continue
            slug = self.topics.existing(subject)
            if slug is None:
                found = grouping.names(self._said(candidate.entry), candidate.entry.tags, self.proper)
                near = self.matcher.best(
                    candidate.text,
                    found,
                    fallback=grouping.NEAREST_COSINE,
                    min_shared=grouping.NEAREST_SHARED,
                )
                slug = near[0] if near is not None else None
            if slug is None:
                for position in candidate.settled():
                    self.skip(self.context.entries[position], ACTIVITY_RECORD, "not_kept")
                continue
            self._create(candidate, slug, self.topics.titles.get(slug, slug))

    def _create(self, candidate: _Candidate, where: str, title: str) -> None:
        """A `create` unit of experience `candidate` in topic `where` (titled `title`)."""
        text = candidate.text
        fact = _Fact("experience", where, title, text)
        ids = (
            self.vocabulary.ids(text)
            if candidate.members
            else self.vocabulary.ranks(self.codes[candidate.position])
        )
        self.index_for("experience", _numbers(text)).add(fact, text, ids)
        self.created.append(fact)
        self._of_session(candidate, fact)
        self.restatements.add(fact, text)
        self._add_instruction(fact)
        self.matcher.add_text(where, text)
        self._placed(candidate, where)
        self.result.units.append(
            Unit(
                title=title,
                body=text,
                target="experience",
                action="create",
                topic=where,
                sources=self._sources(candidate),
                date=self._date(candidate),
            )
        )
        self.stats["created"] += 1
        self.stats["folded"] += len(candidate.positions()) - 1

    def _same_fact(self, candidate: _Candidate) -> _Fact | None:
        """The experience fact `candidate` corroborates: as similar as `offline.similarity`
        with the same numbers, or one it restates; None when there is none."""
        text = candidate.text
        ids = (
            self.vocabulary.ids(text)
            if candidate.members
            else self.vocabulary.ranks(self.codes[candidate.position])
        )
        match = self.index_for("experience", _numbers(text)).best(text, ids)
        if match is not None:
            return match.key
        restated = self.restatements.find(text, functools.partial(_may_restate, text))
        return restated or self._instructed(text, candidate.entry.tags)

    def _placed(self, candidate: _Candidate, where: str) -> None:
        """Note the topic the entries of `candidate` went to, by their log section."""
        for position in candidate.positions():
            entry = self.context.entries[position]
            if entry.context:  # under no heading, a whole file is no section
                self.sections.setdefault((entry.path, entry.context), Counter())[where] += 1
            for line in {entry.start, entry.end}:
                self.lines[(entry.path, line)] = (entry.context, where)

    def _section_topic(self, candidate: _Candidate) -> str | None:
        """The topic of the log section of a fact that names no subject and is like no
        topic (grouping, step 7): where this run's other entries under the same headings of
        the same file went (entries under a heading only: a file without headings is no
        section), else the topic of a fact citing the line just above or below it (an item
        of the same list: no heading sits between them); None when neither."""
        entry = candidate.entry
        votes = Counter(
            self.sections.get((entry.path, entry.context), Counter()) if entry.context else Counter()
        )
        for position in candidate.positions():
            one = self.context.entries[position]
            for line in (one.start - 1, one.end + 1):
                for fact in self.known.by_line.get((one.path, line), ()):
                    if fact.group == "experience":
                        votes[fact.where] += 1
                context, slug = self.lines.get((one.path, line), ((), ""))
                if slug and context == one.context:  # this run knows its headings
                    votes[slug] += 1
        if not votes:
            return None
        order = list(votes)
        return max(order, key=lambda slug: (votes[slug], -order.index(slug)))

    def _weak_and_subjectless(self, candidate: _Candidate) -> bool:
        """True when the entry names no subject of its own — no fit tag, file or code name,
        name written with a capital inside a sentence, or fit heading — and is not durable
        enough to be kept without one (`SUBJECTLESS_MARGIN`): read and not kept (grouping,
        step 7). Decided by the entry alone, before anything in memory is looked at, so an
        entry read again (`--full`, a lost watermark) is judged the same."""
        if candidate.members:
            return False
        entry = candidate.entry
        chance = self.chance.get(candidate.position, 1.0)
        if (
            self.engine.bar <= 0.0
            or salience.logit(chance) >= salience.logit(self.engine.bar) + SUBJECTLESS_MARGIN
        ):
            return False  # durable enough (and a bar of 0 keeps everything)
        written = self._said(entry)
        if any(not grouping.unfit_name(t) for t in entry.tags) or grouping.artifact_names(written):
            return False
        if any(not _unfit_name(n) for n in grouping.names(written)):
            return False
        return not any(
            not (self._unfit_heading(h) or grouping.unfit_name(h) or salience.is_event_heading(h))
            for h in entry.context
        )

    def _unfit_heading(self, heading: str) -> bool:
        """True when `heading` cannot name a topic: unfit as a name, generic (says when, not
        what) or a slot of the session template (`template_slots`)."""
        return (
            _unfit_name(heading)
            or is_generic_heading(heading)
            or clean_name(heading).casefold() in self.slots
        )

    def _sources(self, candidate: _Candidate) -> tuple[str, ...]:
        return tuple(self.context.entries[p].id for p in candidate.positions())

    def _date(self, candidate: _Candidate) -> date | None:
        dates = [d for p in candidate.positions() if (d := self.context.entries[p].date) is not None]
        return max(dates) if dates else None

    def _corroborate(self, candidate: _Candidate, fact: _Fact) -> None:
        target, text = candidate.target, candidate.text
        self.result.units.append(
            Unit(
                title=fact.title if target == "experience" else clip(text, DEFINITION_TITLE_MAX_CHARS),
                body=text,
                target=target,
                action="corroborate",
                topic=fact.where,
                sources=self._sources(candidate),
                date=self._date(candidate),
                corroborates=fact.text,
            )
        )
        self.stats["definition" if target != "experience" else "corroborated"] += 1
        self.stats["folded"] += len(candidate.positions()) - 1
        if target == "experience":
            self._placed(candidate, fact.where)
            self._of_session(candidate, fact)

    def _of_session(self, candidate: _Candidate, fact: _Fact) -> None:
        """Note experience fact `fact`, which a user turn `candidate` states, as a fact of
        its session (`_session_fact`); the turns echoing it corroborate it."""
        entry = candidate.entry
        if entry.kind == "transcript" and entry.role == "user":
            facts = self.session_facts.setdefault(entry.path, [])
            if fact not in facts:
                facts.append(fact)
        for echo in candidate.echoes:
            self._corroborate(echo, fact)

    def _topic_of(self, entry: Entry, text: str, *, record: bool = False) -> tuple[str, str] | None:
        """`(slug, title)` of the entry's topic (module docstring, step 5), or None when it
        needs a new topic and the run has created `max_new_topics` already. An activity
        record (`record`) opens no topic here: it gets `(_RECORD, name)` of the topic it
        would open, for `_place_records`."""
        tagged = [
            t
            for t in entry.tags
            if not _unfit_name(_as_written(t, entry.text)) and not grouping.unfit_name(t)
        ]
        for tag in tagged:
            slug = self.topics.existing(clean_name(tag))
            if slug is not None:
                return slug, self.topics.titles[slug]
        for heading in reversed(entry.context):
            unfit = (
                _unfit_name(heading)
                or grouping.unfit_name(heading)
                or salience.is_event_heading(heading)
                or clean_name(heading).casefold() in self.slots
            )
            slug = None if unfit else self.topics.existing(clean_name(heading))
            if slug is not None:
                return slug, self.topics.titles[slug]
        found = grouping.names(self._said(entry), entry.tags, self.proper)
        match = self.matcher.best(text, found)
        if match is not None:
            self.matcher.add_names(match[0], found)
            return match[0], self.topics.titles.get(match[0], match[0])
        name = next(iter(clean_name(t) for t in tagged), None) or self._name_for(entry, text)
        if name is None:  # it names nothing the material shares: the topic most like it
            near = self.matcher.best(
                text, found, fallback=grouping.NEAREST_COSINE, min_shared=grouping.NEAREST_SHARED
            )
            if near is not None:
                self.matcher.add_names(near[0], found)
                return near[0], self.topics.titles.get(near[0], near[0])
            name = self._own_subject(entry, text)
            if name is None:
                return _HOMELESS
        if record and self.topics.existing(name) is None:
            return _RECORD, name
        return self._new_topic(name, text, found)

    def _new_topic(self, name: str, text: str, found: list[str]) -> tuple[str, str] | None:
        """`(slug, title)` of topic `name` — existing, or created when the run may still
        create one (`max_new_topics`); None when it may not."""
        slug = self.topics.existing(name)
        if slug is not None:
            return slug, self.topics.titles[slug]
        if len(self.new_topics) >= self.engine.max_new_topics:
            return None
        slug = self.topics.slug(name)
        self.new_topics.add(slug)
        self.stats["new_topics"] += 1
        self.matcher.add_topic(slug, name, [text])
        self.matcher.add_names(slug, [name], own=True)
        self.matcher.add_names(slug, found)
        return slug, self.topics.titles.get(slug, name)

    def _own_subject(self, entry: Entry, text: str) -> str | None:
        """The subject of an entry named by nothing the material shares and like no topic
        (grouping, step 7): the first file or code name it holds that its fact `text` is
        about (`_about_file`), else its first proper name of four letters or more (a shorter
        one is mostly an abbreviation: "Sci", "Rev"), no common word (`grouping.Casing.common`),
        that the material and memory mention `grouping.MIN_MENTIONS` times; None when it
        names none."""
        written = self._said(entry)
        proper = [
            n
            for n in grouping.names(written, entry.tags, self.proper_held)
            if n.casefold() in self.proper_held
            and not self.casing.common(n)  # "Think …": a common word, however it was capitalised once
            and (len(n) >= 4 or n.isupper())
            and self.held_mentions[grouping.family(n)] >= grouping.MIN_MENTIONS
        ]
        files = [n for n in grouping.artifact_names(written) if _about_file(n, text)]
        for name in files + proper:
            if not _unfit_name(name) and grouping.is_subject_family(name):
                return clean_name(name)
        return None

    def _name_for(self, entry: Entry, text: str) -> str | None:
        """A new topic's name: the entry's most-mentioned fit name (mentioned by at least
        `grouping.MIN_MENTIONS` entries; not a path or file it mentions in passing, one its
        fact `text` does not name: `_in_passing`; not a common word that opened a sentence,
        "Think …", which the material also writes in lower case: `grouping.Casing.common`),
        else the file or tool its nearest heading names,
        else its nearest fit heading, else the term it shares with the most of the run's
        facts (`grouping.keyword`); None when none of these names it."""
        said = self._unslotted(entry.text)
        for text_ in (said, *reversed(entry.context)):
            found = [n for n in grouping.names(text_, entry.tags, self.proper) if not _unfit_name(n)]
            if text_ is said:  # a path the entry mentions in passing names no topic; a heading's may
                found = [n for n in found if not _in_passing(n, said, text) and not self.casing.common(n)]
            if found:
                best = max(found, key=lambda n: (self.mentions[grouping.family(n)], -found.index(n)))
                if self.mentions[grouping.family(best)] >= grouping.MIN_MENTIONS:
                    return clean_name(best)
        for heading in reversed(entry.context):
            artifacts = grouping.artifact_names(heading)
            bare = re.sub(r"\.\w{1,5}$", "", clean_name(heading))
            if artifacts and bare != artifacts[0] and not _unfit_name(artifacts[0]):
                return clean_name(artifacts[0])  # "Build: isnad-sign.py v2" is about isnad-sign
            if self._unfit_heading(heading) or grouping.unfit_name(heading):
                continue
            name = clean_name(heading)
            if (
                name
                and len(name.split()) <= 3
                and not salience.is_event_heading(heading)
                and not salience.is_lesson_heading(heading)
            ):
                return name
        shared = grouping.keyword(text, self.shared, self.matcher)
        if shared is not None and not _unfit_name(shared):
            return clean_name(shared)
        return None
