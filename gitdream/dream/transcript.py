"""Session transcripts (JSON Lines) → user and assistant messages; everything else is counted.

Each line is read on its own and its format detected on its own:

- **Claude Code** (`~/.claude/projects/*/*.jsonl`): records with `type` "user" or
  "assistant" and `message.content` a string or a list of blocks. Only `text` blocks are kept;
  `tool_use`, `tool_result` (and its nested text), `thinking`, `redacted_thinking`, `image`,
  `document` and other blocks are dropped and counted by block type. Records with
  `isMeta: true` (harness feedback) count as "meta", `isCompactSummary: true` as "summary";
  slash-command records (`<command-name>`, `<local-command-stdout>`...) as "command"; a text
  block that is only a `<system-reminder>` as "system_reminder". Other record types
  (`queue-operation`, `summary`, `system`, `progress`, `file-history-snapshot`...) are
  counted under their type; types gitdream does not know count as "unknown", with one
  warning per kind naming the line where it first appears.
  Claude Code writes one record per content block, all with the same `message.id`: the
  text-bearing records of one message that follow each other (other records in between
  are ignored) are one message spanning their lines.
  Synthetic rows are not the user's or the model's words and are counted, not read:
  API error messages (`isApiErrorMessage`, model `<synthetic>`) as "api_error", interrupt
  markers and bash-mode rows (`[Request interrupted by user]`, `<bash-input>`,
  `<bash-stdout>`…) as "synthetic", sidechain (subagent) turns as "sidechain". Title and
  name rows (`custom-title`, `agent-name`, `ai-title`) are known records: counted under
  their type, with no warning.
- **Codex CLI** rollouts (`~/.codex/sessions/**/rollout-*.jsonl`): `{"timestamp", "type",
  "payload"}` records. `response_item` records whose `payload.type` is "message", with role
  user or assistant, give the messages (their `input_text`/`output_text` blocks); developer
  and system messages, the harness's `<environment_context>`/`<user_instructions>` blocks,
  reasoning, function calls and their output, `session_meta` and `turn_context` are
  counted. `event_msg` user and agent messages repeat them and are counted as "event" —
  read instead only in a rollout that has no `response_item` message.
- **Plain**: `{"role": "user"|"assistant", "text": "...", "ts": ...}` (`content` is read
  when `text` is missing; other roles are counted under the role, or "unknown").

A blank line is ignored; a line that is not JSON, or not a JSON object, is skipped with a
warning "path:LINE: ..." and counted as "malformed". JSON escapes can spell what no text file
holds: a `\\u0000` is removed and a lone surrogate (`\\ud83d` without its pair, which cannot
be written as UTF-8) becomes U+FFFD, with a warning naming the line. Nothing here raises.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from gitdream.dream.decode import scrub

_KNOWN_RECORDS = frozenset(
    {"queue-operation", "summary", "system", "progress", "file-history-snapshot", "result", "attachment"}
    | {"custom-title", "agent-name", "ai-title", "tag", "mode", "last-prompt"}
)
# Codex CLI rollouts (`~/.codex/sessions/**/rollout-*.jsonl`): `{"timestamp", "type",
# "payload"}` records.
_CODEX_RECORDS = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
_CODEX_TEXT = frozenset({"input_text", "output_text", "text"})
_CODEX_EVENTS = {"user_message": "user", "agent_message": "assistant"}
# Text Claude Code writes on its own (a harness, not the user or the model, said it).
_SYNTHETIC = re.compile(
    r"^\s*(?:\[Request interrupted by user(?: for tool use)?\]"
    r"|<(?:bash-input|bash-stdout|bash-stderr|user-prompt-submit-hook|local-command-caveat)>"
    r"|API Error: |No response requested\.)"
)
_CODEX_CONTEXT = re.compile(
    r"^\s*<(?:environment_context|user_instructions|permissions instructions|INSTRUCTIONS)>", re.I
)
_KNOWN_BLOCKS = frozenset(
    {
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "image",
        "document",
        "server_tool_use",
        "web_search_tool_result",
        "mcp_tool_use",
        "mcp_tool_result",
    }
)
_COMMAND = re.compile(r"^\s*<(?:command-name|command-message|local-command-stdout|local-command-stderr)>")
_REMINDER = re.compile(r"^\s*<system-reminder>.*</system-reminder>\s*$", re.S)
ROLES = ("user", "assistant")


@dataclass
class Message:
    """One message: lines `start..end` (1-based, inclusive) of the JSONL file, its role,
    its text blocks joined by a blank line, and the first record's raw timestamp."""

    start: int
    end: int
    role: str
    text: str
    timestamp: object = None
    key: str | None = None


