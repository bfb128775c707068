import codecs
import json
import random
from datetime import date
from pathlib import Path

import pytest

from gitdream.dream.decode import decode_lines, split_lines
from gitdream.dream.readers import ReadResult, read_markdown_log, read_source, read_transcript
from gitdream.dream.tags import files_entry, find_tags
from gitdream.text.prose import segments
from gitdream.units import parse_entry_id
from tests.helpers import SHARED, deadline

FALLBACK = date(2020, 1, 1)
LOG = "agents/ops/memory/logs/notes.md"


def md(text: str, path: str = LOG, **kw: object) -> ReadResult:
    return read_markdown_log(path, text.encode("utf-8"), fallback_date=FALLBACK, **kw)  # type: ignore[arg-type]


def spans(result: ReadResult) -> list[tuple[int, int]]:
    return [(e.start, e.end) for e in result.entries]


def assert_exact(result: ReadResult, data: bytes, path: str = LOG) -> None:
    """The documented relation: an entry's text is its lines, joined, exactly."""
    lines = decode_lines(path, data).lines
    for entry in result.entries:
        assert 1 <= entry.start <= entry.end <= len(lines)
        assert entry.text == "\n".join(lines[entry.start - 1 : entry.end])
        assert entry.text.strip(), "no blank entries"
        assert lines[entry.start - 1].strip() and lines[entry.end - 1].strip()
        assert parse_entry_id(entry.id) == (path, entry.start, entry.end)


# --- Markdown: blocks -------------------------------------------------------------------


def test_markdown_items_and_paragraphs_are_entries_headings_are_context() -> None:
    text = (
        "# 2026-03-01\n"  # 1
        "\n"
        "A paragraph\n"  # 3
        "over two lines.\n"  # 4
        "\n"
        "## Deploys\n"  # 6
        "- first item\n"  # 7
        "- second item\n"  # 8
        "  continued\n"  # 9
        "lazily continued\n"  # 10
        "* third\n"  # 11
        "1. ordered\n"  # 12
        "2) ordered too\n"  # 13
        "\n"
        "### Deeper\n"  # 15
        "Para under deeper.\n"  # 16
        "## Sibling\n"  # 17
        "Last.\n"  # 18
    )
    result = md(text)
    assert spans(result) == [(3, 4), (7, 7), (8, 10), (11, 11), (12, 12), (13, 13), (16, 16), (18, 18)]
    contexts = [e.context for e in result.entries]
    assert contexts[0] == ("2026-03-01",)
    assert contexts[1] == ("2026-03-01", "Deploys")
    assert contexts[6] == ("2026-03-01", "Deploys", "Deeper")
    assert contexts[7] == ("2026-03-01", "Sibling")
    assert result.entries[2].text == "- second item\n  continued\nlazily continued"
    assert all(e.kind == "log" and e.role is None for e in result.entries)
    assert result.warnings == [] and result.dropped == {} and result.skipped is None
    assert_exact(result, text.encode())


def test_markdown_nested_items_stay_inside_their_top_level_item() -> None:
    text = (
        "- **Build** — fok-calibration.py\n"  # 1
        "  - Extracts 194 claims\n"  # 2
        "    - deeper still\n"  # 3
        "  - Computes staleness\n"  # 4
        "\n"
        "  An indented paragraph after a blank line belongs to the item.\n"  # 6
        "\n"
        "  1. nested ordered\n"  # 8
        "- next top-level item\n"  # 9
        "\n"
        "Not indented: a new paragraph.\n"  # 11
        "   - an item indented 3 starts its own entry\n"  # 12
        "     - its child\n"  # 13
    )
    result = md(text)
    assert spans(result) == [(1, 8), (9, 9), (11, 11), (12, 13)]
    assert_exact(result, text.encode())


def test_markdown_setext_headings_breaks_and_front_matter() -> None:
    text = (
        "---\n"  # 1 front matter
        "title: log\n"
        "---\n"  # 3
        "Title\n"  # 4
        "=====\n"  # 5
        "body one\n"  # 6
        "\n"
        "Section\n"  # 8
        "-------\n"  # 9
        "body two\n"  # 10
        "\n"
        "***\n"  # 12
        "- item\n"  # 13
        "---\n"  # 14: a break, not a setext underline under a list item
        "after\n"  # 15
    )
    result = md(text)
    assert spans(result) == [(6, 6), (10, 10), (13, 13), (15, 15)]
    assert result.entries[0].context == ("Title",)
    assert result.entries[1].context == ("Title", "Section")
    assert_exact(result, text.encode())


def test_markdown_atx_heading_variants() -> None:
    text = "#hashtag is a paragraph\n\n  ## Indented heading ##\nunder\n\n####### seven is text\n"
    result = md(text)
    assert spans(result) == [(1, 1), (4, 4), (6, 6)]
    assert result.entries[1].context == ("Indented heading",)
    assert result.entries[0].tags == ("hashtag",)


