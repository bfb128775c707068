"""Markdown emphasis that is only layout, told from the code and names that look like it.

`unemphasize(text)` drops the markers of bold and italic emphasis (`**Moltbook:** x` →
`Moltbook: x`) and nothing else. Markers are characters code uses too, so the rules read
them as CommonMark's flanking rules do, and stricter where code is likelier than emphasis:

- Code spans, fenced blocks and URLs (`gitdream.text.prose`) are never touched:
  `` `__init__.py` `` and `` `**kwargs` `` stay as written.
- An emphasis opens only where a word does not continue before it and the marked text does
  not start with a space, and closes only where the marked text does not end with a space
  and a word does not continue after it — so `a*b*c`, `snake__case`, `2*3*4` and
  `*args, **kwargs` are not emphasis.
- Emphasis with underscores (`__bold__`, `_italic_`) must hold a space: a single word
  between underscores is an identifier (`__init__`, `__main__`, `_private_`), not a phrase
  a writer stressed; `__init__.py` is a file name. Asterisk emphasis may wrap one word
  (`**NEVER**`).
- Marked text holds no marker of its own kind (`**kwargs and **bold**` stresses "bold"
  only).

`unlabel(text)` drops the markers of a *label* opening the text — emphasis of any kind,
bold or italic, asterisks or underscores, around a few words that a colon closes, inside or
after the markers (`__Rule__: x`, `*Note:* x`, `_Heads up_: x` → `Rule: x`, `Note: x`, `Heads
up: x`): a label is layout whatever its emphasis. Lower-case identifiers between underscores
(`__init__: …`, `_private_: …`) are names, never labels.

Pure functions; never raise.
"""

from __future__ import annotations

import re

from gitdream.text import prose

# A word continues on either side: a letter, digit or underscore, or "." before one
# ("__init__.py": the name goes on after the marker).
_NOT_AFTER_WORD = r"(?<![\w*])"
_NOT_BEFORE_WORD = r"(?![\w*]|\.\w)"
_STRONG_STAR = re.compile(_NOT_AFTER_WORD + r"\*\*(?=[^\s*])((?:(?!\*\*).)*?[^\s*])\*\*" + _NOT_BEFORE_WORD)
_EM_STAR = re.compile(_NOT_AFTER_WORD + r"\*(?=[^\s*])((?:(?!\*).)*?[^\s*])\*" + _NOT_BEFORE_WORD)
_UNDERSCORE_AROUND = r"(?<![\w])(?P<mark>__?)(?=[^\s_])(?P<body>(?:(?!(?P=mark)).)*?\s(?:(?!(?P=mark)).)*?[^\s_])(?P=mark)(?![\w]|\.\w)"
_UNDERSCORE = re.compile(_UNDERSCORE_AROUND)
_HOLE = "\ue000"  # a private-use character: where a code span or URL stood


def _unemphasize_prose(text: str, italic: bool) -> str:
    before = None
    while before != text:  # nested emphasis ("**_a b_**") unwraps from the outside in
        before = text
        text = _STRONG_STAR.sub(r"\1", text)
        text = _UNDERSCORE.sub(
            lambda m: m["body"] if italic or len(m["mark"]) == 2 else m.group(0),
            text,
        )
        if italic:
            text = _EM_STAR.sub(r"\1", text)
    return text


def unemphasize(text: str, *, italic: bool = False) -> str:
    """`text` without the markers of bold emphasis (`**x**`, `__x y__`), and of italic
    emphasis too (`*x*`, `_x y_`) when `italic`, by the rules of the module docstring; code
    spans, fenced code and URLs are left as written."""
    if "*" not in text and "_" not in text:
        return text
    pieces = prose.segments(text)
    if _HOLE in text:  # cannot stand in for the code: each prose piece alone
        return "".join(_unemphasize_prose(piece, italic) if is_prose else piece for piece, is_prose in pieces)
    code = [piece for piece, is_prose in pieces if not is_prose]
    # Code stands in as one character, so emphasis around it (`**`x.py`** — …`) is seen.
    held = _unemphasize_prose("".join(piece if is_prose else _HOLE for piece, is_prose in pieces), italic)
    out = held.split(_HOLE)
    return "".join(part + (code[i] if i < len(code) else "") for i, part in enumerate(out))


# A label opening the text: one kind of marker around a few words, a colon inside or right
# after the closing marker, then a space or the end.
_LABEL = re.compile(
    r"^(?P<mark>\*{1,3}|_{1,3})(?P<body>[^\s*_`](?:[^*_`\n]{0,58}[^\s*_`])?)(?P=mark)"
    r"(?P<colon>[:：])?(?:(?=\s|$)|(?<=：)|(?<=：[*_])|(?<=：[*_]{2})|(?<=：[*_]{3}))"
)
_IDENTIFIER = re.compile(r"[a-z0-9_]+")


def unlabel(text: str) -> str:
    """`text` without the emphasis markers of a label opening it (module docstring):
    `__Rule__: x` → `Rule: x`, `*Note:* x` → `Note: x`; `text` itself when it opens with no
    such label (a lower-case identifier between underscores is a name: `__init__: …`)."""
    match = _LABEL.match(text)
    if match is None:
        return text
    body, colon = match["body"], match["colon"] or ""
    if not colon and not body.endswith((":", "：")):
        return text
    if match["mark"][0] == "_" and _IDENTIFIER.fullmatch(body.rstrip(":：")):
        return text
    return body + colon + text[match.end() :]
