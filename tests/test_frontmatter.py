"""Front matter: detection, splitting, and the guards of the safe YAML parse."""

from __future__ import annotations

import pytest

from gitdream.text import frontmatter
from gitdream.text.frontmatter import FrontMatterError


def test_find_returns_none_without_opening_line() -> None:
    assert frontmatter.find("# title\n---\nx: 1\n---\n") is None
    assert frontmatter.find("") is None


def test_split_offsets_and_body() -> None:
    text = "---\nname: ops\n---\n# ops\n"
    found, body = frontmatter.split(text)
    assert found is not None
    assert text[found.start : found.end] == "---\nname: ops\n---"
    assert found.yaml_text(text) == "name: ops\n"
    assert body == "# ops\n"
    assert found.end_line == 3


def test_split_accepts_crlf_bom_and_dots_closing() -> None:
    text = "\ufeff---\r\nname: ops\r\n...\r\nbody\r\n"
    found, body = frontmatter.split(text)
    assert found is not None and found.start == 1
    assert body == "body\r\n"
    assert frontmatter.parse_yaml(found.yaml_text(text)) == {"name": "ops"}


def test_unterminated_front_matter_is_an_error_not_a_guess() -> None:
    with pytest.raises(FrontMatterError) as info:
        frontmatter.find("---\nname: ops\n# title\n")
    assert info.value.line == 1
    assert "never closed" in info.value.message


def test_load_parses_mapping() -> None:
    data, body = frontmatter.load("---\nname: ops\ntype: note\n---\n\nKeep.\n")
    assert data == {"name": "ops", "type": "note"}
    assert body == "\nKeep.\n"


def test_invalid_yaml_names_the_file_line() -> None:
    text = "---\nname: ops\ndescription: Use it: when needed\n---\n"
    with pytest.raises(FrontMatterError) as info:
        frontmatter.load(text)
    assert info.value.line == 3
    assert "not valid YAML" in info.value.message


def test_alias_is_refused_so_no_billion_laughs() -> None:
    bomb = "---\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n---\n"
    with pytest.raises(FrontMatterError) as info:
        frontmatter.load(bomb)
    assert "alias" in info.value.message
    assert info.value.line == 3


def test_oversized_front_matter_is_refused_before_parsing() -> None:
    text = "---\n" + "k: " + "x" * (frontmatter.MAX_BYTES + 10) + "\n---\n"
    with pytest.raises(FrontMatterError, match="larger than"):
        frontmatter.load(text)


def test_deep_nesting_is_refused() -> None:
    depth = frontmatter.MAX_DEPTH + 5
    text = "---\nk: " + "[" * depth + "]" * depth + "\n---\n"
    with pytest.raises(FrontMatterError, match="deeper"):
        frontmatter.load(text)


def test_unsafe_tags_are_not_constructed() -> None:
    with pytest.raises(FrontMatterError):
        frontmatter.load("---\nx: !!python/object/apply:os.system ['true']\n---\n")
