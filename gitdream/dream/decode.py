"""Raw bytes → numbered text lines, the way git numbers them; decoding never aborts.

Line numbers are the ones git uses for the same blob (diff hunks, blame, the watermark's
"added lines"): a line ends at LF. A CR right before an LF is part of the line break (CRLF);
a lone CR is not a line break for git, so it stays inside its line, replaced by a space (and
reported once per file). `str.splitlines()` must never be used for this: it also splits on
VT, FF, U+0085, U+2028... and would shift every line number after them.

Encoding: UTF-8, with or without a BOM. Invalid UTF-8 is replaced by U+FFFD line by line and
reported as "path:LINE: invalid UTF-8 replaced" (at most `MAX_LINE_WARNINGS` lines named, then
one summary). A UTF-16 or UTF-32 BOM selects that encoding (with a warning). NUL bytes in what
is left mean binary content: the file is skipped with a reason, never a crash.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass, field

MAX_LINE_WARNINGS = 10

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
    if nul >= 0:
        result.skipped = f"binary content (NUL byte at offset {nul})"
        result.warnings.append(f"{path}: skipped: {result.skipped}")
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


def _finish(path: str, text: str, result: Decoded) -> Decoded:
    if "\x00" in text:
        result.skipped = "binary content (NUL character)"
        result.warnings.append(f"{path}: skipped: {result.skipped}")
        return result
    result.lines = split_lines(text)
    for number, line in enumerate(text.split("\n"), start=1):
        if "\r" in line.removesuffix("\r"):
            result.warnings.append(
                f"{path}:{number}: lone CR (carriage return) kept inside the line as a space; "
                "git ends lines at LF only"
            )
            break
    return result
