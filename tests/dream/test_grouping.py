"""Topics by subject (issue #14, item 3): names, families, unfit names, matching existing
topics by content, and the offline engine grouping entries across days."""

from __future__ import annotations

import re
from datetime import date

import pytest

from gitdream.agents import make_agent
from gitdream.config import defaults
from gitdream.contract import DistillContext, MemoryView
from gitdream.dream import grouping
from gitdream.engines import offline
from gitdream.engines.offline import OfflineEngine
from gitdream.units import Entry
from tests.standins import simple_absolutize, simple_slugify

AGENT = make_agent("agents/ops", defaults())
MEM = "agents/ops/memory"
COMMIT = "1a2b3c4d5e6f" + "0" * 28


@pytest.mark.parametrize(
    "name",
    [
        "Heartbeat ~14:55 UTC (SELF)",
        "Clawk (1 write + 1 like)",
        "Writes (3)",
        "3 writes 2 likes",
        "2026-02-10 Daily Log",
        "Turn 12",
        "Session 4",
        "Carryover from Feb 10",
        "14:55 하트비트",
        "3月2日の作業",
        "Notes",
        "오늘",
    ],
)
def test_clock_dates_turns_tallies_and_generic_words_never_name_a_topic(name: str) -> None:
    assert grouping.unfit_name(name)


@pytest.mark.parametrize("name", ["Moltbook", "fork-fingerprint", "Deploys", "배포", "デプロイ手順", "部署"])
def test_subjects_name_topics(name: str) -> None:
    assert not grouping.unfit_name(name)


@pytest.mark.parametrize(
    ("language", "name"),
    [
        # a clock time: an hour with its counter, a moment of the day before a number
        ("ko", "오후 3시 점검"),
        ("zh", "下午3点"),
        ("ja", "午後3時"),
        ("ja", "１５時の確認"),  # full-width digits
        # an ordinal of a turn or a round
        ("zh", "第3次心跳"),
        ("zh", "第二轮"),
        ("zh", "第2輪"),
        ("ja", "第5回"),
        ("ja", "3回目"),
        ("ko", "3회차"),
        ("ko", "3번째"),
        ("ko", "두 번째"),
        # a heartbeat, alone or with its number
        ("ja", "ハートビート 3"),
        ("ko", "하트비트 3"),
        ("zh", "心跳检查"),
        # a tally: two counted actions
        ("zh", "写了3条 点赞2次"),
        ("ko", "2회 작성 1회 좋아요"),
        ("ja", "投稿3件 いいね2回"),
        # a date, a month, a weekday; a session-template slot made of generic words only
        ("zh", "2026年2月10日"),
        ("ko", "2월 10일"),
        ("ko", "2월 회고"),
        ("ja", "月曜日"),
        ("zh", "星期一"),
        ("ko", "오늘의 할 일"),
        ("ja", "今日の作業"),
        ("ko", "배운 점"),
    ],
)
def test_clock_turn_heartbeat_tally_and_date_names_in_chinese_korean_japanese_never_name_a_topic(
    language: str, name: str
) -> None:
    assert grouping.unfit_name(name), (language, name)


@pytest.mark.parametrize(
    "name", ["第三方库", "24時間監視", "部署规则", "3个副本", "周一例会", "今日のタスク"]
)
def test_a_subject_beside_a_count_or_a_day_still_names_a_topic(name: str) -> None:
    # "third-party library", "24-hour monitoring", "deploy rules", "3 replicas", "Monday
    # meeting", "Today's tasks" (fit, as in English; a slot only by `template_slots`)
    assert not grouping.unfit_name(name)


def test_name_families_fold() -> None:
    assert (
        grouping.family("lessons")
        == grouping.family("lessons-learned")
        == grouping.family("Lessons learned today")
    )
    assert grouping.family("feedback_testing") == grouping.family("Testing")  # Claude Code's type prefix
    assert grouping.family("Deploys") != grouping.family("Backups")


def test_names_are_files_folders_proper_names_and_short_bold_labels() -> None:
    text = "Moltbook bans retries; see `scripts/fork-fingerprint.py` and **Trust Stack** notes by Gendolf."
    found = grouping.names(text, proper={"moltbook"})
    assert {"Moltbook", "fork-fingerprint", "scripts", "Trust Stack", "Gendolf"} <= set(found)
    assert "Moltbook" not in grouping.names(text)  # a capital opening a sentence is not yet a name


