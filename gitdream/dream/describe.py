"""What a topic holds, in one line: its front matter `description` and its index line.

A maintainer (and an agent loading MEMORY.md) reads the index line to decide whether to open
the topic, so it states **what the topic holds now — its most salient standing statement,
whole**: every sentence of the topic's current facts (the first `SENTENCES_PER_FACT` of
each) is a candidate — but a plan or a request (`_intends`: "I plan to …", "We will …",
"我们计划…", "공개할 예정입니다", a to-do, a question) only when the topic holds no other —, judged by
the same salience model that chose the facts (`gitdream.dream.salience`, the sentence read
under the topic's title); a fact corroborated more often ranks higher (`SEEN_WEIGHT` × log
of its count); a record of one moment ranks lower — `RECORD_PENALTY` for an activity, an id,
a status, a clock time, a date, a deadline (the model's `activity`, `id`, `status`, `clock`,
`date`, `time-bound` … features, an opening verb of activity, the speaker's own past
doings), half of it for past tense alone: "Created `x.py` — …", "Generated keypair: kid …"
or "I had to make one fix …" say what happened once, not what the topic holds; a sentence
that does not state itself ranks lower still (`DEPENDENT_PENALTY`: it points at what was
just said — "These changes should…", "So, …" (`_leans`) —, narrates, asks, offers a next
step, is a fragment or a request for one session); so does one behind a label that is not
the topic's title (`LABEL_PENALTY`: "Files and Code Sections: …", "Grund: …" — a recap's
section, a cause, a post); one that fills a slot of a template (`_slotted`: "Files and Code
Sections: `x.py`; …" of a session's recap, "研究：…" of a daily routine — a label the engine
found opening unrelated items day after day, or one that holds no name —, unless the label
names a kind of knowledge, "Key lesson: …") is judged by its value alone, not as a labelled
reference, and ranks as a record of the session that filled it in; one in the speaker's own
voice (`FIRST_PERSON_PENALTY`: "I think we should …", a line of chat); one that names the
topic's subject ranks higher (`SUBJECT_BONUS`); and one that would have to be cut to fit
ranks lower (`CUT_PENALTY`), so a whole statement wins over a longer one of similar weight.
Of equals the newest wins. These penalties are design choices, not fitted: the labels judge
entries, not index lines.

The line is read alone, so a later sentence of a fact that **continues the one before it**
does not stand as the description: it opens with a pointer or a contrast ("This …", "But …",
"하지만 …", "但 …"), takes up a word of the sentence before it ("Sleep consolidates weak
memories. Strong memories don't benefit.": its subject is the contrast with what was just
said), or is a quotation and nothing else ('clove — OpenClaw agent … "SOUL.md + TOOLS.md are
the wiring."': someone's words, whose speaker the sentence before names). Then the fact's
own opening describes the topic — the whole fact when it fits, else its first sentence —,
unless that opening is itself a record of one moment ("Created `x` …"), which says less than
the sentence it would replace, or stands behind a label ("Clawk reply to … on …: …": a
post), when the next candidate is tried instead.

A leading label that repeats the topic's title ("Moltbook: …" in Moltbook) is dropped. The
chosen sentence is then **shortened at a boundary of its meaning**, never inside a word:
its first sentence (without a one-word label such as "IMPORTANT:" when only that makes it
too long); when that is still over the limit, its first clauses up to the last
"; " or " — " that fits, or the last ", " before a reason or a caveat (", because …", ", but
…", "，因为……"): a whole clause, so no mark; else up to the last ", " or ": " (and "…" marks
the cut); only a single clause too long for the line is cut at a word. Pure; never
raises.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import date

from gitdream.dream import grouping, salience
from gitdream.dream.facts import Fact, one_line
from gitdream.dream.lexicons import CONTRAST_WORDS, POINTER_WORDS, REASON_WORDS, Lexicon
from gitdream.text import sentences
from gitdream.text.clip import clip
from gitdream.units import Entry

SEEN_WEIGHT = 0.5
"""Log-odds added per e-fold of a fact's `seen` count: what keeps being restated ranks higher."""
RECORD_PENALTY = 2.0
"""Log-odds taken from a sentence that records one moment (an activity, an id, a status, a
time, a date, a deadline); half of it for past tense alone."""
DEPENDENT_PENALTY = 3.0
"""Log-odds taken from a sentence that does not state itself (module docstring)."""
CUT_PENALTY = 1.0
"""Log-odds taken from a sentence that does not fit the line whole (it would end in "…")."""
LABEL_PENALTY = 1.5
"""Log-odds taken from a sentence that opens with a label other than the topic's title
("Files and Code Sections: …", "Grund: …", "Clawk reply to gerundium on …: …"): a section
label of a recap, a cause or a post, not a statement of what the topic holds."""
FIRST_PERSON_PENALTY = 2.0
"""Log-odds taken from a sentence in the speaker's own voice ("I think we should …",
"我觉得 …", "저는 …"): a line of a chat, not a standing statement."""
SUBJECT_BONUS = 0.5
"""Log-odds added to a sentence that names the topic's subject (every content word of its
title, `_stems`): the line says what the topic is about."""
SENTENCES_PER_FACT = 3
"""Of each fact, its first this many sentences are candidates."""
RECORD_FEATURES = frozenset(
    {
        "activity",
        "id",
        "clock",
        "date",
        "time-bound",
        "status",
        "counts",
        "momentary",
        "status-mark",
        "recount",
    }
)
DEPENDENT_FEATURES = frozenset(
    {
        "deictic",
        "expectation",
        "narration",
        "narration-weak",
        "session-request",
        "question",
        "fragment",
        "plan",
        "plan-heading",
    }
)
_WHOLE_CLAUSE_END = re.compile(r"(?:; | — | – |；)")
_CLAUSE_END = re.compile(r"(?:: |： |, |、|，)")
_BRACKET = re.compile(r" [(（\[]")
_ADDED_CLAUSE = Lexicon(REASON_WORDS + CONTRAST_WORDS)
"""What opens a clause added to a whole statement: ", because …", ", but …", "，因为……"."""
_CUES = salience.Cues()
_CONNECTIVE = re.compile(r"^[^\W\d_]{1,8}\s*[,，、]\s")
"""A short first word set off by a comma ("Also, …", "So, …", "Donc, …", "Aber, …"): a
connective that leans on what was said before."""


