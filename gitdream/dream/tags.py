"""Explicit tags in a raw entry's text: `#tag` words and leading `[tag]` brackets.

- `#tag`: `#` then Unicode letters, digits, `-` and `_`, with at least one letter (so issue
  and PR numbers like `#123` are not tags), at the start of the text or after a character that
  is not a letter, digit, `_`, `&` or `/` (so `C#`, `PR#12`, `&#123;`, `page#anchor` and
  `/#/route` are not tags). Hex colours with a digit (`#1a2b3c`, `#0f0`) are not tags.
  Nothing inside code spans, fenced code blocks, URLs or e-mail-like words counts. `# Heading` (with a space)
  is a heading, never a tag. Trailing `-`/`_` are dropped (`#deploy-` → `deploy`).
- `[tag]`: at the start of the entry, after the list marker, an optional task checkbox
  (`[ ]`, `[x]`) and an optional date/time `[YYYY-MM-DD]` / `[YYYY-MM-DD HH:MM]`, each
  following `[word]` made of letters, digits, `-`, `_` (at least one letter) is a tag:
  `- [2026-03-01] [deploy] [infra] ...` → ("deploy", "infra"). A bracket followed by `(` or
  `[` is a Markdown link, not a tag; `[SYSTEM HEARTBEAT]` (a space) is not a tag.

Tags are lower-cased, in order of appearance (leading brackets first), without repeats.
`#skill`, `#soul` and `#agent` route an entry to a definition (DESIGN §9).

A tag *files* the entry (`files_entry`) when it stands apart from the sentence: a leading
`[tag]`, a `#tag` that opens the text, or a run of `#tag`s that ends it. A `#word` inside
the sentence ("Replied to the #payments thread") is a mention — a channel, a name used as a
word — it still names a subject, but the author did not mark the entry with it.
"""

from __future__ import annotations

import re

from gitdream.text.prose import prose_only

_HASH_TAG = re.compile(r"(?<![\w&/#])#([\w-]+)")
_HEX_COLOUR = re.compile(r"(?=[0-9a-f]*[0-9])(?:[0-9a-f]{3}|[0-9a-f]{4}|[0-9a-f]{6}|[0-9a-f]{8})")
# Anchored at the start of a word: unanchored, a long word without "@" (a base64 blob, a
# minified line) was rescanned from each of its characters, quadratic in its length.
_EMAIL = re.compile(r"(?<!\S)\S+@\S+")

LIST_MARKER = re.compile(r"^[ \t]*(?:[-*+]|[0-9]{1,9}[.)])(?:[ \t]+|$)")
CHECKBOX = re.compile(r"^\[[ xX]\](?:[ \t]+|$)")
DATE_PREFIX = re.compile(
    r"^\[(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})(?:[ T][0-9]{1,2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?"
    r"(?:Z|[+-][0-9]{2}:?[0-9]{2})?)?\](?:[ \t]+|$)"
)
_BRACKET_TAG = re.compile(r"^\[([\w-]+)\](?![(\[])[ \t]*")


def strip_prefix(text: str) -> tuple[str, str | None]:
    """`(rest, date)`: the text after a list marker, a task checkbox and a `[date]` prefix.

    `date` is the "YYYY-MM-DD" string of the prefix (not validated here), or None.
    """
    rest = text.lstrip()
    match = LIST_MARKER.match(rest)
    if match:
        rest = rest[match.end() :]
    match = CHECKBOX.match(rest)
    if match:
        rest = rest[match.end() :]
    match = DATE_PREFIX.match(rest)
    day = None
    if match:
        day = match["date"]
        rest = rest[match.end() :]
    return rest, day


def _is_word(word: str) -> bool:
    return any(ch.isalpha() for ch in word)


_TRAILING_TAGS = re.compile(r"(?:^|\s)#[\w-]*[^\W\d_][\w-]*(?:[ \t]+#[\w-]+)*[ \t]*[.!?。！？]?[ \t]*$")
_OPENING_TAG = re.compile(r"#[\w-]*[^\W\d_][\w-]*(?:\s|$)")


def files_entry(text: str, tags: tuple[str, ...] | None = None) -> bool:
    """True when one entry's `text` is filed under a tag by its author: it has a leading
    `[tag]`, opens with a `#tag`, or ends with a run of `#tag`s (module docstring); False
    for text whose `#tag`s all sit inside the sentence, and for text without tags.
    `tags` are the text's `find_tags` when the caller has them (an Entry's `tags`), so
    the text is not scanned for them again."""
    rest, _ = strip_prefix(text)
    match = _BRACKET_TAG.match(rest)
    if match is not None and _is_word(match[1]):
        return True
    if "#" not in rest:
        return False
    found = find_tags(text) if tags is None else tags
    if not found:
        return False
    body = rest.rstrip()
    opening = _OPENING_TAG.match(body)
    if opening is not None and opening[0].strip()[1:].rstrip("-_").lower() in found:
        return True
    trailing = _TRAILING_TAGS.search(body)
    return trailing is not None and any(
        word[1:].rstrip("-_.!?。！？").lower() in found for word in trailing[0].split()
    )


def find_tags(text: str) -> tuple[str, ...]:
    """Explicit tags of one entry's text (see module docstring), lower-cased, in order."""
    found: list[str] = []
    rest, _ = strip_prefix(text)
    while (match := _BRACKET_TAG.match(rest)) is not None and _is_word(match[1]):
        found.append(match[1].strip("-_").lower())
        rest = rest[match.end() :]
    # Without a "#" there is no `#tag` to find (and the prose pass is most of the cost).
    prose = _EMAIL.sub(" ", prose_only(text)) if "#" in text else ""
    for match in _HASH_TAG.finditer(prose):
        word = match[1].rstrip("-_")
        if _is_word(word) and not _HEX_COLOUR.fullmatch(word.lower()):
            found.append(word.lower())
    return tuple(dict.fromkeys(word for word in found if word))
