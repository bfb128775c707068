"""Drop only certain noise from raw material (DESIGN §5 "Gather"); never guess importance.

An entry is noise when, after removing its list marker, checkbox, `[date]` prefix, the noise
tokens below, arrows, separators and whitespace, nothing of substance is left. Substance is
any letter, digit or symbol (an emoji answer such as "✅" stays). The entry is counted under
the most specific rule whose token it held:

- "tool_call": tool-call markers and bare call ids — `🔧 [TOOL_CALL] Bash (ID: toolu_01Rs…)`,
  `[TOOL_RESULT]`, a line that is only `toolu_…` / `call_…`, and Claude Code's terminal
  tool lines (`⏺ Bash(pytest -q)`, `⏺ Update Todos`).
- "heartbeat": `[SYSTEM HEARTBEAT]`, `HEARTBEAT_OK`, `[heartbeat]`, `HEARTBEAT` (any case).
- "empty": nothing but markers, dates and separators ("- [2026-03-01]", "→ ") or an empty
  result: "(no output)", "(no content)", "(no result)", "(no response)", "(empty)",
  "(empty output)", "(Todo list is empty)", `NO_REPLY`, and the `⎿` result glyph of Claude
  Code's terminal.
- "tool_result": an entry that starts with `⎿`, the glyph under which Claude Code's
  terminal prints a tool's output (`⎿ Read(README.md)…`, a test run's output), and whose
  further lines are more `⎿` lines or lines indented deeper than that `⎿` (never a `⏺`
  line, never the assistant's or user's own prose, which sits at the glyph's indent or
  less) — the terminal form of the `tool_result` payloads the transcript reader drops.
  A block holding prose is not certainly output and stays (`gitdream.dream.terminal`):
  the text an edit wrote (`⎿ Updated CLAUDE.md with 2 additions` / `- Each commit
  should be small…`) is the agent's own writing, and a tool's message may state its
  limit (`⎿ Error: File content exceeds maximum allowed tokens (25000)…`). A terminal
  tool line followed by such output (`⏺ Read(x)…` / `  ⎿ Read 15 lines`) is "tool_call".
- "terminal": Claude Code's terminal chrome — its welcome banner (a box holding
  "Welcome to Claude Code") and `※ Tip:` lines.

Box-drawing characters (U+2500–U+257F) are separators, not substance.

Length is never a rule. Source: seed 004 §1.1 and §5.1 — the raw memory held heartbeat lines
whose "result" was a tool-call id (`- [2026-08-20] [SYSTEM HEARTBEAT] → 🔧 [TOOL_CALL] Bash (ID:
toolu_01RsQ3gh5niCFyUZMFZj2hxF)`), and a first filter that also dropped task/result pairs
shorter than 8 characters silently lost a whole Chinese record ("结果甲甲甲甲甲", 7
characters): "any rule that uses length as a proxy for information must first ask which
script it counted in". Entries are dropped whole, never edited: an entry that holds a tool
call and anything else is kept as it is.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from gitdream.dream import terminal
from gitdream.dream.tags import strip_prefix
from gitdream.units import Entry

_TOOL_CALL = re.compile(
    # The marker may carry the tool's name: removing that word is safe, because any other
    # word left over still counts as substance.
    r"(?:🔧\s*)?\[TOOL_(?:CALL|USE|RESULT)\](?:[ \t]+[\w.:/-]+)?"
    # "(" and the spaces after it only with the "(": a leading optional `\s*` made a long
    # run of spaces (an indented dump) rescanned from each of its positions.
    r"|(?:\(\s*)?\bID:\s*(?:toolu|tooluse|call)_[A-Za-z0-9_-]+(?:\s*\))?"
    r"|\b(?:toolu|tooluse|call)_(?=[A-Za-z_-]*[0-9])[A-Za-z0-9_-]{8,}\b"
    # Claude Code's terminal transcript: "⏺ Bash(pytest -q)", "⏺ Update Todos"; the "⏺"
    # glyph also starts the assistant's own prose, so only a known tool name qualifies.
    r"|⏺[ \t]*(?:(?:Update|Read) Todos|Bash|Read|Write|Edit|MultiEdit|NotebookEdit|Grep|Glob|LS|Task"
    r"|WebFetch|WebSearch|TodoWrite|TodoRead|Search|List|Fetch|Call|Update(?=\())\b(?:\([^\n]*(?:\)|…))?",  # a long call is cut with "…"
    re.IGNORECASE,
)
_HEARTBEAT = re.compile(
    r"\[\s*(?:system[ _])?heartbeat(?:[ _](?:ok|ack|ping|check))?\s*\]"
    r"|\b(?:system[ _])?heartbeat(?:[ _](?:ok|ack|ping|check))?\b",
    re.IGNORECASE,
)
_EMPTY = re.compile(
    r"\(\s*(?:no (?:output|content|result|response)|empty(?: output)?|todo list is empty)\s*\)"
    r"|\bNO_REPLY\b|⎿",
    re.IGNORECASE,
)
RULES = ("tool_call", "heartbeat", "empty", "tool_result", "terminal")
_BANNER = re.compile(r"[╭│]\s*✻?\s*Welcome to Claude Code\b")


def _substance(text: str) -> bool:
    """True when `text` holds a letter, digit or symbol (not just punctuation and spaces)."""
    return any(ch.isalnum() or (not ch.isspace() and _is_symbol(ch)) for ch in text)


def _is_symbol(ch: str) -> bool:
    # So/Sk/Sc/Sm: emoji, ©, currency, math. Arrows (→, ⇒) and box drawing (─│╭) are
    # symbols too, but only separate here.
    if "\u2500" <= ch <= "\u257f":
        return False
    return unicodedata.category(ch).startswith("S") and ch not in "→←⇒⇐↦➜➔|+<>=~^`"


# A literal each match of the rule's pattern holds (lower-cased): a text without any of them
# skips the pattern, so a long entry costs one scan per literal, not a case-insensitive
# regular-expression pass per rule.
_LITERALS = {
    "tool_call": ("[tool_", "id:", "toolu_", "tooluse_", "call_", "⏺"),
    "heartbeat": ("heartbeat",),
    "empty": ("(", "no_reply"),
}


def noise_rule(text: str) -> str | None:
    """The rule (one of `RULES`) that makes `text` noise, or None."""
    lines = [strip_prefix(line)[0] for line in text.split("\n")]
    rest = "\n".join(lines)
    lowered = rest.lower()
    found = None
    for name, pattern in (("tool_call", _TOOL_CALL), ("heartbeat", _HEARTBEAT), ("empty", _EMPTY)):
        if not any(literal in lowered for literal in _LITERALS[name]):
            continue
        rest, count = pattern.subn(" ", rest)
        if count and found is None:
            found = name
    if _substance(rest):
        return _terminal_rule(lines, text)
    return found or "empty"


def _indent(row: str) -> int:
    return len(row) - len(row.lstrip())


def _output_block(text: str) -> bool:
    """True when every line after the first non-blank one (which starts with `⎿`, or is a
    `⏺` tool line) is blank, starts with `⎿`, or is indented deeper than the first `⎿`:
    the rest of the same tool output, never the assistant's next `⏺` line nor prose at
    the glyph's indent or less."""
    rows = [row for row in text.split("\n") if row.strip()]
    glyph = next((row.index("⎿") for row in rows if row.lstrip().startswith("⎿")), 0)
    return all(
        row.strip().startswith("⎿") or (_indent(row) > glyph and not row.strip().startswith("⏺"))
        for row in rows[1:]
    )


