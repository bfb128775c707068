"""Shortening text for one-line facts, titles and descriptions without breaking characters.

`clip(text, limit)` keeps at most `limit` characters (Unicode code points, as Python counts
`len`) including the trailing "…". It never cuts inside what a reader sees as one character:
not between the halves of a surrogate pair (lone surrogates can come from escaped JSON), not
before a combining mark, variation selector, emoji modifier or tag character, not next to a
zero-width joiner, and not inside a pair of regional indicators (a flag). When a space lies in
the last fifth of the kept text, it cuts there, so words stay whole. A run of ASCII characters
without spaces (a word, a URL, a hash, a key or token) — or a word of any script written with
spaces ("résumé", "메모리") — is never split, however long: the cut moves before it, so clipped text can never end in part of a secret that the scanner, seeing
only that part, would not recognise. Scripts written without spaces (Chinese, Japanese, Thai)
are cut at any character.
"""

from __future__ import annotations

import unicodedata

ELLIPSIS = "…"


def _extends(ch: str) -> bool:
    """True for a code point that belongs to the grapheme before it."""
    cp = ord(ch)
    return (
        unicodedata.combining(ch) != 0
        or unicodedata.category(ch) in ("Mn", "Me", "Mc")
        or cp == 0x200D  # zero-width joiner
        or 0xFE00 <= cp <= 0xFE0F  # variation selectors
        or 0xE0100 <= cp <= 0xE01EF
        or 0x1F3FB <= cp <= 0x1F3FF  # emoji skin-tone modifiers
        or 0xE0020 <= cp <= 0xE007F  # tag characters (subdivision flags)
        or 0xDC00 <= cp <= 0xDFFF  # low surrogate: second half of a pair
    )


def _regional(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def safe_cut(text: str, index: int) -> int:
    """The largest cut position <= `index` that does not split a grapheme of `text`."""
    index = max(0, min(index, len(text)))
    while 0 < index < len(text):
        if _extends(text[index]) or text[index - 1] == "\u200d":
            index -= 1
            continue
        if _regional(text[index]) and _regional(text[index - 1]):
            run = 0
            j = index - 1
            while j >= 0 and _regional(text[j]):
                run += 1
                j -= 1
            if run % 2 == 1:  # the cut would separate the two halves of a flag
                index -= 1
                continue
        break
    return index


def clip(text: str, limit: int) -> str:
    """`text` if it has at most `limit` characters, else its head plus "…" (total <= `limit`).

    `limit` counts code points and must be >= 1. Trailing spaces before the "…" are dropped.
    """
    if limit < 1:
        raise ValueError("limit must be >= 1")
    if len(text) <= limit:
        return text
    cut = safe_cut(text, limit - len(ELLIPSIS))
    space = text.rfind(" ", 0, cut + 1)
    if space > 0 and space >= cut - max(1, cut // 5):
        cut = space
    elif 0 < cut < len(text) and _token(text[cut - 1]) and _token(text[cut]):
        while cut > 0 and _token(text[cut - 1]):
            cut -= 1
    return text[:cut].rstrip() + ELLIPSIS


def _token(ch: str) -> bool:
    """A printable ASCII character other than space, or a letter or digit of a script written
    with spaces between words ("résumé", "메모리"): part of a word, URL, key or token."""
    return "!" <= ch <= "~" or (ch.isalnum() and not _dense(ch))


def _dense(ch: str) -> bool:
    """A character of a script written without spaces (Chinese, Japanese kana, Thai, Lao,
    Khmer, Myanmar): a word boundary may fall after any of them."""
    cp = ord(ch)
    return (
        0x2E80 <= cp <= 0x9FFF  # CJK radicals, kana, CJK ideographs
        or 0xF900 <= cp <= 0xFAFF
        or 0x20000 <= cp <= 0x3FFFF
        or 0x0E00 <= cp <= 0x0EFF  # Thai, Lao
        or 0x1000 <= cp <= 0x109F  # Myanmar
        or 0x1780 <= cp <= 0x17FF  # Khmer
    )
