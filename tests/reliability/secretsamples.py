"""Samples for the secret rules, made at test time from each rule's own regular expression.

The gitleaks rules are data (`gitdream/dream/screen_gitleaks.py`); rather than keeping one
hand-written sample per rule (which would also be a file full of credential-shaped
strings), `sample(pattern)` walks the parsed pattern (`re._parser`, CPython's own parser)
and writes a string it matches: the first alternative of each branch, the fewest
repetitions a quantifier allows, `.` for an unescaped dot, and for each
character class a character drawn from a seeded random source, so the secret part has the
entropy real keys have. Deterministic for a given seed.
"""

from __future__ import annotations

import random
import re
import string
from re import _constants as c  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]

PRINTABLE = [chr(i) for i in range(0x21, 0x7F)]
PREFERRED = set(string.ascii_letters + string.digits)
_CATEGORY = {
    c.CATEGORY_DIGIT: set(string.digits),
    c.CATEGORY_NOT_DIGIT: set(PRINTABLE) - set(string.digits),
    c.CATEGORY_SPACE: {" "},
    c.CATEGORY_NOT_SPACE: set(PRINTABLE),
    c.CATEGORY_WORD: set(string.ascii_letters + string.digits + "_"),
    c.CATEGORY_NOT_WORD: set([*PRINTABLE, " "]) - set(string.ascii_letters + string.digits + "_"),
}


class Unsampleable(ValueError):
    """The pattern uses something this generator does not write (a back-reference)."""


def _class_chars(items: list[tuple[object, object]], ignore_case: bool) -> list[str]:
    allowed: set[str] = set()
    negate = False
    for op, arg in items:
        if op is c.NEGATE:
            negate = True
        elif op is c.LITERAL:
            allowed.add(chr(arg))  # type: ignore[arg-type]
        elif op is c.RANGE:
            low, high = arg  # type: ignore[misc]
            allowed.update(chr(i) for i in range(low, high + 1) if 0x20 <= i < 0x7F)
        elif op is c.CATEGORY:
            allowed |= _CATEGORY.get(arg, set())  # type: ignore[arg-type]
    if negate:
        allowed = set([*PRINTABLE, " "]) - allowed
    allowed = {ch for ch in allowed if 0x20 <= ord(ch) < 0x7F}
    if ignore_case:
        allowed |= {ch.swapcase() for ch in allowed}
    return sorted(allowed)


def _pick(chars: list[str], rng: random.Random) -> str:
    nice = [ch for ch in chars if ch in PREFERRED]
    return rng.choice(nice or chars)


def _write(items: list[tuple[object, object]], rng: random.Random, flags: int, wander: bool) -> str:
    out = []
    ignore_case = bool(flags & re.IGNORECASE)
    for op, arg in items:
        if op is c.LITERAL:
            out.append(chr(arg))  # type: ignore[arg-type]
        elif op is c.NOT_LITERAL:
            out.append(_pick([ch for ch in PRINTABLE if ch != chr(arg)], rng))  # type: ignore[arg-type]
        elif op is c.ANY:
            # an unescaped dot in a host name (`hooks.slack.com`), or any character
            out.append(_pick(PRINTABLE, rng) if wander else ".")
        elif op is c.IN:
            out.append(_pick(_class_chars(arg, ignore_case), rng))  # type: ignore[arg-type]
        elif op is c.CATEGORY:
            out.append(_pick(sorted(_CATEGORY[arg]), rng))  # type: ignore[index]
        elif op is c.BRANCH:
            _none, branches = arg  # type: ignore[misc]
            branch = rng.choice(branches) if wander else branches[0]
            out.append(_write(list(branch), rng, flags, wander))
        elif op is c.SUBPATTERN:
            _group, add_flags, del_flags, sub = arg  # type: ignore[misc]
            out.append(_write(list(sub), rng, (flags | add_flags) & ~del_flags, wander))
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            low, high, sub = arg  # type: ignore[misc]
            count = low
            if wander:
                count = rng.randint(low, min(high, low + 8))
            out.extend(_write(list(sub), rng, flags, wander) for _ in range(count))
        elif op in (c.AT, c.ASSERT, c.ASSERT_NOT):
            continue  # boundaries and look-arounds: the caller pads the sample with spaces
        elif op is c.GROUPREF or op is c.GROUPREF_EXISTS:
            raise Unsampleable("back-reference")
        else:  # pragma: no cover - an opcode the rule tables do not use
            raise Unsampleable(str(op))
    return "".join(out)


def sample(pattern: re.Pattern[str], seed: str, wander: bool = False) -> str:
    """A string that `pattern` is meant to match, drawn with `seed` (see module docstring).
    With `wander`, branches and repetition counts are drawn at random too (for a rule
    whose first alternative an allowlist or entropy floor refuses). Raises Unsampleable
    for a back-reference."""
    rng = random.Random(seed)
    parsed = _parser.parse(pattern.pattern, pattern.flags & ~re.UNICODE)
    return _write(list(parsed), rng, pattern.flags | parsed.state.flags, wander)


FULLWIDTH_OFFSET = 0xFEE0
"""`！` (U+FF01) … `～` (U+FF5E) are `!` … `~` moved by this much; NFKC maps them back."""


def fullwidth(text: str) -> str:
    """`text` with every printable ASCII character written in its fullwidth form."""
    return "".join(chr(ord(ch) + FULLWIDTH_OFFSET) if "!" <= ch <= "~" else ch for ch in text)


def interleave(text: str, start: int, end: int, char: str, every: int = 5) -> str:
    """`text` with `char` inserted after every `every` characters of `text[start:end]`."""
    middle = text[start:end]
    spread = char.join(middle[i : i + every] for i in range(0, len(middle), every))
    return text[:start] + spread + text[end:]
