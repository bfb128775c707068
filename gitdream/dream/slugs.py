"""Topic file stems: `slugify(name)` → a name that is safe as `<slug>.md` on every platform.

Rules, in order:

1. NFKC-normalise, lower-case (then NFKC again: lower-casing can denormalise, e.g. "İ").
2. Remove invisible characters outright: controls (Cc), format characters (Cf: zero-width
   space/joiners, bidi overrides such as U+202E, the BOM, soft hyphen), surrogates, private
   use and unassigned code points.
3. Keep Unicode letters (L*), decimal digits (Nd) and combining marks (M*, needed by Indic
   and other scripts) that follow a kept letter, digit or mark; every other character (space, punctuation, `/`, `\\`, `.`, `_`,
   emoji...) becomes "-"; runs of "-" collapse to one; "-" is trimmed from both ends. So a
   slug never holds a path separator, a dot (no dot-files, no `..`) or whitespace.
4. Empty → "topic".
5. Reserved stems get "-topic" appended: Windows device names (con, prn, aux, nul, com1-9,
   lpt1-9) and the names the memory directory uses itself (memory → MEMORY.md, archive,
   logs, index).
6. At most `MAX_CHARS` (64) characters AND `MAX_BYTES` (120) bytes of UTF-8, cut on a
   character boundary (then trailing "-" trimmed).
7. A slug already in `taken` (compared case-insensitively: macOS and Windows file systems
   are) gets "-2", "-3"... — the first free one, the base shortened so the result still fits
   rule 6. Deterministic: the same name and `taken` give the same slug.
"""

from __future__ import annotations

import re
import unicodedata

MAX_CHARS = 64
MAX_BYTES = 120
FALLBACK = "topic"
WINDOWS_RESERVED = frozenset(
    {"con", "prn", "aux", "nul"} | {f"com{i}" for i in range(1, 10)} | {f"lpt{i}" for i in range(1, 10)}
)
MEMORY_RESERVED = frozenset({"memory", "archive", "logs", "index"})
_DROP = ("Cc", "Cf", "Cs", "Co", "Cn")
_DASHES = re.compile(r"-{2,}")


def _keep(ch: str) -> str:
    category = unicodedata.category(ch)
    if category in _DROP:
        return ""
    if category[0] in ("L", "M") or category == "Nd":
        return ch
    return "-"


def _fit(text: str, limit_chars: int, limit_bytes: int) -> str:
    text = text[:limit_chars]
    while len(text.encode("utf-8")) > limit_bytes:
        text = text[:-1]
    return text.strip("-")


def base_slug(name: str) -> str:
    """Rules 1-6 of the module docstring (no collision handling); never empty."""
    text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).lower())
    kept: list[str] = []
    for ch in text:
        out = _keep(ch)
        # A combining mark (e.g. the emoji variation selector U+FE0F) needs a base letter
        # or digit before it; orphaned at the start or after "-" it would lead the slug.
        if out and unicodedata.category(ch)[0] == "M" and (not kept or kept[-1] == "-"):
            continue
        kept.append(out)
    text = _DASHES.sub("-", "".join(kept)).strip("-")
    text = _fit(text, MAX_CHARS, MAX_BYTES) or FALLBACK
    if text in WINDOWS_RESERVED or text in MEMORY_RESERVED:
        text += "-" + FALLBACK
    return text


def slugify(name: str, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """A safe, unique topic file stem for `name` (see module docstring for every rule).

    `name` is any string (a tag, a heading, a model's topic name); `taken` holds stems
    already in use (without ".md"). The result matches none of them case-insensitively.
    Lengths: at most 64 characters and 120 UTF-8 bytes. Never raises, never returns "".
    """
    slug = base_slug(name)
    used = {t.lower() for t in taken}
    if slug not in used:
        return slug
    number = 2
    while True:
        suffix = f"-{number}"
        stem = _fit(slug, MAX_CHARS - len(suffix), MAX_BYTES - len(suffix)) or FALLBACK
        candidate = stem + suffix
        if candidate not in used:
            return candidate
        number += 1
