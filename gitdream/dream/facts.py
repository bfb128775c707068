"""The fact format: how consolidated experience is written inside managed blocks.

A fact is one Markdown list item of one line of text, followed by one metadata line:

    - Rollbacks need the previous image tag.
      Sources: `agents/ops/memory/logs/2026/03/2026-03-01.md#L4-L9@1a2b3c4d5e6f`, `...` — seen 3 times, 2026-03-01 to 2026-03-02

Each source is a source reference (`<path>#L<start>-L<end>@<input commit>`, see
gitdream.units) in backticks: lines of one file at one commit. Sources of one file at one
commit whose lines follow on or overlap are written as one range (`#L28-L28`, `#L29-L29`,
`#L30-L32` → `#L28-L32`; `merge_sources`), so a reference may cover several entries; an
entry is cited by a fact when one of its ranges overlaps the entry's lines (`cites`).

The tail after " — " is as short as what it says: `seen N times` only when a fact was
corroborated (N > 1), then the date of its oldest and newest source entries — one date when
they are the same day (`— 2026-03-08`, `— seen 2 times, 2026-03-02`), else `first to last`;
no tail at all for a fact seen once with no date. Fact lines written by earlier versions
(`— seen 1 time, first D, last D`) are read as well, and written in the short form the next
time their block is written. Text that does not parse as a fact (a human edited the block)
is kept verbatim as a fact with no metadata, so nothing is silently dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

from gitdream.units import parse_entry_id, parse_source_ref

_DATE = r"\d{4}-\d{2}-\d{2}"
# The tail: old form "seen N time(s)[, first D][, last D]"; short form "[seen N times, ]D[ to D]".
_META = re.compile(
    r"^\s+Sources:\s*(?P<refs>.*?)"
    r"(?:\s+—\s+(?:"
    rf"seen (?P<seen>[0-9]+) times?(?:, first (?P<first>{_DATE}))?(?:, last (?P<last>{_DATE}))?"
    rf"(?:, (?P<from>{_DATE})(?: to (?P<to>{_DATE}))?)?"
    rf"|(?P<from1>{_DATE})(?: to (?P<to1>{_DATE}))?"
    r"))?\s*$"
)
_REF = re.compile(r"`([^`]+)`")
_SOURCE = re.compile(r"^(?P<path>.+)#L(?P<start>[0-9]+)-L(?P<end>[0-9]+)@(?P<commit>[0-9a-f]{7,40})$")


@dataclass
class Fact:
    """One fact: `text` (one line), `sources` (source references), `seen` (count),
    `first`/`last` (dates), `raw` (the original lines when it did not parse, else None)."""

    text: str
    sources: list[str] = field(default_factory=list)
    seen: int = 1
    first: date | None = None
    last: date | None = None
    raw: str | None = None


def one_line(text: str) -> str:
    """Collapse whitespace (newlines included) to single spaces and strip."""
    return " ".join(text.split())


def merge_sources(sources: list[str]) -> list[str]:
    """`sources` with the references of one file at one commit whose line ranges follow on
    or overlap written as one (`a.md#L28-L28@c`, `a.md#L29-L32@c` → `a.md#L28-L32@c`), in
    the order of each range's first reference; duplicates dropped. A reference that is not
    `path#Lstart-Lend@commit` stays as it is."""
    out: list[str] = []
    spans: dict[tuple[str, str], list[list[int]]] = {}  # (path, commit) → [[start, end, index]]
    for ref in sources:
        match = _SOURCE.match(ref.strip())
        if match is None:
            if ref not in out:
                out.append(ref)
            continue
        key = (match["path"], match["commit"])
        start, end = int(match["start"]), int(match["end"])
        ranges = spans.setdefault(key, [])
        joined = [r for r in ranges if r[0] <= end + 1 and start <= r[1] + 1]
        if not joined:
            ranges.append([start, end, len(out)])
            out.append("")  # its place; written below
            continue
        keep = min(joined, key=lambda r: r[2])
        keep[0] = min([start, *(r[0] for r in joined)])
        keep[1] = max([end, *(r[1] for r in joined)])
        for other in joined:
            if other is not keep:
                ranges.remove(other)
                out[other[2]] = "\0"
        # a merged range may now touch another one: merge until none does
        while True:
            touching = [r for r in ranges if r is not keep and r[0] <= keep[1] + 1 and keep[0] <= r[1] + 1]
            if not touching:
                break
            for other in touching:
                keep[0], keep[1] = min(keep[0], other[0]), max(keep[1], other[1])
                ranges.remove(other)
                if other[2] < keep[2]:
                    out[keep[2]], keep[2] = "\0", other[2]
                else:
                    out[other[2]] = "\0"
    for (path, commit), ranges in spans.items():
        for start, end, index in ranges:
            out[index] = f"{path}#L{start}-L{end}@{commit}"
    return [ref for ref in out if ref and ref != "\0"]


def cites(sources: list[str], path: str, start: int, end: int) -> bool:
    """True when one of `sources` (source references or entry ids) cites lines of `path`
    overlapping `start` to `end` (1-based, inclusive): the entry there was read for that
    fact, alone or as one of the consecutive entries a range covers."""
    for ref in sources:
        parsed = parse_source_ref(ref)
        cited = parse_entry_id(parsed[0] if parsed else ref.strip())
        if cited is not None and cited[0] == path and cited[1] <= end and start <= cited[2]:
            return True
    return False


def tail(fact: Fact) -> str:
    """The end of a fact's metadata line after its sources (module docstring): "" or
    " — seen 3 times, 2026-03-01 to 2026-03-02"."""
    parts = [f"seen {fact.seen} times"] if fact.seen != 1 else []
    first, last = fact.first or fact.last, fact.last or fact.first
    if first is not None and last is not None:
        parts.append(first.isoformat() if first == last else f"{first.isoformat()} to {last.isoformat()}")
    return " — " + ", ".join(parts) if parts else ""


def render(facts: list[Fact]) -> str:
    """The block content for `facts` (newline-terminated lines)."""
    lines: list[str] = []
    for fact in facts:
        if fact.raw is not None:
            lines.append(fact.raw.rstrip("\n"))
            continue
        lines.append(f"- {one_line(fact.text)}")
        refs = ", ".join(f"`{r}`" for r in merge_sources(fact.sources))
        lines.append(f"  Sources: {refs}{tail(fact)}")
    return "".join(line + "\n" for line in lines)


def parse(content: str) -> list[Fact]:
    """Parse block content written by `render`, in its short form or the one of earlier
    versions (tolerating human edits; see module doc)."""
    facts: list[Fact] = []
    lines = content.replace("\r\n", "\n").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if line.startswith("- ") and i + 1 < len(lines):
            match = _META.match(lines[i + 1])
            if match is not None:
                first = match["first"] or match["from"] or match["from1"]
                last = match["last"] or match["to"] or match["to1"] or match["from"] or match["from1"]
                if match["first"] and not match["last"]:
                    last = None
                facts.append(
                    Fact(
                        text=line[2:].strip(),
                        sources=_REF.findall(match["refs"]),
                        seen=int(match["seen"]) if match["seen"] else 1,
                        first=date.fromisoformat(first) if first else None,
                        last=date.fromisoformat(last) if last else None,
                    )
                )
                i += 2
                continue
        facts.append(Fact(text=line.strip().removeprefix("- "), raw=line))
        i += 1
    return facts
