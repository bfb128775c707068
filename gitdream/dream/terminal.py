"""Claude Code's terminal, pasted into a log: the blocks of tool output, and the prose inside them.

A developer diary often holds a copy of the terminal: the assistant's prose after `⏺`, the
user's messages after `>`, tool calls (`⏺ Bash(pytest -q)…`) and, under `⎿`, what each
tool printed. A **tool block** is an entry whose first non-blank line starts with `⎿`.
Its kind (`block_kind`):

- "edit": `⎿ Updated README.md with 2 additions`, `⎿ Wrote 107 lines to notes.md` — what
  follows is the file's text as written, behind a gutter of line numbers. That text is
  the agent's (or its owner's) own writing — an instruction added to README.md or
  CLAUDE.md — sitting inside tool output; it is material, not noise.
- "message": `⎿ Error: …`, `⎿ Warning: …`, `⎿ [WARNING] …` — a tool's message to its
  reader, which may state a limit of the tool ("exceeds maximum allowed tokens (25000)").
- "output": anything else a tool printed (a test run, a listing, a diff, `Read 15
  lines`): certainly output.

`prose(text)` is what an edit or a message says in sentences: lines of at least
`PROSE_MIN_WORDS` words, mostly letters, that are not a comment, a section or a `key =
value` of a config file, markup (headings, list markers, quote marks, tags) and the gutter
left out; for an edit, a line number shown twice (the old line, then the new one) keeps
only its last text. Fences are not followed: a block often starts inside one. The marker words are the terminal's own (it
prints them in English whatever language the agent writes in). Pure functions; never
raise.
"""

from __future__ import annotations

import re

_EDIT = re.compile(
    r"^\s*⎿\s*(?:Updated \S.{0,200}? with \d+ (?:additions?|removals?)|Wrote \d+ lines? to \S)"
)
_MESSAGE = re.compile(r"^\s*⎿\s*(?:Error|Warning|Note|\[(?:WARNING|WARN|ERROR|NOTE)\])\b", re.I)
_GUTTER = re.compile(r"^\s*(\d{1,6})(?:\s{1,3}[+-]?\s?|$)")
_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|>\s*|(?:[-*+]|\d{1,3}[.)])\s+|</?[\w-]+>\s*)+")
_LETTER = re.compile(r"[^\W\d_]")
PROSE_MIN_WORDS = 5
"""A written line holds prose when it has at least this many words (CJK: two characters a word)."""


def _segments(text: str) -> list[list[str]]:
    """The tool results of a block: each starts at a line that starts with `⎿`."""
    out: list[list[str]] = []
    for row in text.split("\n"):
        if row.lstrip().startswith("⎿"):
            out.append([row])
        elif out:
            out[-1].append(row)
    return out


def _kind(first: str) -> str:
    if _EDIT.match(first):
        return "edit"
    if _MESSAGE.match(first):
        return "message"
    return "output"


def block_kind(text: str) -> str | None:
    """ "edit", "message" or "output" for a tool block (module docstring), else None; a
    block of several results (`⎿ Initializing…` / `⎿ Error: …`) has the kind of the first
    edit or message among them."""
    first = next((line for line in text.split("\n") if line.strip()), "")
    if not first.lstrip().startswith("⎿"):
        return None
    kinds = [_kind(segment[0]) for segment in _segments(text)]
    return next((k for k in kinds if k != "output"), "output")


