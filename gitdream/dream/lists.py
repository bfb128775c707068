"""A list under a lead-in is one statement: "The decisions we made: A; B; C".

An item of a list that a sentence introduces means little alone ("Creating too many empty
directories before they were needed" is an answer without its question: "The issues we
ran into were:"). So when the offline engine keeps any item of such a list, the fact it
writes is the whole list — the lead-in, then every item of the material in order, as
"; "-separated clauses — citing the lead-in paragraph and each item it holds.

An item under a heading, short and naming nothing itself ("Suspension is NOT time-based."
under "Moltbook captcha problem"), means little alone too: `with_subject` gives it the
heading's subject ("Moltbook captcha problem: Suspension is NOT time-based.").

`groups(entries)` finds the lists of a run's material: consecutive entries of one file,
under the same headings, with the same `Entry.lead_in`, and the paragraph right before the
first of them when its text is that lead-in. `statement(lead, items, limit)` is the text,
and how many items fit within `limit` characters (the rest are not cited; they are not in
the fact). Pure functions; never raise.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from gitdream.dream import grouping, salience
from gitdream.dream.lexicons import Cues
from gitdream.text import sentences
from gitdream.units import Entry

SUBJECT_MAX_WORDS = 4
"""A heading of at most this many words (CJK: two characters a word) names a subject."""
DEPENDENT_MAX_WORDS = 12
"""An item of at most this many words may depend on its heading for its subject."""
_HEADING_MARKUP = re.compile(r"[^\w\s.+#/-]")

_FULL_WIDTH = ("：", "。", "；", "，")
_KIND_CUES = Cues()
_HAN_KANA = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")  # Korean writes Latin marks


@dataclass
class Group:
    """One list of the material: the position of its lead-in paragraph (None when that
    paragraph is not in the material) and the positions of its items, in order."""

    lead: int | None
    items: list[int] = field(default_factory=list)


def _one_line(text: str) -> str:
    return " ".join(line.strip() for line in text.split("\n") if line.strip())


def groups(entries: Sequence[Entry]) -> list[Group]:
    """The lists of `entries` (module docstring), in material order; a list of one item
    is a list too."""
    out: list[Group] = []
    previous: Entry | None = None
    for position, entry in enumerate(entries):
        same = (
            previous is not None
            and entry.lead_in
            and previous.lead_in == entry.lead_in
            and previous.path == entry.path
            and previous.context == entry.context
        )
        if same and out:
            out[-1].items.append(position)
        elif entry.lead_in:
            before = entries[position - 1] if position else None
            lead = (
                position - 1
                if before is not None
                and before.path == entry.path
                and before.end < entry.start
                and _one_line(before.text) == entry.lead_in
                else None
            )
            out.append(Group(lead, [position]))
        previous = entry
    return out


def lead_sentence(lead: str) -> str:
    """The sentence of a lead-in paragraph that introduces the list: its last one ("All
    tests pass. The fixes were:" → "The fixes were:")."""
    parts = sentences.split(lead)
    return parts[-1] if parts else lead.strip()


def without_lead_sentence(text: str) -> str:
    """`text` without a last sentence that introduces a list ("Suspension is not
    time-based. Need to either:" → "Suspension is not time-based."); "" when that sentence
    is all there is; `text` itself when it does not end with a colon."""
    if not text.rstrip().endswith((":", "：")):
        return text
    parts = sentences.split(text)
    return sentences.join(parts[:-1]) if len(parts) > 1 else ""


def statement(lead: str, items: Sequence[str], limit: int) -> tuple[str, int]:
    """`(text, n)`: `lead` followed by the first `n` of `items` as "; "-separated clauses
    ("；" after Chinese or Japanese text, no space after a full-width colon), within
    `limit` characters (at least one item, clipped by the caller if still too long)."""
    text = lead.rstrip()
    count = 0
    for item in items:
        clause = item.strip().rstrip(".;。；")
        if not clause:
            continue
        if count == 0:
            joined = text + ("" if not text or text.endswith(_FULL_WIDTH) else " ") + clause
        else:  # "; " or "；", never after a stop of its own ("Never retry!; …")
            joined = sentences.join_clauses([text, clause])
        if count and len(joined) > limit:
            break
        text, count = joined, count + 1
    return text, count


def subject_of(heading: str) -> str:
    """The subject a heading names, for `with_subject`: without emoji and markup, without
    what dates it and the state it shouts ("MOLTBOOK SUSPENDED UNTIL FEB 27" → "Moltbook",
    `name_only`); ""
    when it names none — an event or a tally, a kind of knowledge ("Lessons"), a plan, a
    name unfit to name a topic (`grouping.unfit_name`: a clock time, a turn, a heartbeat, in
    any language — "第5回", "오후 3시 점검"), or more than `SUBJECT_MAX_WORDS` words (a
    sentence, not a name)."""
    if salience.is_event_heading(heading) or salience.is_plan(heading):
        return ""
    text = salience.without_moment_marks(heading)
    text = " ".join(_HEADING_MARKUP.sub(" ", text).split()).strip(" .-/")
    if not text or salience.is_lesson_heading(text) or not any(ch.isalpha() for ch in text):
        return ""
    if salience.content_words(text) > SUBJECT_MAX_WORDS or len(text.split()) > SUBJECT_MAX_WORDS:
        return ""
    subject = name_only(text)
    return "" if grouping.unfit_name(subject) else subject


ACRONYM_MAX_LETTERS = 4
"""An all-capital word of at most this many letters is an acronym ("API", "AWS"), part of
a name; a longer one ("SUSPENDED", "LIFTED") is emphasis."""


def _shouted(word: str) -> bool:
    """True for a word written in capitals for emphasis: letters only (of a cased script),
    all capitals, at least two of them."""
    return len(word) >= 2 and word.isalpha() and word.isupper()


def name_only(subject: str) -> str:
    """The name of heading subject `subject`, without the headline's state or emphasis, by
    structure (any cased script): a run of capitalised words after the name is the state it
    is in ("Moltbook BAN LIFTED" → "Moltbook", "Форум ЗАБЛОКИРОВАН" → "Форум") unless every
    word of it is an acronym ("Deploy to AWS"); a heading shouted whole names its subject
    with its first word ("MOLTBOOK SUSPENDED" → "Moltbook"), written as a name unless it is
    an acronym. Scripts without case (Chinese, Korean, Japanese) are returned as they are.
    """
    words = subject.split()
    shouted = [_shouted(word) for word in words]
    if words and all(shouted):
        first = words[0]
        return first if len(first) <= ACRONYM_MAX_LETTERS else first.capitalize()
    end = len(words)
    while end > 1 and shouted[end - 1]:
        end -= 1
    tail = words[end:]
    if tail and any(len(word) > ACRONYM_MAX_LETTERS for word in tail) and not shouted[end - 1]:
        return " ".join(words[:end]).rstrip(" :-–—")
    return subject


def with_subject(text: str, entry: Entry) -> str:
    """Fact `text` of `entry`, led by its heading's subject when it depends on it: a short
    statement (`DEPENDENT_MAX_WORDS` words or fewer) of an entry under a heading, with no
    label of its own, naming no file, path or name, and sharing no word with the heading
    ("Each failed attempt EXTENDS the ban" under "⚠️ MOLTBOOK SUSPENDED UNTIL FEB 27" →
    "Moltbook: Each failed attempt EXTENDS the ban"; "必须先跑迁移。" under "部署" →
    "部署：必须先跑迁移。"). A heading that opens with a word naming a kind of knowledge
    ("Rule Change", "Lessons from the outage", "규칙 변경", the lexicons' lesson words) says what kind the statement is, not what it is about: no
    subject then. A list item states itself only with its parent's subject. `text`
    itself otherwise; pure."""
    if not entry.context or entry.lead_in or not text.strip():
        return text
    subject = subject_of(entry.context[-1])
    if not subject or salience.content_words(text) > DEPENDENT_MAX_WORDS:
        return text
    if _KIND_CUES.lesson.starts(subject):
        return text  # "Rule Change", "Lessons from the outage", "규칙 변경": a kind, not a subject
    if salience.label_of(text)[0] is not None or salience.names_a_thing(text):
        return text
    folded = text.casefold()
    words = [w for w in re.split(r"[\W_]+", subject.casefold()) if len(w) >= 3 or _HAN_KANA.search(w)]
    if any(w in folded for w in words) or subject.casefold() in folded:
        return text
    return subject + ("：" if _HAN_KANA.search(subject[-1:]) else ": ") + text  # Korean writes ": "


def without_subject(text: str, entry: Entry) -> str:
    """Fact `text` without the heading's subject `with_subject` gave it (`text` itself
    when it has none): what the entry said, to recognise it when it is read again."""
    subject = subject_of(entry.context[-1]) if entry.context else ""
    for separator in ("：", ": "):
        if subject and text.startswith(subject + separator):
            return text[len(subject) + len(separator) :]
    return text
