"""Glob patterns over repository-relative POSIX paths.

The config's globs (`agents`, `log_globs`, `session_globs`) follow pathlib's syntax:
`*` matches within one path component, `?` one character, `[abc]` a class, and `**` any
number of whole components (including none); consecutive `**` are one. Matching is
case-sensitive, like git.

A glob may come from the repository's gitdream.toml, written by whoever can push, so one
that could backtrack is matched with RE2 in time linear in the path (`gitdream.patterns`):
translated to a backtracking `re`, `*a*a*a*a*a*a*a*b` or `**/**/**/**/x` took time
exponential in the path's length (issue 16). A glob with at most one `*` in each component
and at most `SIMPLE_DOUBLE_STARS` `**` (the built-in ones, and most anyone writes) cannot:
its translation has no two quantifiers that compete for the same characters within a
component and one run of whole components, so Python's `re` matches it in time about
linear in a path's length (a 4,000-character path in under a millisecond) — and the idle
path (hooks, `status`) does not load RE2 for the default configuration.
"""

from __future__ import annotations

import re
from functools import lru_cache

from gitdream.patterns import Pattern, PatternError, compile_linear


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> Pattern:
    """Compile a glob to a regular expression matched by RE2, for `fullmatch` (see the
    module docstring)."""
    parts = collapse(pattern)
    regex = "(?s)"
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            regex += ".*" if last else "(?:[^/]+/)*"
            continue
        regex += _component(part) + ("" if last else "/")
    if is_simple(parts):
        try:
            return re.compile(regex)
        except re.error:  # a class `re` rejects (`[z-a]`): the glob matches nothing
            return re.compile(r"(?!)")
    try:
        return compile_linear(regex)
    except PatternError:  # a class RE2 rejects (`[z-a]`): the glob matches nothing
        return compile_linear(r"[^\x00-\x{10FFFF}]")


SIMPLE_DOUBLE_STARS = 1
"""A glob with more `**` than this is matched with RE2 (module docstring)."""


def is_simple(parts: list[str]) -> bool:
    """True when the glob of components `parts` (`collapse`) has at most one `*` in each
    component and at most `SIMPLE_DOUBLE_STARS` `**`: Python's `re` matches it without
    exponential backtracking (module docstring)."""
    return sum(part == "**" for part in parts) <= SIMPLE_DOUBLE_STARS and all(
        part == "**" or part.count("*") <= 1 for part in parts
    )


def collapse(pattern: str) -> list[str]:
    """The components of glob `pattern`, without empty ones, `.` and repeated `**`
    (`a/**/**/b` is `a/**/b`: the same paths, without the repeated search)."""
    parts: list[str] = []
    for part in pattern.strip("/").split("/"):
        if part in ("", ".") or (part == "**" and parts[-1:] == ["**"]):
            continue
        parts.append(part)
    return parts


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
    return compile_glob(pattern).fullmatch(path) is not None


def any_match(patterns: list[str] | tuple[str, ...], path: str) -> bool:
    """True when `path` matches one of `patterns`."""
    return any(glob_match(p, path) for p in patterns)
