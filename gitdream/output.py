"""Writing to the terminal: stdout for results, stderr for progress, warnings and errors.

With `--json`, stdout carries exactly one JSON document and everything human goes to
stderr (STYLE C.4). The core never prints; commands return results, `gitdream.render`
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


def out(text: str = "") -> None:
    """A line of the result, on stdout."""
    _write(sys.stdout, text + "\n")


def err(text: str = "") -> None:
    """A line for the human, on stderr."""
    _write(sys.stderr, text + "\n")


def status_line(text: str) -> None:
    """A line on stderr that the next one replaces (carriage return, then erase to the end
    of the line): progress on a terminal. End it with `err()` or another `status_line`."""
    _write(sys.stderr, "\r" + text + "\x1b[K")


def warn(text: str) -> None:
    """`warning: <text>` on stderr."""
    err(f"warning: {text}")


def json_out(document: Any) -> None:
    """The one JSON document of a `--json` command, on stdout."""
    _write(sys.stdout, json.dumps(document, indent=2, ensure_ascii=False, default=str) + "\n")


def stderr_is_terminal() -> bool:
    """True when stderr is a terminal (progress is shown only then)."""
    try:
        return os.isatty(sys.stderr.fileno())
    except (AttributeError, ValueError, OSError):
        return False
