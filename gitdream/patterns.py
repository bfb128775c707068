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
    """A pattern that cannot be compiled; the message is the engine's reason (RE2's
    `invalid perl operator: (?=`, `invalid escape sequence: \\1`, `pattern too large`;
    Python `re`'s `missing ), unterminated subpattern at position 0`).

    `unsupported` is true when the pattern is valid Perl/Python syntax that RE2 does not
    have (look-around, backreferences, `\\Z`, `(?x)`, possessive repeats, a repeat count
    above 1000, a Python-only escape), and `advice` then says what to write instead."""

    def __init__(self, reason: str, *, unsupported: bool = False, advice: str = "") -> None:
        super().__init__(reason)
        self.unsupported = unsupported
        self.advice = advice


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


# What RE2 says about a pattern that is valid elsewhere, and what to write instead (its
# reasons are stable strings of re2/parse.cc; a reason not listed here is a plain error).
_UNSUPPORTED: tuple[tuple[str, str], ...] = (
    ("invalid perl operator: (?=", "RE2 has no look-ahead"),
    ("invalid perl operator: (?!", "RE2 has no look-ahead"),
    ("invalid perl operator: (?<", "RE2 has no look-behind"),
    ("invalid perl operator: (?P=", "RE2 has no backreferences"),
    ("invalid perl operator: (?P>", "RE2 has no recursion"),
    (
        "invalid perl operator: (?x",
        "RE2 has no verbose mode (?x): drop the flag, the spaces and the comments",
    ),
    (
        "invalid perl operator: (?",
        "RE2 knows only the flags i, m, s and U, named groups (?P<name>…) and (?:…)",
    ),
    ("invalid escape sequence: \\Z", "RE2 writes the end of the text \\z"),
    ("invalid escape sequence: \\u", "RE2 writes a code point \\x{0041}, not \\u0041"),
    ("invalid escape sequence: \\U", "RE2 writes a code point \\x{1F600}, not \\U0001F600"),
    ("invalid escape sequence: \\N", "RE2 has no named characters \\N{…}: write \\x{…}"),
    ("invalid escape sequence: \\", "RE2 has no backreferences (\\1) and no escapes beyond Perl's"),
    ("invalid repetition size", "RE2 repeats at most 1000 times ({0,1000}); write + or * for more"),
    ("bad repetition operator: ++", "RE2 has no possessive repeats: write a+, not a++"),
    ("bad repetition operator: *+", "RE2 has no possessive repeats: write a*, not a*+"),
    ("bad repetition operator: ?+", "RE2 has no possessive repeats: write a?, not a?+"),
    ("pattern too large", "RE2 bounds the memory a pattern may take; split it into smaller ones"),
)


def unsupported_advice(reason: str) -> str | None:
    """What to write instead for RE2's `reason`, when it rejects valid Perl/Python syntax
    it does not have; None for a reason that means the pattern is invalid anywhere
    (`missing ): (`, `invalid character class range: z-a`)."""
    if reason.startswith("invalid repetition size") and re.search(r"\{(\d+),(\d+)\}", reason):
        low, high = map(int, re.findall(r"\d+", reason)[:2])
        if low > high:  # `a{2,1}`: invalid anywhere
            return None
    return next((advice for prefix, advice in _UNSUPPORTED if reason.startswith(prefix)), None)


def compile_python(pattern: str) -> re.Pattern[str]:
    """`pattern` compiled with Python's `re` (for the user's own patterns). Raises
    PatternError with the reason for every failure to compile: `re.error`, and also the
    OverflowError (`a{99999999999}`), RecursionError (1,200 nested groups) and MemoryError
    `re.compile` raises for patterns it cannot represent."""
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise PatternError(str(exc)) from None
    except OverflowError as exc:
        raise PatternError(f"{exc} for Python `re`") from None
    except RecursionError:
        raise PatternError("it is nested too deeply for Python `re` to compile") from None
    except (MemoryError, ValueError) as exc:
        raise PatternError(f"Python `re` cannot compile it ({type(exc).__name__}: {exc})") from None


