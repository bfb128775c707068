"""The offline engine: clean-up, topics, routing, near-duplicates, budget (DESIGN §9)."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from gitdream.agents import make_agent
from gitdream.config import defaults
from gitdream.contract import DistillContext, DistillResult, MemoryView
from gitdream.dream import memoryfiles
from gitdream.engines import get_engine
from gitdream.engines.offline import (
    FACT_MAX_CHARS,
    TOKEN_ONLY,
    OfflineEngine,
    clean_text,
    is_generic_heading,
)
from gitdream.text.similarity import jaccard
from gitdream.units import Entry
from tests.helpers import deadline
from tests.standins import simple_absolutize, simple_slugify

AGENT = make_agent("agents/ops", defaults())
MEM = "agents/ops/memory"
LOG = "agents/ops/memory/logs/2026/03/2026-03-02.md"
DAY = date(2026, 3, 2)
COMMIT = "1a2b3c4d5e6f" + "0" * 28


def entry(
    line: int, text: str, *, tags: tuple[str, ...] = (), context: tuple[str, ...] = (), **kw: Any
) -> Entry:
    return Entry(LOG, line, line, text, kw.pop("date", DAY), context, tags=tags, **kw)


def run(entries: list[Entry], files: dict[str, str] | None = None, **overrides: Any) -> DistillResult:
    """Distill `entries`. These tests are about the mechanics (clean-up, corroboration,
    topics, caps), so every entry is above the salience bar unless a test says otherwise;
    salience has its own tests (tests/dream/test_salience.py)."""
    overrides.setdefault("offline__salience_threshold", 0.0)
    overrides.setdefault("max_new_topics", 100)
    overrides.setdefault("max_units", 500)
    cfg = defaults().with_overrides({k.replace("__", "."): (v, "test") for k, v in overrides.items()})
    engine = OfflineEngine(cfg, slugify=simple_slugify, absolutize=simple_absolutize)
    context = DistillContext(AGENT, entries, MemoryView(dict(files or {})), cfg, COMMIT, DAY)
    return engine.distill(context)


def topic_file(slug: str, facts_block: str, *, owned: bool = True, name: str | None = None) -> str:
    meta = f"---\nname: {name or slug}\ndescription: d\ntype: project\n"
    meta += "origin: gitdream\n---\n" if owned else "---\n"
    return f"{meta}\n# {name or slug}\n\n<!-- gitdream:begin facts -->\n{facts_block}<!-- gitdream:end facts -->\n"


def fact_lines(text: str, ref: str) -> str:
    return f"- {text}\n  Sources: `{ref}` — seen 1 time, first 2026-01-05, last 2026-01-05\n"


def test_get_engine_builds_the_offline_engine() -> None:
    engine = get_engine("offline", defaults())
    assert engine.name == "offline"


def test_exact_duplicates_in_one_run_corroborate_the_first() -> None:
    result = run(
        [
            entry(1, "- Rollbacks need the previous image tag."),
            entry(2, "- rollbacks need the previous image tag"),
            entry(3, "- The staging database is read-only on Fridays."),
        ]
    )
    actions = [(u.action, u.corroborates) for u in result.units]
    assert actions == [
        ("create", None),
        ("corroborate", "Rollbacks need the previous image tag."),
        ("create", None),
    ]
    assert result.units[1].sources == (f"{LOG}#L2-L2",)
    assert result.stats["created"] == 2 and result.stats["corroborated"] == 1


def test_near_duplicates_corroborate_english_and_cjk() -> None:
    zh = "部署前必须先在预发布环境跑一遍冒烟测试"
    zh_near = "部署之前必须先在预发布环境跑一遍冒烟测试。"
    ja = "東京リージョンのサーバーは夜間バッチの間だけ応答が遅くなる"
    ja_near = "東京リージョンのサーバーは夜間バッチの間だけ応答がとても遅くなる"
    assert jaccard(zh, zh_near) >= 0.82
    assert jaccard(ja, ja_near) >= 0.82
    assert jaccard(zh, "部署后要检查监控面板上的错误率") < 0.5
    result = run(
        [
            entry(1, zh),
            entry(2, "部署后要检查监控面板上的错误率"),
            entry(3, zh_near),
            entry(4, ja),
            entry(5, ja_near),
            entry(6, "- Deploys must run the smoke test on staging first!"),
            entry(7, "- deploys must run the smoke tests on staging first"),
        ]
    )
    # Units come in log order; which of two near-duplicates creates the fact depends on
    # their salience (the more salient one is chosen first), the other corroborates it.
    by_line = {int(u.sources[0].rsplit("#L", 1)[1].split("-")[0]): u for u in result.units}
    assert sorted(by_line) == [1, 2, 3, 4, 5, 6, 7]
    assert by_line[2].action == "create"
    for first, second in ((1, 3), (4, 5), (6, 7)):
        actions = {by_line[first].action, by_line[second].action}
        assert actions == {"create", "corroborate"}, (first, second, actions)
        made, confirms = sorted((by_line[first], by_line[second]), key=lambda u: u.action != "create")
        assert confirms.corroborates == made.body


def test_short_entries_are_never_skipped_for_length() -> None:
    result = run([entry(1, "好。"), entry(2, "- ok"), entry(3, "→ ✓")])
    assert [u.body for u in result.units] == ["好。", "ok", "→ ✓"]
    assert result.skipped == []


def test_existing_facts_are_corroborated_where_they_live() -> None:
    files = {
        f"{MEM}/deploys.md": topic_file(
            "deploys", fact_lines("Rollbacks need the previous image tag.", "old.md#L1-L1@abcdefabcdef")
        )
    }
    result = run(
        [entry(1, "- [2026-03-02] rollbacks need the previous image tag", context=("Other",))], files
    )
    (unit,) = result.units
    assert (unit.action, unit.topic, unit.corroborates) == (
        "corroborate",
        "deploys",
        "Rollbacks need the previous image tag.",
    )
    assert unit.sources == (f"{LOG}#L1-L1",)


def test_material_read_again_is_already_consolidated() -> None:
    files = {
        f"{MEM}/deploys.md": topic_file(
            "deploys", fact_lines("Rollbacks need the previous image tag.", f"{LOG}#L1-L1@abcdefabcdef")
        )
    }
    result = run([entry(1, "- Rollbacks need the previous image tag.")], files, max_units=1)
    assert result.units == []
    assert result.skipped == [(f"{LOG}#L1-L1", "already consolidated (cited by a fact in deploys)")]


def test_relative_dates_become_absolute_from_the_entry_date() -> None:
    result = run(
        [
            entry(1, "- The certificate expires tomorrow", date=date(2026, 2, 27)),
            entry(2, "- 昨天发布了新版本", date=date(2026, 3, 1)),
        ]
    )
    assert [u.body for u in result.units] == [
        "The certificate expires 2026-02-28",
        "2026-02-28发布了新版本",
    ]


def test_tags_route_to_definitions() -> None:
    result = run(
        [
            entry(1, "- #skill Always run the linter before committing", tags=("skill",)),
            entry(2, "- Speak plainly, without jargon #soul", tags=("soul",)),
            entry(3, "- [agent] Never push to main directly", tags=("agent",)),
            entry(4, "- [deploy] #agent Ask before deploying", tags=("deploy", "agent")),
            entry(5, "- An ordinary fact", tags=("ops",)),
        ]
    )
    assert [(u.target, u.topic, u.body) for u in result.units] == [
        ("skill", "skill", "Always run the linter before committing"),
        ("soul", "soul", "Speak plainly, without jargon"),
        ("agent", "agent", "Never push to main directly"),
        ("agent", "agent", "Ask before deploying"),
        ("experience", "ops", "An ordinary fact"),
    ]
    assert result.stats["definition"] == 4 and result.stats["created"] == 1
    assert result.units[0].title == "Always run the linter before committing"


def test_definition_duplicates_corroborate_the_learned_block() -> None:
    files = {
        "agents/ops/SKILL.md": "# Skill\n\n<!-- gitdream:begin learned -->\n"
        + fact_lines("Always run the linter before committing", "x.md#L1-L1@abcdefabcdef")
        + "<!-- gitdream:end learned -->\n"
    }
    result = run([entry(1, "- always run the linter before committing #skill", tags=("skill",))], files)
    (unit,) = result.units
    assert (unit.target, unit.action, unit.corroborates) == (
        "skill",
        "corroborate",
        "Always run the linter before committing",
    )


def test_topic_is_tag_then_subject_then_fit_heading_never_a_clock_or_tally() -> None:
    result = run(
        [
            entry(1, "- [deploy] tagged fact", tags=("deploy",), context=("2026-03-02 Daily Log", "Backups")),
            entry(2, "- heading fact", context=("2026-03-02 Daily Log", "Backups", "Notes")),
            entry(3, "- plain fact", context=("2026-03-02 Daily Log", "Heartbeat ~00:33 UTC")),
            entry(4, "- writing fact", context=("Log", "Writing Actions (5)")),
            entry(5, "- writing fact two", context=("Log", "Clawk (3 writes + 2 likes)")),
        ]
    )
    assert [(u.topic, u.title) for u in result.units] == [
        ("deploy", "Deploy"),
        ("backups", "Backups"),  # "Notes" says what kind, not what about
        ("general", "General"),  # a heartbeat's clock time never names a topic
        ("general", "General"),  # nor a tally of actions
        ("general", "General"),
    ]


@pytest.mark.parametrize(
    ("heading", "generic"),
    [
        ("2026-02-10 Daily Log", True),
        ("Heartbeat ~00:33 UTC", True),
        ("Notes", True),
        ("Monday, March 2", True),
        ("2026年3月2日", True),
        ("作業ログ", True),
        ("Platform Checks", False),
        ("デプロイ手順", False),
        ("Status", False),
    ],
)
def test_generic_headings(heading: str, generic: bool) -> None:
    assert is_generic_heading(heading) is generic


def test_existing_topics_are_matched_by_slug_or_front_matter_name() -> None:
    files = {
        f"{MEM}/feedback_testing.md": "---\nname: feedback_testing\ndescription: d\ntype: feedback\n---\n\nbody\n",
        f"{MEM}/user_role.md": "---\nname: User role and collaboration style\ntype: user\n---\n\nbody\n",
        f"{MEM}/Deploys.md": "# Deploys\n",
    }
    result = run(
        [
            entry(1, "- a", tags=("feedback_testing",)),
            entry(2, "- b", context=("User role and collaboration style",)),
            entry(3, "- c", context=("deploys",)),
            entry(4, "- d", tags=("feedback-testing",)),
        ],
        files,
    )
    assert [u.topic for u in result.units] == ["feedback_testing", "user_role", "Deploys", "feedback_testing"]


@pytest.mark.parametrize(
    "name",
    [
        "../../etc/passwd",
        "MEMORY",
        "memory.md",
        "archive",
        "logs",
        ".hidden",
        "<!-- gitdream:end facts -->",
        "a/b\\c:d*e?f",
        "🔥🔥🔥",
        "x" * 500,
        "CON",
        "名前",
    ],
)
def test_hostile_topic_names_give_safe_slugs(name: str) -> None:
    files = {f"{MEM}/topic.md": "# human topic called topic\n"}
    result = run([entry(1, "- a fact", tags=(name.lower(),)), entry(2, "- other", context=(name,))], files)
    for unit in result.units:
        assert memoryfiles.safe_slug(unit.topic), unit.topic
        assert unit.topic.casefold() not in memoryfiles.RESERVED_SLUGS
        assert AGENT.is_memory_path(memoryfiles.topic_path(AGENT, unit.topic))
        assert "<!--" not in unit.title


def test_a_misbehaving_slugify_falls_back_to_a_hashed_slug() -> None:
    cfg = defaults()
    engine = OfflineEngine(cfg, slugify=lambda name, taken: "../escape", absolutize=simple_absolutize)
    context = DistillContext(AGENT, [entry(1, "- x #evil", tags=("evil",))], MemoryView({}), cfg, COMMIT, DAY)
    (unit,) = engine.distill(context).units
    assert unit.topic.startswith("topic-") and memoryfiles.safe_slug(unit.topic)


def test_clean_up_strips_markers_dates_and_tags() -> None:
    cases = {
        "- [2026-03-02] [deploy] Rollbacks need tags": "Rollbacks need tags",
        "* [ ] open task": "open task",
        "12) numbered\n   continued line": "numbered continued line",
        "[2026-03-02 10:22] [deploy] #deploy spaced": "spaced",
        "- [link](https://x.invalid) stays": "[link](https://x.invalid) stays",
        "- [TASK from ceo] → result": "[TASK from ceo] → result",
        "- fact with <!-- gitdream:end facts --> inside": "fact with &lt;!-- gitdream:end facts --> inside",
    }
    for raw, expected in cases.items():
        assert clean_text(Entry(LOG, 1, 1, raw, DAY, tags=("deploy",)), None) == expected


def test_empty_after_clean_up_is_skipped_with_reason() -> None:
    result = run([entry(1, "- "), entry(2, "- [2026-03-02]"), entry(3, "```"), entry(4, "---")])
    assert result.units == []
    assert [reason for _, reason in result.skipped] == ["empty after clean-up"] * 4


def test_long_entries_are_capped_without_splitting_graphemes() -> None:
    family = "👨\u200d👩\u200d👧\u200d👦"
    text = "a" * (FACT_MAX_CHARS - 3) + family + " tail " * 50
    flags = "🇯🇵" * 300
    combining = "e\u0301" * 300
    result = run([entry(1, text), entry(2, flags), entry(3, combining)])
    first, second, third = (u.body for u in result.units)
    assert len(first) <= FACT_MAX_CHARS and first.endswith("…")
    assert family not in first and "\u200d" not in first
    assert len(second) <= FACT_MAX_CHARS and (len(second) - 1) % 2 == 0
    assert third[:-1].endswith("\u0301")


def test_max_units_defers_the_rest_without_consuming_it() -> None:
    entries = [entry(i, f"- fact number {i} is about subject {i * 7919}") for i in range(1, 6)]
    result = run(entries, max_units=2)
    assert len(result.units) == 2
    deferred = [f"{LOG}#L{i}-L{i}" for i in range(3, 6)]
    assert result.failed_entries == [] and [eid for eid, _why in result.deferred] == deferred
    assert result.skipped == [(d, "over max_units (2); left for the next run") for d in deferred]
    assert result.deferred == result.skipped
    assert result.stats["deferred"] == 3 and result.stats["skipped"] == 0


def test_distill_is_deterministic() -> None:
    entries = [entry(i, f"- note {i % 7} about the build cache") for i in range(1, 40)]
    first = run(entries)
    second = run(entries)
    assert first.units == second.units and first.skipped == second.skipped


def test_default_helpers_are_imported_from_the_readers_modules() -> None:
    pytest.importorskip("gitdream.dream.slugs", reason="gitdream.dream.slugs lands with the readers branch")
    pytest.importorskip("gitdream.dream.dates", reason="gitdream.dream.dates lands with the readers branch")
    cfg = defaults()
    text = "- Always tag the release before deploying."
    context = DistillContext(
        AGENT, [entry(1, text, context=("Deploy notes",))], MemoryView({}), cfg, COMMIT, DAY
    )
    (unit,) = OfflineEngine(cfg).distill(context).units
    assert memoryfiles.safe_slug(unit.topic)


@pytest.mark.parametrize(
    "heading", ["[" * 200_000, "[a](" * 50_000, "Deploys [docs](https://x.test/a) [" * 20_000]
)
def test_topic_names_from_hostile_headings_take_linear_time(heading: str) -> None:
    """Regression test: the Markdown-link pattern of topic names rescanned a heading of many
    "[" from each one to its end; a long line of brackets as a heading hung the run."""
    from gitdream.engines.offline import clean_name

    with deadline(5, "clean_name on a 200 kB heading"):
        assert len(clean_name(heading)) <= 80
        is_generic_heading(heading)
    assert clean_name("[Deploys](https://x.test/d) and [CI](ci.md)") == "Deploys and CI"
    assert clean_name("[Git](https://en.wikipedia.org/wiki/Git_(software)) notes") == "Git notes"


@pytest.mark.parametrize("filler", [" ", "\t", "_", "__"])
def test_clean_up_is_linear_in_long_runs_between_words(filler: str) -> None:
    """Regression test: the trailing-tag pattern `\\s*(?<!\\S)#…$` and the emphasis pattern
    `_+(?!\\w)` were tried from each character of a long run of spaces or underscores
    followed by a word, quadratic in the run's length (200 kB: minutes)."""
    from gitdream.engines.offline import clean_name

    text = "- [2026-03-01] a" + filler * (200_000 // len(filler)) + "b #deploy"
    entry = Entry("m.md", 1, 1, text, date(2026, 3, 1), (), "log", None, ("deploy",))
    with deadline(5, "clean-up of a 200 kB run"):
        cleaned = clean_text(entry, simple_absolutize)
        name = clean_name("a" + filler * (200_000 // len(filler)) + "b")
    if filler.strip():  # one 200 kB token: never kept in part
        assert cleaned == "…" and name == "…"
    else:
        assert cleaned.startswith("a b") and "#deploy" not in cleaned and name == "A b"
    assert clean_text(Entry("m.md", 1, 1, "- fix it  #deploy", None, tags=("deploy",)), None) == "fix it"
    assert clean_name("__init__ and _private_ names") == "__init__ and _private_ names"  # identifiers


def test_different_numbers_never_corroborate() -> None:
    """Regression test: "took 06 minutes" and "took 09 minutes" were merged into one fact and
    the second number was lost."""
    result = run(
        [
            entry(1, "- [ops] Rebase day 06: the blue/green switch took 06 minutes."),
            entry(2, "- [ops] Rebase day 09: the blue/green switch took 09 minutes."),
            entry(3, "- [ops] Rebase day 09: the blue/green switch took 09 minutes!"),
        ]
    )
    assert [u.action for u in result.units] == ["create", "create", "corroborate"]


def test_a_users_question_is_not_a_fact() -> None:
    session = "agents/ops/sessions/s.jsonl"
    question = Entry(session, 1, 1, "Why did build 415 break checkout?", DAY, kind="transcript", role="user")
    answer = Entry(
        session, 2, 2, "A config key was missing in production.", DAY, kind="transcript", role="assistant"
    )
    result = run([question, answer])
    assert [u.body for u in result.units] == ["A config key was missing in production."]
    assert (question.id, "not kept: a user's question") in result.skipped


def test_an_entry_that_is_one_long_token_is_skipped_not_clipped() -> None:
    blob = "- [ops] " + "QUJD" * 200
    dump = "- [ops] see the dump: " + "QUJD" * 200
    result = run([entry(1, blob, tags=("ops",)), entry(2, dump, tags=("ops",))])
    assert [u.body for u in result.units] == ["see the dump:…"]
    assert result.skipped == [(f"{LOG}#L1-L1", TOKEN_ONLY)]


def test_a_tag_or_heading_holding_a_secret_never_names_a_topic() -> None:
    """Regression test: `- [AKIA…] x` made the topic "Akia…" in a file `akia….md` — the tag
    lower-cased, so the scanner (which needs the capitals) let the unit through and the key
    was committed as a file name; a heading holding a JWT longer than a title gave a file
    name of its lower-cased first 64 characters."""
    key = "AKIA" + "Q3EGRTXW7LZ5N2VB"
    jwt = (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
        + "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6Ik9wcyBib3QifQ" * 3
        + ".c2ln"
    )
    result = run(
        [
            entry(1, f"- [{key}] rotate the key", tags=(key.lower(),)),
            entry(2, f"- rotated the key #{key}", tags=(key.lower(),)),
            entry(3, "- the token is in the vault", context=("Deploys", f"Token {jwt}")),
            entry(4, "- a heading too long to be a name", context=("Deploys", "word " * 60)),
        ]
    )
    assert [(u.topic, u.title) for u in result.units] == [
        ("general", "General"),
        ("general", "General"),
        ("deploys", "Deploys"),
        ("deploys", "Deploys"),
    ]


def test_the_most_similar_fact_stating_the_same_numbers_is_corroborated() -> None:
    """A closer fact stating other numbers is passed over for one stating the same numbers
    (when that one is still at or above the threshold), instead of making a new fact."""
    result = run(
        [
            entry(1, "- [ops] Deploy of build 412 failed on the staging cluster again."),
            entry(2, "- [ops] Deploy of build 4127 failed on the staging cluster again, sadly."),
            entry(3, "- [ops] Deploy of build 412 failed on the staging cluster again, sadly."),
        ]
    )
    same_numbers, closest, third = (u.body for u in result.units)
    assert jaccard(third, closest) > jaccard(third, same_numbers) >= 0.82  # the default threshold
    assert [u.action for u in result.units] == ["create", "create", "corroborate"]
    assert result.units[2].corroborates == same_numbers


def test_sentences_of_chinese_and_japanese_are_joined_without_a_space() -> None:
    from gitdream.engines.offline import first_sentences

    assert (
        first_sentences("シェルがない。必ず確認を依頼すること。三つ目。")
        == "シェルがない。必ず確認を依頼すること。"
    )
    assert first_sentences("One. Two. Three.") == "One. Two."


def test_a_long_message_keeps_its_most_salient_sentences() -> None:
    text = (
        "> Wow, OK. Fine. So I was implying that we might want the TOML file. That was OK. "
        "I do not need any backwards compatibility, so we should remove the old files. Thanks."
    )
    fact = clean_text(entry(1, text), None)
    assert "backwards compatibility" in fact and "Wow" not in fact
    assert len(fact) < len(text)
    first = clean_text(
        entry(2, "- The deploy script checks the lag first. Ok. It must page on failure. Done."), None
    )
    assert first.startswith("The deploy script checks the lag first.")  # a first sentence of substance stays
    assert "must page on failure" in first


def test_a_list_read_again_is_already_consolidated() -> None:
    from gitdream.dream.readers import read_markdown_log

    text = (
        "The decisions we made:\n- Use pyproject.toml for all metadata\n- Keep the specs folder a package\n"
    )
    entries = read_markdown_log(LOG, text.encode(), fallback_date=DAY).entries
    first = run(entries)
    assert len(first.units) == 1
    unit = first.units[0]
    refs = ", ".join(f"`{s}@{COMMIT[:12]}`" for s in unit.sources)
    line = f"- {unit.body}\n  Sources: {refs} — seen 1 time, first 2026-03-02, last 2026-03-02\n"
    files = {f"{MEM}/{unit.topic}.md": topic_file(unit.topic, line)}
    again = run(entries, files)
    assert again.units == []
    assert all(why.startswith("already consolidated") for _, why in again.skipped)


def test_a_lead_in_kept_alone_does_not_end_by_announcing_its_list() -> None:
    from gitdream.dream.readers import read_markdown_log

    text = "Suspension is NOT time-based. Need to either:\n- fix the solver\n- contact support\n"
    entries = read_markdown_log(LOG, text.encode(), fallback_date=DAY).entries
    result = run(entries, offline__salience_threshold=0.3)
    assert [u.body for u in result.units] == ["Suspension is NOT time-based."]


def test_statements_repeated_on_another_day_are_those_a_search_of_every_entry_finds() -> None:
    # `_Run._repeated` skips the search for an entry when no earlier entry states its
    # numbers on another day; it must find what searching for every entry finds
    from gitdream.dream import memoryfiles as mf
    from gitdream.engines import offline
    from gitdream.text.similarity import ShingleIndex

    lines = [
        "Smoke tests run on staging before every deploy.",
        "Smoke tests run on staging before every deploy!",
        "The registry keeps the last 10 image tags.",
        "The registry keeps the last 10 image tags now.",
        "The registry keeps the last 20 image tags.",
        "Build 412 passed on the second try.",
        "回滚需要上一个镜像标签（3）",
        "回滚需要上一个镜像标签（3）",
        "回滚需要上一个镜像标签（4）",
    ]
    entries = [
        Entry(LOG, n + 1, n + 1, "- " + lines[(n * 7) % len(lines)], date(2026, 3, 1 + n // 4))
        for n in range(60)
    ]
    cfg = defaults()
    engine = OfflineEngine(cfg, slugify=simple_slugify, absolutize=simple_absolutize)
    context = DistillContext(AGENT, entries, MemoryView({}), cfg, COMMIT, DAY)
    memory = mf.read_memory(AGENT, {})
    cleaned = [clean_text(e, simple_absolutize) for e in entries]
    work = offline._Run(
        engine, context, memory, offline._Known.load(context, memory), cleaned, simple_slugify
    )

    expected: set[int] = set()
    index: ShingleIndex[int] = ShingleIndex(work.vocabulary, engine.threshold)
    for position, item in enumerate(entries):
        ids = work.vocabulary.ranks(work.codes[position])
        match = index.best(cleaned[position], ids)
        same = match is not None and offline._numbers(cleaned[position]) == offline._numbers(
            cleaned[match.key]
        )
        if match is not None and same and entries[match.key].date != item.date:
            expected.update((position, match.key))
        index.add(position, cleaned[position], ids)
    assert expected and work._repeated() == expected


@pytest.mark.parametrize(
    ("held", "restated"),
    [
        (
            "NEVER retry a Moltbook post that returned an ID, even if it appears ghost.",
            "- NEVER retry a Moltbook post that returned an ID",
        ),
        ("发布前必须先备份 Postgres 数据库，这样才能回滚。", "- 发布前必须先备份 Postgres 数据库"),
        (
            "배포 전에 Postgres 데이터베이스를 반드시 백업해야 롤백할 수 있다.",
            "- 배포 전에 Postgres 데이터베이스를 반드시 백업해야 한다",
        ),
    ],
)
def test_an_entry_restating_a_fact_of_another_topic_corroborates_it(held: str, restated: str) -> None:
    """Issue 14 (the same fact in two topics): an entry under another heading, whose
    words the fact of another topic holds, corroborates that fact where it is instead of
    becoming its copy in a second topic."""
    files = {f"{MEM}/moltbook.md": topic_file("moltbook", fact_lines(held, f"{LOG}#L1-L1@{COMMIT[:12]}"))}
    result = run([entry(9, restated, context=("Heartbeat Checklist",))], files)
    (unit,) = result.units
    assert (unit.action, unit.topic, unit.corroborates) == ("corroborate", "moltbook", held)


def test_a_negated_restatement_is_not_a_corroboration() -> None:
    """ "Suspension is NOT time-based" never adds a source to "Suspension is time-based":
    one contradicts the other (superseding decides which stays)."""
    held = "Moltbook suspension is time-based and lifts after a day."
    files = {f"{MEM}/moltbook.md": topic_file("moltbook", fact_lines(held, f"{LOG}#L1-L1@{COMMIT[:12]}"))}
    result = run([entry(9, "- Moltbook suspension is not time-based", context=("Checklist",))], files)
    assert [u.action for u in result.units] != ["corroborate"]
    assert all(u.corroborates != held for u in result.units)


def test_entries_folded_into_a_list_fact_are_counted_once() -> None:
    """Issue 14: a run's stats account for every entry exactly once — a list folded into
    one fact counts its other entries as `folded` (489 entries were read, but created,
    not kept and deferred summed to 469)."""
    entries = [
        entry(1, "Deploy rules we follow:", context=("Deploys",)),
        entry(
            2,
            "- never deploy on Fridays because nobody is around",
            context=("Deploys",),
            lead_in="Deploy rules we follow:",
        ),
        entry(
            3,
            "- always keep the previous image tag for rollbacks",
            context=("Deploys",),
            lead_in="Deploy rules we follow:",
        ),
        entry(
            4,
            "- run the smoke test before you switch traffic",
            context=("Deploys",),
            lead_in="Deploy rules we follow:",
        ),
        entry(5, "- Let me check the logs now", context=("Deploys",)),
    ]
    result = run(entries, offline__salience_threshold=0.3)
    stats = result.stats
    cited = [s for u in result.units for s in u.sources]
    assert stats["folded"] == len(cited) - len(result.units) >= 1
    accounted = ("created", "corroborated", "definition", "skipped", "not_kept", "deferred", "folded")
    assert sum(stats[k] for k in accounted) == stats["entries"] == len(entries)


@pytest.mark.parametrize(
    ("heading", "name"),
    [
        ("worker-07 (zweites Mal)", "worker-07"),  # how often: an aside
        ("Deploys (2nd time)", "Deploys"),
        ("Inbox (5)", "Inbox"),
        ("部署（第二次）", "部署"),
        ("배포 (두 번째)", "배포"),
        ("Redis (fixed)", "Redis"),  # a status in parentheses
        ("(draft)", "(draft)"),  # nothing else to name it
    ],
)
def test_a_trailing_aside_in_parentheses_is_not_part_of_a_topic_name(heading: str, name: str) -> None:
    from gitdream.engines.offline import clean_name

    assert clean_name(heading) == name
