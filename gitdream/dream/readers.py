"""Raw material readers: the bytes of one committed source file → raw entries (DESIGN §4).

Pure functions: bytes in, `ReadResult` out; no git, no file system, never an exception for
bad input (a bad line is a warning, a bad file is skipped with a reason).

Invariants the rest of the dream relies on:

- Line numbers are git's (see `decode`): `lines = decode_lines(path, data).lines` is the
  file as `gitdream audit` must read it to resolve an entry id `path#Lstart-Lend`.
- A log entry's text is exactly `"\\n".join(lines[start - 1 : end])` — list marker, date
  prefix, indentation and fences as written; a lone CR inside a line reads as a space.
- A transcript entry spans the JSONL lines of its message's records; its text is the
  message's `text` blocks joined by a blank line (tool payloads, thinking and images
  dropped and counted in `ReadResult.dropped`).
- Dates: a log entry's own `[YYYY-MM-DD]` / `[YYYY-MM-DD HH:MM]` prefix (after the list
  marker), else the first YYYY-MM-DD in the file name, else the nearest heading holding a
  date (innermost first), else `fallback_date` (the input commit's date, from the caller).
  A transcript message's date is its record's timestamp, else the file name's, else
  `fallback_date`.
- `added_lines` (1-based line numbers added since the watermark): when given, only entries
  with at least one added line in `start..end` are returned.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from gitdream.dream.dates import date_from_path, date_from_timestamp, date_in, parse_day
from gitdream.dream.decode import decode_lines
from gitdream.dream.logentries import lead_ins, split_entries
from gitdream.dream.tags import find_tags, strip_prefix
from gitdream.dream.transcript import parse_messages
from gitdream.units import Entry

KINDS = ("log", "transcript")


@dataclass
class ReadResult:
    """What reading one file gave.

    `entries` in file order; `warnings` as "path:LINE: message" or "path: message";
    `dropped` counts what was left out on purpose ({"tool_result": 12, "meta": 3}); `skipped`
    is the reason the whole file was skipped (too large, binary), else None.
    """

    entries: list[Entry] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)
    skipped: str | None = None


def _touched(start: int, end: int, added: set[int] | None) -> bool:
    if added is None:
        return True
    if end - start < len(added):
        return any(n in added for n in range(start, end + 1))
    return any(start <= n <= end for n in added)


def read_markdown_log(
    path: str, data: bytes, *, fallback_date: date | None, added_lines: set[int] | None = None
) -> ReadResult:
    """Raw entries of a Markdown daily log (each list item or paragraph; see `logentries`).

    `path` is repository-relative (it becomes part of every entry id and is the file name
    the date may come from); `data` the file's bytes at the input commit. Entries get
    `kind="log"`, `role=None`, `context` = heading path, `tags` from `tags.find_tags`,
    `lead_in` from `logentries.lead_ins` (found in the whole file, so an entry read again
    alone gets the same one).
    Never raises for any `data`: problems are `warnings` or `skipped`.
    """
    decoded = decode_lines(path, data)
    result = ReadResult(warnings=list(decoded.warnings), skipped=decoded.skipped)
    if decoded.skipped:
        return result
    lines = decoded.lines
    spans, warnings = split_entries(path, lines)
    result.warnings += warnings
    file_date = date_from_path(path)
    leads = lead_ins(spans, lines)
    for span in spans:
        if not _touched(span.start, span.end, added_lines):
            continue
        text = "\n".join(lines[span.start - 1 : span.end])
        _, prefix = strip_prefix(lines[span.start - 1])
        day = (
            (parse_day(prefix) if prefix else None)
            or file_date
            or next((d for d in map(date_in, reversed(span.context)) if d), None)
            or fallback_date
        )
        result.entries.append(
            Entry(
                path,
                span.start,
                span.end,
                text,
                day,
                span.context,
                "log",
                None,
                find_tags(text),
                leads.get(span.start, ""),
            )
        )
    return result


def read_transcript(
    path: str, data: bytes, *, fallback_date: date | None, added_lines: set[int] | None = None
) -> ReadResult:
    """Raw entries of a JSONL session transcript: one per user/assistant message.

    Formats and what is dropped: see `transcript`. Entries get `kind="transcript"`, `role`
    "user"/"assistant", `context=()`, the message text whole (never truncated here).
    Never raises for any `data`: a bad line is a warning, a bad file `skipped`.
    """
    decoded = decode_lines(path, data)
    result = ReadResult(warnings=list(decoded.warnings), skipped=decoded.skipped)
    if decoded.skipped:
        return result
    parsed = parse_messages(path, decoded.lines)
    result.warnings += parsed.warnings
    result.dropped = parsed.dropped
    file_date = date_from_path(path)
    for message in parsed.messages:
        if not _touched(message.start, message.end, added_lines):
            continue
        day = date_from_timestamp(message.timestamp) or file_date or fallback_date
        result.entries.append(
            Entry(
                path,
                message.start,
                message.end,
                message.text,
                day,
                (),
                "transcript",
                message.role,
                find_tags(message.text),
            )
        )
    return result


TOO_LARGE = "over max_file_bytes"


def skip_too_large(path: str, size: int, max_file_bytes: int) -> ReadResult | None:
    """The result for a file of `size` bytes over `max_file_bytes` (a warning, no entries;
    `skipped` starts with the size), or None when it is not too large. The caller can test
    the size before loading the blob."""
    if size <= max_file_bytes:
        return None
    reason = f"{size} bytes is {TOO_LARGE} ({max_file_bytes})"
    return ReadResult(warnings=[f"{path}: skipped: {reason}"], skipped=reason)


LFS_POINTER_MAX_BYTES = 1024
"""Git LFS pointer files are "less than 1024 bytes" (git-lfs docs/spec.md)."""


def is_lfs_pointer(data: bytes) -> bool:
    """True when `data` is a Git LFS pointer file (git-lfs docs/spec.md): small, starting
    with the `version https://git-lfs.github.com/spec/v1` line (or the pre-release
    `hawser` URL), with an `oid sha256:` line."""
    return (
        len(data) < LFS_POINTER_MAX_BYTES
        and data.startswith(
            (b"version https://git-lfs.github.com/spec/", b"version https://hawser.github.com/spec/")
        )
        and b"\noid sha256:" in data
    )


def read_source(
    path: str,
    data: bytes,
    *,
    kind: str,
    fallback_date: date | None,
    added_lines: set[int] | None = None,
    max_file_bytes: int,
) -> ReadResult:
    """Read one source file of `kind` "log" (Markdown) or "transcript" (JSONL).

    A file over `max_file_bytes` bytes is skipped before decoding (a warning, no entries),
    and so is a Git LFS pointer (the committed blob of a file stored in LFS: its content is
    not in git, and the pointer's three lines are not material).
    Raises ValueError for an unknown `kind` (a programming error, not bad input).
    """
    if kind not in KINDS:
        raise ValueError(f"unknown source kind {kind!r}; expected one of {', '.join(KINDS)}")
    too_large = skip_too_large(path, len(data), max_file_bytes)
    if too_large is not None:
        return too_large
    if is_lfs_pointer(data):
        reason = "a Git LFS pointer: the file's content is in LFS storage, which gitdream does not read"
        return ReadResult(warnings=[f"{path}:1: skipped: {reason}"], skipped=reason)
    reader = read_markdown_log if kind == "log" else read_transcript
    return reader(path, data, fallback_date=fallback_date, added_lines=added_lines)