def test_terms_of_spaced_and_unspaced_scripts() -> None:
    assert "배포" in grouping.terms("배포는 금요일에 하지 않는다")  # the particle 는 is dropped
    assert "部署" in grouping.terms("部署前先跑测试")  # bigrams
    assert "the" not in grouping.terms("the registry keeps tags")


def test_an_entry_joins_the_topic_it_names_and_not_one_sharing_a_common_word() -> None:
    matcher = grouping.TopicMatcher([["moltbook", "ban"], ["deploy", "friday"], ["ban"]])
    matcher.add_topic("moltbook", "Moltbook", ["Posts are rate limited."])
    matcher.add_names("moltbook", ["Moltbook"], own=True)
    matcher.add_topic("deploys", "Deploys", ["No deploys on Friday."])
    matcher.add_names("deploys", ["Deploys"], own=True)
    hit = matcher.best("Moltbook extends the ban after each failed captcha.", ["Moltbook"])
    assert hit is not None and hit[0] == "moltbook"
    assert matcher.best("The weather on Friday was grey.", []) is None


def test_a_human_topic_is_matched_by_the_names_its_text_mentions() -> None:
    matcher = grouping.TopicMatcher([])
    matcher.add_topic("oncall", "On-call contacts", ["Page the Postgres rotation; open a Grafana ticket."])
    matcher.add_names("oncall", ["On-call contacts"], own=True)
    matcher.add_names("oncall", ["Postgres", "Grafana"])
    hit = matcher.best(
        "Postgres replica lag shows in Grafana first; page the rotation.", ["Postgres", "Grafana"]
    )
    assert hit is not None and hit[0] == "oncall"


def _entry(day: int, line: int, text: str, *context: str) -> Entry:
    path = f"{MEM}/logs/2026/03/2026-03-{day:02d}.md"
    return Entry(path, line, line, text, date(2026, 3, day), tuple(context))


def _distill(entries: list[Entry], files: dict[str, str] | None = None, **overrides: object):
    cfg = defaults().with_overrides({k.replace("__", "."): (v, "test") for k, v in overrides.items()})
    engine = OfflineEngine(cfg, slugify=simple_slugify, absolutize=simple_absolutize)
    return engine.distill(
        DistillContext(AGENT, entries, MemoryView(dict(files or {})), cfg, COMMIT, date(2026, 3, 9))
    )


def test_entries_about_one_subject_across_days_and_headings_share_its_topic() -> None:
    entries = [
        _entry(2, 5, "- Moltbook: never retry a post that returned an id.", "Heartbeat 09:00 UTC", "Notes"),
        _entry(3, 7, "- Moltbook status checked, still quiet.", "Heartbeat 11:00 UTC"),
        _entry(
            4,
            9,
            "- Each failed captcha on Moltbook EXTENDS the ban; never comment without the solver.",
            "Build",
        ),
        _entry(5, 3, "- Moltbook posts must stay under 280 characters.", "Lessons"),
    ]
    result = _distill(entries)
    kept = [u for u in result.units if u.action == "create"]
    assert len(kept) == 3 and {u.topic for u in kept} == {"moltbook"}
    assert all("heartbeat" not in u.topic for u in result.units)


def test_an_existing_human_topic_gets_the_entries_about_it_by_content() -> None:
    files = {
        f"{MEM}/oncall.md": "---\nname: On-call contacts\ntype: reference\n---\n\n"
        "# On-call contacts\n\n- Postgres: page the data team's rotation.\n- Grafana alerts go to #ops.\n",
    }
    entries = [
        _entry(
            6,
            4,
            "- Never fail over Postgres before the data team confirms; Grafana shows the lag first.",
            "Incidents",
        )
    ]
    (unit,) = _distill(entries, files).units
    assert unit.topic == "oncall"


