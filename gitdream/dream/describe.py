"""What a topic holds, in one line: its front matter `description` and its index line.

A maintainer (and an agent loading MEMORY.md) reads the index line to decide whether to
open the topic, so it states the topic's **most salient current fact**: each fact of the
topic is judged by the same salience model that chose it (`gitdream.dream.salience`, the
fact's text read under the topic's title), a fact corroborated more often ranks higher
(`SEEN_WEIGHT` × log of its count), and of equals the newest wins. The fact is then
**shortened at a boundary of its meaning**, never inside a word: its first sentence; when
that is still over the limit, its first clauses up to the last "; ", ": ", " — " or ", "
that fits (and "…" marks the cut); only a single clause too long for the line is cut at a
word. Pure; never raises.
"""

from __future__ import annotations

import math
import re
from datetime import date

from gitdream.dream import salience
from gitdream.dream.facts import Fact, one_line
from gitdream.text import sentences
from gitdream.text.clip import clip
from gitdream.units import Entry

SEEN_WEIGHT = 0.5
"""Log-odds added per e-fold of a fact's `seen` count: what keeps being restated ranks higher."""
_CLAUSE_END = re.compile(r"(?:; |: |： | — | – |, |、|，|；)")
_CUES = salience.Cues()


def salience_of(text: str, title: str) -> float:
    """The log-odds that fact `text`, read under heading `title`, is durable knowledge."""
    entry = Entry("", 1, 1, text, None, (title,) if title else ())
    return salience.judge(entry, text, _CUES, 1.0).score


def shorten(text: str, limit: int) -> str:
    """`text` on one line, at most `limit` characters, cut at a boundary of its meaning
    (module docstring)."""
    text = one_line(text)
    if len(text) <= limit:
        return text
    first = (sentences.split(text) or [text])[0]
    if len(first) <= limit:
        return first
    cuts = [m.start() for m in _CLAUSE_END.finditer(first) if m.start() <= limit - 1]
    if cuts and cuts[-1] >= limit // 3:
        return first[: cuts[-1]].rstrip(" ,;:") + "…"
    return clip(first, limit)


def summary_of(facts: list[Fact], title: str = "", limit: int = 120) -> str:
    """What a topic holds now: its most salient current fact (module docstring), shortened
    to `limit` characters; "" when it has none."""
    current = [f for f in facts if f.raw is None and f.text.strip()]
    if not current:
        return ""

    def rank(item: tuple[int, Fact]) -> tuple[float, date, int]:
        position, fact = item
        score = salience_of(fact.text, title) + SEEN_WEIGHT * math.log(max(1, fact.seen))
        return (round(score, 6), fact.last or date.min, position)

    best = max(enumerate(current), key=rank)[1]
    return shorten(best.text, limit)
