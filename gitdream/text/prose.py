"""Tell prose from code in Markdown text: fenced blocks, code spans and URLs are not prose.

Rules that rewrite or read words (tags, relative dates) apply to prose segments only, so a
`#include` in a code block is not a tag and `` `date -d yesterday` `` is not rewritten.

Fences follow CommonMark loosely (logs are not always tidy): a line whose first non-blank
characters are three or more backticks or tildes opens a fence (a backtick fence's info
string may not contain a backtick, else the line is inline code); it closes at a line of at
least as many of the same character and nothing else; an unclosed fence runs to the end.
"""

from __future__ import annotations

import re

FENCE_OPEN = re.compile(r"^[ \t]*(?P<fence>`{3,}(?=[^`]*$)|~{3,})")
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)", re.S)
# A scheme is at most 32 characters: unbounded, an "a-a-a-…" run was rescanned from each of
# its word boundaries looking for "://", quadratic in its length.
URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]{0,31}://[^\s<>]+|\bwww\.[^\s<>]+")
_NOT_PROSE = re.compile(f"{_CODE_SPAN.pattern}|{URL.pattern}", re.S)
_LINE = re.compile(r"(?<=\n)")


def fence_closes(line: str, fence: str) -> bool:
    """True when `line` closes a fence opened with `fence` (e.g. "```" or "~~~~")."""
    stripped = line.strip()
    return len(stripped) >= len(fence) and stripped == fence[0] * len(stripped)


def segments(text: str) -> list[tuple[str, bool]]:
    """Split `text` into `(piece, is_prose)` pairs; joining the pieces gives `text` back.

    Fenced blocks (fence lines included), code spans and URLs are the non-prose pieces.
    """
    out: list[tuple[str, bool]] = []
    prose: list[str] = []
    fence: str | None = None
    code: list[str] = []
    for line in _LINE.split(text):
        if fence is None:
            match = FENCE_OPEN.match(line)
            if match:
                fence = match["fence"]
                code = [line]
            else:
                prose.append(line)
            continue
        code.append(line)
        if fence_closes(line, fence):
            fence = None
            out += _inline("".join(prose))
            out.append(("".join(code), False))
            prose, code = [], []
    if fence is not None:
        out += _inline("".join(prose))
        out.append(("".join(code), False))
    else:
        out += _inline("".join(prose))
    return [(piece, is_prose) for piece, is_prose in out if piece]


def _inline(text: str) -> list[tuple[str, bool]]:
    if "`" not in text and "://" not in text and "www." not in text:
        return [(text, True)]  # no code span or URL can start: skip the scan
    out: list[tuple[str, bool]] = []
    pos = 0
    for match in _NOT_PROSE.finditer(text):
        out.append((text[pos : match.start()], True))
        out.append((match.group(0), False))
        pos = match.end()
    out.append((text[pos:], True))
    return out


def prose_only(text: str, filler: str = " ") -> str:
    """`text` with every non-prose piece replaced by `filler`."""
    return "".join(piece if is_prose else filler for piece, is_prose in segments(text))