def test_markdown_fences_never_split_an_entry() -> None:
    text = (
        "- ran the migration:\n"  # 1
        "  ```sql\n"  # 2
        "  # not a heading\n"  # 3
        "\n"  # 4 blank inside the fence
        "- not an item\n"  # 5
        "  ```\n"  # 6
        "  and it worked\n"  # 7
        "Paragraph with code:\n"  # 8 (lazy continuation of the item)
        "\n"
        "A paragraph\n"  # 10
        "~~~~\n"  # 11 fence right under the paragraph
        "code\n"
        "~~~\n"  # 13 too short: does not close
        "\n"
        "~~~~~\n"  # 15 closes (longer is fine)
        "\n"
        "```\n"  # 17 a fence of its own
        "x\n"
        "```\n"  # 19
        "text right after the fence\n"  # 20
        "\n"
        "```inline``` is not a fence\n"  # 22
    )
    result = md(text)
    assert spans(result) == [(1, 8), (10, 15), (17, 20), (22, 22)]
    assert result.warnings == []
    assert_exact(result, text.encode())


def test_markdown_unterminated_fence_runs_to_the_end_with_a_warning() -> None:
    text = "before\n\n- item\n  ```\n  code\n\n# not a heading\n\n- not an item\n"
    result = md(text)
    assert spans(result) == [(1, 1), (3, 9)]
    assert result.warnings == [f"{LOG}:4: unterminated code fence runs to the end of the file"]
    assert_exact(result, text.encode())


def test_markdown_fence_indented_past_the_content_is_text() -> None:
    """Console logs hold `     ```` lines from cut-off tool output; they are not fences."""
    text = "  ⎿ Wrote 356 lines\n     ```\n     project/\n\n# Heading\nafter\n"
    result = md(text)
    assert spans(result) == [(1, 3), (6, 6)]
    assert result.entries[1].context == ("Heading",)
    assert result.warnings == []


def test_markdown_empty_and_blank_files() -> None:
    assert md("").entries == []
    assert md("\n\n   \n").entries == []
    assert md("# only a heading\n").entries == []


# --- Markdown: dates ------------------------------------------------------------------------


def test_markdown_date_precedence_prefix_then_file_name_then_heading_then_fallback() -> None:
    text = (
        "# 2026-02-01 log\n"
        "- [2026-03-01] own date\n"
        "- [2026-03-02 14:05] own date and time\n"
        "- [x] [2026-03-03] checkbox then date\n"
        "- [2026-02-30] impossible date\n"
        "- no date\n"
    )
    dated = md(text, path="memory/logs/2026/03/2026-03-09.md")
    assert [e.date for e in dated.entries] == [
        date(2026, 3, 1),
        date(2026, 3, 2),
        date(2026, 3, 3),
        date(2026, 3, 9),
        date(2026, 3, 9),
    ]
    undated_file = md(text, path="memory/logs/notes.md")
    assert [e.date for e in undated_file.entries][3:] == [date(2026, 2, 1), date(2026, 2, 1)]
    nested = md("# 2026-01-01\n## 2026-01-05\n### Deploys\n- x\n## Other\n- y\n")
    assert [e.date for e in nested.entries] == [date(2026, 1, 5), date(2026, 1, 1)]
    assert md("- plain\n").entries[0].date == FALLBACK
    assert read_markdown_log("a.md", b"- x\n", fallback_date=None).entries[0].date is None


# --- Markdown: tags -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tags"),
    [
        ("- [2026-03-01] [deploy] rolled back", ("deploy",)),
        (
            "- [2026-03-01 09:00] [Deploy] [infra-2] [x] rolled back #Rollback",
            ("deploy", "infra-2", "x", "rollback"),
        ),
        ("[deploy] a paragraph can lead with a tag", ("deploy",)),
        ("- [x] done #skill", ("skill",)),  # a checkbox is not a tag
        ("- [ ] open #soul #agent", ("soul", "agent")),
        ("- [SYSTEM HEARTBEAT] → ok", ()),
        ("- [link](https://x.y) and [ref][1]", ()),
        ("- [123] numbers are not tags", ()),
        ("#deploy #DEPLOY #deploy- repeats once", ("deploy",)),
        ("#日本語 and #русский and #café", ("日本語", "русский", "café")),
        ("fixes #123 and PR#12 and C# and #", ()),
        ("colour #1a2b3c and #0f0 but #fed is a word", ("fed",)),
        ("`#code` span and http://x.y/#frag and www.a.b/#c", ()),
        ("mail ops#team@example.com", ()),
        ("&#123; entity", ()),
        ("(#paren), #end.", ("paren", "end")),
        ("```\n#include <x>\n```\n#after", ("after",)),
        ("snake #snake_case_tag", ("snake_case_tag",)),
    ],
)
def test_find_tags(text: str, tags: tuple[str, ...]) -> None:
    assert find_tags(text) == tags


@pytest.mark.parametrize(
    ("text", "files"),
    [
        ("- [deploy] Rollbacks need the previous image tag!", True),
        ("- #deploy Rollbacks need the previous image tag", True),
        ("- Always run the smoke test before promoting. #skill", True),
        ("- Rollbacks need the previous tag #deploy #infra.", True),
        ("- 部署前必须确认迁移 #部署", True),
        ("- Replied to the #payments thread with the rollback link.", False),  # a channel: a mention
        ("- Asked in #ops whether the registry drops old tags", False),
        ("- see `#code` and #real stuff", False),
        ("- fixes #123 today", False),
        ("- no tags at all", False),
    ],
)
def test_a_tag_files_an_entry_only_apart_from_its_sentence(text: str, files: bool) -> None:
    # A leading or closing tag is the author filing the entry; a #word inside the sentence
    # is a mention (a channel, a name used as a word) and files nothing.
    assert files_entry(text) is files