def salience_of(text: str, title: str) -> float:
    """The log-odds that fact `text`, read under heading `title`, is durable knowledge."""
    return _judge(text, title).score


def _judge(text: str, title: str) -> salience.Judgement:
    entry = Entry("", 1, 1, text, None, (title,) if title else ())
    return salience.judge(entry, text, _CUES, 1.0)


def shorten(text: str, limit: int) -> str:
    """`text` on one line, at most `limit` characters, cut at a boundary of its meaning
    (module docstring)."""
    text = one_line(text)
    if len(text) <= limit:
        return text
    first = (sentences.split(text) or [text])[0]
    if len(first) <= limit:
        return first
    label, rest = salience.label_of(first)
    if label is not None and len(label.split()) <= 1 and rest.strip() and len(rest.strip()) <= limit:
        return rest.strip()  # a one-word label ("IMPORTANT:", "Remember:") is emphasis, not content
    whole = [m.start() for m in _WHOLE_CLAUSE_END.finditer(first)]
    whole += [m.start() for m in _CLAUSE_END.finditer(first) if _ADDED_CLAUSE.starts(first[m.end() :])]
    for cuts, mark in (
        (sorted(whole), ""),
        (sorted([m.start() for m in _CLAUSE_END.finditer(first)] + _brackets(first)), "…"),
    ):
        fitting = [cut for cut in cuts if cut + len(mark) <= limit and not _open_bracket(first[:cut])]
        if fitting and fitting[-1] >= limit // 3:
            return first[: fitting[-1]].rstrip(" ,;:；，") + mark
    return clip(first, limit)


def _brackets(text: str) -> list[int]:
    """Where a parenthesis opens in `text` after a space: a clause may be cut before it."""
    return [m.start() for m in _BRACKET.finditer(text)]


