from datetime import date

import pytest

from gitdream.dream.noise import filter_noise, noise_rule
from gitdream.dream.readers import read_source
from gitdream.units import Entry
from tests.helpers import SHARED, deadline


def entry(text: str, line: int = 1, kind: str = "log", role: str | None = None) -> Entry:
    return Entry("m.md", line, line, text, date(2026, 8, 20), (), kind, role)


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        # seed 004 §1.1: the exact lines the raw memory held
        (
            "- [2026-08-20] [SYSTEM HEARTBEAT] → 🔧 [TOOL_CALL] Bash (ID: toolu_01RsQ3gh5niCFyUZMFZj2hxF)",
            "tool_call",
        ),
        ("- [2026-08-18] [SYSTEM HEARTBEAT] → 🔧 [TOOL_CALL] Bash (ID: toolu_01M1t4...)", "tool_call"),
        ("🔧 [TOOL_CALL] Read", "tool_call"),
        ("[TOOL_RESULT]", "tool_call"),
        ("toolu_01RsQ3gh5niCFyUZMFZj2hxF", "tool_call"),
        ("  call_9fJ2kLmN0pQ  ", "tool_call"),
        ("(ID: call_abc123def456)", "tool_call"),
        ("[SYSTEM HEARTBEAT]", "heartbeat"),
        ("- [2026-08-20] [SYSTEM HEARTBEAT] →", "heartbeat"),
        ("HEARTBEAT_OK", "heartbeat"),
        ("heartbeat_ok.", "heartbeat"),
        ("- [heartbeat]", "heartbeat"),
        ("Heartbeat", "heartbeat"),
        ("- [2026-08-20] [SYSTEM HEARTBEAT] → (no output)", "heartbeat"),
        ("- [2026-03-01]", "empty"),
        ("- [2026-03-01 09:30] → ", "empty"),
        ("→ ", "empty"),
        ("->", "empty"),
        ("- ", "empty"),
        ("**", "empty"),
        ("(no output)", "empty"),
        ("- (No Content)", "empty"),
        ("(empty)", "empty"),
        ("NO_REPLY", "empty"),
        ("- [ ]", "empty"),
        ("```\n(no output)\n```", "empty"),
    ],
)
def test_noise_rule_drops_only_certain_noise(text: str, rule: str) -> None:
    assert noise_rule(text) == rule


@pytest.mark.parametrize(
    "text",
    [
        "结果甲甲甲甲甲",  # seed 004 §5.1: a 7-character Chinese result is a whole record
        "- [2026-08-20] 结果甲甲甲甲甲",
        "- [2026-08-20] [TASK from ceo] → ..._global/ 下不新增 `callback-*` 目录。",
        "済み",
        "好",
        "ok",
        "a",
        "42",
        "✅",
        "👍",
        "- [2026-03-01] [deploy]",  # a bare tag is a statement
        "🔧 [TOOL_CALL] Bash fixed the flaky test",  # a tool call plus words: kept whole
        "- did the deploy\n  🔧 [TOOL_CALL] Bash (ID: toolu_01RsQ3gh5niCFyUZMFZj2hxF)",
        "HEARTBEAT_OK but the disk is 95% full",
        "Heartbeat ~00:33 UTC",
        "call_me_maybe",  # not an id (no digit)
        "the heartbeat monitor flapped",
        "(no output) from the cron job, which is the bug",
        "$",
    ],
)
def test_noise_rule_keeps_anything_of_substance(text: str) -> None:
    assert noise_rule(text) is None


def test_filter_noise_keeps_order_and_counts_per_rule() -> None:
    entries = [
        entry("- kept one", 1),
        entry(
            "- [2026-08-20] [SYSTEM HEARTBEAT] → 🔧 [TOOL_CALL] Bash (ID: toolu_01RsQ3gh5niCFyUZMFZj2hxF)", 2
        ),
        entry("HEARTBEAT_OK", 3, "transcript", "assistant"),
        entry("结果甲甲甲甲甲", 4),
        entry("(no output)", 5),
        entry("[SYSTEM HEARTBEAT]", 6),
        entry("- kept two", 7),
    ]
    kept, counts = filter_noise(entries)
    assert [e.start for e in kept] == [1, 4, 7]
    assert kept[1].text == "结果甲甲甲甲甲"
    assert counts == {"tool_call": 1, "heartbeat": 2, "empty": 1}
    assert filter_noise([]) == ([], {})
    assert filter_noise(iter(entries[:1])) == ([entries[0]], {})