def test_markdown_entries_carry_tags() -> None:
    result = md("- [2026-03-01] [deploy] rollback needs the old tag #skill\n")
    assert result.entries[0].tags == ("deploy", "skill")


def test_prose_segments_round_trip() -> None:
    text = "a `b` c http://x/y d\n```\ncode\n```\ne ~~~\n~~~\nopen"
    pieces = segments(text)
    assert "".join(p for p, _ in pieces) == text
    assert [p for p, prose in pieces if not prose] == ["`b`", "http://x/y", "```\ncode\n```\n", "~~~\nopen"]


# --- decoding -------------------------------------------------------------------------------


def test_split_lines_counts_like_git() -> None:
    assert split_lines("") == []
    assert split_lines("a\nb\n") == split_lines("a\nb") == ["a", "b"]
    assert split_lines("a\r\nb\r\n") == ["a", "b"]
    assert split_lines("a\rb\nc") == ["a b", "c"]
    assert split_lines("a\x0cb\u2028c\x85d\n") == ["a\x0cb\u2028c\x85d"]  # not str.splitlines()
    assert split_lines("\n\n") == ["", ""]


def test_markdown_crlf_gives_the_same_entries_as_lf() -> None:
    text = "# H\n\n- one\n  more\n\npara\n"
    lf = md(text)
    crlf = read_markdown_log(LOG, text.replace("\n", "\r\n").encode(), fallback_date=FALLBACK)
    assert [(e.start, e.end, e.text, e.context) for e in crlf.entries] == [
        (e.start, e.end, e.text, e.context) for e in lf.entries
    ]
    assert crlf.warnings == []


def test_markdown_lone_cr_is_not_a_line_break() -> None:
    data = b"- progress 10%\rprogress 20%\n- next\n"
    result = read_markdown_log(LOG, data, fallback_date=FALLBACK)
    assert spans(result) == [(1, 1), (2, 2)]
    assert result.entries[0].text == "- progress 10% progress 20%"
    assert result.warnings == [
        f"{LOG}:1: lone CR (carriage return) kept inside the line as a space; git ends lines at LF only"
    ]
    assert_exact(result, data)


def test_markdown_utf8_bom_is_dropped() -> None:
    data = codecs.BOM_UTF8 + "# H\n- 昨天\n".encode()
    result = read_markdown_log(LOG, data, fallback_date=FALLBACK)
    assert [(e.start, e.text, e.context) for e in result.entries] == [(2, "- 昨天", ("H",))]
    assert result.warnings == []


def test_markdown_invalid_utf8_is_replaced_and_named_by_line() -> None:
    data = b"- fine\n- bad \xff\xfe\xc3\n- \xe6\x97\xa5 fine\n- again \x80\n"
    result = read_markdown_log(LOG, data, fallback_date=FALLBACK)
    assert [e.text for e in result.entries] == [
        "- fine",
        "- bad \ufffd\ufffd\ufffd",
        "- 日 fine",
        "- again \ufffd",
    ]
    assert result.warnings == [f"{LOG}:2: invalid UTF-8 replaced", f"{LOG}:4: invalid UTF-8 replaced"]
    assert result.skipped is None
    assert_exact(result, data)


def test_markdown_invalid_utf8_warnings_are_capped() -> None:
    data = b"".join(b"- line \xff\n" for _ in range(50))
    result = read_markdown_log(LOG, data, fallback_date=FALLBACK)
    assert len(result.entries) == 50
    assert len(result.warnings) == 11
    assert result.warnings[-1] == f"{LOG}: invalid UTF-8 replaced on 40 more lines"


@pytest.mark.parametrize(
    ("codec", "name"), [("utf-16", "UTF-16"), ("utf-16-be", "UTF-16"), ("utf-32", "UTF-32")]
)
def test_markdown_wide_encodings_with_a_bom_are_decoded(codec: str, name: str) -> None:
    text = "# 2026-03-01\n- 昨天 #deploy\n"
    data = text.encode(codec)
    if codec == "utf-16-be":
        data = codecs.BOM_UTF16_BE + data
    result = read_markdown_log(LOG, data, fallback_date=FALLBACK)
    assert [(e.start, e.text, e.date, e.tags) for e in result.entries] == [
        (2, "- 昨天 #deploy", date(2026, 3, 1), ("deploy",))
    ]
    assert result.warnings == [f"{LOG}: decoded as {name} (byte order mark)"]


