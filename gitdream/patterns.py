"""Patterns from a source gitdream does not trust, matched in linear time.

A repository's committed `gitdream.toml` is written by whoever can push to it, and every
dream runs its patterns over the material on the user's machine — the dream a plain
`git pull` starts through the post-merge hook included. Python's `re` backtracks: a
pattern such as `(a+)+$` or `(x|x)*y` takes time exponential in the length of the text it
fails on (ReDoS), and a glob such as `*a*a*a*a*a*a*a*b` or `**/**/**/**/x` does too once it
is translated to a regular expression, so one committed line made every dream hang.

Such patterns are compiled with RE2 (the `google-re2` package: Google's engine, the one
Go's `regexp` and gitleaks use), which matches in time linear in the text and bounds the
memory a compiled pattern may take; it has no backreferences and no look-around, whose
matching cannot be bounded. The user's own patterns (user config, environment, flags)
keep Python `re`'s full syntax. Nothing here runs at import time: `re2` is imported by the
first compile.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Any, Protocol

ENGINE = "RE2"
"""The name the messages and docs give the linear-time engine."""


class Match(Protocol):
    """What gitdream reads of a match: its span and matched text (`re.Match` and RE2's)."""

    def start(self, group: int = 0) -> int: ...

    def end(self, group: int = 0) -> int: ...

    def __getitem__(self, group: int) -> Any: ...


class Pattern(Protocol):
    """A compiled pattern as gitdream uses it (`re.Pattern` and RE2's alike)."""

    @property
    def pattern(self) -> Any: ...

    def search(self, text: str) -> Match | None: ...

    def fullmatch(self, text: str) -> Match | None: ...

    def finditer(self, text: str) -> Iterator[Match]: ...


class PatternError(ValueError):
    """A pattern RE2 cannot compile; the message is RE2's reason (`invalid perl
    operator: (?=`, `invalid escape sequence: \\1`, `pattern too large`)."""


@functools.cache
def _options() -> Any:
    import re2  # idle path: only when an untrusted pattern is compiled

    options = re2.Options()
    options.log_errors = False  # the reason goes into PatternError, not onto stderr
    return options


_SURROGATE = re.compile("[\ud800-\udfff]")


def _valid(text: str) -> str:
    """`text` with each lone surrogate (a byte of a file name that is not UTF-8, decoded
    with `surrogateescape`) replaced by U+FFFD, one character for one: RE2 takes UTF-8,
    which cannot hold a surrogate, and the offsets of a match stay those of `text`."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


class _Linear:
    """An RE2 pattern that also takes text holding lone surrogates (`_valid`)."""

    __slots__ = ("_compiled", "pattern")

    def __init__(self, compiled: Any) -> None:
        self._compiled = compiled
        self.pattern = compiled.pattern

    def search(self, text: str) -> Match | None:
        found: Match | None = self._compiled.search(_valid(text))
        return found

    def fullmatch(self, text: str) -> Match | None:
        found: Match | None = self._compiled.fullmatch(_valid(text))
        return found

    def finditer(self, text: str) -> Iterator[Match]:
        return iter(self._compiled.finditer(_valid(text)))


@functools.lru_cache(maxsize=512)
def compile_linear(pattern: str) -> Pattern:
    """`pattern` (Perl-like syntax, as Python's `re` without backreferences and
    look-around; `\\z`, not `\\Z`, for the end of the text) compiled with RE2: every
    search takes time linear in the text, whatever the pattern.

    Match offsets are in characters of the `str`, as with `re`; a lone surrogate in the
    text (or the pattern) reads as U+FFFD. Raises PatternError with
    RE2's reason for a pattern it does not accept (invalid, or using syntax it does not
    have, or larger than its memory bound)."""
    import re2  # idle path: only when an untrusted pattern is compiled

    try:
        compiled = re2.compile(_valid(pattern), _options())
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise PatternError(str(reason)) from None
    return _Linear(compiled)
