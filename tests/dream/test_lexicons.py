"""Cue lexicons (`gitdream.dream.lexicons`): the indexed matching gives what matching each
word in turn gives — whole words and phrases of spaced scripts (Latin, accented or not)
case-insensitively, Chinese, Japanese and Korean as substrings — and the cached tokens are
the tokens."""

from __future__ import annotations

import re
import unicodedata

import pytest

from gitdream.dream import lexicons
from gitdream.dream.lexicons import Cues, Lexicon

TEXTS = [
    "",
    "   ",
    "Lesson learned: always run the smoke test before a deploy.",
    "lessons-learned-today.md is a file, not a lesson",
    "Don't forget: the cache expires after 10 min, so make sure to warm it.",
    "DO NOT push on Fridays; we decided that because of on-call load.",
    "Note that it only works with --dry-run.",
    "部署前必须先在预发布环境跑一遍冒烟测试，因为回滚需要上一个镜像标签。",
    "배운 점: 배포 전에 반드시 테스트를 해야 한다.",
    "テストの後片付けには専用の関数を使うこと。",
    "ﾃｽﾄ 全角ＡＢＣ and “quoted” words’ tails",
    "I'm checking the inbox now; 3 unread, still suspended (23h remaining).",
    "Key finding — the root cause was a stale lock; workaround: remove it.",
    "how to rebase: first fetch, then rebase, until it is clean",
    "* **Rule:** never edit `MEMORY.md` by hand",
    "교훈",
    "결정했다",
    "—Actually, turns out it was wrong.",
    "Corrección: los demás clientes nunca reciben más de diez correos.",
    "Das muss man wissen: nie ohne Backup.",
]


def _tokens(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKC", text).casefold().replace("’", "'")
    return re.findall(r"[^\W_]+(?:['./-][^\W_]+)*", folded)


def _dense(word: str) -> bool:
    return any(
        ch == "。"
        or any(script in unicodedata.name(ch, "") for script in ("CJK", "HANGUL", "HIRAGANA", "KATAKANA"))
        for ch in word
    )


def _reference(words: tuple[str, ...]):
    """Each word in turn: a phrase of a spaced script where its tokens occur in a row (one
    count per position), a Chinese, Japanese or Korean word as a substring of the NFKC text."""
    phrases = [tuple(_tokens(w)) for w in words if not _dense(w) and _tokens(w)]
    dense = [unicodedata.normalize("NFKC", w) for w in words if _dense(w)]

    def hits(tokens: list[str], first_only: bool = False) -> int:
        positions = range(min(1, len(tokens))) if first_only else range(len(tokens))
        return sum(1 for i in positions if any(tuple(tokens[i : i + len(p)]) == p for p in phrases))

    def count(text: str) -> int:
        return hits(_tokens(text)) + sum(text.count(w) for w in dense)

    def starts(text: str) -> bool:
        head = text.lstrip(" \t*_`>\"'“‘「『(-–—:：,.、")[:40]
        if phrases and head[:1].isalnum() and hits(_tokens(head), first_only=True):
            return True
        return any(head.startswith(w) for w in dense)

    def ends(text: str) -> bool:
        tail = text.rstrip(" \t.。!！?？)）\"'”’")
        return any(tail.endswith(w.rstrip("。")) for w in dense if w.rstrip("。"))

    return count, starts, ends


@pytest.mark.parametrize("name", sorted(vars(Cues())))
def test_indexed_matching_equals_matching_each_word(name: str) -> None:
    lexicon: Lexicon = getattr(Cues(), name)
    if not lexicon.words:
        lexicon = Lexicon(["how to", "ＡＢＣ", "rule", "cache expires", "교훈", "こと。", "x", "más", "ﾃｽﾄ"])
    count, starts, ends = _reference(lexicon.words)
    for text in TEXTS + [w for w in lexicon.words[:40]]:
        assert lexicon.count(text) == count(text), (name, text)
        assert lexicon.search(text) == (count(text) > 0), (name, text)
        assert lexicon.starts(text) == starts(text), (name, text)
        assert lexicon.ends(text) == ends(text), (name, text)


def test_a_word_that_is_ascii_once_normalised_is_still_found_in_ascii_text() -> None:
    # a text of ASCII alone skips the substring scan only when no word can match it
    lexicon = Lexicon(["ＡＢＣ"])  # full-width: NFKC makes it "ABC"
    assert lexicon.search("the ABC of it") and lexicon.count("ABC ABC") == 2


def test_cached_tokens_are_the_tokens() -> None:
    for text in TEXTS:
        assert lexicons._tokens(text) == tuple(_tokens(text))
        assert lexicons._tokens(text) == lexicons._tokens.__wrapped__(text)
