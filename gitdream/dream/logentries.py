"""The entry structure of a Markdown log: which line ranges are raw entries, under which headings.

A deliberately small, line-based reading of Markdown (CommonMark where it matters for logs,
lenient where logs are untidy). Input: the file's lines (see `decode.split_lines`); output:
spans `(start, end, context)` with 1-based inclusive line numbers.

- A **list item** is one entry: its marker line, its continuation lines (indented or lazy),
  and everything nested in it — sub-items, indented paragraphs after blank lines, code
  fences. Nested items are NOT separate entries: a sub-item usually only makes sense with
  its parent ("**Build** — script" / "  - Extracts 194 claims"), and the parent's line
  range stays a single, stable id. An item ends at the next item at the same or a smaller
  indent, a heading, a thematic break, or a line after a blank line that is not indented
  more than its marker.
- A **paragraph** is a run of non-blank lines (tables, block quotes and indented text
  included). A list marker or heading line ends it; a blank line ends it.
- A **fenced code block** (``` or ~~~) never splits: it belongs to the entry it touches (the
  item it is indented under, or the paragraph it follows without a blank line), else it
  starts an entry of its own that runs to its closing fence. An unterminated fence runs to
  the end of the file, with a warning naming the line that opened it. A fence line indented
  more than 3 columns past its entry's content is text, not a fence (CommonMark).
- **Headings** (ATX `#`..`######`, and setext `===`/`---` under a paragraph) are not entries;
  their texts form the context of the entries below them, outermost first. Thematic breaks
  and YAML front matter (a `---` first line to the next `---`/`...`) are not entries.
- An entry ends at its last non-blank line: blank lines between entries belong to none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gitdream.text.prose import FENCE_OPEN, fence_closes

_ATX = re.compile(r"^ {0,3}(?P<hashes>#{1,6})(?=[ \t]|$)(?P<text>.*)$")
_SETEXT = re.compile(r"^ {0,3}(?P<char>=|-)(?P=char)*[ \t]*$")
_BREAK = re.compile(r"^ {0,3}(?P<char>[-*_])(?:[ \t]*(?P=char)){2,}[ \t]*$")
_ITEM = re.compile(r"^(?P<indent>[ \t]*)(?:[-*+]|[0-9]{1,9}[.)])(?:[ \t]+|$)")
# From the start of a run of spaces only: otherwise a heading holding a long run of spaces
# was rescanned from each of them looking for the closing "#"s, quadratic in the run.
_CLOSING_HASHES = re.compile(r"(?:^|(?<![ \t])[ \t]+)#+[ \t]*$")


@dataclass(frozen=True)
class EntrySpan:
    """Lines `start..end` (1-based, inclusive) of one raw entry and its heading path."""

    start: int
    end: int
    context: tuple[str, ...]


@dataclass
class _Open:
    start: int
    end: int
    context: tuple[str, ...]
    item_indent: int | None  # None: a paragraph
    content_indent: int = 0  # of the innermost list item seen in this entry
    blank_since: bool = False


def _indent(line: str) -> int:
    expanded = line.expandtabs(4)
    return len(expanded) - len(expanded.lstrip(" "))


def _content_indent(item: re.Match[str]) -> int:
    return len(item.group(0).expandtabs(4))


def _fence(line: str, base: int) -> str | None:
    """The fence string when `line` opens a fence in an entry whose content starts at `base`.

    As in CommonMark, a fence may be indented at most 3 columns past the content; deeper
    it is indented text (console transcripts are full of `     ```` lines from tool output
    that was cut short: taking those as fences would swallow the rest of the file).
    """
    opened = FENCE_OPEN.match(line)
    if opened is None or _indent(line) > base + 3:
        return None
    return opened["fence"]


def _front_matter_end(lines: list[str]) -> int:
    """Number of leading lines that are YAML front matter (0 when there is none)."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ("---", "..."):
            return index + 1
    return 0


def split_entries(path: str, lines: list[str]) -> tuple[list[EntrySpan], list[str]]:
    """Blocks of a Markdown log and warnings ("path:LINE: message"); never raises."""
    spans: list[EntrySpan] = []
    warnings: list[str] = []
    headings: list[tuple[int, str]] = []
    current: _Open | None = None
    fence: str | None = None
    fence_line = 0

    def close() -> None:
        nonlocal current
        if current is not None:
            spans.append(EntrySpan(current.start, current.end, current.context))
        current = None

    def heading(level: int, text: str) -> None:
        while headings and headings[-1][0] >= level:
            headings.pop()
        headings.append((level, text))

    def context() -> tuple[str, ...]:
        return tuple(text for _level, text in headings)

    def start(number: int, line: str) -> None:
        nonlocal current, fence, fence_line
        atx = _ATX.match(line)
        if atx:
            text = _CLOSING_HASHES.sub("", atx["text"]).strip()
            heading(len(atx["hashes"]), text)
            return
        if _BREAK.match(line):
            return
        item = _ITEM.match(line)
        if item:
            current = _Open(number, number, context(), _indent(item["indent"]), _content_indent(item))
        else:
            current = _Open(number, number, context(), None)
        fence = _fence(line, 0)
        fence_line = number

    for number in range(_front_matter_end(lines) + 1, len(lines) + 1):
        line = lines[number - 1]
        if fence is not None:
            assert current is not None
            if line.strip():  # blank lines count once a later line follows (not at EOF)
                current.end = number
            if fence_closes(line, fence):
                fence = None
            continue
        if not line.strip():
            if current is not None:
                current.blank_since = True
            continue
        if current is None:
            start(number, line)
            continue
        if _ATX.match(line):
            close()
            start(number, line)
            continue
        if current.item_indent is None and not current.blank_since and _SETEXT.match(line):
            # The paragraph above was a setext heading, not an entry.
            text = " ".join(lines[i - 1].strip() for i in range(current.start, current.end + 1))
            heading(1 if line.strip()[0] == "=" else 2, text)
            current = None
            continue
        if _BREAK.match(line):
            close()
            continue
        item = _ITEM.match(line)
        if current.item_indent is None:
            continues = not current.blank_since and item is None
        elif current.blank_since:
            continues = _indent(line) > current.item_indent
        else:
            continues = item is None or _indent(item["indent"]) > current.item_indent
        if not continues:
            close()
            start(number, line)
            continue
        current.end = number
        current.blank_since = False
        if item:
            current.content_indent = _content_indent(item)
        fence = _fence(line, current.content_indent)
        fence_line = number
    if fence is not None:
        warnings.append(f"{path}:{fence_line}: unterminated code fence runs to the end of the file")
    close()
    return spans, warnings


LEAD_IN_MAX_CHARS = 300
"""A paragraph longer than this is a passage, not the sentence that introduces a list."""
_LEAD_END = re.compile(r"[:：][\s*_]*$")


def lead_ins(spans: list[EntrySpan], lines: list[str]) -> dict[int, str]:
    """`{start line of a list item: the sentence that introduces its list}`.

    A list's lead-in is the paragraph right before its first item — under the same
    headings, with at most one blank line between, ending with a colon (":" or "："), at
    most `LEAD_IN_MAX_CHARS` long: "The decisions we made:", "주의할 점:", "需要注意：". Every
    item of that list (the items that follow at the same indent) gets it; it is their
    heading, as written, on one line. Pure; never raises."""
    out: dict[int, str] = {}
    lead: str | None = None
    indent: int | None = None
    previous: EntrySpan | None = None
    for span in spans:
        item = _ITEM.match(lines[span.start - 1])
        if item is None:
            lead, indent = None, None
        elif lead is not None and indent == _indent(item["indent"]) and previous is not None:
            if previous.context == span.context:
                out[span.start] = lead
            else:
                lead, indent = None, None
        elif previous is not None and _ITEM.match(lines[previous.start - 1]) is None:
            text = " ".join(line.strip() for line in lines[previous.start - 1 : previous.end])
            gap = lines[previous.end : span.start - 1]
            if (
                previous.context == span.context
                and len(gap) <= 1
                and not any(line.strip() for line in gap)
                and len(text) <= LEAD_IN_MAX_CHARS
                and _LEAD_END.search(text)
            ):
                lead, indent = text, _indent(item["indent"])
                out[span.start] = lead
            else:
                lead, indent = None, None
        else:
            lead, indent = None, None
        previous = span
    return out
