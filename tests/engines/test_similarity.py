"""The similarity measure and index, and grapheme-safe clipping."""

from __future__ import annotations

import random

from gitdream.text.clip import clip
from gitdream.text.similarity import ShingleIndex, Vocabulary, jaccard, normalise, shingles


def test_normalise_ignores_case_width_and_punctuation() -> None:
    assert normalise("**Ｄｅｐｌｏｙ**:  NOW!") == "deploy now"
    assert normalise("部署，立刻。") == "部署 立刻"


def test_cjk_uses_bigrams_and_latin_trigrams() -> None:
    assert shingles("东京的") == {"东京", "京的"}
    assert shingles("ab") == {" ab", "ab "}
    assert shingles("→ ✓") == {"→ ✓"}


def test_jaccard_bounds() -> None:
    assert jaccard("same text", "Same  text!") == 1.0
    assert jaccard("completely different", "无关的句子") == 0.0


def test_index_finds_exactly_what_a_full_scan_finds() -> None:
    rng = random.Random(7)
    words = [
        "deploy",
        "staging",
        "cache",
        "build",
        "test",
        "rollback",
        "tag",
        "image",
        "night",
        "batch",
        "server",
        "slow",
        "fast",
    ]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(2, 7))) for _ in range(150)]
    for threshold in (0.3, 0.6, 0.82, 1.0):
        vocabulary = Vocabulary()
        for text in texts:
            vocabulary.count(text)
        vocabulary.freeze()
        index: ShingleIndex[int] = ShingleIndex(vocabulary, threshold)
        stored: list[tuple[int, str]] = []
        for number, text in enumerate(texts):
            match = index.best(text)
            scores = [(jaccard(text, other), -key) for key, other in stored]
            best = max(scores, default=None)
            if best is None or best[0] < threshold - 1e-12:
                assert match is None
                index.add(number, text)
                stored.append((number, text))
            else:
                assert match is not None
                assert abs(match.score - best[0]) < 1e-9 and match.key == -best[1]


def test_clip_keeps_short_text_and_counts_the_ellipsis() -> None:
    assert clip("short", 10) == "short"
    assert clip("alpha beta gamma", 15) == "alpha beta…"
    words = clip("word " * 100, 52)
    assert words.endswith(" word…") and len(words) <= 52


def test_clip_never_splits_surrogates_or_joiners() -> None:
    lone = "ab\ud83d\ude00cd"  # an escaped pair, as JSON can give
    assert clip(lone, 4) == "ab…"
    assert clip("x👍🏽y" * 5, 3) == "x…"
    assert clip("ab🇯🇵🇯🇵", 4) == "ab…"
    assert clip("abcdef🇯🇵🇯🇵cd", 9) == "abcdef🇯🇵…"


def test_clip_never_keeps_part_of_a_token() -> None:
    """Regression test: a 400-character fact ending inside a long key ("…eyJhbGciOiJIUzI1Ni
    IsInR5cCI6IkpXVCJ9.eyJzdWIiOi…") kept a prefix the secret scanner could not recognise
    (a JWT needs both dots), so part of the secret was committed."""
    jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJ" + "x" * 200 + ".sig"
    assert clip("prose " * 50 + jwt, 400) == ("prose " * 50).rstrip() + "…"
    assert clip(jwt, 60) == "…"
    assert clip("see https://example.com/" + "a" * 100, 50) == "see…"
    # scripts without spaces are still cut anywhere, and mixed text before an ASCII run
    assert clip("部署前必须先在预发布环境跑一遍冒烟测试" * 3, 10) == "部署前必须先在预发…"
    assert clip("部署v2.3.4-rc1的时候", 8) == "部署…"
