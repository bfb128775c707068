"""Claude Code's terminal pasted into a log (issue #14): which tool blocks hold prose of the
agent's own or a tool's message, and what that prose is."""

from __future__ import annotations

import pytest

from gitdream.dream.terminal import block_kind, prose

README_EDIT = (
    "  ⎿  Updated README.md with 2 additions\n"
    "     29     python -m venv venv\n"
    "     30     source venv/bin/activate\n"
    "     31     ```\n"
    "     32     \n"
    "     33     > **IMPORTANT**: You must activate the virtual environment in each new terminal session before\n"
    "         running any commands for this project.\n"
    "     34 \n"
    "     35  3. Install dependencies"
)


def test_an_edit_block_yields_the_prose_it_wrote_without_gutter_or_code() -> None:
    assert block_kind(README_EDIT) == "edit"
    assert prose(README_EDIT) == (
        "**IMPORTANT**: You must activate the virtual environment in each new terminal session before "
        "running any commands for this project."
    )


def test_a_line_shown_twice_keeps_its_new_text() -> None:
    text = (
        "  ⎿  Updated CLAUDE.md with 1 addition and 1 removal\n"
        "     5  - Scientific approach - Form clear hypotheses before implementation\n"
        "     5  - Scientific approach - Think hard and form a clear hypothesis before implementation\n"
        "     6  - Each commit should be small, focused, and preserve working state"
    )
    assert prose(text) == (
        "Scientific approach - Think hard and form a clear hypothesis before implementation; "
        "Each commit should be small, focused, and preserve working state"
    )


def test_a_diffs_marker_line_is_not_written_text() -> None:
    """`\\ No newline at end of file` under a line number is the diff's marker, not the
    file's line: it neither joins the prose nor replaces the line shown with that number."""
    text = (
        "  ⎿  Updated docs/workflow.md with 2 additions and 1 removal\n"
        "     61  - Consider enabling stricter mypy checks once every function is annotated\n"
        "     61 \\ No newline at end of file\n"
        "     62  - Never bypass the hooks with SKIP=, fix the configuration instead\n"
        "     63 \\ No newline at end of file"
    )
    assert prose(text) == (
        "Consider enabling stricter mypy checks once every function is annotated; "
        "Never bypass the hooks with SKIP=, fix the configuration instead"
    )


@pytest.mark.parametrize(
    "text",
    [
        "  ⎿ Wrote 5 lines to pytest.ini\n     [pytest]\n     testpaths = specs\n     python_files = *_spec.py",
        "  ⎿ Wrote 6 lines to conftest.py\n     import sys\n     sys.path.insert(0, os.path.abspath(os.path.dirname(__file__)))",
        "  ⎿  Error: ============================= test session starts ======\n     rootdir: /Users/x/project",
        "  ⎿  Read 133 lines (ctrl+r to expand)",
    ],
)
def test_config_code_and_test_runs_hold_no_prose(text: str) -> None:
    assert prose(text) == ""


def test_a_tool_message_is_prose_even_after_another_result() -> None:
    text = (
        "  ⎿ \xa0Initializing…\n"
        "  ⎿ \xa0Error: File content (56293 tokens) exceeds maximum allowed tokens (25000). Please use offset\n"
        "     and limit parameters to read specific portions of the file."
    )
    assert block_kind(text) == "message"
    assert prose(text) == (
        "Error: File content (56293 tokens) exceeds maximum allowed tokens (25000). Please use offset "
        "and limit parameters to read specific portions of the file."
    )


@pytest.mark.parametrize(
    "text",
    [
        "  ⎿  Updated 설정.md with 1 addition\n     1  - 배포 전에는 반드시 백업 상태를 확인하고 로그를 남겨야 한다",
        "  ⎿  Updated 笔记.md with 1 addition\n     1  - 部署之前必须先确认备份状态并记录日志。",
        "  ⎿  Updated メモ.md with 1 addition\n     1  - デプロイの前に必ずバックアップの状態を確認すること。",
    ],
)
def test_written_prose_in_any_language(text: str) -> None:
    assert prose(text) and "⎿" not in prose(text) and not prose(text)[0].isdigit()


def test_what_is_not_a_tool_block() -> None:
    assert block_kind("⏺ I'll update the README next.") is None
    assert prose("- Never deploy on Fridays.") == ""
    assert block_kind("  ⎿  ☒ Add tests\n     ☐ Update docs") == "output"
