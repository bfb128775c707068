"""Glob patterns over repository-relative POSIX paths.

The config's globs (`agents`, `log_globs`, `session_globs`) follow pathlib's syntax:
`*` matches within one path component, `?` one character, `[abc]` a class, and `**` any
number of whole components (including none). Matching is case-sensitive, like git.
"""

from __future__ import annotations

import re
from functools import lru_cache


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """Compile a glob to an anchored regular expression (see the module docstring)."""
    parts = [p for p in pattern.strip("/").split("/") if p not in ("", ".")]
    regex = ""
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            regex += ".*" if last else "(?:[^/]+/)*"
            continue
        regex += _component(part) + ("" if last else "/")
    return re.compile(regex + r"\Z", re.DOTALL)


def _component(part: str) -> str:
    out = []
    i = 0
    while i < len(part):
        char = part[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = part.find("]", i + 2 if part[i + 1 : i + 2] in ("!", "]") else i + 1)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = part[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def glob_match(pattern: str, path: str) -> bool:
    """True when the POSIX path `path` matches `pattern` as a whole."""
    return compile_glob(pattern).match(path) is not None


def any_match(patterns: list[str] | tuple[str, ...], path: str) -> bool:
    """True when `path` matches one of `patterns`."""
    return any(glob_match(p, path) for p in patterns)
