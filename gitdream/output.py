"""Writing to the terminal: stdout for results, stderr for progress, warnings and errors.

With `--json`, stdout carries exactly one JSON document and everything human goes to
stderr, as `llm` and pre-commit do. The core never prints; commands return results, `gitdream.render`
turns them into lines, and `cli.py` writes those through these functions.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def _write(stream: Any, text: str) -> None:
    # A reader that went away (`gitdream log | head`) must not turn into a crash, nor
    # stop a dream half-way: further output to that stream is dropped.
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
        except (OSError, ValueError, AttributeError):
            pass


# What a terminal would act on rather than show: control characters (ESC starts colour,
# cursor and OSC sequences — OSC 52 writes the clipboard), DEL and the C1 controls, and the
# bidi overrides that reorder what is shown. Text from a repository's material reaches
# `audit`, `show` and warnings (issue 16); it is printed with these made visible.
_UNSAFE = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0x7F, 0xA0))}
_UNSAFE.update({c: f"\\u{c:04x}" for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))})


# In a JSON document the C0 controls are escaped by `json.dumps` already; DEL, the C1
# controls and the bidi overrides are written as `\u` escapes too, which decode to the same
# strings, so a `--json` document shown on a terminal cannot act on it either.
_JSON_UNSAFE = {c: f"\\u{c:04x}" for c in _UNSAFE if c >= 0x7F}


def printable(text: str) -> str:
    """`text` with every character a terminal would act on shown as an escape (`\\x1b`);
    newlines, tabs and carriage returns (CRLF files in a diff) are kept."""
    return text.translate(_UNSAFE)


def out(text: str = "") -> None:
    """A line of the result, on stdout (see `printable`)."""
    _write(sys.stdout, printable(text) + "\n")


def err(text: str = "") -> None:
    """A line for the human, on stderr (see `printable`)."""
    _write(sys.stderr, printable(text) + "\n")


def problem(text: str) -> None:
    """A line of a warning or an error, on stderr, every secret in it masked (`masked`)."""
    _write(sys.stderr, printable(masked(text)) + "\n")


def masked(text: str) -> str:
    """`text` with every secret the scanner finds masked (`screen.redact_terminal`): a
    warning or an error may quote repository content (a configuration value, a key name, a
    file name). Results (`out`, `err`) are rendered from what gitdream wrote, screened
    already, and do not pay for the scanner: a no-op run stays on the idle path."""
    if not text.strip():
        return text
    from gitdream.dream import screen  # idle path: only when something is printed on stderr

    return screen.redact_terminal(text)


def status_line(text: str) -> None:
    """A line on stderr that the next one replaces (carriage return, then erase to the end
    of the line): progress on a terminal. End it with `err()` or another `status_line`."""
    _write(sys.stderr, "\r" + text + "\x1b[K")


def warn(text: str) -> None:
    """`warning: <text>` on stderr, every secret in it masked (`problem`)."""
    problem(f"warning: {text}")


def json_error(error: dict[str, Any]) -> None:
    """The `{"error": …}` document of a failed `--json` command, its strings masked as
    `err` masks them."""
    json_out({"error": {k: masked(v) if isinstance(v, str) else v for k, v in error.items()}})


def json_out(document: Any) -> None:
    """The one JSON document of a `--json` command, on stdout: UTF-8 as written, but for
    the characters a terminal would act on, which are `\\u` escapes (`_JSON_UNSAFE`)."""
    text = json.dumps(document, indent=2, ensure_ascii=False, default=str).translate(_JSON_UNSAFE)
    _write(sys.stdout, text + "\n")


def stderr_is_terminal() -> bool:
    """True when stderr is a terminal (progress is shown only then)."""
    try:
        return os.isatty(sys.stderr.fileno())
    except (AttributeError, ValueError, OSError):
        return False