@pytest.mark.parametrize("data", [b"- a\n\x00\x01\x02binary", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"])
def test_markdown_binary_content_is_skipped(data: bytes) -> None:
    result = read_markdown_log(LOG, data, fallback_date=FALLBACK)
    assert result.entries == []
    assert result.skipped is not None and result.skipped.startswith("binary content")
    line = data[: data.index(b"\x00")].count(b"\n") + 1
    assert result.warnings == [f"{LOG}:{line}: skipped: {result.skipped}"]


@pytest.mark.parametrize(
    "data",
    [
        b"- [ops] before the crash\n" + b"\x00" * 4096 + b"\n- [ops] after the reboot\n",
        b"- [ops] before the crash\n- [ops] after\x00 the reboot\n",
    ],
)
def test_nul_bytes_in_a_text_log_are_removed_not_the_file(data: bytes) -> None:
    """Regression test: one NUL byte (or the run of zeros a crash leaves in a log) made
    the whole file "binary", so every entry in it was skipped and, once the watermark
    moved, never read."""
    result = read_markdown_log(LOG, data, fallback_date=FALLBACK)
    assert result.skipped is None
    assert [e.text for e in result.entries] == ["- [ops] before the crash", "- [ops] after the reboot"]
    line = data[: data.index(b"\x00")].count(b"\n") + 1
    assert result.warnings == [f"{LOG}:{line}: NUL bytes removed"]
    # git's line numbers are kept: the entry after the zeros is still on its own line
    assert [e.start for e in result.entries][-1] == data.count(b"\n")


def test_utf16_without_bom_reads_as_text() -> None:
    data = "- [i18n] no byte order mark\n".encode("utf-16-le")
    result = read_markdown_log(LOG, data, fallback_date=FALLBACK)
    assert [e.text for e in result.entries] == ["- [i18n] no byte order mark"]
    assert result.warnings[0] == f"{LOG}:1: NUL bytes removed"


def test_only_nul_bytes_is_binary() -> None:
    result = read_markdown_log(LOG, b"\x00" * 64 + b"\n", fallback_date=FALLBACK)
    assert result.skipped is not None and result.entries == []


def test_markdown_random_bytes_never_crash() -> None:
    rng = random.Random(4)
    alphabet = [b"\n", b"\r", b"\r\n", b" ", b"-", b"*", b"#", b"`", b"~", b"[", b"]", b"\xff", b"a", b"1."]
    for _ in range(300):
        data = b"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 120)))
        result = read_markdown_log(LOG, data, fallback_date=FALLBACK)
        assert_exact(result, data)


# --- the documented relation, over generated documents -------------------------------------

_PIECES = [
    "# Heading {n}",
    "## 2026-03-{d:02d} day",
    "- item {n}",
    "  - nested {n}",
    "    continuation {n}",
    "1. ordered {n}",
    "- [2026-03-{d:02d}] [tag{n}] dated item #x{n}",
    "- [x] done {n}",
    "plain paragraph line {n}",
    "lazy line {n}",
    "> quote {n}",
    "| a | b |",
    "",
    "",
    "```",
    "~~~",
    "  ```python",
    "---",
    "===",
    "***",
    "\t- tab item {n}",
    "      deep indent {n}",
    "结果甲甲甲甲甲",
]


def test_markdown_generated_documents_keep_the_text_relation() -> None:
    rng = random.Random(2026)
    for _ in range(400):
        lines = [rng.choice(_PIECES).format(n=rng.randint(0, 99), d=rng.randint(1, 28)) for _ in range(40)]
        data = ("\n".join(lines) + rng.choice(["", "\n", "\r\n"])).encode()
        result = read_markdown_log(LOG, data, fallback_date=FALLBACK)
        assert_exact(result, data)
        starts = [e.start for e in result.entries]
        assert starts == sorted(starts)
        for before, after in zip(result.entries, result.entries[1:], strict=False):
            assert before.end < after.start, "entries never overlap"
        for entry in result.entries:
            assert entry.date is not None


# --- added lines ----------------------------------------------------------------------------


def test_markdown_added_lines_select_touched_entries() -> None:
    text = "- old item\n- old item that grew\n  a new line\n\npara\n- brand new\n"
    result = md(text, added_lines={3, 6})
    assert [e.text for e in result.entries] == ["- old item that grew\n  a new line", "- brand new"]
    assert md(text, added_lines=set()).entries == []
    assert md(text, added_lines={99}).entries == []
    assert len(md(text, added_lines=None).entries) == 4


# --- transcripts ----------------------------------------------------------------------------

TR = "agents/ops/sessions/abc.jsonl"


def jl(*records: object) -> bytes:
    return "".join(
        (r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in records
    ).encode()


def tr(data: bytes, path: str = TR, **kw: object) -> ReadResult:
    return read_transcript(path, data, fallback_date=FALLBACK, **kw)  # type: ignore[arg-type]


def cc(
    kind: str, content: object, ts: str = "2026-01-21T06:20:30.851Z", **extra: object
) -> dict[str, object]:
    message: dict[str, object] = {"role": kind, "content": content}
    if "mid" in extra:
        message["id"] = extra.pop("mid")
    return {"type": kind, "message": message, "timestamp": ts, "uuid": "u", **extra}


def test_transcript_claude_code_keeps_text_and_counts_the_rest() -> None:
    data = jl(
        {"type": "queue-operation", "operation": "dequeue", "timestamp": "2026-01-21T06:20:30Z"},  # 1
        cc("user", "Write hello.sh #skill"),  # 2
        cc(
            "assistant",
            [{"type": "thinking", "thinking": "secret"}, {"type": "tool_use", "id": "toolu_1"}],
            mid="m1",
        ),
        cc(
            "user",
            [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "OUT"}]}],
        ),
        cc("assistant", [{"type": "text", "text": "Part one."}], mid="m2"),  # 5
        cc("assistant", [{"type": "tool_use", "id": "toolu_2", "input": {}}], mid="m2"),  # 6
        cc("assistant", [{"type": "text", "text": "Part two."}], mid="m2"),  # 7
        cc("user", [{"type": "text", "text": "look"}, {"type": "image", "source": {}}]),  # 8
        cc("user", "Stop hook feedback", isMeta=True),  # 9
        {"type": "summary", "summary": "title", "leafUuid": "x"},  # 10
        {"type": "system", "content": "hook ran"},  # 11
        {"type": "file-history-snapshot", "snapshot": {}},  # 12
        {"type": "brand-new-type"},  # 13
        cc("user", "This session is being continued...", isCompactSummary=True),  # 14
        cc("user", "<command-name>/clear</command-name>"),  # 15
        cc(
            "user",
            [
                {"type": "text", "text": "<system-reminder>be nice</system-reminder>"},
                {"type": "text", "text": "hi"},
            ],
        ),
        cc("assistant", [], mid="m3"),  # 17
        cc("assistant", [{"type": "text", "text": "   "}], mid="m4"),  # 18
    )
    result = tr(data)
    got = [(e.start, e.end, e.role, e.text) for e in result.entries]
    assert got == [
        (2, 2, "user", "Write hello.sh #skill"),
        (5, 7, "assistant", "Part one.\n\nPart two."),
        (8, 8, "user", "look"),
        (16, 16, "user", "hi"),
    ]
    assert result.dropped == {
        "queue-operation": 1,
        "thinking": 1,
        "tool_use": 2,
        "tool_result": 1,
        "image": 1,
        "meta": 1,
        "summary": 2,
        "system": 1,
        "file-history-snapshot": 1,
        "unknown": 1,
        "command": 1,
        "system_reminder": 1,
        "empty": 2,
    }
    # Regression test: a record type gitdream does not know was dropped without a word.
    assert result.warnings == [f"{TR}:13: record type 'brand-new-type' is not one gitdream reads; skipped"]
    assert all(e.kind == "transcript" and e.context == () for e in result.entries)
    assert result.entries[0].tags == ("skill",)
    assert {e.date for e in result.entries} == {date(2026, 1, 21)}
    assert not any("OUT" in e.text or "secret" in e.text or "toolu_" in e.text for e in result.entries)


