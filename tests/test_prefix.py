"""The agent.md prefix guard: pure text rules (docs/check.md)."""

from __future__ import annotations

import pytest

from gitdream.text.prefix import check_prefix, count, headings, parse_required

BEGIN = "<!-- gitdream:begin learned -->\n"
END = "<!-- gitdream:end learned -->\n"


def rules(text: str, **kwargs: object) -> list[str]:
    return [p.rule for p in check_prefix(text, **kwargs).problems]  # type: ignore[arg-type]


def test_h1_and_its_text_within_the_window_passes() -> None:
    text = "# ops\n\nKeeps the pipeline healthy.\n\n## Notes\n\n" + "x" * 5000 + "\n"
    result = check_prefix(text)
    assert result.ok
    assert [(s.name, s.start, s.end, s.line) for s in result.sections] == [("# ops", 0, 34, 1)]


ROLE = "## Role\n\n- Watch the pipeline and fix what breaks.\n"


def test_the_role_is_guarded_by_default() -> None:
    """Regression test for #17: `## Role` moved to characters 2280-2882 of agent.md and
    `gitdream check` said ok unless required_sections named it."""
    text = "# ops\n\nKeeps the pipeline healthy.\n\n## Notes\n\n" + "n" * 2200 + "\n\n" + ROLE
    result = check_prefix(text)
    (problem,) = result.problems
    assert problem.rule == "prefix-section"
    assert problem.message == f"section '## Role' ends at character {len(text) - 1}, past 2000"
    assert problem.hint.startswith("move it up or shorten what comes before it: it says what the agent does")
    assert 'required_sections = ["opening"]' in problem.hint
    assert [s.requirement for s in result.sections] == ["default", "role"]
    assert check_prefix(text, required_sections=["opening"]).ok
    assert rules(text, required_sections=["role"]) == ["prefix-section"]
    moved = "# ops\n\nKeeps the pipeline healthy.\n\n" + ROLE + "\n## Notes\n\n" + "n" * 2200 + "\n"
    assert check_prefix(moved).ok


@pytest.mark.parametrize(
    "heading",
    [
        "## Role",
        "## Your Role",
        "### Purpose",
        "## Core Responsibilities",
        "## Mission",
        "## Roles and duties",
        "## 역할",
        "## 역할 및 책임",
        "## 角色",
        "## 职责",
        "## 役割",
        "## 目的",
        "## Rôle",
        "## Aufgaben",
    ],
)
def test_headings_that_name_the_role_or_purpose_in_the_languages_of_the_material(heading: str) -> None:
    text = (
        "# ops\n\nKeeps the pipeline healthy.\n\n## Notes\n\n" + "n" * 2000 + f"\n\n{heading}\n\nThe job.\n"
    )
    assert rules(text) == ["prefix-section"], heading


@pytest.mark.parametrize(
    "heading", ["## Rolling deploys", "## Notes", "## Controller", "## Purposeful pauses"]
)
def test_other_headings_are_not_the_role(heading: str) -> None:
    text = "# ops\n\nKeeps the pipeline healthy.\n\n## Notes\n\n" + "n" * 2000 + f"\n\n{heading}\n\nText.\n"
    assert check_prefix(text).ok, heading


def test_a_role_section_includes_its_sub_headings() -> None:
    text = "# ops\n\nSummary.\n\n## Role\n\n### Inputs\n\n" + "i" * 2100 + "\n\n## Notes\n"
    (problem,) = check_prefix(text).problems
    assert problem.message == "section '## Role' ends at character 2138, past 2000"


def test_section_ending_past_the_window_names_offsets_and_fix() -> None:
    text = "# ops\n\n" + "a" * 2100 + "\n\n## Notes\n"
    result = check_prefix(text)
    (problem,) = result.problems
    assert problem.rule == "prefix-section"
    assert problem.text() == (
        "section '# ops' ends at character 2107, past 2000: move it up or shorten what comes before it"
    )
    assert (problem.start, problem.end, problem.line) == (0, 2107, 1)