def _open_bracket(head: str) -> bool:
    """True when `head` leaves a bracket open: a cut there ends inside a parenthesis
    ("… (acknowledge yourself…") — a clause is cut before its bracket, not in it."""
    return any(head.count(left) > head.count(right) for left, right in ("()", "（）", "[]"))


_CLAUSE_SEPARATOR = re.compile(r"; |；")


def fit(text: str, limit: int, rank: Callable[[str], float] | None = None) -> str:
    """Fact `text` on one line, at most `limit` characters, ending where a statement ends:
    its whole sentences (or "; "-separated clauses, the items of a list) that fit — at
    least a quarter of `limit` —, else `shorten`'s cut of its first sentence. A fact states
    itself in whole sentences; a cut mid-sentence ("… alone won't…") reads as a fragment.
    With `rank` (a sentence → its salience), the key sentence is kept rather than the
    first ones: when the sentences that fit from the start leave out the sentence `rank`
    scores highest and that one fits alone, it is the fact."""
    text = one_line(text)
    if len(text) <= limit:
        return text
    parts = sentences.split(text)
    if rank is not None and len(parts) > 1:
        key = max(parts, key=lambda part: (rank(part), -parts.index(part)))
        head = _whole(text, limit)
        if key not in head and len(key) <= limit:
            return key
        return head
    return _whole(text, limit)