def test_new_topics_per_run_are_capped_and_the_rest_waits_in_salience_order() -> None:
    entries = [
        Entry(
            f"{MEM}/logs/2026/03/2026-03-02.md",
            n,
            n,
            f"- [{name}] Never restart {name} without draining it first.",
            date(2026, 3, 2),
            ("Lessons",),
            tags=(name,),
        )
        for n, name in enumerate(["kafka", "redis", "nginx", "envoy"], start=1)
    ]
    result = _distill(entries, max_new_topics=2)
    assert len({u.topic for u in result.units}) == 2
    assert len(result.deferred) == 2  # pending, not dropped: the next run creates them
    assert all("max_new_topics (2)" in why for _eid, why in result.deferred)


def test_entries_read_and_not_kept_are_counted_by_reason_and_never_pending() -> None:
    entries = [
        _entry(2, 1, "- Inbox: 11 matches, 0 unread, 180 discover", "Heartbeat 09:00"),
        _entry(2, 2, "- Let me check the dashboard first.", "Heartbeat 09:00"),
        _entry(2, 3, "- Never deploy on Friday afternoon.", "Rules"),
    ]
    result = _distill(entries)
    reasons = dict(result.skipped)
    assert reasons[entries[0].id] == "not kept: status snapshot"
    assert reasons[entries[1].id] == "not kept: narration"
    assert result.failed_entries == result.deferred == [] and result.stats["not_kept"] == 2
    assert [u.sources for u in result.units] == [(entries[2].id,)]


def test_max_units_keeps_the_most_salient_and_defers_the_rest() -> None:
    entries = [
        _entry(2, 1, "- Keep 10 image tags in the registry.", "Rules"),  # kept, less salient
        _entry(
            2, 2, "- Never promote a build before its migrations ran, because checkout breaks.", "Lessons"
        ),
    ]
    result = _distill(entries, max_units=1)
    assert [u.sources for u in result.units] == [(entries[1].id,)]
    assert [eid for eid, _why in result.deferred] == [entries[0].id]


def test_in_chinese_japanese_or_korean_text_a_latin_word_is_a_name() -> None:
    assert "docformatter" in grouping.names("docformatter は箇条書きの後の空行を消すため、オプションが必要。")
    assert "pyright" in grouping.names("pyright strict 模式下必须写明返回类型。")
    assert "pyright" not in grouping.names("run pyright strict before you commit")  # English: a plain word


def test_a_topics_name_written_in_lower_case_still_names_it() -> None:
    matcher = grouping.TopicMatcher([])
    matcher.add_topic("lobchan-api-notes", "Lobchan API notes", ["Auth: Bearer KEY"])
    matcher.add_names("lobchan-api-notes", ["Lobchan API notes"], own=True)
    hit = matcher.best("lobchan posts are anonymous by default", [])
    assert hit is not None and hit[0] == "lobchan-api-notes"
    assert matcher.best("posts are anonymous by default", []) is None


def test_one_shared_file_name_is_subject_enough() -> None:
    matcher = grouping.TopicMatcher([])
    matcher.add_topic("scripts", "Scripts", ["`scripts/fork-fingerprint.py` — fork detection"])
    matcher.add_names("scripts", ["Scripts"], own=True)
    matcher.add_names("scripts", ["fork-fingerprint"])
    hit = matcher.best("fork-fingerprint.py --compare mode compares two real files", ["fork-fingerprint"])
    assert hit is not None and hit[0] == "scripts"


def test_a_possessive_is_the_name() -> None:
    assert "Gendolf" in grouping.names("- The agent of Gendolf's team sends empty mails.")
    assert "Gendolf" in grouping.names("- Gendolf's agent sends empty mails.", (), {"gendolf"})


def test_a_heading_that_names_a_file_names_the_topic_after_the_file_not_the_slot() -> None:
    entries = [
        _entry(2, 1, "- Commands: keygen, sign, verify", "2026-03-02", "Build: isnad-sign.py v2"),
        _entry(2, 2, "- Keys are Ed25519 and never leave the box", "2026-03-02", "Build: isnad-sign.py v2"),
    ]
    result = _distill(entries, offline__salience_threshold=0.0)
    assert {u.topic for u in result.units} == {"isnad-sign"}
    assert {u.title for u in result.units} == {"isnad-sign"}  # a file's name as written, not "Isnad-sign"