def test_configured_section_example_from_the_issue() -> None:
    text = "# ops\n\n" + "a" * 2100 + "\n\n## Role\n\nWatch the pipeline.\n\n## Notes\n"
    (problem,) = check_prefix(text, required_sections=["## Role"]).problems
    assert problem.message == "section '## Role' ends at character 2137, past 2000"
    assert problem.hint == "move it up or shorten what comes before it"
    assert problem.line == 5


def test_section_end_is_its_last_non_blank_character() -> None:
    body = "# ops\n\n" + "a" * (2000 - 7)
    assert len(body) == 2000
    assert check_prefix(body + "\n\n\n\n## Notes\n").ok
    assert rules(body + "b\n## Notes\n") == ["prefix-section"]


def test_window_size_is_configurable() -> None:
    text = "# ops\n\n" + "a" * 100 + "\n"
    assert check_prefix(text, prefix_chars=107).ok
    assert rules(text, prefix_chars=106) == ["prefix-section"]


def test_front_matter_plus_first_body_section_for_subagents() -> None:
    text = "---\nname: ops\ndescription: short\n---\n\nYou are ops.\nBe calm.\n\n## Process\n\nlong\n"
    result = check_prefix(text)
    assert result.ok
    assert [(s.name, s.line) for s in result.sections] == [("front matter", 1), ("first body section", 6)]
    assert text[: result.sections[1].end].endswith("Be calm.")


def test_long_front_matter_fails_with_its_own_hint() -> None:
    text = "---\nname: ops\ndescription: " + "d" * 2100 + "\n---\nYou are ops.\n"
    problems = check_prefix(text).problems
    assert [p.rule for p in problems] == ["prefix-section", "prefix-section"]
    assert problems[0].message.startswith("the front matter ends at character 2131, past 2000")
    assert "description" in problems[0].hint


def test_body_starting_with_a_heading_uses_that_section() -> None:
    text = "---\nname: kit\n---\n## Every Session\n\nRead SOUL.md.\n\n## Memory\n" + "m" * 3000
    result = check_prefix(text)
    assert result.ok
    assert result.sections[1].name == "## Every Session"


def test_late_h1_is_not_the_opening() -> None:
    """An appended '# Persistent Agent Memory' chapter (real Claude Code subagents) is not
    required by the default rule: the opening is."""
    text = (
        "---\nname: x\n---\n\nYou review code.\n\n## Process\n\n"
        + "p" * 3000
        + "\n\n# Persistent Agent Memory\n"
    )
    result = check_prefix(text)
    assert result.ok
    assert [s.name for s in result.sections] == ["front matter", "first body section"]
    assert rules(text, required_sections=["default", "# Persistent Agent Memory"]) == ["prefix-section"]


def test_leading_html_comment_is_not_the_opening() -> None:
    text = "<!-- markdownlint-disable -->\n# ops\n\n" + "a" * 2100 + "\n"
    assert rules(text) == ["prefix-section"]


def test_setext_heading_is_a_heading() -> None:
    text = "Ops agent\n=========\n\nSummary.\n\nNotes\n-----\n\n" + "r" * 3000
    result = check_prefix(text)
    assert result.ok
    assert result.sections[0].name == "# Ops agent"
    assert [(h.level, h.text) for h in headings(text)] == [(1, "Ops agent"), (2, "Notes")]
    assert rules(text.replace("Notes\n-----", "Role\n----")) == ["prefix-section"]  # a setext role


def test_list_item_followed_by_dashes_is_no_heading() -> None:
    assert [h.text for h in headings("# t\n\n- item\n---\n")] == ["t"]


def test_headings_in_fenced_code_do_not_count() -> None:
    text = "# ops\n\n```md\n## Role\n```\n\n" + "a" * 2100 + "\n## Notes\n"
    assert rules(text) == ["prefix-section"]  # the opening; the fenced "## Role" is no section
    assert [h.text for h in headings(text)] == ["ops", "Notes"]


def test_required_heading_matches_case_and_spaces_insensitively() -> None:
    text = "# ops\n\n##   role  ##\n\nWatch.\n"
    result = check_prefix(text, required_sections=["## Role"])
    assert result.ok
    assert result.sections[0].line == 3