def test_transcript_messages_with_different_ids_or_roles_are_separate() -> None:
    data = jl(
        cc("assistant", [{"type": "text", "text": "a"}], mid="m1"),
        cc("user", "interjection"),
        cc("assistant", [{"type": "text", "text": "b"}], mid="m1"),
        cc("assistant", [{"type": "text", "text": "c"}], mid="m2"),
        cc("user", "u1"),
        cc("user", "u2"),
    )
    assert [(e.start, e.end, e.text) for e in tr(data).entries] == [
        (1, 1, "a"),
        (2, 2, "interjection"),
        (3, 3, "b"),
        (4, 4, "c"),
        (5, 5, "u1"),
        (6, 6, "u2"),
    ]


def test_transcript_plain_form() -> None:
    data = jl(
        {"role": "user", "text": "deploy failed yesterday", "ts": "2026-03-02T10:00:00+01:00"},
        {"role": "assistant", "text": "rolled back", "ts": 1772445600},
        {"role": "assistant", "content": "via content", "timestamp": "2026-03-03"},
        {"role": "system", "text": "you are"},
        {"role": "robot", "text": "?"},
        {"role": "user", "text": "no timestamp"},
    )
    result = tr(data, path="sessions/2026-03-09-chat.jsonl")
    assert [(e.start, e.role, e.text, e.date) for e in result.entries] == [
        (1, "user", "deploy failed yesterday", date(2026, 3, 2)),
        (2, "assistant", "rolled back", date(2026, 3, 2)),
        (3, "assistant", "via content", date(2026, 3, 3)),
        (6, "user", "no timestamp", date(2026, 3, 9)),  # file name
    ]
    assert result.dropped == {"system": 1, "unknown": 1}
    assert tr(jl({"role": "user", "text": "x"})).entries[0].date == FALLBACK


def test_transcript_bad_lines_are_warnings_never_fatal() -> None:
    data = (
        jl(cc("user", "first"))
        + b"{not json\n"
        + b"[1, 2]\n"
        + b"42\n"
        + b"\n"
        + b"[" * 100_000
        + b"\n"
        + jl(cc("assistant", [{"type": "text", "text": "last"}], mid="m"))
        + b'{"type": "user", "message": {"role": "user", "content": "trunc'
    )
    result = tr(data)
    assert [(e.start, e.text) for e in result.entries] == [(1, "first"), (7, "last")]
    assert result.warnings == [
        f"{TR}:2: not valid JSON (malformed or truncated); line skipped",
        f"{TR}:3: not a JSON object; line skipped",
        f"{TR}:4: not a JSON object; line skipped",
        f"{TR}:6: not valid JSON (malformed or truncated); line skipped",
        f"{TR}:8: not valid JSON (malformed or truncated); line skipped",
    ]
    assert result.dropped == {"malformed": 5}


def test_transcript_odd_shapes_do_not_crash() -> None:
    data = jl(
        {"type": "user"},
        {"type": "user", "message": "just a string"},
        {"type": "assistant", "message": {"content": None}},
        {
            "type": "assistant",
            "message": {"content": [None, 3, "raw string block", {"type": "text", "text": 5}]},
        },
        {"type": 7},
        {},
        {"role": "user", "text": None},
        {"role": "user", "text": ["a", {"type": "text", "text": "b"}]},
    )
    result = tr(data)
    assert [(e.start, e.role, e.text) for e in result.entries] == [
        (4, "assistant", "raw string block"),
        (8, "user", "a\n\nb"),
    ]
    assert result.warnings == [
        f"{TR}:4: a content block that is not an object is not one gitdream reads; skipped (2 times in this file)",
        f"{TR}:4: a text block whose text is not a string is not one gitdream reads; skipped",
        f"{TR}:5: a record without a string type or role is not one gitdream reads; skipped (2 times in this file)",
    ]