@pytest.mark.parametrize("term", ["pre-commit", "dry-run", "rate-limit"])
def test_facts_naming_nothing_else_group_by_the_compound_term_they_share(term: str) -> None:
    entries = [
        _entry(2, n, f"- the {term} step {what} before every merge", "Heartbeat 09:00")
        for n, what in enumerate(
            ["must run", "fixes trailing spaces", "never stages unrelated files"], start=1
        )
    ]
    result = _distill(entries, offline__salience_threshold=0.0)
    assert {u.title for u in result.units} == {term}
    assert (
        grouping.keyword("the deploy step runs before every merge", {"deploy": 5}, grouping.TopicMatcher([]))
        is None
    )


@pytest.mark.parametrize(
    ("fact", "restated", "other"),
    [
        (
            "NEVER retry a post that returned an ID, even if it appears ghost.",
            "Never retry a post that returned an ID",
            "Retry a failed upload after the rate limit resets.",
        ),
        (
            "部署前必须先备份数据库，否则无法回滚。",
            "部署前必须先备份数据库",
            "周五不要在生产环境发布新版本。",
        ),
        (
            "배포 전에 데이터베이스를 반드시 백업해야 롤백할 수 있다.",
            "배포 전에 데이터베이스를 반드시 백업해야 한다",
            "금요일에는 운영 환경에 새 버전을 배포하지 않는다.",
        ),
    ],
)
def test_a_shorter_statement_held_by_a_fact_restates_it_in_any_language(
    fact: str, restated: str, other: str
) -> None:
    """Issue 14, one fact many sources: a text whose terms the fact holds restates it,
    whatever else the fact says; a text about something else does not."""
    index: grouping.Restatements[str] = grouping.Restatements(lambda _term: 1.0)
    index.add("fact", fact)
    index.add("other", other)
    assert grouping.containment(set(grouping.terms(restated)), set(grouping.terms(fact)), lambda _t: 1.0) >= (
        grouping.RESTATE_CONTAINMENT
    )
    assert index.find(restated) == "fact"
    assert index.find(other) == "other"
    assert index.find(restated, accept=lambda key: key != "fact") is None


def test_restatement_weighs_rare_terms_more() -> None:
    """Sharing only common words is not restating: the rarer-weighted share decides."""
    rare = {"captcha", "solver"}
    idf = {"captcha": 5.0, "solver": 5.0}.get
    fact = {"captcha", "solver", "always", "use", "the"}
    assert grouping.containment({"captcha", "solver", "always"}, fact, lambda t: idf(t) or 0.5) > 0.9
    assert grouping.containment({"always", "use", "moon", "rocket"}, fact, lambda t: idf(t) or 0.5) < 0.6
    assert rare <= fact


def test_words_of_a_line_in_capitals_are_emphasis_not_names() -> None:
    """Regression test: the heading "FIRST CROSS-AGENT ATTESTATION ON ISNAD" made "FIRST"
    a name mentioned on many days, and a topic first.md."""
    assert grouping.names("FIRST CROSS-AGENT ATTESTATION ON ISNAD") == []
    assert "first" not in grouping.proper_names(["Notes: FIRST LIVE TEST OF THE API"])
    assert "Stripe" in grouping.names("Deploy with the API of Stripe")


def test_a_compound_of_a_topic_name_family_is_about_that_topic() -> None:
    """A lower-case compound of a topic's family ("isnad-rfc" for topic isnad-sign) names
    that topic, as "lessons-learned" folds into "lessons"."""
    matcher = grouping.TopicMatcher([grouping.terms("isnad-sign keygen"), grouping.terms("deploy notes")])
    matcher.add_topic("isnad-sign", "isnad-sign", ["Commands: keygen, sign, verify"])
    matcher.add_names("isnad-sign", ["isnad-sign"], own=True)
    matcher.add_topic("deploys", "Deploys", ["Rollbacks need the previous image tag"])
    matcher.add_names("deploys", ["Deploys"], own=True)
    match = matcher.best("created an appendix in the isnad-rfc repo")
    assert match is not None and match[0] == "isnad-sign"


