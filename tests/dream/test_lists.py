"""A list under a lead-in is one statement (issue #14): the reader records the sentence that
introduces a list, salience reads it like a heading, and the offline engine writes the list
as one fact — or none of it, when it is a to-do list or its items are not durable."""

from __future__ import annotations

from datetime import date

import pytest

from gitdream.agents import make_agent
from gitdream.config import defaults
from gitdream.contract import DistillContext, MemoryView
from gitdream.dream import lists, salience
from gitdream.dream.readers import read_markdown_log
from gitdream.engines.offline import FACT_MAX_CHARS, OfflineEngine, clean_text
from gitdream.units import Entry
from tests.standins import simple_absolutize, simple_slugify

AGENT = make_agent("agents/ops", defaults())
LOG = "agents/ops/memory/logs/2026/03/2026-03-02.md"
COMMIT = "1a2b3c4d5e6f" + "0" * 28


def _read(text: str, added: set[int] | None = None):
    return read_markdown_log(LOG, text.encode(), fallback_date=date(2026, 3, 2), added_lines=added).entries


def _distill(text: str, **overrides: object):
    cfg = defaults().with_overrides({k.replace("__", "."): (v, "test") for k, v in overrides.items()})
    engine = OfflineEngine(cfg, slugify=simple_slugify, absolutize=simple_absolutize)
    entries = _read(text)
    return entries, engine.distill(
        DistillContext(AGENT, entries, MemoryView({}), cfg, COMMIT, date(2026, 3, 9))
    )


@pytest.mark.parametrize(
    "lead",
    ["The decisions we made:", "这次故障的教训：", "이번 장애에서 배운 점:", "今回の障害で学んだこと："],
)
def test_the_reader_gives_each_item_the_sentence_that_introduces_its_list(lead: str) -> None:
    entries = _read(
        f"# Day\n\n{lead}\n- first item here\n- second item here\n\nA paragraph.\n- a loose item\n"
    )
    assert [e.lead_in for e in entries] == ["", lead, lead, "", ""]
    assert entries[3].text == "A paragraph."  # a paragraph without a colon introduces nothing


def test_a_lead_in_is_the_same_when_an_item_is_read_again_alone() -> None:
    text = "Rules we follow:\n- never deploy on Friday\n- always tag the release\n"
    alone = _read(text, added={3})
    assert [e.lead_in for e in alone] == ["Rules we follow:"]


def test_no_lead_in_across_a_heading_or_a_gap() -> None:
    entries = _read("Rules we follow:\n\n\n- never deploy on Friday\n\n## Next\n- a task\n")
    assert [e.lead_in for e in entries if e.text.startswith("-")] == ["", ""]


def test_a_long_paragraph_is_a_passage_not_a_lead_in() -> None:
    entries = _read(("word " * 80) + "and so:\n- an item\n")
    assert entries[-1].lead_in == ""


def test_the_lead_in_is_read_like_a_heading() -> None:
    entries = _read(
        "The primary issues we ran into were:\n- creating empty folders before they were needed\n"
    )
    item = entries[-1]
    judged = salience.judge(item, clean_text(item, None), salience.Cues(), salience.DEFAULT_THRESHOLD)
    assert "lead-in-lesson" in judged.cues
    bare = _read("- creating empty folders before they were needed\n")[0]
    assert judged.score > salience.judge(bare, clean_text(bare, None), salience.Cues(), 0.5).score


@pytest.mark.parametrize(
    ("lead", "items", "expected"),
    [
        (
            "The decisions were:",
            ["Use pyproject.toml.", "Keep tests in specs/"],
            "The decisions were: Use pyproject.toml; Keep tests in specs/",
        ),
        ("教训：", ["先备份。", "再部署"], "教训：先备份；再部署"),
        (
            "教訓：",
            ["先にバックアップする。", "それからデプロイ"],
            "教訓：先にバックアップする；それからデプロイ",
        ),
        ("교훈:", ["먼저 백업한다.", "그다음 배포"], "교훈: 먼저 백업한다; 그다음 배포"),
    ],
)
def test_a_list_reads_as_one_statement_in_each_language(lead: str, items: list[str], expected: str) -> None:
    assert lists.statement(lead, items, 400) == (expected, len(items))


def test_the_last_sentence_of_a_lead_paragraph_introduces_the_list() -> None:
    assert lists.lead_sentence("All tests pass. The fixes were:") == "The fixes were:"
    assert lists.without_lead_sentence("Suspension is not time-based. Need to either:") == (
        "Suspension is not time-based."
    )
    assert lists.without_lead_sentence("Need to either:") == ""


def test_the_engine_writes_a_kept_list_as_one_fact_citing_its_lead_in_and_items() -> None:
    entries, result = _distill(
        "# Day\n\nThe decisions we made:\n"
        "- Use pyproject.toml as the single source of dependencies\n"
        "- Keep the specs folder a package because pytest must discover it\n"
        "- Never commit the dev-log diary with git add .\n"
    )
    assert [u.action for u in result.units] == ["create"]
    unit = result.units[0]
    assert unit.body.startswith("The decisions we made: Use pyproject.toml")
    assert unit.body.count("; ") == 2
    assert unit.sources == tuple(e.id for e in entries)  # the lead-in paragraph and the three items


def test_a_to_do_list_is_never_a_fact_even_when_its_items_look_like_rules() -> None:
    for lead in (
        "Next steps:",
        "下一步：",
        "다음 할 일:",
        "次にやること：",
        "I'll prepare a document that covers:",
    ):
        _, result = _distill(f"{lead}\n- never deploy on Friday afternoon\n- always tag the release first\n")
        assert result.units == [], lead
        assert set(dict(result.skipped).values()) >= {"not kept: a to-do list"}