def _words(line: str) -> int:
    dense = len(re.findall(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]", line))
    return len(re.findall(r"[^\W\d_]{2,}", line)) + dense // 2


_CHROME = re.compile(r"…?\s*\+\d+ lines? \(ctrl\+r to (?:expand|see all)\)|\(ctrl\+r to (?:expand|see all)\)")
# "Error: ", "[WARNING] ", and a location "(eval):1: " or "setup.py:12: " before the message
_MARKER = re.compile(r"^(?:\w+:\s*)?(?:\[\w+\]\s*)?(?:\(?[\w./-]+\)?:\d+:\s*)?")
_ASIDE = re.compile(r"\(\d[\d,.]*(?:\s?[^\W\d_]+)?\)")  # "(25000)", "(56293 tokens)"
_KEY = re.compile(r"^[\w.-]+\s*[:=]\s*\S")
_CODE_MARKS = '()[]{}=;"<>'


def _is_prose(line: str) -> bool:
    """True for a written line that is a sentence: not a heading or comment, a section, a
    docstring quote, a `key: value` line or code; at least PROSE_MIN_WORDS words, mostly
    letters."""
    if line.lstrip().startswith(("#", "//", "[", '"""', "'''")):
        return False
    bare = _MARKUP.sub("", line).strip()
    words = _words(bare)
    marks = _ASIDE.sub(" ", bare)  # a number in parentheses is an aside of prose, not code
    if not bare or _KEY.match(bare) or sum(marks.count(ch) for ch in _CODE_MARKS) * 4 > words:
        return False
    if re.search(r"(?:^|\s)--?[a-z]", bare) and not re.search(r"[.!?。！？]$", bare):
        return False  # a command line
    letters = len(_LETTER.findall(bare))
    return words >= PROSE_MIN_WORDS and letters >= 0.7 * len(bare.replace(" ", ""))


def _written_lines(rows: list[str]) -> list[str]:
    """The file's lines as an edit block shows them: gutter removed, wrapped lines joined,
    the last text of a line number shown twice, a diff's marker lines (`\\ No newline at
    end of file`: in a unified diff a line starting with a backslash is never the file's)
    left out (a block without a gutter as it is)."""
    if not any(_GUTTER.match(row) for row in rows):
        return [row.strip() for row in rows]
    numbered: dict[int, int] = {}
    out: list[str] = []
    for row in rows:
        gutter = _GUTTER.match(row)
        if gutter is None:
            if out and row.strip():
                out[-1] += " " + row.strip()  # a long line the terminal wrapped
            continue
        number = int(gutter.group(1))
        text = row[gutter.end() :]
        if text.lstrip().startswith("\\ "):
            continue  # a diff's marker line ("\\ No newline at end of file"), in any language
        if number in numbered:
            out[numbered[number]] = text
        else:
            numbered[number] = len(out)
            out.append(text)
    return out


_OPEN_END = re.compile(r"[^\W\d_]$")  # a line ending on a letter: its clause goes on
_CONTINUES = re.compile(r"^[^\W\d_]")


def _unwrapped(rows: list[str]) -> list[str]:
    """`rows` of a tool's message with the lines a terminal wrapped put back together: a
    row ending on a letter (no stop, colon or other mark) followed by one opening with a
    lower-case letter is one line ("… run: `x` to" + "automatically fix this.")."""
    out: list[str] = []
    for row in rows:
        if out and out[-1] and _OPEN_END.search(out[-1]) and _CONTINUES.match(row) and row[:1].islower():
            out[-1] += " " + row
        else:
            out.append(row)
    return out


def prose(text: str) -> str:
    """The sentences the edits and messages of a tool block hold (module docstring), one
    line, "" when there are none (or `text` is not a tool block)."""
    if block_kind(text) is None:
        return ""
    out = ""
    for segment in _segments(text):
        kind = _kind(segment[0])
        if kind == "output":
            continue
        if kind == "edit":
            lines = _written_lines(segment[1:])
        else:
            head = re.sub(r"^\s*⎿\s*", "", segment[0])
            marker = _MARKER.match(head)
            lines = _unwrapped(
                [head.strip() if _is_prose(head[marker.end() if marker else 0 :]) else ""]
                + [row.strip() for row in segment[1:]]
            )
        for number, line in enumerate(lines):
            line = _CHROME.sub("", line)
            if not line.strip() or (not _is_prose(line) and not (kind == "message" and number == 0)):
                continue
            bare = " ".join(_MARKUP.sub("", line).split())
            ended = out.endswith((".", "!", "?", ":", ";", "。", "！", "？", "："))
            if out and not ended and (kind == "edit" or number == 0):
                out += ";"  # lines of a list: one clause each (a message's lines are wrapped text)
            out += (" " if out else "") + bare
    return out