def test_a_name_of_several_capitalised_words_is_one_name_and_a_bold_label_opens_a_clause() -> None:
    from gitdream.dream import grouping

    assert grouping.names("List the books from Apple Books, newest first")[0] == "Apple Books"
    assert "Extended" not in grouping.names("**Build:** Extended `deploy-helper.py` with a dry-run mode")
    # A semicolon does not open a sentence: the capital after it is a name's.
    assert "Grafana" in grouping.names("Never fail over before the team confirms; Grafana shows the lag")


# --- Related: links by the names topics are about (grouping.relations) ---

_SCRIPTS = [f"Wrote `scripts/tool-{n}.py` that parses export {n}." for n in range(20)]


def test_a_topic_about_another_topics_name_is_related_to_it() -> None:
    topics = {
        "deploys": (
            "Deploys",
            ["Rollbacks need the registry's previous image tag.", "Deploys run at night."],
        ),
        "registry": ("Registry", ["The registry keeps the last 10 image tags."]),
        "cooking": ("Cooking", ["Pasta needs salted water."]),
    }
    links = grouping.relations(topics, topics)
    assert links["deploys"] == ["registry"]
    assert links["registry"] == ["deploys"]
    assert links["cooking"] == []


def test_a_name_mentioned_once_among_many_facts_relates_nothing() -> None:
    # "Scripts" mentions Clawk in one fact of twenty-one: that fact's subject, not the topic's.
    topics = {
        "scripts": ("Scripts", [*_SCRIPTS, "Wrote `scripts/poster.py` for Clawk replies."]),
        "clawk": ("Clawk", ["Clawk replies are limited to 280 characters.", "Clawk has no edit."]),
    }
    assert grouping.relations(topics, topics) == {"scripts": [], "clawk": []}


def test_a_persons_list_is_read_item_by_item_not_as_one_text_about_everything() -> None:
    # A person's topic arrives as one text per item (integrate splits its body): a list that
    # names each subject once is not "about" every one of them.
    subjects = ("Moltbook", "Lobchan", "Clawk", "Gendolf", "Keenable", "AgentMail", "Shellmates", "Telegram")
    queue = [f"- [ ] Post about {name} someday" for name in subjects]
    topics = {
        "digest-queue": ("Digest Queue", queue),
        "clawk": ("Clawk", ["Clawk replies are limited to 280 characters.", "Clawk has no edit."]),
        "gendolf": ("Gendolf", ["Gendolf runs the isnad sandbox.", "Gendolf answers within a day."]),
    }
    links = grouping.relations(topics, topics)
    assert links["clawk"] == [] and links["gendolf"] == []


def test_everyday_words_in_common_relate_nothing_but_alike_facts_do() -> None:
    topics = {
        "signer": (
            "Signer",
            ["The signer makes Ed25519 keys and signs attestations as JWK.", "Verify with the jwk command."],
        ),
        "isnad": (
            "isnad",
            ["isnad signs attestations with Ed25519 keys and JWK output.", "The jwk command verifies."],
        ),
        "notes": ("Notes", ["The tool reads the id from the API.", "A tool writes the API log."]),
        "queue": ("Queue", ["The API tool returns an id.", "Every tool hits the API twice."]),
        # What makes "tool", "API", "id" everyday words: most of the agent's facts hold them.
        "daily": (
            "Daily",
            [f"The {w} tool calls the API and logs the id." for w in ("mail", "chat", "feed", "wiki")],
        ),
    }
    links = grouping.relations(topics, topics)
    assert links["signer"] == ["isnad"]
    assert "queue" not in links["notes"] and "notes" not in links["queue"]


# --- a session-template slot names no topic (offline.template_slots) ---

_ROUTINE = [
    ("Heartbeat 09:00 UTC", "`gh api` pages at 100 items, so always pass --paginate for full lists."),
    ("Heartbeat 11:00 UTC", "Postgres VACUUM FULL locks the table; never run it during business hours."),
    (
        "Heartbeat 13:00 UTC",
        "Docker caching breaks when COPY comes before pip install, so copy requirements first.",
    ),
    ("Heartbeat 15:00 UTC", "Cron runs with a bare PATH, so scripts must use absolute paths."),
]
_OTHER = [
    ("Platform checks", "- Mail: 3 unread, nothing urgent."),
    ("Platform checks", "- Chat: quiet."),
    ("Replies", "- Replied to the thread about caching."),
    ("Replies", "- Liked two posts."),
]


