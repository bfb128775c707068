"""The fact format: how consolidated experience is written inside managed blocks.

A fact is one Markdown list item of one line of text, followed by one metadata line:

    - Rollbacks need the previous image tag.
      Sources: `agents/ops/memory/logs/2026/03/2026-03-01.md#L4-L4@1a2b3c4d5e6f`, `...` — seen 3 times, first 2026-03-01, last 2026-03-02

Each source is a source reference (`<entry id>@<input commit>`, see gitdream.units) in
backticks. `seen` counts corroborations (1 when created); `first`/`last` are the dates of
the oldest and newest source entries. Text that does not parse as a fact (a human edited
the block) is kept verbatim as a fact with no metadata, so nothing is silently dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

_META = re.compile(
    r"^\s+Sources:\s*(?P<refs>.*?)\s+—\s+seen (?P<seen>[0-9]+) times?"
    r"(?:, first (?P<first>\d{4}-\d{2}-\d{2}))?(?:, last (?P<last>\d{4}-\d{2}-\d{2}))?\s*$"
)
_REF = re.compile(r"`([^`]+)`")


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


def render(facts: list[Fact]) -> str:
    """The block content for `facts` (newline-terminated lines)."""
    lines: list[str] = []
    for fact in facts:
        if fact.raw is not None:
            lines.append(fact.raw.rstrip("\n"))
            continue
        lines.append(f"- {one_line(fact.text)}")
        refs = ", ".join(f"`{r}`" for r in fact.sources)
        meta = f"  Sources: {refs} — seen {fact.seen} {'time' if fact.seen == 1 else 'times'}"
        if fact.first:
            meta += f", first {fact.first.isoformat()}"
        if fact.last:
            meta += f", last {fact.last.isoformat()}"
        lines.append(meta)
    return "".join(line + "\n" for line in lines)


def parse(content: str) -> list[Fact]:
    """Parse block content written by `render` (tolerating human edits; see module doc)."""
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
                facts.append(
                    Fact(
                        text=line[2:].strip(),
                        sources=_REF.findall(match["refs"]),
                        seen=int(match["seen"]),
                        first=date.fromisoformat(match["first"]) if match["first"] else None,
                        last=date.fromisoformat(match["last"]) if match["last"] else None,
                    )
                )
                i += 2
                continue
        facts.append(Fact(text=line.strip().removeprefix("- "), raw=line))
        i += 1
    return facts