def test_transcript_long_message_is_kept_whole() -> None:
    long = "word " * 100_000
    result = tr(jl(cc("assistant", [{"type": "text", "text": long}], mid="m")))
    assert result.entries[0].text == long


def test_transcript_crlf_bom_and_added_lines() -> None:
    data = codecs.BOM_UTF8 + jl(cc("user", "one"), cc("user", "two"), cc("user", "three")).replace(
        b"\n", b"\r\n"
    )
    assert [e.text for e in tr(data).entries] == ["one", "two", "three"]
    assert [e.text for e in tr(data, added_lines={2, 3}).entries] == ["two", "three"]
    grouped = jl(
        cc("assistant", [{"type": "text", "text": "a"}], mid="m"),
        cc("assistant", [{"type": "text", "text": "b"}], mid="m"),
    )
    assert [e.text for e in tr(grouped, added_lines={2}).entries] == ["a\n\nb"]


def test_transcript_binary_is_skipped() -> None:
    result = tr(b'{"role": "user", "text": "x"}\n' + bytes(range(256)) * 4)
    assert result.entries == [] and result.skipped is not None


def test_transcript_with_zero_padding_keeps_its_messages() -> None:
    result = tr(b'{"role": "user", "text": "x"}\n\x00\x00')
    assert [e.text for e in result.entries] == ["x"]
    assert result.warnings == [f"{TR}:2: NUL bytes removed"]


# --- read_source ----------------------------------------------------------------------------


def test_read_source_dispatches_by_kind() -> None:
    log = read_source(LOG, b"- a\n", kind="log", fallback_date=FALLBACK, max_file_bytes=100)
    assert [e.kind for e in log.entries] == ["log"]
    data = jl({"role": "user", "text": "hi"})
    transcript = read_source(TR, data, kind="transcript", fallback_date=FALLBACK, max_file_bytes=100)
    assert [e.kind for e in transcript.entries] == ["transcript"]
    added = read_source(
        LOG, b"- a\n- b\n", kind="log", fallback_date=None, added_lines={2}, max_file_bytes=100
    )
    assert [e.text for e in added.entries] == ["- b"]


def test_read_source_skips_files_over_max_file_bytes_before_decoding() -> None:
    data = b"\x00" * 11  # binary too: the size decides first
    result = read_source(LOG, data, kind="log", fallback_date=FALLBACK, max_file_bytes=10)
    assert result.entries == []
    assert result.skipped == "11 bytes is over max_file_bytes (10)"
    assert result.warnings == [f"{LOG}: skipped: 11 bytes is over max_file_bytes (10)"]
    exact = read_source(LOG, b"- 123456\n", kind="log", fallback_date=FALLBACK, max_file_bytes=9)
    assert len(exact.entries) == 1


def test_read_source_rejects_an_unknown_kind() -> None:
    with pytest.raises(ValueError, match="unknown source kind 'csv'"):
        read_source(LOG, b"", kind="csv", fallback_date=None, max_file_bytes=10)


# --- real data ------------------------------------------------------------------------------

REAL = SHARED / "realdata"
needs_realdata = pytest.mark.skipif(not REAL.is_dir(), reason=f"real-data corpus not found at {REAL}")


def _real(patterns: list[str]) -> list[str]:
    if not REAL.is_dir():
        return ["(absent)"]
    found = sorted({p.relative_to(REAL).as_posix() for pattern in patterns for p in REAL.glob(pattern)})
    return found or ["(absent)"]


REAL_LOGS = _real(
    [
        "KitTheFox123__workspace/memory/2026-*.md",
        "palimondo__BookMinder/claude-dev-log-diary/day-*.md",
        "joujin-git__KoEnVue/docs/sessions/**/*.md",
    ]
)
REAL_TRANSCRIPTS = _real(
    ["DRMacIver__claude-reliability/**/*.jsonl", "simonw__claude-code-transcripts/tests/*.jsonl"]
)


@needs_realdata
@pytest.mark.parametrize("rel", REAL_LOGS)
def test_realdata_logs_read_exactly(rel: str) -> None:
    assert rel != "(absent)", "no daily logs found in the corpus"
    data = (REAL / rel).read_bytes()
    result = read_source(rel, data, kind="log", fallback_date=FALLBACK, max_file_bytes=10_000_000)
    assert result.skipped is None
    assert result.entries, "a daily log has entries"
    assert_exact(result, data, rel)
    named = Path(rel).name
    for entry in result.entries:
        assert entry.date is not None
        if named.startswith("2026-"):
            assert entry.date.isoformat() == named[:10]
        else:
            assert entry.date == FALLBACK  # day-NNN.md: no date anywhere, the commit's date
    for before, after in zip(result.entries, result.entries[1:], strict=False):
        assert before.end < after.start
    # Lines appended since the watermark select exactly the entries they touch.
    last = result.entries[-1]
    added = set(range(last.end - 1, last.end + 1))
    again = read_source(
        rel, data, kind="log", fallback_date=FALLBACK, added_lines=added, max_file_bytes=10**7
    )
    assert again.entries and again.entries[-1] == last
    assert all(added & set(range(e.start, e.end + 1)) for e in again.entries)