def _routine(slot: str) -> list[Entry]:
    notes = [_entry(2, 10 * n + 2, f"- {text}", beat, slot) for n, (beat, text) in enumerate(_ROUTINE)]
    return notes + [_entry(2, 60 + n, text, "Heartbeat 17:00 UTC", h) for n, (h, text) in enumerate(_OTHER)]


def _terms(entry: Entry) -> set[str]:
    return set(grouping.terms(entry.text))


@pytest.mark.parametrize("slot", ["Research", "研究メモ", "조사", "Research: deep dive"])
def test_a_heading_every_heartbeat_repeats_over_unrelated_notes_is_a_slot(slot: str) -> None:
    slots = offline.template_slots(_routine(slot), _terms)
    assert re.split(r":\s+", slot.casefold())[0] in slots


def test_a_heading_every_day_repeats_over_one_subject_is_not_a_slot() -> None:
    days = [
        (2, "- The captcha must be solved before each comment."),
        (3, "- A failed captcha extends the suspension by a day."),
        (4, "- Comments without a solved captcha fail silently."),
    ]
    entries = [_entry(day, 3, text, "Moltbook") for day, text in days]
    entries += [_entry(5, 60 + n, text, "Heartbeat 17:00 UTC", h) for n, (h, text) in enumerate(_OTHER)]
    assert "moltbook" not in offline.template_slots(entries, _terms)


def test_a_slot_names_no_topic_and_leads_no_fact_even_in_a_run_that_reads_part_of_the_file() -> None:
    entries = _routine("Research")
    cfg = defaults()
    engine = OfflineEngine(cfg, slugify=simple_slugify, absolutize=simple_absolutize)
    # A later run distils two of the entries (the rest consolidated or left for later): the
    # file's outline still shows the heading repeating under every heartbeat.
    context = DistillContext(
        AGENT, entries[:2], MemoryView({}), cfg, COMMIT, date(2026, 3, 9), outline=entries
    )
    result = engine.distill(context)
    assert result.units
    for unit in result.units:
        assert grouping.family(unit.title) != "research"
        assert not unit.body.startswith("Research")


# --- an inline label that is a template slot names no topic (offline.label_slots) ---

_PROSE = [
    "The files of the project are small; the code lives in one package.",
    "Both sections of the report name the code that changed.",
    "We read Clawk every day; the Clawk API pages at 50 items.",
]


@pytest.mark.parametrize(
    ("label", "slot"),
    [
        ("Files and Code Sections", True),  # every word also written small: a template's part
        ("Pending Tasks", False),  # "pending", "tasks" never written small here: no evidence
        ("Clawk reply", False),  # Clawk is capitalised inside sentences: a name
        ("Apple Books", False),  # never written small
        ("`conftest.py`", False),  # a file is a name
        ("今日の作業", True),  # caseless: generic words only ("today's work")
    ],
)
def test_a_label_made_of_common_words_only_holds_no_name(label: str, slot: bool) -> None:
    assert grouping.Casing(_PROSE).holds_no_name(label) is slot


_SUMMARY_SLOT = {  # one label over unrelated notes, day after day, in three languages
    "研究：": [
        "缓存满了以后 Redis 会报错，所以策略必须设为 allkeys-lru。",
        "章鱼的每条腕足都有独立的神经节。",
        "拜占庭容错需要 3f+1 个节点。",
    ],
    "조사: ": [
        "VACUUM FULL은 테이블을 잠그므로 업무 시간에 실행하면 안 된다.",
        "고양이는 높은 곳을 좋아한다.",
        "화성의 대기는 대부분 이산화탄소다.",
    ],
    "調査：": [
        "毎晩のバックアップは必ず別のディスクに置くこと。",
        "猫は高い場所を好む。",
        "火星の大気は主に二酸化炭素だ。",
    ],
}


