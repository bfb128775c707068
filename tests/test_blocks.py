"""Managed blocks: idempotent rewrites, outside bytes kept, malformed markers rejected."""

from __future__ import annotations

import pytest

from gitdream.errors import BlockError
from gitdream.text import blocks

HUMAN = "# Title\n\nHuman text.\n"


def test_append_when_missing_keeps_every_byte_before() -> None:
    new = blocks.replace(HUMAN, "facts", "- one\n")
    assert new.startswith(HUMAN)
    assert new == HUMAN + "\n<!-- gitdream:begin facts -->\n- one\n<!-- gitdream:end facts -->\n"


def test_replace_is_idempotent_and_keeps_outside_bytes() -> None:
    text = "before\r\n<!-- gitdream:begin facts -->\r\nold\r\n<!-- gitdream:end facts -->\r\nafter  \r\n"
    once = blocks.replace(text, "facts", "new 1\nnew 2\n")
    assert (
        once
        == "before\r\n<!-- gitdream:begin facts -->\r\nnew 1\r\nnew 2\r\n<!-- gitdream:end facts -->\r\nafter  \r\n"
    )
    assert blocks.replace(once, "facts", "new 1\nnew 2\n") == once
    assert blocks.outside(once) == blocks.outside(text)


def test_append_to_empty_and_unterminated_files() -> None:
    assert blocks.replace("", "x", "a") == "<!-- gitdream:begin x -->\na\n<!-- gitdream:end x -->\n"
    assert (
        blocks.replace("no newline", "x", "")
        == "no newline\n\n<!-- gitdream:begin x -->\n<!-- gitdream:end x -->\n"
    )


def test_get_and_multiple_blocks() -> None:
    text = blocks.replace(blocks.replace(HUMAN, "a", "A\n"), "b", "B\n")
    assert blocks.get(text, "a") == "A\n"
    assert blocks.get(text, "b") == "B\n"
    assert blocks.get(text, "c") is None
    assert [b.name for b in blocks.parse(text)] == ["a", "b"]
    changed = blocks.replace(text, "a", "A2\n")
    assert blocks.get(changed, "b") == "B\n"


def test_markers_inside_code_fences_are_text() -> None:
    text = "```\n<!-- gitdream:begin demo -->\n```\n"
    assert blocks.parse(text) == []
    assert blocks.replace(text, "demo", "x\n").startswith(text)


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("a\n<!-- gitdream:begin x -->\nb\n", 2, "begins but never ends"),
        ("<!-- gitdream:end x -->\n", 1, "without a matching begin"),
        (
            "<!-- gitdream:begin x -->\n<!-- gitdream:begin y -->\n<!-- gitdream:end y -->\n<!-- gitdream:end x -->\n",
            2,
            "cannot nest",
        ),
        (
            "<!-- gitdream:begin x -->\n<!-- gitdream:end x -->\n<!-- gitdream:begin x -->\n<!-- gitdream:end x -->\n",
            3,
            "a second block named 'x'",
        ),
        ("<!-- gitdream:begin x -->\n<!-- gitdream:end y -->\n", 2, "while block 'x'"),
        ("text <!-- gitdream:begin x --> inline\n", 1, "malformed gitdream marker"),
        ("<!-- gitdream:begin -->\n", 1, "malformed gitdream marker"),
        ("<!-- gitdream:bgin x -->\n", 1, "malformed gitdream marker"),
    ],
)
def test_malformed_markers_are_errors_naming_the_line(text: str, line: int, fragment: str) -> None:
    with pytest.raises(BlockError) as info:
        blocks.replace(text, "x", "new\n", where="agents/ops/agent.md")
    assert info.value.line == line
    assert info.value.message.startswith(f"agents/ops/agent.md: line {line}: ")
    assert fragment in info.value.message
    assert info.value.hint


def test_content_may_not_contain_markers() -> None:
    with pytest.raises(BlockError):
        blocks.replace(HUMAN, "x", "<!-- gitdream:end x -->\n")


def test_non_ascii_content_round_trips() -> None:
    text = blocks.replace("# メモ\n", "facts", "東京 🚀 Привет\n")
    assert blocks.get(text, "facts") == "東京 🚀 Привет\n"


def test_markers_quoted_in_inline_code_are_text() -> None:
    """Regression test: the agent.md template quoted the markers in a code span, and every
    `gitdream check` of a new agent failed."""
    text = "Text between `<!-- gitdream:begin ... -->` and ``<!-- gitdream:end x -->`` is ours.\n"
    assert blocks.parse(text) == []
    assert blocks.replace(text, "x", "a\n").startswith(text)
    with pytest.raises(BlockError):
        blocks.parse("`quoted` then <!-- gitdream:begin -->\n")