def test_filter_noise_never_drops_for_length() -> None:
    """Seed 004 §5.1: a length threshold lost a whole Chinese record; no rule may use length."""
    short = [entry(t, n) for n, t in enumerate(["甲", "乙丙", "はい", "да", "ja", "x", "1", "é"], start=1)]
    kept, counts = filter_noise(short)
    assert kept == short and counts == {}


REAL = SHARED / "realdata"


@pytest.mark.skipif(not REAL.is_dir(), reason=f"real-data corpus not found at {REAL}")
def test_filter_noise_drops_nothing_from_real_logs_and_transcripts() -> None:
    """The real corpus holds no certain noise: a rule that drops any of it is too eager."""
    paths = [
        *sorted(REAL.glob("KitTheFox123__workspace/memory/2026-*.md")),
        *sorted(REAL.glob("palimondo__BookMinder/claude-dev-log-diary/day-*.md")),
        *sorted(REAL.glob("DRMacIver__claude-reliability/**/*.jsonl")),
    ]
    assert paths
    total = 0
    for path in paths:
        kind = "transcript" if path.suffix == ".jsonl" else "log"
        result = read_source(
            path.name, path.read_bytes(), kind=kind, fallback_date=None, max_file_bytes=10**7
        )
        kept, counts = filter_noise(result.entries)
        dropped = [e.text for e in result.entries if e not in kept]
        if "BookMinder" in str(path):
            # A pasted Claude Code terminal session: only its tool-call lines and empty
            # results are noise, and every dropped entry holds nothing else.
            assert set(counts) <= {"tool_call", "empty", "tool_result", "terminal"}, counts
            marks = ("⏺", "⎿", "※ Tip:", "Welcome to Claude Code")
            assert all(any(mark in text for mark in marks) for text in dropped), dropped[:5]
        else:
            assert counts == {}, (path, dropped[:5])
        total += len(kept)
    assert total > 500


@pytest.mark.parametrize("filler", [" ", "\t", " \u3000"])
def test_noise_rule_is_linear_in_long_whitespace(filler: str) -> None:
    """Regression test: the tool-call id pattern began with optional `\\(?\\s*`, so a long
    run of spaces (an indented dump in a log) was rescanned from each of its positions."""
    text = "- [2026-03-01] output:" + filler * 200_000 + "done"
    with deadline(5, "noise_rule on 200 k spaces"):
        assert noise_rule(text) is None
        assert noise_rule("-" + filler * 200_000 + "(ID: toolu_01RsQ3gh5niCFyUZMFZj2hxF)") == "tool_call"