def test_a_label_every_day_repeats_over_unrelated_notes_is_a_slot_in_any_language() -> None:
    entries = [
        _entry(2 + day, 3 + n, f"- {label}{text}")
        for n, (label, texts) in enumerate(_SUMMARY_SLOT.items())
        for day, text in enumerate(texts)
    ]
    slots = offline.label_slots(entries, _terms, grouping.Casing(e.text for e in entries))
    assert {"研究", "조사", "調査"} <= slots


def test_the_engine_tells_integration_the_slots_of_the_material_it_read() -> None:
    # the description of a topic is chosen at integration (`describe.summary_of`): it must
    # know the slots the engine found, in a script without case too
    entries = [
        _entry(2 + day, 3 + n, f"- {label}{text}")
        for n, (label, texts) in enumerate(_SUMMARY_SLOT.items())
        for day, text in enumerate(texts)
    ]
    assert {"研究", "조사", "調査"} <= _distill(entries).slots


def test_a_label_naming_its_subject_every_day_is_not_a_slot() -> None:
    days = [
        "Moltbook: never retry a post that returned an id.",
        "Moltbook: the octopus thread got 40 replies.",
        "Moltbook: Byzantine fault tolerance needs 3f+1 nodes.",
        "We post on Moltbook daily; Moltbook rate-limits at 20 comments an hour.",
    ]
    entries = [_entry(2 + n, 3, f"- {text}") for n, text in enumerate(days)]
    proper = grouping.proper_names(e.text for e in entries)
    assert "moltbook" not in offline.label_slots(
        entries, _terms, grouping.Casing(e.text for e in entries), proper
    )


_COMPACTION = [  # two summaries of one template, each item led by its slot label
    (3, "- Files and Code Sections: `README.md` — the project documentation; it explains setup and testing."),
    (5, "- Files and Code Sections: `conftest.py` — adds the project root to the module path for pytest."),
    (
        7,
        "- Key Technical Concepts: Python packaging evolution; implicit namespace packages; the code of pytest plugins.",
    ),
    (9, "- The code must stay small: every line of code should justify its existence."),
    (11, "- Code review happens before each commit, because sections of code rot fast."),
    (13, "- Keep the files of the project few: one package, one tests folder."),
    (15, "- Tests must live in the specs folder so the code and its sections stay apart."),
]


def test_a_slot_label_of_a_summary_template_never_names_a_topic() -> None:
    entries = [_entry(3, line, text) for line, text in _COMPACTION]
    result = _distill(entries, offline__salience_threshold=0.0)
    assert result.units
    for unit in result.units:
        assert grouping.family(unit.title) not in {"code", "file", "files", "section"}, unit.title


def test_kept_entries_under_clock_turn_heartbeat_and_tally_headings_in_any_language_name_no_topic() -> None:
    headings = [
        "오후 3시 점검",
        "第3次心跳",
        "ハートビート 3",
        "写了3条 点赞2次",
        "2회 작성 1회 좋아요",
        "第5回",
    ]
    texts = [
        "- 배포 전에는 반드시 마이그레이션 스크립트를 스테이징에서 먼저 실행해야 한다.",
        "- 部署前必须先在预发环境跑一遍迁移脚本，因为生产库没有回滚。",
        "- 本番のデプロイ前に必ずステージングでマイグレーションを流すこと。",
        "- 评论区的限流是每小时 20 条，超过会被封 24 小时。",
        "- 댓글은 한 시간에 20개까지만 허용된다.",
        "- 回数制限は 1 時間 20 件まで。",
    ]
    entries = [
        _entry(2 + n, 3, text, heading) for n, (text, heading) in enumerate(zip(texts, headings, strict=True))
    ]
    result = _distill(entries, offline__salience_threshold=0.0)
    assert len(result.units) == len(entries)
    for unit in result.units:
        assert not grouping.unfit_name(unit.title) or unit.title == "General", unit.title
        assert not any(unit.body.startswith(h) for h in headings), unit.body  # no clock as its subject


_ALERTMANAGER = [
    "- Alertmanager must run as a cluster of three replicas, because a single instance loses its silences on restart.",
    "- Alertmanager routes an alert by its team label; an alert without one goes to the default receiver and nobody sees it.",
    "- Alertmanager inhibition rules must list the equal labels, otherwise one critical alert mutes every warning of the team.",
]
_DATABASE = (
    "---\nname: Database\ntype: reference\n---\n\n# Database\n\n"
    "- PostgreSQL runs as a cluster of three nodes; the primary must never restart without a replica in sync.\n"
    "- Alert the team when replication lag passes 30 seconds; a warning label goes to the default receiver.\n"
    "- Silences of the primary on restart mean maintenance.\n"
)