# Python `re`'s Unicode classes written as RE2's (which reads `\d`, `\w`, `\s` as ASCII):
# `\d` is str.isdecimal (Nd), `\w` str.isalnum or `_` (letters L*, numbers N*), `\s`
# str.isspace (Z*, and the controls \t-\r, \x1c-\x1f, \x85).
_SPACE = r"\s\x0b\x1c-\x1f\x85\p{Z}"
_IN_CLASS = {"d": r"\p{Nd}", "D": r"\P{Nd}", "w": r"\p{L}\p{N}_", "s": _SPACE}
_OUTSIDE = {
    "d": r"\p{Nd}",
    "D": r"\P{Nd}",
    "w": r"[\p{L}\p{N}_]",
    "W": r"[^\p{L}\p{N}_]",
    "s": f"[{_SPACE}]",
    "S": f"[^{_SPACE}]",
}
_BOUNDARY_ADVICE = (
    "RE2's \\b and \\B see only ASCII letters, digits and _ as word characters, so next to "
    "any other letter they never match as Python `re`'s do; write the boundary as a class, "
    "e.g. (?:^|[^\\p{L}\\p{N}_])팔콘(?:[^\\p{L}\\p{N}_]|$) for \\b팔콘\\b"
)


def unicode_classes(pattern: str) -> str:
    """`pattern` with Python `re`'s Unicode meaning of `\\d \\D \\w \\W \\s \\S` written out
    for RE2, whose classes are ASCII-only (`\\d` → `\\p{Nd}`, `\\w` → `[\\p{L}\\p{N}_]`, inside
    a class too), so that a repository pattern matches Korean or Arabic digits as it would
    from the user config. Escaped backslashes, `\\Q…\\E` and POSIX classes are kept as they
    are.

    Raises PatternError (`unsupported`) where the meaning cannot be kept: `\\b` or `\\B`
    in a pattern that holds a non-ASCII character or a `\\w`/`\\W` (RE2's word boundary is
    ASCII-only and cannot be written otherwise without look-around), and `\\W` or `\\S`
    inside a character class (RE2 cannot subtract a union inside a class)."""
    out: list[str] = []
    boundary = wide = False
    in_class = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt == "Q":  # literal text up to \E: copied as it is
                end = pattern.find("\\E", i + 2)
                end = len(pattern) if end == -1 else end + 2
                wide = wide or not pattern[i:end].isascii()
                out.append(pattern[i:end])
                i = end
                continue
            if nxt in "bB" and not in_class:
                boundary = True
            if nxt in "wW":
                wide = True
            if in_class and nxt in "WS":
                raise PatternError(
                    f"\\{nxt} inside a character class cannot be written for RE2",
                    unsupported=True,
                    advice=f"write the class without \\{nxt}, and \\{nxt} beside it: (?:[…]|\\{nxt})",
                )
            table = _IN_CLASS if in_class else _OUTSIDE
            out.append(table.get(nxt, char + nxt))
            i += 2
            continue
        if not char.isascii():
            wide = True
        if in_class:
            if char == "[" and pattern.startswith("[:", i):
                end = pattern.find(":]", i + 2)
                if end != -1:
                    out.append(pattern[i : end + 2])
                    i = end + 2
                    continue
            if char == "]":
                in_class = False
        elif char == "[":
            in_class = True
            out.append(char)
            i += 1
            if pattern.startswith("^", i):
                out.append("^")
                i += 1
            if pattern.startswith("]", i):  # a leading ] is a literal
                out.append("]")
                i += 1
            continue
        out.append(char)
        i += 1
    if boundary and wide:
        raise PatternError(
            "\\b or \\B next to non-ASCII text or \\w cannot be matched as Python `re` matches it",
            unsupported=True,
            advice=_BOUNDARY_ADVICE,
        )
    return "".join(out)


def compile_untrusted(pattern: str) -> Pattern:
    """A pattern from a source gitdream does not trust (a repository's gitdream.toml),
    with Python `re`'s meaning kept where RE2 can keep it (`unicode_classes`), compiled
    with RE2 (`compile_linear`). Raises PatternError: `unsupported` (with `advice`) for
    syntax RE2 does not have, plain for a pattern that is invalid anywhere."""
    written = unicode_classes(pattern)
    try:
        return compile_linear(written)
    except PatternError as exc:
        reason = str(exc)
        advice = unsupported_advice(reason)
        raise PatternError(reason, unsupported=advice is not None, advice=advice or "") from None