def test_claude_code_terminal_tool_lines_are_noise() -> None:
    """Regression test: a pasted Claude Code terminal session turned `⏺ Read Todos` and
    `⎿ (Todo list is empty)` lines into facts "seen 5 times"."""
    from gitdream.dream.noise import noise_rule

    assert noise_rule("⏺ Read Todos") == "tool_call"
    assert noise_rule("⏺ Bash(cd /repo && pytest -q)\n  ⎿  (No content)") == "tool_call"
    assert noise_rule("⎿ (Todo list is empty)") == "empty"
    assert noise_rule("⏺ I'll read the failing test first.") is None
    assert noise_rule("⏺ Bash(pytest) showed 3 failures in the parser") is None


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("⏺ Call(Check project status)…", "tool_call"),
        ("⎿ Read(README.md)… ⎿ Read(TODO.md)… ⎿ Done (3 tool uses · 0s)", "tool_result"),
        ("⎿ Error: (eval):1: command not found: pytest", "tool_result"),
        ("⎿ ===== test session starts =====\n  ⎿ platform darwin -- Python 3.13.0", "tool_result"),
        # real data (BookMinder): the output's further lines are indented, without the glyph
        (
            "  ⎿ \xa0Error: ===== test session starts =====\n     platform darwin -- Python 3.13.0\n"
            "     rootdir: /Users/<USER>/Developer/BookMinder\n     collected 0 items",
            "tool_result",
        ),
        ("⏺ Read(requirements.txt)…\n  ⎿ Read 15 lines (ctrl+r to expand)", "tool_call"),
        (
            "⏺ Call(Create commit)…\n  ⎿ Bash(git add -A)…\n  ⎿ Bash(git status)…\n  ⎿ Done (2 tool uses · 2.1s)",
            "tool_call",
        ),
        ("※ Tip: Hit Enter to queue up additional messages while Claude is working.", "terminal"),
        ("claude ╭────────╮ │ ✻ Welcome to Claude Code research preview! │ │ /help for help │", "terminal"),
        ("╭────────╮\n╰────────╯", "empty"),
    ],
)
def test_claude_code_terminal_output_and_chrome_are_noise(text: str, rule: str) -> None:
    """Regression test: a pasted Claude Code session (real data: BookMinder's diary) turned
    its welcome banner, tips, `⏺ Call(…)` lines and `⎿` tool output into facts."""
    assert noise_rule(text) == rule


@pytest.mark.parametrize(
    "text",
    [
        "⏺ Let me activate the virtual environment first and then run the tests:",
        "⏺ Read the notes\n⎿ Done",  # the assistant's words and a result: kept whole
        "⎿ Done\n⏺ Now the parser is fixed: the bug was the BOM.",  # a result, then the words
        "⎿ Done\nThe parser is fixed: the bug was the BOM.",  # not indented: not the output
        "⏺ Bash(pytest)\n  ⎿ 3 failed\nThe parser drops the BOM.",  # words after the output
        "the ⎿ glyph marks tool output in Claude Code",
        "we should print a Welcome to Claude Code banner",
        "※ Tip: rotate the keys monthly\nand tell the team",
    ],
)
def test_claude_code_prose_is_kept(text: str) -> None:
    assert noise_rule(text) is None


@pytest.mark.parametrize(
    "text",
    [
        # an edit's written text is the agent's own writing, not certain noise (issue #14)
        "  ⎿  Updated CLAUDE.md with 2 additions\n"
        "     175  - Each commit should be small, focused, and preserve working state (all tests passing).",
        "  ⎿  Updated 노트.md with 1 addition\n     3  - 배포 전에는 반드시 스모크 테스트를 실행해야 한다",
        # a tool's message may state a limit of the tool
        "  ⎿  Error: File content (56293 tokens) exceeds maximum allowed tokens (25000). Please use offset and\n"
        "     limit parameters to read specific portions of the file.",
        # prose at the glyph's indent after a tool's output is the assistant's, not the output's
        "  ⎿  Read 15 lines\n  The config file sets the retry limit to three attempts.",
    ],
)
def test_prose_inside_or_after_tool_output_is_not_noise(text: str) -> None:
    assert noise_rule(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "  ⎿  Updated pytest.ini with 2 additions\n     1  [pytest]\n     2  testpaths = specs",
        "  ⎿  Read 15 lines\n       ✓ It includes basic metadata",
    ],
)
def test_tool_blocks_without_prose_are_still_noise(text: str) -> None:
    assert noise_rule(text) == "tool_result"


@pytest.mark.parametrize(
    "text",
    [
        "⏺ Update(README.md)…",
        '⏺ Bash(cd /repo && git commit -m "Improve README and test configuration…',  # cut by the terminal
    ],
)
def test_an_edit_call_and_a_call_the_terminal_cut_are_tool_calls(text: str) -> None:
    assert noise_rule(text) == "tool_call"
    assert noise_rule("⏺ Update the README with the new limits…") is None  # the word, not the tool