def test_a_name_that_always_opens_its_sentence_is_a_name() -> None:
    texts = [t.removeprefix("- ") for t in _ALERTMANAGER]
    proper = grouping.proper_names(texts)
    assert "alertmanager" in proper
    assert "Alertmanager" in grouping.names(texts[0], (), proper)
    # A verb or a cue word opening as many entries is no name: the material writes it, or a
    # word of its family, in lower case ("extracted"), or salience reads it as a cue ("Never").
    verbs = ["Extracts the claims of a post.", "Extracts links too.", "Extracts dates.", "It extracted none."]
    cues = ["Never retry a post.", "Never comment twice.", "Never skip the captcha."]
    assert not {"extracts", "never"} & grouping.proper_names(verbs + cues)


@pytest.mark.parametrize("with_human_topic", [False, True])
def test_facts_about_a_name_that_opens_their_sentences_get_its_topic_not_a_weakly_similar_one(
    with_human_topic: bool,
) -> None:
    entries = [
        _entry(2 + n, 3, text, heading)
        for n, (text, heading) in enumerate(
            zip(_ALERTMANAGER, ["Notes", "Incidents", "Lessons"], strict=True)
        )
    ]
    entries.append(
        _entry(6, 2, "- Never deploy on Friday afternoon, because nobody is around to roll back.", "Rules")
    )
    files = {f"{MEM}/database.md": _DATABASE} if with_human_topic else {}
    result = _distill(entries, files, offline__salience_threshold=0.0)
    placed = {u.sources[0]: u.topic for u in result.units}
    assert [placed[e.id] for e in entries[:3]] == ["alertmanager"] * 3
    assert "database" not in placed.values()  # a person's topic about PostgreSQL


def test_in_chinese_korean_or_japanese_text_a_latin_name_ends_where_the_text_resumes() -> None:
    assert grouping.names("Alertmanager必须以三副本集群运行。") == ["Alertmanager"]
    assert grouping.names("Alertmanager는 세 개의 복제본으로 운영해야 한다.") == ["Alertmanager"]
    assert "夜间模式" in grouping.names(
        "「夜间模式」必须默认关闭，否则截图会泄露。"
    )  # a term in corner brackets
    entries = [
        _entry(2, 3, "- Alertmanager必须以三副本集群运行，因为单实例重启会丢失静默规则。", "告警"),
        _entry(3, 5, "- Alertmanager按团队标签路由告警；没有该标签的告警会进默认接收器，没人看到。", "笔记"),
        _entry(4, 7, "- Alertmanager 的抑制规则必须列出相同的标签，否则一条严重告警会屏蔽所有警告。", "教训"),
    ]
    result = _distill(entries)
    assert {u.topic for u in result.units} == {"alertmanager"}


def test_a_persons_topic_about_none_of_an_entrys_names_is_not_joined_by_weak_similarity() -> None:
    documents = [
        ["alert", "label", "team"],
        ["replica", "primary"],
        ["deploy", "friday"],
        ["captcha", "post"],
    ]
    topic = "Page the team by label when the primary loses a replica; vacuum runs nightly at two."
    text = "Alertmanager pages the team by label when a replica is down."
    weak = {"fallback": grouping.NEAREST_COSINE, "min_shared": grouping.NEAREST_SHARED}
    for human in (False, True):
        matcher = grouping.TopicMatcher(documents)
        matcher.add_topic("database", "Database", [topic], human=human)
        matcher.add_names("database", ["Database"], own=True)
        matcher.add_names("database", ["PostgreSQL"])
        hit = matcher.best(text, ["Alertmanager"], **weak)
        assert (hit is None) == human  # gitdream's own topic is joined as before (step 7)
        assert matcher.best(text, [], **weak) is not None  # naming nothing: the topic most like it
        assert matcher.best(text.replace("Alertmanager", "PostgreSQL"), ["PostgreSQL"], **weak) is not None