@needs_realdata
@pytest.mark.parametrize("rel", REAL_TRANSCRIPTS)
def test_realdata_transcripts_yield_messages_without_tool_payloads(rel: str) -> None:
    assert rel != "(absent)", "no transcripts found in the corpus"
    data = (REAL / rel).read_bytes()
    result = read_source(rel, data, kind="transcript", fallback_date=FALLBACK, max_file_bytes=10_000_000)
    assert result.skipped is None and result.warnings == []
    roles = {e.role for e in result.entries}
    assert roles == {"user", "assistant"}
    assert result.dropped.get("tool_use", 0) > 0 and result.dropped.get("tool_result", 0) > 0
    lines = decode_lines(rel, data).lines
    payloads: list[str] = []
    for line in lines:
        record = json.loads(line)
        content = (record.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_result":
                payloads.append(json.dumps(block.get("content")))
            if block.get("type") == "tool_use":
                payloads.append(json.dumps(block.get("input")))
    for entry in result.entries:
        assert entry.date is not None and 2020 <= entry.date.year <= 2100
        spanned = [json.loads(line) for line in lines[entry.start - 1 : entry.end]]
        assert all(r["type"] == entry.role for r in spanned)
        # Every paragraph of the text is a text block of one of the spanned records.
        blocks = []
        for record in spanned:
            content = record["message"]["content"]
            blocks += (
                [content] if isinstance(content, str) else [b["text"] for b in content if b["type"] == "text"]
            )
        assert entry.text == "\n\n".join(b for b in blocks if b.strip())
        assert "tool_use_id" not in entry.text
        assert not any(entry.text in p for p in payloads if len(entry.text) > 20)


def test_transcript_json_escapes_for_nul_and_lone_surrogates_are_made_writable() -> None:
    """Regression test: a transcript message holding `\\ud83d` (half an emoji) or `\\u0000`
    became fact text that could not be encoded as UTF-8, and the run crashed at the
    experience commit."""
    data = jl(
        r'{"role": "user", "text": "half an emoji \ud83d here"}',
        r'{"role": "user", "text": "escaped\u0000 NUL"}',
        r'{"role": "user", "text": "a whole emoji \ud83d\ude00 stays"}',
    )
    result = tr(data)
    assert [e.text for e in result.entries] == [
        "half an emoji \ufffd here",
        "escaped NUL",
        "a whole emoji \U0001f600 stays",
    ]
    for entry in result.entries:
        entry.text.encode("utf-8")
    assert [w.split(": ", 1)[0] for w in result.warnings] == [f"{TR}:1", f"{TR}:2"]


def test_transcript_block_whose_type_is_not_a_string_does_not_crash() -> None:
    """Regression test: a content block `{"type": ["text"]}` raised TypeError (a list is
    not hashable) while its type was looked up among the known block types."""
    data = jl(
        cc(
            "assistant",
            [{"type": ["text"], "text": "odd"}, {"type": {"a": 1}}, {"type": "text", "text": "ok"}],
        )
    )
    result = tr(data)
    assert [e.text for e in result.entries] == ["ok"]
    assert result.dropped == {"unknown": 2}


LFS_POINTER = (
    b"version https://git-lfs.github.com/spec/v1\n"
    b"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
    b"size 12345\n"
)


@pytest.mark.parametrize("kind", ["log", "transcript"])
def test_git_lfs_pointer_is_skipped_with_a_warning(kind: str) -> None:
    """Regression test: a log stored in Git LFS (its committed blob is a pointer) was read as
    a paragraph, and "version https://git-lfs… oid sha256:… size 12345" became a fact."""
    result = read_source(LOG, LFS_POINTER, kind=kind, fallback_date=FALLBACK, max_file_bytes=10_000)
    assert result.entries == [] and result.skipped is not None and "Git LFS pointer" in result.skipped
    assert result.warnings == [f"{LOG}:1: skipped: {result.skipped}"]
    # a log that merely quotes a pointer is read as usual
    quoted = b"- [lfs] the pointer looked like this:\n" + LFS_POINTER
    assert read_source(LOG, quoted, kind="log", fallback_date=FALLBACK, max_file_bytes=10_000).entries


@pytest.mark.parametrize("word", ["x", "a1", "-", "/", "."])
def test_find_tags_is_linear_in_a_long_word(word: str) -> None:
    """Regression test: the e-mail filter `\\S+@\\S+` rescanned a word without "@" from each
    of its characters: a 5 MB line without spaces (a base64 blob) hung the run for hours."""
    text = "- [blob] #data " + word * (400_000 // len(word)) + " #tail"
    with deadline(5, "find_tags on a 400 kB word"):
        assert find_tags(text) == ("blob", "data", "tail")
    assert find_tags("mail me at ops@corp.example #real, not a#tag@x.y") == ("real",)


@pytest.mark.parametrize("run", ["a-", "a.", "x+1"])
def test_prose_segments_are_linear_in_scheme_like_runs(run: str) -> None:
    """Regression test: the URL pattern's scheme `[a-zA-Z][a-zA-Z0-9+.-]*` rescanned an
    "a-a-a-…" run from each word boundary looking for "://", so tags and relative dates of
    a long hyphenated line took quadratic time."""
    text = "see " + run * (200_000 // len(run)) + " and https://x.test/a-b"
    with deadline(5, "segments of a 200 kB hyphenated run"):
        pieces = segments(text)
    assert "".join(p for p, _ in pieces) == text
    assert [p for p, prose in pieces if not prose] == ["https://x.test/a-b"]


@pytest.mark.parametrize("run", [" ", "\t", " \t"])
def test_a_heading_with_a_long_run_of_spaces_is_read_in_linear_time(run: str) -> None:
    """Regression test: the closing-hashes pattern of ATX headings was tried from each
    character of a long run of spaces inside a heading: a heading with 40 k spaces took
    seconds, 200 k minutes."""
    heading = "## deploys" + run * (200_000 // len(run)) + "rollback ##"
    with deadline(5, "a heading with 200 k spaces"):
        result = read_markdown_log(LOG, f"{heading}\n\n- an item\n".encode(), fallback_date=FALLBACK)
    (entry,) = result.entries
    assert entry.context[0].startswith("deploys") and entry.context[0].endswith("rollback")
    assert read_markdown_log(LOG, b"## Deploys ##\n\n- x\n", fallback_date=FALLBACK).entries[0].context == (
        "Deploys",
    )


# --- Codex CLI rollouts, Claude Code synthetic rows, title rows (issue #14, item 7) -------------


def _jsonl(*records: dict) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def test_codex_rollout_messages_are_read_and_its_harness_records_counted() -> None:
    data = _jsonl(
        {"timestamp": "2026-03-05T10:00:00Z", "type": "session_meta", "payload": {"id": "s", "cwd": "/w"}},
        {
            "timestamp": "2026-03-05T10:00:01Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [
                    {
                        "type": "input_text",
                        "text": "<environment_context>\n<cwd>/w</cwd>\n</environment_context>",
                    }
                ],
            },
        },
        {
            "timestamp": "2026-03-05T10:00:02Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "Always lint first."}],
            },
        },
        {
            "timestamp": "2026-03-05T10:00:02Z",
            "type": "event_msg",
            "payload": {"type": "user_message", "message": "Always lint first."},
        },
        {"timestamp": "2026-03-05T10:00:03Z", "type": "turn_context", "payload": {"cwd": "/w"}},
        {
            "timestamp": "2026-03-05T10:00:04Z",
            "type": "response_item",
            "payload": {"type": "function_call", "name": "shell"},
        },
        {
            "timestamp": "2026-03-05T10:00:05Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": "rules"}],
            },
        },
        {
            "timestamp": "2026-03-06T09:00:00Z",
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "The linter needs ruff 0.5."}],
            },
        },
    )
    result = read_transcript("a/sessions/rollout-1.jsonl", data, fallback_date=None)
    assert [(e.start, e.role, e.text, e.date) for e in result.entries] == [
        (3, "user", "Always lint first.", date(2026, 3, 5)),
        (8, "assistant", "The linter needs ruff 0.5.", date(2026, 3, 6)),
    ]
    assert result.warnings == []
    assert result.dropped == {
        "session_meta": 1,
        "meta": 1,
        "event": 1,
        "turn_context": 1,
        "function_call": 1,
        "developer": 1,
    }


