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
        (
            "So run `ALTER TABLE ... ADD COLUMN` first. Then load.",
            ["So run `ALTER TABLE ... ADD COLUMN` first.", "Then load."],
        ),  # a stop inside a code span is not an end
        (
            "Zuerst `pg_repack -t x. Y` starten. Dann prüfen.",
            ["Zuerst `pg_repack -t x. Y` starten.", "Dann prüfen."],
        ),
        (
            "A ` never closed. Next one.",
            ["A ` never closed.", "Next one."],
        ),  # a lone backtick encloses nothing
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


def test_split_finds_code_spans_in_one_pass() -> None:
    """Backtick runs of ever longer lengths, none with a partner: a regular expression
    pairing them rescanned the rest of the text from each (minutes for 80 000 characters)."""
    text = "".join("`" * n + "word. Next " for n in range(1, 400))
    assert len(split(text)) == 400  # no run has a partner: every stop ends a sentence
    assert len(split("`x. Y` " * 20000)) == 1  # paired runs: no stop is outside a span


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


@pytest.mark.parametrize(
    ("parts", "line"),
    [
        (
            ["Detector based on quorum theory.", "Chain class: hash chains", "Detector: overlap"],
            "Detector based on quorum theory. Chain class: hash chains; Detector: overlap",
        ),
        (["Never retry a post!", "check first"], "Never retry a post! check first"),
        (["Steps:", "back up;", "migrate,", "deploy;"], "Steps: back up; migrate, deploy"),
        (["部署前必须迁移。", "先备份", "再运行"], "部署前必须迁移。先备份；再运行"),
        (["注意：", "先备份！", "再运行？"], "注意：先备份！再运行？"),
        (["デプロイ前に移行する。", "バックアップ"], "デプロイ前に移行する。バックアップ"),
        (["배포 전에 마이그레이션한다.", "백업", "실행"], "배포 전에 마이그레이션한다. 백업; 실행"),
        (['He said "stop."', "then left"], 'He said "stop." then left'),
    ],
)
def test_join_clauses_never_doubles_punctuation(parts: list[str], line: str) -> None:
    """Regression test: sub-items were joined with "; " after any text, so a fact read
    "… quorum intersection theory.; AgentChain class: …"."""
    from gitdream.text.sentences import join_clauses

    joined = join_clauses(parts)
    assert joined == line
    for doubled in (".;", "!;", "?;", ";;", "。；", "！；", "：；", ":;"):
        assert doubled not in joined


def test_sub_items_of_an_entry_join_without_doubled_punctuation() -> None:
    from gitdream.engines.offline import strip_layout

    text = "- `fork.py` — Fork detector on quorum theory.\n  - Chain class: hash chains\n  - Scores 0.9 → keep.\n  - `--demo` flag"
    assert (
        strip_layout(text)
        == "- `fork.py` — Fork detector on quorum theory. Chain class: hash chains; Scores 0.9 → keep. `--demo` flag"
    )
    assert strip_layout("部署规则。\n  - 先备份\n  - 再迁移") == "部署规则。先备份；再迁移"
