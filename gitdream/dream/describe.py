"""What a topic holds, in one line: its front matter `description` and its index line.

A maintainer (and an agent loading MEMORY.md) reads the index line to decide whether to
open the topic, so it states the topic's **most salient current fact, whole, as a standing
statement**: each fact of the topic is judged by the same salience model that chose it
(`gitdream.dream.salience`, the fact's text read under the topic's title); a fact
corroborated more often ranks higher (`SEEN_WEIGHT` × log of its count); a record of one
moment — past tense, an id, a clock time or a date (the model's `past`, `activity`, `id`,
`clock`, `date` features) — ranks lower (`RECORD_PENALTY`): "Generated keypair: kid …" says
what happened once, not what the topic holds; and a fact that would have to be cut to fit
ranks lower (`CUT_PENALTY`), so a whole statement wins over a longer one of similar weight.
Of equals the newest wins. These two penalties are design choices, not fitted: the labels
judge entries, not index lines.

The chosen fact is then **shortened at a boundary of its meaning**, never inside a word:
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
from datetime import date

from gitdream.dream import salience
from gitdream.dream.facts import Fact, one_line
from gitdream.dream.lexicons import CONTRAST_WORDS, REASON_WORDS, Lexicon
from gitdream.text import sentences
from gitdream.text.clip import clip
from gitdream.units import Entry

SEEN_WEIGHT = 0.5
"""Log-odds added per e-fold of a fact's `seen` count: what keeps being restated ranks higher."""
RECORD_PENALTY = 1.0
"""Log-odds taken from a fact that records one moment (past tense, an id, a time, a date)."""
CUT_PENALTY = 1.0
"""Log-odds taken from a fact that does not fit the line whole (it would end in "…")."""
RECORD_FEATURES = frozenset({"past", "activity", "id", "clock", "date"})
_WHOLE_CLAUSE_END = re.compile(r"(?:; | — | – |；)")
_CLAUSE_END = re.compile(r"(?:: |： |, |、|，)")
_ADDED_CLAUSE = Lexicon(REASON_WORDS + CONTRAST_WORDS)
"""What opens a clause added to a whole statement: ", because …", ", but …", "，因为……"."""
_CUES = salience.Cues()


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
    for cuts, mark in ((sorted(whole), ""), ([m.start() for m in _CLAUSE_END.finditer(first)], "…")):
        fitting = [cut for cut in cuts if cut + len(mark) <= limit]
        if fitting and fitting[-1] >= limit // 3:
            return first[: fitting[-1]].rstrip(" ,;:；，") + mark
    return clip(first, limit)


def summary_of(facts: list[Fact], title: str = "", limit: int = 120) -> str:
    """What a topic holds now: its most salient current fact (module docstring), shortened
    to `limit` characters; "" when it has none."""
    current = [f for f in facts if f.raw is None and f.text.strip()]
    if not current:
        return ""

    def rank(item: tuple[int, Fact]) -> tuple[float, date, int]:
        position, fact = item
        judged = _judge(fact.text, title)
        score = judged.score + SEEN_WEIGHT * math.log(max(1, fact.seen))
        if RECORD_FEATURES & {name for name, value in judged.cues.items() if value}:
            score -= RECORD_PENALTY
        if shorten(fact.text, limit).endswith("…"):
            score -= CUT_PENALTY
        return (round(score, 6), fact.last or date.min, position)

    best = max(enumerate(current), key=rank)[1]
    return shorten(best.text, limit)