def test_a_codex_rollout_with_only_event_messages_reads_them() -> None:
    data = _jsonl(
        {"timestamp": "2026-03-05T10:00:00Z", "type": "session_meta", "payload": {"id": "s"}},
        {
            "timestamp": "2026-03-05T10:00:01Z",
            "type": "event_msg",
            "payload": {"type": "user_message", "message": "Use uv."},
        },
        {"timestamp": "2026-03-05T10:00:02Z", "type": "event_msg", "payload": {"type": "token_count"}},
        {
            "timestamp": "2026-03-05T10:00:03Z",
            "type": "event_msg",
            "payload": {"type": "agent_message", "message": "Noted: uv."},
        },
    )
    result = read_transcript("a/sessions/rollout-2.jsonl", data, fallback_date=None)
    assert [(e.start, e.role, e.text) for e in result.entries] == [
        (2, "user", "Use uv."),
        (4, "assistant", "Noted: uv."),
    ]
    assert result.dropped == {"session_meta": 1, "event": 1}


def test_claude_code_synthetic_rows_are_dropped_and_title_rows_read_without_a_warning() -> None:
    def row(kind: str, text: str, **extra: object) -> dict:
        return {"type": kind, "message": {"role": kind, "content": [{"type": "text", "text": text}]}, **extra}

    data = _jsonl(
        {"type": "custom-title", "customTitle": "Release review"},
        {"type": "agent-name", "agentName": "ops"},
        {"type": "ai-title", "aiTitle": "Fixing the release"},
        row("user", "Deploys need a green smoke test."),
        row("user", "[Request interrupted by user for tool use]"),
        row("user", "<bash-input>ls</bash-input>"),
        row("user", "<bash-stdout>a.txt</bash-stdout><bash-stderr></bash-stderr>"),
        row("assistant", "API Error: 529 overloaded", isApiErrorMessage=True),
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "model": "<synthetic>",
                "content": [{"type": "text", "text": "No response requested."}],
            },
        },
        row("assistant", "subagent chatter", isSidechain=True),
        row("assistant", "The smoke test lives in ci/smoke.sh."),
    )
    result = read_transcript("a/sessions/s.jsonl", data, fallback_date=date(2026, 3, 5))
    assert [e.text for e in result.entries] == [
        "Deploys need a green smoke test.",
        "The smoke test lives in ci/smoke.sh.",
    ]
    assert result.warnings == []
    assert result.dropped == {
        "custom-title": 1,
        "agent-name": 1,
        "ai-title": 1,
        "synthetic": 3,
        "api_error": 2,
        "sidechain": 1,
    }
