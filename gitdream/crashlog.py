"""Crash logs: what an unexpected error leaves behind for a bug report.

A Markdown file under the user log directory with gitdream, git, pygit2/libgit2 and
Python versions, the command line and the traceback (after pre-commit's `_log_and_exit`).
"""

from __future__ import annotations

import platform
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

from gitdream import __version__, clock, paths


def write(
    exc: BaseException, pygit2_version: str = "unknown", mask: Callable[[str], str] | None = None
) -> Path | None:
    """Write a crash log for `exc`, naming `pygit2_version` (`gitdream.git.versions()`);
    return its path, or None if it could not be written. `mask`, when given, is applied to
    the whole text first (the CLI passes the secret scanner's: an exception's message may
    quote material, and the log is meant to be attached to a bug report)."""

    stamp = clock.now().strftime("%Y%m%dT%H%M%SZ")
    body = "\n".join(
        [
            "# gitdream crash log",
            "",
            f"- gitdream: {__version__}",
            f"- pygit2: {pygit2_version}",
            f"- python: {sys.version.split()[0]} ({platform.platform()})",
            f"- command: {' '.join(sys.argv)}",
            f"- time: {clock.iso(clock.now())}",
            "",
            "```",
            "".join(traceback.format_exception(exc)).rstrip(),
            "```",
            "",
        ]
    )
    if mask is not None:
        body = mask(body)
    try:
        folder = paths.ensure_dir(paths.user_log_dir())
        path = folder / f"crash-{stamp}.md"
        path.write_text(body, encoding="utf-8")
        return path
    except OSError:
        return None