@dataclass
class Parsed:
    messages: list[Message] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    line: int = 0
    unknown: dict[str, list[int]] = field(default_factory=dict)  # what → [first line, count]
    codex_messages: int = 0
    events: list[tuple[int, dict[str, object], object]] = field(default_factory=list)

    def drop(self, what: str, count: int = 1) -> None:
        self.dropped[what] = self.dropped.get(what, 0) + count

    def drop_unknown(self, what: str) -> None:
        """Count something gitdream does not know under "unknown", and remember the first
        line of each kind (`what`, e.g. "record type 'x'") for one warning per kind."""
        self.drop("unknown")
        seen = self.unknown.setdefault(what, [self.line, 0])
        seen[1] += 1


_PLAIN_NAME = re.compile(r"[A-Za-z][A-Za-z_.:-]{0,31}")


def _name(value: object) -> str:
    """A short, printable name for a type or role value found in a record: the value when
    it is a plain word (letters, `_ . : -`), else only its length — a warning must not
    print a piece of whatever a transcript holds there (issue 16: a token clipped to 39
    characters was no longer a token the scanner could mask)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=True)
    if _PLAIN_NAME.fullmatch(text):
        return repr(text)
    return f"(a {type(value).__name__} value of {len(text)} characters)"


def _texts(content: object, parsed: Parsed) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    texts = []
    for block in content:
        if isinstance(block, str):
            texts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            if _REMINDER.match(block["text"]):
                parsed.drop("system_reminder")
            else:
                texts.append(block["text"])
        else:
            kind = block.get("type") if isinstance(block, dict) else None
            if isinstance(kind, str) and kind in _KNOWN_BLOCKS:
                parsed.drop(kind)
            elif not isinstance(block, dict):
                parsed.drop_unknown("a content block that is not an object")
            elif kind == "text":
                parsed.drop_unknown("a text block whose text is not a string")
            else:
                parsed.drop_unknown(f"content block type {_name(kind)}")
    return texts


def _codex(record: dict[str, object], parsed: Parsed) -> tuple[str, list[str], object, str | None] | None:
    """`(role, texts, timestamp, None)` of a Codex CLI rollout message, or None (counted):
    `response_item` records of `payload.type` "message" with role user or assistant and
    `input_text`/`output_text` blocks; developer and system messages, the harness's
    environment and instruction blocks, reasoning, tool calls and their output are counted,
    not read. `event_msg` user/agent messages repeat the `response_item` ones and are
    counted as "event" (`parse_messages` reads them only when a file has no
    `response_item` message)."""
    kind = str(record.get("type"))
    payload = record.get("payload")
    if kind != "response_item" or not isinstance(payload, dict):
        if kind == "event_msg" and isinstance(payload, dict) and payload.get("type") in _CODEX_EVENTS:
            parsed.events.append((parsed.line, payload, record.get("timestamp")))
        parsed.drop("event" if kind == "event_msg" else kind)
        return None
    if payload.get("type") != "message":
        parsed.drop(str(payload.get("type") or "unknown"))
        return None
    role = payload.get("role")
    if role not in ROLES:
        parsed.drop(str(role) if role in ("developer", "system") else "unknown")
        return None
    texts: list[str] = []
    content = payload.get("content")
    for block in content if isinstance(content, list) else []:
        if (
            isinstance(block, dict)
            and block.get("type") in _CODEX_TEXT
            and isinstance(block.get("text"), str)
        ):
            if _CODEX_CONTEXT.match(block["text"]):
                parsed.drop("meta")
            else:
                texts.append(block["text"])
        else:
            parsed.drop(str(block.get("type")) if isinstance(block, dict) else "unknown")
    if texts:
        parsed.codex_messages += 1
    return str(role), texts, record.get("timestamp"), None


def _synthetic(record: dict[str, object], texts: list[str]) -> str | None:
    """Why a Claude Code message record is not the user's or the model's words: an API
    error message, an interrupt marker, bash-mode input or output, a sidechain (subagent)
    turn; None when it is."""
    message = record.get("message")
    if record.get("isSidechain") is True:
        return "sidechain"
    if record.get("isApiErrorMessage") is True or (
        isinstance(message, dict) and message.get("model") == "<synthetic>"
    ):
        return "api_error"
    if texts and all(_SYNTHETIC.match(t) for t in texts):
        return "synthetic"
    return None


def _record(record: dict[str, object], parsed: Parsed) -> tuple[str, list[str], object, str | None] | None:
    """`(role, texts, timestamp, message id)` of a message record, or None (counted)."""
    kind = record.get("type")
    if isinstance(kind, str) and kind in _CODEX_RECORDS and "payload" in record:
        return _codex(record, parsed)
    if isinstance(kind, str) and "role" not in record:
        if kind not in ROLES:
            if kind in _KNOWN_RECORDS:
                parsed.drop(kind)
            else:
                parsed.drop_unknown(f"record type {_name(kind)}")
            return None
        if record.get("isMeta") is True:
            parsed.drop("meta")
            return None
        if record.get("isCompactSummary") is True:
            parsed.drop("summary")
            return None
        message = record.get("message")
        if not isinstance(message, dict):
            parsed.drop("empty")
            return None
        role = message.get("role") if message.get("role") in ROLES else kind
        ident = message.get("id") if isinstance(message.get("id"), str) else None
        texts = _texts(message.get("content"), parsed)
        why = _synthetic(record, texts)
        if why is not None:
            parsed.drop(why)
            return None
        return str(role), texts, record.get("timestamp"), ident
    role = record.get("role")
    if isinstance(role, str):
        if role not in ROLES:
            if role in ("system", "tool", "developer"):
                parsed.drop(role)
            else:
                parsed.drop_unknown(f"role {_name(role)}")
            return None
        content = record.get("text", record.get("content"))
        stamp = record.get("ts", record.get("timestamp"))
        return role, _texts(content, parsed), stamp, None
    parsed.drop_unknown("a record without a string type or role")
    return None


def _events_as_messages(parsed: Parsed) -> None:
    """A Codex rollout without `response_item` messages: its `event_msg` user and agent
    messages are the conversation (they were counted as "event"; now they are read)."""
    for number, payload, stamp in parsed.events:
        text = payload.get("message")
        if not isinstance(text, str) or not text.strip() or _CODEX_CONTEXT.match(text):
            continue
        parsed.dropped["event"] -= 1
        parsed.messages.append(
            Message(number, number, _CODEX_EVENTS[str(payload["type"])], scrub(text), stamp)
        )
    parsed.messages.sort(key=lambda m: m.start)
    if parsed.dropped.get("event") == 0:
        del parsed.dropped["event"]


def parse_messages(path: str, lines: list[str]) -> Parsed:
    """Messages, drop counts and warnings of a JSONL transcript given as decoded lines."""
    parsed = Parsed()
    current: Message | None = None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            parsed.warnings.append(f"{path}:{number}: not valid JSON (malformed or truncated); line skipped")
            parsed.drop("malformed")
            continue
        if not isinstance(record, dict):
            parsed.warnings.append(f"{path}:{number}: not a JSON object; line skipped")
            parsed.drop("malformed")
            continue
        counted = sum(parsed.dropped.values())
        parsed.line = number
        found = _record(record, parsed)
        if found is None:
            continue
        role, texts, stamp, ident = found
        clean = [scrub(t) for t in texts]
        if clean != texts:
            parsed.warnings.append(
                f"{path}:{number}: a \\u0000 escape was removed, or an unpaired surrogate escape replaced by U+FFFD"
            )
        texts = [t for t in clean if t.strip()]
        if texts and role == "user" and all(_COMMAND.match(t) for t in texts):
            parsed.drop("command")
            continue
        if not texts:
            if sum(parsed.dropped.values()) == counted:
                parsed.drop("empty")
            continue
        key = f"{role}:{ident}" if ident else None
        if current is not None and key is not None and current.key == key:
            current.end = number
            current.text += "\n\n" + "\n\n".join(texts)
            continue
        if current is not None:
            parsed.messages.append(current)
        current = Message(number, number, role, "\n\n".join(texts), stamp, key)
    if current is not None:
        parsed.messages.append(current)
    if parsed.events and not parsed.codex_messages:
        _events_as_messages(parsed)
    for what, (first, count) in parsed.unknown.items():
        more = f" ({count} times in this file)" if count > 1 else ""
        parsed.warnings.append(f"{path}:{first}: {what} is not one gitdream reads; skipped{more}")
    return parsed