def test_a_list_whose_items_are_mostly_not_durable_is_not_kept_for_one_item() -> None:
    _, result = _distill(
        "Today:\n- replied to the thread\n- liked two posts\n- sent the email\n"
        "- never retry a post that returned an id\n"
    )
    assert result.units == []


def test_a_list_too_long_for_one_fact_continues_in_the_next_under_the_same_lead_in() -> None:
    items = "".join(
        f"- Rule {n}: never deploy service {n} without its own smoke test and backup\n" for n in range(12)
    )
    entries, result = _distill("Deploy rules we follow:\n" + items, max_units=50)
    bodies = [u.body for u in result.units]
    assert len(bodies) >= 2 and all(b.startswith("Deploy rules we follow:") for b in bodies)
    assert all(len(b) <= FACT_MAX_CHARS for b in bodies)
    cited = [s for u in result.units for s in u.sources]
    assert sorted(cited) == sorted(e.id for e in entries) and len(cited) == len(set(cited))


def _under(text: str, *headings: str, lead_in: str = "") -> Entry:
    return Entry("agents/ops/memory/logs/2026/03/2026-03-02.md", 4, 4, text, None, headings, lead_in=lead_in)


@pytest.mark.parametrize(
    ("text", "heading", "fact"),
    [
        (
            "Suspension is NOT time-based.",
            "⚠️ Forum Captcha Problem",
            "Forum Captcha Problem: Suspension is NOT time-based.",
        ),
        (
            "Each failed comment attempt EXTENDS the ban",
            "⚠️ FORUM SUSPENDED UNTIL FEB 27",
            "Forum: Each failed comment attempt EXTENDS the ban",
        ),
        ("必须先跑迁移脚本。", "部署", "部署：必须先跑迁移脚本。"),
        ("반드시 먼저 마이그레이션을 실행한다.", "배포", "배포: 반드시 먼저 마이그레이션을 실행한다."),
        (
            "必ず先にマイグレーションを実行する。",
            "デプロイ",
            "デプロイ：必ず先にマイグレーションを実行する。",
        ),
    ],
)
def test_an_item_that_names_nothing_carries_its_headings_subject(text: str, heading: str, fact: str) -> None:
    assert lists.with_subject(text, _under(text, "2026-03-02", heading)) == fact


@pytest.mark.parametrize(
    ("text", "heading"),
    [
        ("The forum-comment.sh script handles captchas.", "Forum"),  # it names a file
        ("Never retry a Forum post that returned an id.", "Forum rules"),  # it names the subject
        ("Retry after the cooldown.", "Heartbeat 12:24 UTC"),  # an event names no subject
        ("Retry after the cooldown.", "Lessons learned"),  # a kind of knowledge names none
        ("Keep it short.", "Stage only the files that passed the hooks"),  # a sentence, not a name
        ("Root cause: the challenges are never answered.", "Forum"),  # it has a subject of its own
        ("必须先跑迁移脚本。", "教训"),
        # a heading that opens with a kind of knowledge says what kind, not what about
        ("No more sub-agents: every heartbeat runs itself.", "Rule Change"),
        ("Nunca reintentar un envío.", "Regla nueva"),
        ("반드시 먼저 마이그레이션을 실행한다.", "규칙 변경"),
        ("必须先跑迁移脚本。", "规则变更"),
    ],
)
def test_an_item_that_states_itself_keeps_its_words(text: str, heading: str) -> None:
    assert lists.with_subject(text, _under(text, heading)) == text
    assert lists.with_subject(text, _under(text, heading, lead_in="The fixes were:")) == text


def test_an_item_given_its_headings_subject_is_recognised_without_it() -> None:
    item = _under("Suspension is NOT time-based.", "2026-03-02", "⚠️ Forum Captcha Problem")
    fact = lists.with_subject(item.text, item)
    assert fact != item.text and lists.without_subject(fact, item) == item.text
    assert lists.without_subject("Other text.", item) == "Other text."


@pytest.mark.parametrize("lead", ["I've cleaned up the project as requested:", "我已经完成了以下修改："])
def test_a_list_introduced_as_a_record_of_ones_own_work_is_kept_without_its_lead_in(lead: str) -> None:
    entries, result = _distill(
        f"# Day\n\n{lead}\n"
        "- Use pyproject.toml as the single source of dependencies\n"
        "- Keep the specs folder a package because pytest must discover it\n"
        "- Never commit the dev-log diary with git add .\n"
    )
    bodies = [u.body for u in result.units]
    assert bodies and bodies[0].startswith("Use pyproject.toml as the single source"), bodies
    assert not any(lead in body for body in bodies)
    assert result.units[0].sources == tuple(e.id for e in entries[1:])  # the items, not the lead-in


@pytest.mark.parametrize(
    ("heading", "subject"),
    [
        ("Moltbook BAN LIFTED!", "Moltbook"),  # a shouted state after the name
        ("⚠️ MOLTBOOK SUSPENDED UNTIL FEB 27", "Moltbook"),  # a heading shouted whole
        ("Форум ЗАБЛОКИРОВАН", "Форум"),
        ("ФОРУМ ЗАБЛОКИРОВАН", "Форум"),
        ("Deploy to AWS", "Deploy to AWS"),  # an acronym is part of the name
        ("AWS Lambda", "AWS Lambda"),
        ("AWS", "AWS"),
        ("论坛封禁", "论坛封禁"),  # no case: nothing to read
        ("포럼 정지", "포럼 정지"),
    ],
)
def test_a_heading_lends_its_name_not_the_state_it_shouts(heading: str, subject: str) -> None:
    assert lists.subject_of(heading) == subject
    text = "Each failed attempt extends the wait."
    assert lists.with_subject(text, _under(text, heading)) in (f"{subject}: {text}", f"{subject}：{text}")
