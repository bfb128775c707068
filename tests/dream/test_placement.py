"""Where a fact goes when nothing names its subject (issue 14: no catch-all topic).

A fact that nothing the material shares names joins the topic most like it, else a topic
named after its own file or code name, else the topic its log section went to; a fact
that names nothing itself and is weak is read and not kept, whatever memory holds, so a
re-read judges it the same. Small hand-written logs in English, Chinese and Korean."""

from __future__ import annotations

from datetime import date

import pytest

from gitdream.agents import make_agent
from gitdream.config import defaults
from gitdream.contract import DistillContext, DistillResult, MemoryView
from gitdream.dream import salience
from gitdream.engines.offline import NO_SUBJECT, SUBJECTLESS_MARGIN, OfflineEngine, clean_text
from gitdream.units import Entry
from tests.standins import simple_absolutize, simple_slugify

AGENT = make_agent("agents/ops", defaults())
MEM = "agents/ops/memory"
LOG = f"{MEM}/logs/2026/03/2026-03-02.md"
COMMIT = "1a2b3c4d5e6f" + "0" * 28
DAY = date(2026, 3, 2)


def _entry(line: int, text: str, *context: str) -> Entry:
    return Entry(LOG, line, line, text, DAY, tuple(context))


def _distill(entries: list[Entry], files: dict[str, str] | None = None, **overrides: object) -> DistillResult:
    overrides.setdefault("max_new_topics", 100)
    cfg = defaults().with_overrides({k.replace("__", "."): (v, "test") for k, v in overrides.items()})
    engine = OfflineEngine(cfg, slugify=simple_slugify, absolutize=simple_absolutize)
    return engine.distill(DistillContext(AGENT, entries, MemoryView(dict(files or {})), cfg, COMMIT, DAY))


def _topic(slug: str, *facts: str) -> str:
    lines = "".join(
        f"- {fact}\n  Sources: `{MEM}/logs/2026/03/2026-03-01.md#L{n}-L{n}@{COMMIT[:12]}` — seen 1 time, "
        "first 2026-03-01, last 2026-03-01\n"
        for n, fact in enumerate(facts, 1)
    )
    return (
        f"---\nname: {slug}\ndescription: d\ntype: project\norigin: gitdream\n---\n\n# {slug}\n\n"
        f"<!-- gitdream:begin facts -->\n{lines}<!-- gitdream:end facts -->\n"
    )


def _chance(entry: Entry) -> float:
    text = clean_text(entry, simple_absolutize)
    return salience.judge(entry, text, salience.Cues.configured([], []), 0.0).probability


def _bar_just_under(entry: Entry) -> float:
    """A salience bar the entry clears, but by less than SUBJECTLESS_MARGIN: a weak fact."""
    chance = _chance(entry)
    bar = salience.probability(salience.logit(chance) - SUBJECTLESS_MARGIN / 2)
    assert 0.0 < bar < chance
    return bar


SUBJECTLESS = [
    ("en", "- it is usually better to wait a little before trying again"),
    ("zh", "- 通常最好稍等一会儿再重试"),
    ("ko", "- 보통은 조금 기다렸다가 다시 시도하는 편이 낫다"),
]


@pytest.mark.parametrize(("lang", "text"), SUBJECTLESS)
def test_a_weak_fact_that_names_nothing_is_read_and_not_kept(lang: str, text: str) -> None:
    """No catch-all: a fact with no tag, no name, no file and no fit heading, above the
    salience bar but not by the margin, is not kept — not dumped into a "general" topic."""
    entry = _entry(3, text, "2026-03-02", "Heartbeat ~08:15 UTC")
    result = _distill([entry], offline__salience_threshold=_bar_just_under(entry))
    assert result.units == [], lang
    assert result.skipped == [(entry.id, NO_SUBJECT)]
    assert result.stats["not_kept"] == 1


@pytest.mark.parametrize(("lang", "text"), SUBJECTLESS)
def test_the_verdict_on_a_fact_that_names_nothing_does_not_depend_on_memory(lang: str, text: str) -> None:
    """Read again with a topic in memory it is like (`--full`, a lost watermark), the same
    weak entry is judged the same: not kept."""
    entry = _entry(3, text, "2026-03-02")
    bar = _bar_just_under(entry)
    files = {f"{MEM}/retries.md": _topic("retries", clean_text(entry, simple_absolutize) + " again")}
    for memory in ({}, files):
        result = _distill([entry], memory, offline__salience_threshold=bar)
        assert result.units == [] and result.skipped == [(entry.id, NO_SUBJECT)], (lang, sorted(memory))


@pytest.mark.parametrize(
    ("held", "text"),
    [
        (
            "Backups of the billing database run nightly and are kept for thirty days.",
            "- restore drills on the billing database run monthly from the nightly backups",
        ),
        ("计费数据库的备份每晚运行，保留三十天。", "- 计费数据库的恢复演练每月从每晚的备份运行"),
        (
            "결제 데이터베이스 백업은 매일 밤 실행되고 삼십 일 보관된다.",
            "- 결제 데이터베이스 복구 훈련은 매달 실행되고 매일 밤 백업을 쓴다",
        ),
    ],
)
def test_a_fact_that_names_nothing_joins_the_topic_most_like_it(held: str, text: str) -> None:
    """A fact whose words are those of an existing topic, though no name says so, joins
    that topic instead of a catch-all."""
    files = {
        f"{MEM}/billing-db.md": _topic("billing-db", held),
        f"{MEM}/deploys.md": _topic("deploys", "Deploys go out on Tuesdays after the smoke test."),
    }
    (unit,) = _distill([_entry(4, text)], files, offline__salience_threshold=0.0).units
    assert (unit.action, unit.topic) == ("create", "billing-db")


def test_a_fact_that_names_only_a_file_gets_that_files_topic() -> None:
    """Named by nothing else the material shares, a fact about one file is filed under it."""
    (unit,) = _distill(
        [_entry(5, "- extended lag-probe.sh so that it retries twice")], offline__salience_threshold=0.0
    ).units
    assert unit.topic == "lag-probe"


def test_a_fact_that_names_nothing_follows_its_section() -> None:
    """Once the other facts are placed, a fact that names nothing and is like no topic
    goes where the entries under the same headings of the same file went; in a file
    without headings the whole file is no section."""
    entries = [
        _entry(
            10,
            "- `lag-probe.sh` alerts when replica lag passes 30 seconds",
            "2026-03-02",
            "Heartbeat ~08:15 UTC",
        ),
        _entry(
            12,
            "- it is usually better to wait a little before trying again",
            "2026-03-02",
            "Heartbeat ~08:15 UTC",
        ),
    ]
    units = _distill(entries, offline__salience_threshold=0.0).units
    assert [u.topic for u in units] == ["lag-probe", "lag-probe"]
    headless = [Entry(LOG, n, n, e.text, DAY) for n, e in ((10, entries[0]), (20, entries[1]))]
    units = _distill(headless, offline__salience_threshold=0.0).units
    assert [u.topic for u in units] == ["lag-probe", "general"]