def _terminal_rule(lines: list[str], text: str) -> str | None:
    """ "tool_result" or "terminal" for Claude Code's terminal output (module docstring)."""
    shown = [line.strip() for line in lines if line.strip()]
    if not shown:
        return None
    if shown[0].startswith("⎿") and _output_block(text) and not terminal.prose(text):
        return "tool_result"
    if shown[0].startswith("⏺") and not _substance(_TOOL_CALL.sub(" ", shown[0])) and _output_block(text):
        output = text.lstrip("\n").partition("\n")[2]
        if not terminal.prose(output):
            return "tool_call"  # a terminal tool call and its output, e.g. "⏺ Read(x)…\n  ⎿ Read 15 lines"
    if all(line.startswith("※ Tip:") for line in shown) or _BANNER.search(text):
        return "terminal"
    return None


def filter_noise(entries: Iterable[Entry]) -> tuple[list[Entry], dict[str, int]]:
    """`(kept entries in order, {rule: number dropped})`; see the module docstring.

    Only rules that dropped something appear in the counts. Never raises.
    """
    kept: list[Entry] = []
    counts: dict[str, int] = {}
    for entry in entries:
        rule = noise_rule(entry.text)
        if rule is None:
            kept.append(entry)
        else:
            counts[rule] = counts.get(rule, 0) + 1
    return kept, counts
