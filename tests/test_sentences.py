"""Sentences of a line of text in any script (gitdream.text.sentences)."""

from __future__ import annotations

import pytest

from gitdream.text.sentences import join, split


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("One. Two! Three?", ["One.", "Two!", "Three?"]),
        (
            "A survey (Wu et al. 2025, arXiv) covers it. Key point: B.",
            ["A survey (Wu et al. 2025, arXiv) covers it.", "Key point: B."],
        ),
        ("Use e.g. A for it. Then B.", ["Use e.g. A for it.", "Then B."]),
        ("Ask J. Smith first. Then deploy.", ["Ask J. Smith first.", "Then deploy."]),
        ("先备份。再部署！可以吗？", ["先备份。", "再部署！", "可以吗？"]),
        ("バックアップする。デプロイする。", ["バックアップする。", "デプロイする。"]),
        ("백업한다. 배포한다.", ["백업한다.", "배포한다."]),  # Korean: Latin stops before Hangul
        ("version 3.2 is out. next one", ["version 3.2 is out. next one"]),  # no capital: not an end
        ("Это правило. Второе правило.", ["Это правило.", "Второе правило."]),
        (
            'He said: "Proofs show custody." Intent is separate.',
            ['He said: "Proofs show custody."', "Intent is separate."],
        ),
        (
            "他说「先备份。」然后部署。",
            ["他说「先备份。」", "然后部署。"],
        ),  # the closing quote stays with its sentence
    ],
)
def test_split(text: str, parts: list[str]) -> None:
    assert split(text) == parts


def test_join_puts_no_space_after_a_full_width_stop() -> None:
    assert join(["先备份。", "再部署。", "Then ship."]) == "先备份。再部署。Then ship."
    assert join(["One.", "Two."]) == "One. Two."


def test_split_is_linear_in_a_long_text() -> None:
    text = "(" + "Word. Next. " * 20000 + ")"
    assert len(split(text)) == 1  # one parenthesis around it all, never rescanned
    assert len(split(text[:-1])) == 40000  # never closed: it encloses nothing


def test_a_parenthesis_never_closed_does_not_swallow_the_rest_of_the_message() -> None:
    text = "I am opinionated (see our chat. I have little Python experience. Push back when I am wrong."
    assert split(text) == [
        "I am opinionated (see our chat.",
        "I have little Python experience.",
        "Push back when I am wrong.",
    ]


def test_a_stray_closing_bracket_does_not_open_a_later_parenthesis() -> None:
    text = "a) First check the logs. Then (if needed. really) restart. Done."
    assert split(text) == ["a) First check the logs.", "Then (if needed. really) restart.", "Done."]