def test_required_heading_includes_its_subsections() -> None:
    text = "# ops\n\n## Role\n\n### Detail\n\n" + "d" * 2100 + "\n\n## Notes\n"
    assert rules(text, required_sections=["## Role"]) == ["prefix-section"]


def test_missing_required_section() -> None:
    (problem,) = check_prefix("# ops\n", required_sections=["## Role"]).problems
    assert problem.rule == "prefix-missing"
    assert problem.text() == (
        "required section '## Role' not found: add a '## Role' heading near the top, "
        "or change required_sections in gitdream.toml"
    )


def test_required_front_matter_must_exist() -> None:
    assert rules("# ops\n", required_sections=["front-matter"]) == ["prefix-missing"]
    assert check_prefix("---\na: 1\n---\n# ops\n", required_sections=["front-matter"]).ok


def test_empty_file_is_a_problem() -> None:
    assert rules("") == ["prefix-missing"]
    assert rules("\n\n  \n") == ["prefix-missing"]
    assert check_prefix("---\nname: x\n---\n").ok


def test_block_before_end_of_last_required_section_breaks_order() -> None:
    text = "# ops\n" + BEGIN + "- learned\n" + END + "The summary comes after the block.\n"
    (problem,) = check_prefix(text).problems
    assert problem.rule == "prefix-order"
    assert problem.message == (
        "managed block 'learned' starts at character 6 (line 2), before the end of "
        "section '# ops' at character 112"
    )
    assert problem.line == 2


def test_block_after_required_sections_is_fine_even_before_next_heading() -> None:
    text = "# ops\n\nSummary.\n\n" + BEGIN + "- learned\n" + END + "\n## Notes\n"
    assert check_prefix(text).ok


def test_block_content_does_not_extend_or_end_a_section() -> None:
    text = "# ops\n\nSummary.\n\n" + BEGIN + "## learned heading\n" + "x" * 3000 + "\n" + END
    result = check_prefix(text)
    assert result.ok
    assert result.sections[0].end == len("# ops\n\nSummary.")


def test_block_inside_front_matter_region_breaks_order() -> None:
    text = "---\n" + BEGIN + END + "name: x\n---\nBody.\n"
    assert "prefix-order" in rules(text)


def test_malformed_blocks_reported_and_order_not_judged() -> None:
    text = "# ops\n" + BEGIN + "Summary.\n"
    assert rules(text) == ["managed-block"]


def test_unterminated_front_matter_is_reported_and_read_as_body() -> None:
    result = check_prefix("---\nname: x\n\n# ops\nSummary.\n")
    assert [p.rule for p in result.problems] == ["front-matter"]


def test_utf16_counts_astral_characters_twice() -> None:
    text = "# ops\n\n" + "😀" * 1000 + "\n"
    assert count(text, "chars") == 1008
    assert count(text, "utf16") == 2008
    assert check_prefix(text).ok
    (problem,) = check_prefix(text, unit="utf16").problems
    assert problem.message == "section '# ops' ends at UTF-16 unit 2007, past 2000"
    assert check_prefix(text, unit="utf16", prefix_chars=2007).ok


def test_bmp_text_counts_the_same_in_both_units() -> None:
    text = "# опс — ツ\n\n" + "д" * 2000
    assert count(text, "chars") == count(text, "utf16")


def test_crlf_counts_two_characters_per_line_break() -> None:
    lf = "# ops\n" + "a\n" * 995 + "end\n"  # ends at character 1999
    crlf = lf.replace("\n", "\r\n")  # 996 more characters before its end
    assert check_prefix(lf).ok
    assert check_prefix(crlf).problems[0].message == "section '# ops' ends at character 2995, past 2000"


def test_bad_unit_and_bad_required_entry_are_value_errors() -> None:
    with pytest.raises(ValueError, match="unit"):
        check_prefix("# x\n", unit="bytes")
    with pytest.raises(ValueError, match="Purpose"):
        parse_required(["Purpose"])
    assert [r.kind for r in parse_required([])] == ["default", "role"]
    assert [r.kind for r in parse_required(["opening"])] == ["default"]
    assert [r.kind for r in parse_required(["role", "## Rules"])] == ["role", "heading"]
