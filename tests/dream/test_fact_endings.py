"""A fact ends where its statement ends: not on a colon introducing what it left out, not on
a line a terminal wrapped mid-clause (review §4.2). Small hand-written text, several scripts."""

from __future__ import annotations

from datetime import date

import pytest

from gitdream.dream import terminal
from gitdream.engines.offline import _closed, clean_text
from gitdream.units import Entry

LOG = "agents/ops/memory/logs/2026/03/2026-03-02.md"


def _clean(text: str, role: str | None = None) -> str:
    kind = "transcript" if role else "log"
    return clean_text(Entry(LOG, 1, text.count("\n") + 1, text, date(2026, 3, 2), (), kind, role), None)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        (
            "- The right way is to run the hooks by hand first, then stage the fixed files and commit:",
            "The right way is to run the hooks by hand first, then stage the fixed files and commit.",
        ),
        (
            "- 正确的做法是先手动运行钩子修复问题然后暂存修改过的文件再提交：",
            "正确的做法是先手动运行钩子修复问题然后暂存修改过的文件再提交。",
        ),
        (
            "- Suspension is NOT time-based, every failed attempt extends the ban. Need to either:",
            "Suspension is NOT time-based, every failed attempt extends the ban.",
        ),
    ],
)
def test_a_fact_never_ends_on_a_colon_introducing_what_it_left_out(text: str, fact: str) -> None:
    """Regression test: "… then stage the fixed files and commit:" — the command it
    introduced was another entry, and the fact ended on its colon."""
    assert _closed(_clean(text)) == fact


def test_a_line_a_terminal_wrapped_is_read_whole() -> None:
    """Regression test: a tool's warning wrapped after "to" gave a fact ending "… run:
    `pre-commit migrate-config` to"."""
    block = (
        "  ⎿  Error: [WARNING] the stage names of this config are deprecated and will be removed soon."
        " run: `tool migrate` to \n"
        "     automatically fix this.\n"
        "     [INFO] Installing environment for https://x.test/hooks.\n"
    )
    said = terminal.prose(block)
    assert said.endswith("run: `tool migrate` to automatically fix this."), said
    listed = "  ⎿  Done. The files were moved to the archive folder\n     Next step: Review them.\n"
    assert "moved Next" not in terminal.prose(listed)  # a capital opens a line of its own
