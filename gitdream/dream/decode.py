"""Raw bytes → numbered text lines, the way git numbers them; decoding never aborts.

Line numbers are the ones git uses for the same blob (diff hunks, blame, the watermark's
"added lines"): a line ends at LF. A CR right before an LF is part of the line break (CRLF);
a lone CR is not a line break for git, so it stays inside its line, replaced by a space (and
reported once per file). `str.splitlines()` must never be used for this: it also splits on
VT, FF, U+0085, U+2028... and would shift every line number after them.

Encoding: UTF-8, with or without a BOM. Invalid UTF-8 is replaced by U+FFFD line by line and
reported as "path:LINE: invalid UTF-8 replaced" (at most `MAX_LINE_WARNINGS` lines named, then
one summary). A UTF-16 or UTF-32 BOM selects that encoding (with a warning).

NUL bytes: a file whose bytes, NULs left aside, are not text (more than `BINARY_FRACTION` of
them invalid UTF-8 or control characters, or nothing but NULs and whitespace) is binary and
skipped with a reason naming the line of its first NUL. Otherwise the NULs are removed and
each affected line is reported ("path:LINE: NUL bytes removed"): a log that a crash padded
with zeros, or one stray NUL, keeps every other character (and git's line numbers, since a
NUL is never a line break). Nothing here ever aborts.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field

MAX_LINE_WARNINGS = 10
BINARY_FRACTION = 0.1
"""Share of non-text characters (invalid UTF-8, control characters) above which a file
holding NUL bytes is binary."""

# C0 controls that text files do not hold (tab, LF, VT, FF, CR and ESC are text enough).
_CONTROL = re.compile("[\x01-\x08\x0e-\x1a\x1c-\x1f\x7f\ufffd]")
_SCRUB = re.compile("[\x00\ud800-\udfff]")

_WIDE_BOMS = (
    # UTF-32 first: its little-endian BOM starts with the UTF-16 one.
    (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16"),
)


@dataclass
class Decoded:
    """`lines[i]` is line i+1 of the file (no line break; CR handled as above).

    `warnings` are "path:LINE: message" or "path: message" strings; `skipped` is the reason
    the file was not decoded at all (then `lines` is empty).
    """

    lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skipped: str | None = None


def split_lines(text: str) -> list[str]:
    """Split decoded text into git's lines (LF only; CRLF → LF; lone CR → space).

    A final line break does not start another line: "a\\nb\\n" and "a\\nb" are both 2 lines.
    """
    if not text:
        return []
    parts = text.split("\n")
    if parts[-1] == "":
        parts.pop()
    return [(p[:-1] if p.endswith("\r") else p).replace("\r", " ") for p in parts]


def decode_lines(path: str, data: bytes) -> Decoded:
    """Decode `data` (the bytes of repository file `path`) into numbered lines.

    Returns a `Decoded`; never raises for any input. `path` is used only in messages.
    """
    result = Decoded()
    for bom, codec, name in _WIDE_BOMS:
        if data.startswith(bom):
            text = data[len(bom) :].decode(codec, errors="replace")
            result.warnings.append(f"{path}: decoded as {name} (byte order mark)")
            if "\ufffd" in text:
                result.warnings.append(f"{path}: invalid {name} replaced")
            return _finish(path, text, result)
    nul = data.find(b"\x00")
    if nul >= 0 and _binary(data):
        line = data.count(b"\n", 0, nul) + 1
        result.skipped = f"binary content (NUL byte at offset {nul})"
        result.warnings.append(f"{path}:{line}: skipped: {result.skipped}")
        return result
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = _decode_per_line(path, data, result)
    return _finish(path, text, result)


def _decode_per_line(path: str, data: bytes, result: Decoded) -> str:
    # LF (0x0A) never occurs inside a UTF-8 multi-byte sequence, so splitting the bytes
    # on it keeps both the line numbers and every valid character intact.
    bad: list[int] = []
    pieces = []
    for number, chunk in enumerate(data.split(b"\n"), start=1):
        try:
            pieces.append(chunk.decode("utf-8"))
        except UnicodeDecodeError:
            pieces.append(chunk.decode("utf-8", errors="replace"))
            bad.append(number)
    for number in bad[:MAX_LINE_WARNINGS]:
        result.warnings.append(f"{path}:{number}: invalid UTF-8 replaced")
    if len(bad) > MAX_LINE_WARNINGS:
        result.warnings.append(f"{path}: invalid UTF-8 replaced on {len(bad) - MAX_LINE_WARNINGS} more lines")
    return "\n".join(pieces)


def _binary(data: bytes) -> bool:
    """True when `data` (holding NUL bytes) is not text once its NULs are left aside."""
    text = data.replace(b"\x00", b"").decode("utf-8", "replace")
    if not text.strip():
        return True
    return len(_CONTROL.findall(text)) > BINARY_FRACTION * len(text)


def _remove_nul(path: str, text: str, result: Decoded) -> str:
    """`text` without NUL characters; each line that held one is reported."""
    lines = [n for n, line in enumerate(text.split("\n"), start=1) if "\x00" in line]
    for number in lines[:MAX_LINE_WARNINGS]:
        result.warnings.append(f"{path}:{number}: NUL bytes removed")
    if len(lines) > MAX_LINE_WARNINGS:
        result.warnings.append(f"{path}: NUL bytes removed on {len(lines) - MAX_LINE_WARNINGS} more lines")
    return text.replace("\x00", "")


def scrub(text: str) -> str:
    """`text` as valid, NUL-free Unicode: NUL characters removed, lone surrogates (which
    JSON escapes such as `\\ud83d` produce, and which cannot be written as UTF-8) replaced
    by U+FFFD. For strings that come from JSON (transcripts, model answers)."""
    if _SCRUB.search(text) is None:
        return text
    return _SCRUB.sub(lambda m: "" if m[0] == "\x00" else "\ufffd", text)


def _finish(path: str, text: str, result: Decoded) -> Decoded:
    if "\x00" in text:
        text = _remove_nul(path, text, result)
    result.lines = split_lines(text)
    for number, line in enumerate(text.split("\n"), start=1):
        if "\r" in line.removesuffix("\r"):
            result.warnings.append(
                f"{path}:{number}: lone CR (carriage return) kept inside the line as a space; "
                "git ends lines at LF only"
            )
            break
    return result
