"""Managed blocks: the only part of a human-owned file that gitdream rewrites (DESIGN §6).

A block is delimited by two marker lines, each alone on its line (surrounding spaces
allowed):

    <!-- gitdream:begin NAME -->
    ...content gitdream owns...
    <!-- gitdream:end NAME -->

NAME is letters, digits, `-`, `_`, `.` or `:`. Rules:
- only the inside of a block is ever rewritten; every byte outside stays as it was;
- a missing block is appended at the end of the file, after a blank line;
- rewriting is idempotent: writing the same content twice gives the same text;
- a line that looks like a marker (`<!-- gitdream:...`) but is malformed, an end without
  a begin, a begin without an end, a block inside another, an end naming another block,
  and two blocks of the same name are errors (BlockError naming the line), never a guess;
- marker lines inside fenced code blocks (``` or ~~~), and markers quoted in an inline
  code span (`` `<!-- gitdream:begin x -->` ``), are text, not markers, so documentation
  can show them.

Texts are `str`; line endings are kept: a block added to a CRLF file uses CRLF.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gitdream.errors import BlockError

NAME_RE = r"[A-Za-z0-9_.:-]+"
_MARKER = re.compile(rf"^[ \t]*<!--[ \t]*gitdream:(begin|end)[ \t]+({NAME_RE})[ \t]*-->[ \t]*$")
_LOOKS_LIKE = re.compile(r"<!--[ \t]*gitdream:")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
# An inline code span (`...`, ``...``): documentation may quote a marker in one.
_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")


@dataclass(frozen=True)
class Block:
    """One managed block. Lines are 1-based; offsets index the text (characters).

    `start`..`end` spans both marker lines (end includes the end marker's newline);
    `inner_start`..`inner_end` spans the content between them.
    """

    name: str
    begin_line: int
    end_line: int
    start: int
    end: int
    inner_start: int
    inner_end: int


def _lines(text: str) -> list[tuple[int, str, str]]:
    """(offset, line without newline, newline) for each line."""
    out = []
    offset = 0
    for raw in text.splitlines(keepends=True):
        body = raw.rstrip("\r\n")
        out.append((offset, body, raw[len(body) :]))
        offset += len(raw)
    return out


def newline_of(text: str) -> str:
    """The file's newline style: "\\r\\n" when its first line ends so, else "\\n"."""
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def parse(text: str, where: str = "") -> list[Block]:
    """All managed blocks of `text` in order. Raises BlockError (with `line`) when the
    markers are malformed; `where` (a path) prefixes the message."""
    prefix = f"{where}: " if where else ""
    blocks: list[Block] = []
    names: dict[str, int] = {}
    open_name: str | None = None
    open_line = 0
    open_start = 0
    open_inner = 0
    fence: str | None = None
    for number, (offset, body, newline) in enumerate(_lines(text), start=1):
        fence_match = _FENCE.match(body)
        if fence_match:
            marker = fence_match.group(1)
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence):
                fence = None
            continue
        if fence is not None:
            continue
        match = _MARKER.match(body)
        if match is None:
            if _LOOKS_LIKE.search(_CODE_SPAN.sub("", body)):
                raise BlockError(
                    f"{prefix}line {number}: malformed gitdream marker {body.strip()!r}",
                    hint="markers are `<!-- gitdream:begin NAME -->` and `<!-- gitdream:end NAME -->`, "
                    "each alone on its line",
                    line=number,
                )
            continue
        kind, name = match.groups()
        if kind == "begin":
            if open_name is not None:
                raise BlockError(
                    f"{prefix}line {number}: block '{name}' begins inside block '{open_name}' "
                    f"(begun on line {open_line}); blocks cannot nest",
                    hint=f"end block '{open_name}' before beginning another",
                    line=number,
                )
            if name in names:
                raise BlockError(
                    f"{prefix}line {number}: a second block named '{name}' (the first begins on "
                    f"line {names[name]})",
                    hint=f"keep one '{name}' block and delete the other",
                    line=number,
                )
            open_name, open_line, open_start = name, number, offset
            open_inner = offset + len(body) + len(newline)
            names[name] = number
        else:
            if open_name is None:
                raise BlockError(
                    f"{prefix}line {number}: end of block '{name}' without a matching begin",
                    hint=f"add `<!-- gitdream:begin {name} -->` above it, or delete the line",
                    line=number,
                )
            if name != open_name:
                raise BlockError(
                    f"{prefix}line {number}: end of block '{name}' while block '{open_name}' "
                    f"(begun on line {open_line}) is open",
                    hint=f"the end marker must name '{open_name}'",
                    line=number,
                )
            blocks.append(
                Block(
                    name, open_line, number, open_start, offset + len(body) + len(newline), open_inner, offset
                )
            )
            open_name = None
    if open_name is not None:
        raise BlockError(
            f"{prefix}line {open_line}: block '{open_name}' begins but never ends",
            hint=f"add `<!-- gitdream:end {open_name} -->` after its content",
            line=open_line,
        )
    return blocks


def find(text: str, name: str, where: str = "") -> Block | None:
    """The block named `name`, or None. Raises BlockError for malformed markers."""
    for block in parse(text, where):
        if block.name == name:
            return block
    return None


def get(text: str, name: str, where: str = "") -> str | None:
    """The content of block `name` (without the marker lines), or None when absent."""
    block = find(text, name, where)
    return None if block is None else text[block.inner_start : block.inner_end]


def _check_name(name: str) -> None:
    if not re.fullmatch(NAME_RE, name):
        raise ValueError(f"invalid block name {name!r}")


def _normalise(content: str, newline: str) -> str:
    lines = content.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for line in lines:
        if _LOOKS_LIKE.search(line):
            raise BlockError(
                "block content may not contain gitdream markers",
                hint="strip `<!-- gitdream:` from the content",
            )
    return "".join(line + newline for line in lines)


def replace(text: str, name: str, content: str, where: str = "") -> str:
    """`text` with block `name` holding `content`; the block is appended when missing.

    Bytes outside the block are unchanged; idempotent. Raises BlockError for malformed
    markers in `text` or markers inside `content`.
    """
    _check_name(name)
    newline = newline_of(text)
    inner = _normalise(content, newline)
    block = find(text, name, where)
    if block is not None:
        return text[: block.inner_start] + inner + text[block.inner_end :]
    begin = f"<!-- gitdream:begin {name} -->"
    end = f"<!-- gitdream:end {name} -->"
    head = text
    if head and not head.endswith(("\n", "\r")):
        head += newline
    separator = newline if head.strip() else ""
    if head and not head.endswith(newline * 2) and separator:
        head += separator
    return head + begin + newline + inner + end + newline


def remove(text: str, name: str, where: str = "") -> str:
    """`text` without block `name` (markers and content), and without the blank line
    `replace` put before it when it appended the block; `text` itself when there is no
    such block. Only for a file gitdream owns: removing markers changes `outside(text)`.
    Raises BlockError for malformed markers."""
    _check_name(name)
    block = find(text, name, where)
    if block is None:
        return text
    head, tail = text[: block.start], text[block.end :]
    newline = newline_of(text)
    if not tail.strip() and head.endswith(newline * 2):
        head = head[: -len(newline)]
    return head + tail


def outside(text: str, where: str = "") -> str:
    """`text` with every block's content removed (markers kept): what must stay
    byte-identical when gitdream rewrites blocks."""
    out = []
    last = 0
    for block in parse(text, where):
        out.append(text[last : block.inner_start])
        last = block.inner_end
    out.append(text[last:])
    return "".join(out)