def _whole(text: str, limit: int) -> str:
    """The longest run of `text`'s whole sentences, or of its "; "-separated clauses, from
    its start that fits `limit` (at least a quarter of it); else `shorten`."""
    fitting: list[str] = []
    joined = ""
    for part in sentences.split(text):
        joined = sentences.join([joined, part]) if joined else part
        if len(joined) > limit:
            break
        fitting.append(joined)
    fitting += [text[: m.start()] for m in _CLAUSE_SEPARATOR.finditer(text, 0, limit + 1)]
    fitting = [run.rstrip(" ;；,，") for run in fitting if limit // 4 <= len(run) <= limit]
    if fitting:
        return max(fitting, key=len)
    return shorten(text, limit)


def summary_of(
    facts: list[Fact], title: str = "", limit: int = 120, slot: Callable[[str], bool] | None = None
) -> str:
    """What a topic holds now: its most salient standing sentence (module docstring),
    shortened to `limit` characters; "" when it has none. `slot` tells whether a label is
    a slot of a template (as `integrate` passes it: the engine's, or one that holds no
    name): a sentence filling one (`_slotted`) is judged by its value and ranks as a
    record."""
    candidates: list[tuple[tuple[int, int], Fact, str]] = []
    subject = _stems(title)
    about = {id(fact) for fact in about_subject(facts, title)}
    for order, fact in enumerate(facts):
        if fact.raw is not None or not fact.text.strip() or id(fact) not in about:
            continue
        parts = sentences.split(one_line(fact.text)) or [one_line(fact.text)]
        candidates += [((order, -i), fact, part) for i, part in enumerate(parts[:SENTENCES_PER_FACT])]
    if not candidates:
        return ""
    standing = [c for c in candidates if not _intends(c[2], title)]
    candidates = standing or candidates  # a plan or a request describes a topic of nothing else

    def rank(item: tuple[tuple[int, int], Fact, str]) -> tuple[float, date, tuple[int, int]]:
        position, fact, text = item
        filled = _slotted(text, title, slot)  # a slot's value, judged alone
        judged = _judge(filled or text, title)
        fired = {name for name, value in judged.cues.items() if value}
        score = judged.score + SEEN_WEIGHT * math.log(max(1, fact.seen))
        if filled is not None or _records(text, fired):
            score -= RECORD_PENALTY
        elif "past" in fired:
            score -= RECORD_PENALTY / 2
        if DEPENDENT_FEATURES & fired or _leans(text):
            score -= DEPENDENT_PENALTY
        if _labelled(text, title):
            score -= LABEL_PENALTY
        if "first-person" in fired:
            score -= FIRST_PERSON_PENALTY
        if subject and subject <= _stems(text):
            score += SUBJECT_BONUS
        if shorten(text, limit).endswith("…"):
            score -= CUT_PENALTY
        return (round(score, 6), fact.last or date.min, position)

    ranked = sorted(candidates, key=rank, reverse=True)
    best = ranked[0][2]
    for (_order, index), chosen, sentence in ranked:
        parts = sentences.split(one_line(chosen.text))
        if not (index < 0 and _continues(sentence, parts[-index - 1])):
            best = sentence
            break
        if _is_record(parts[0], title):
            best = sentence  # the opening records one moment: the continuation says more
            break
        if not _labelled(parts[0], title):
            whole = one_line(chosen.text)
            best = whole if len(whole) <= limit else _opening(parts[0], limit)
            break
        # it continues an opening behind a label ("Clawk reply to … on …: …"), a post or a
        # recap that does not stand alone as the line: the next candidate is tried
    for separator in (": ", "：", ":"):  # "Moltbook: Can read but not post." under "Moltbook"
        if (
            title
            and best.casefold().startswith((title + separator).casefold())
            and best[len(title) + 1 :].strip()
        ):
            best = best[len(title) + len(separator) :].strip()
            break
    return shorten(best, limit)


PLAN_OR_REQUEST = frozenset({"plan", "plan-heading", "session-request", "question"})
"""Salience features of a sentence that says what someone plans or asks for, not what is."""


def _intends(text: str, title: str) -> bool:
    """True when sentence `text`, read under `title`, is a plan or a request rather than a
    standing statement: the speaker's own intention (`salience.states_intention`: "I plan to
    eventually publish this to github.", "我们计划下周迁移", "공개할 예정입니다"), a plan or a
    to-do, a request for the session or a question (`PLAN_OR_REQUEST`). Such a sentence
    never describes a topic that holds any standing one (issue #14: the index line says
    what the topic holds now)."""
    if salience.states_intention(text, _CUES):
        return True
    judged = _judge(text, title)
    return any(judged.cues.get(name) for name in PLAN_OR_REQUEST)


def _leans(text: str) -> bool:
    """True when sentence `text` opens by leaning on what was said before it: a contrast or
    a pointer ("But …", "This …", "하지만 …", "但 …") or a short connective set off by a
    comma ("So, …", "Also, …", "Donc, …")."""
    return _LEANS.starts(text) or bool(_CONNECTIVE.match(text))


_LONG_LABEL = re.compile(r"^([^:：\n.!?。`]{1,80}?)[:：]\s+(\S.*)$", re.S)
"""A label of up to `LABEL_WORDS` words before a colon, longer than `salience.label_of`'s."""
LABEL_WORDS = 8


def _labelled(text: str, title: str) -> bool:
    """True when sentence `text` opens with a label (`salience.label_of`) that is not the
    title `title` of its topic: "Files and Code Sections: …", "Grund: …" in a topic about
    something else, whereas "Moltbook: …" in Moltbook names its subject."""
    label, _rest = _label(text)
    if label is None:
        return False
    return not (title and _stems(label) and _stems(label) <= _stems(title))


def _slotted(text: str, title: str, slot: Callable[[str], bool] | None) -> str | None:
    """The value of sentence `text` when it fills a slot of a template, else None: its
    label (`_label`) is one (`slot`: "Files and Code Sections: `conftest.py`; …" of a
    session's recap, "研究：…" of a daily routine), is not the topic's title and names no
    kind of durable knowledge (`STRONG_LESSON_WORDS`: "Key lesson: …", "IMPORTANT: …",
    "教训：…" say the value is durable; "Notes:", "Problem:" only what part of the
    routine it fills). The label is the template's layout, not a name for its value —
    "Endpoint: `/api/x`" labels a reference, "Files and Code Sections: `x.py`" does not —,
    and the value is what one session filled in."""
    if slot is None:
        return None
    label, rest = _label(text)
    if label is None or not slot(label) or _CUES.strong_lesson.search(label):
        return None
    if title and _stems(label) and _stems(label) <= _stems(title):
        return None
    return rest.strip()


def _label(text: str) -> tuple[str | None, str]:
    """`(label, rest)`: the label opening sentence `text` (`salience.label_of`, or one of up
    to `LABEL_WORDS` words before a colon) and what follows it; `(None, text)` when it
    opens with none or nothing follows it."""
    label, rest = salience.label_of(text)
    if label is None:
        match = _LONG_LABEL.match(text)
        if match and len(match.group(1).split()) <= LABEL_WORDS:
            label, rest = match.group(1), match.group(2)
    return (label, rest) if label is not None and rest.strip() else (None, text)


def about_subject(facts: list[Fact], title: str) -> list[Fact]:
    """The facts of a topic titled `title` that are about its subject: those that name it —
    every content word of the title, by stem (`_stems`: "Scripts" in "`scripts/x.py`",
    "Gendolf" in "Gendolf's agent …", the characters of a Chinese or Japanese name) — and
    those that name no other subject (no file, code or bold name, no capitalised name
    inside a sentence: "Never promote a build before its migrations ran" in `deploy.md`),
    when any fact names the topic; else all of `facts` (a title such as "General", or one
    no fact repeats, names no subject to choose by). A topic's line says what the topic is
    about, so a fact that landed there about something else ("Byzantine Fault Tolerance
    survey (Wu et al. 2025) …" in `scripts.md`) never describes it."""
    name = _stems(title)
    if not name:
        return facts
    named = [fact for fact in facts if fact.raw is None and name <= _stems(fact.text)]
    if not named:
        return facts
    chosen = {id(fact) for fact in named}
    return [fact for fact in facts if id(fact) in chosen or not grouping.names(fact.text)]


def _records(text: str, fired: set[str]) -> bool:
    """True when sentence `text` (its fired salience features `fired`) records one moment:
    "Added `x`: …" was done once; "I had to make one fix …" is the speaker's own doings."""
    return bool(RECORD_FEATURES & fired) or _CUES.activity.starts(text) or {"past", "first-person"} <= fired


def _opening(first: str, limit: int) -> str:
    """The first sentence `first` of a fact as a description: whole when it fits, else
    without its leading label when that makes it fit ("Retrieval practice (2025): Sleep
    consolidates …" — the statement, not the label cut short), else `shorten`'s cut."""
    if len(first) > limit:
        for separator in (": ", "："):
            rest = first.partition(separator)[2].strip()
            if rest and len(rest) <= limit and len(rest) >= limit // 4:
                return rest
    return shorten(first, limit)


def _is_record(text: str, title: str) -> bool:
    """True when sentence `text`, read under `title`, records one moment (`_records`)."""
    judged = _judge(text, title)
    return _records(text, {name for name, value in judged.cues.items() if value})


_WORD = re.compile(r"[^\W\d_]{2,}")
_DENSE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_LEANS = Lexicon(CONTRAST_WORDS + POINTER_WORDS)
"""What opens a sentence that leans on the one before it: "But …", "This …", "하지만 …"."""
STEM = 5
"""Letters of a word compared to find a word taken up again ("memories"/"memory")."""


def _stems(text: str) -> set[str]:
    """The content words of `text`: the first `STEM` letters of each word of at least `STEM`
    letters (two syllables in Hangul, whose words are short), and each pair of adjacent
    Chinese or Japanese characters (those scripts write no spaces)."""
    out: set[str] = set()
    for word in _WORD.findall(text.casefold()):
        if _DENSE.search(word):
            dense = "".join(ch for ch in word if _DENSE.match(ch))
            out |= {dense[i : i + 2] for i in range(len(dense) - 1)}
        elif "\uac00" <= word[0] <= "\ud7a3":
            out |= {word[:2]} if len(word) >= 3 else set()
        elif len(word) >= STEM:
            out.add(word[:STEM])
    return out


def _continues(text: str, before: str) -> bool:
    """True when sentence `text` continues sentence `before` (module docstring): it opens
    with a contrast or a pointer, takes up one of its content words, or is a quotation
    and nothing else (`salience.is_quotation`: '"SOUL.md + TOOLS.md are the wiring."',
    「…」), whose speaker the sentence before it names."""
    return _LEANS.starts(text) or salience.is_quotation(text) or bool(_stems(text) & _stems(before))
