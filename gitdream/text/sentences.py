"""Sentences of one line of text, in any of the scripts the logs are written in.

A sentence ends at ".", "!" or "?" (or one of them and a closing quote: `…intent." Next`)
followed by a space and a capital letter, a digit or a Korean syllable (Latin, Greek,
Cyrillic, Korean), or at "。", "！", "？" (Chinese, Japanese; after the closing quote that
follows one: 「…。」). A stop is not an end inside parentheses or brackets ("(Wu et al. 2025)")
— a bracket that is never closed encloses nothing —, nor inside a code span
(`` `ALTER TABLE ... ADD COLUMN` ``; a backtick never closed encloses nothing), nor
after a common abbreviation ("e.g.", "et al.", "vs.", "Dr.") or after a single capital
(an initial: "J. Smith"). `join` puts sentences back together, without a space after a
full-width stop; `join_clauses` puts the items of a list together as one line of clauses
without doubling punctuation. Pure functions; never raise.
"""

from __future__ import annotations

import bisect
import re

_END = re.compile(
    r"(?:(?<=[.!?])|(?<=[.!?][\"'”’]))\s+(?=[\"'“(\[]?[A-Z0-9\u00c0-\u024f\u0370-\u03ff\u0400-\u04ff\uac00-\ud7af])"
    r"|(?<=[。！？])(?![」』”’])|(?<=[。！？][」』”’])"
)
_ABBREVIATION = re.compile(
    r"(?:\b(?:e\.g|i\.e|et al|etc|vs|cf|approx|fig|no|dr|mr|mrs|ms|prof|st|jr|sr|inc|ltd|co)\.|\b[A-Z]\.)$",
    re.I,
)
_FULL_WIDTH = ("。", "！", "？")
_BACKTICKS = re.compile(r"`+")


def _code_spans(text: str) -> list[tuple[int, int]]:
    """`(start, end)` of the code spans of `text`, in order: a run of backticks and the
    next run of the same length (CommonMark); a run with no partner encloses nothing. One
    pass over the runs, each partner found by bisection (a text of many unpaired runs of
    different lengths is not quadratic)."""
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(text)]
    by_length: dict[int, list[int]] = {}
    for index, (a, b) in enumerate(runs):
        by_length.setdefault(b - a, []).append(index)
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(runs):
        a, b = runs[index]
        same = by_length[b - a]
        later = bisect.bisect_right(same, index)
        if later < len(same):
            close = same[later]
            spans.append((a, runs[close][1]))
            index = close + 1
        else:
            index += 1
    return spans


def _paired(text: str) -> str:
    """`text` with every bracket that has no partner blanked out (same length): an opening
    one never closed ("I am opinionated (see our chat. I have …") encloses nothing, and a
    stray closing one ("a) first") must not cancel a later opening one. One pass, a stack."""
    chars = list(text)
    stack: list[int] = []
    for i, ch in enumerate(chars):
        if ch in "([":
            stack.append(i)
        elif ch in ")]":
            if stack and chars[stack[-1]] == ("(" if ch == ")" else "["):
                stack.pop()
            else:
                chars[i] = " "
    for i in stack:
        chars[i] = " "
    return "".join(chars)


def split(text: str) -> list[str]:
    """The sentences of `text` (module docstring), stripped, none empty."""
    out: list[str] = []
    start = seen = depth = 0
    paired = _paired(text)
    code = _code_spans(text) if "`" in text else []
    span = 0  # code spans and matches both run left to right: one pass over each
    for match in _END.finditer(text):
        while span < len(code) and code[span][1] <= match.start():
            span += 1
        if span < len(code) and code[span][0] < match.start():
            continue  # a stop inside a code span (module docstring)
        stretch = paired[seen : match.start()]  # counted once: linear in the text
        depth += stretch.count("(") + stretch.count("[") - stretch.count(")") - stretch.count("]")
        seen = match.start()
        before = text[start : match.start()]
        if depth > 0 or _ABBREVIATION.search(before[-12:]):
            continue
        out.append(before)
        start = match.end()
    out.append(text[start:])
    return [part.strip() for part in out if part.strip()]


def join(parts: list[str]) -> str:
    """`parts` as one text: a space between sentences, none after "。", "！", "？"."""
    out = ""
    for part in parts:
        out += part if not out or out.endswith(_FULL_WIDTH) else " " + part
    return out


_STOPS = (".", "!", "?", "…", "。", "！", "？", "…")
_SEPARATORS = ";；,，、"
_OPENERS = (":", "：")
_HAN_KANA = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
_CLOSERS = "\"'”’)]）」』"


def join_clauses(parts: list[str]) -> str:
    """`parts` (the items of a list, or a line and its sub-items) as one line: each part
    after the one before it, separated by "; " ("；" after Chinese or Japanese text) where
    the one before ends with no mark of its own; by a space where it ends a sentence or
    introduces what follows (".", "!", "?", ":", "…"), or with a separator (";", ",")
    — nothing where that mark is full-width ("。", "！", "？", "：", "；"). A trailing
    separator of the last part is dropped, and one before a stop is never added: no ".;",
    no ";;", no "。；"."""
    out = ""
    for part in parts:
        part = part.strip()
        if not part:
            continue
        if not out:
            out = part
            continue
        out = out.rstrip()
        end = out.rstrip(_CLOSERS)[-1:] or out[-1:]
        if end in _STOPS or end in _OPENERS or end in _SEPARATORS:
            out += ("" if _full_width(end) else " ") + part
        else:
            out += ("；" if _HAN_KANA.match(out[-1:]) else "; ") + part
    return out.rstrip(_SEPARATORS.replace("、", "")).rstrip() if out else out


def _full_width(mark: str) -> bool:
    return mark in "。！？：；，、"
