"""Experience integration: topics, MEMORY.md index and limits, demotion, loss guard (DESIGN §5 phase 6)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta
from typing import Any

import pytest
import yaml
from freezegun import config as freezegun_config
from freezegun import freeze_time

from gitdream import clock
from gitdream.agents import make_agent
from gitdream.config import Config, defaults
from gitdream.dream import facts as factfmt
from gitdream.dream import memoryfiles
from gitdream.dream.integrate import ExperienceResult, check_loss, integrate_experience
from gitdream.errors import LossGuardError
from gitdream.text import blocks
from gitdream.units import Unit, parse_source_ref

AGENT = make_agent("agents/ops", defaults())
MEM = "agents/ops/memory"
INDEX = f"{MEM}/MEMORY.md"
LOG = "agents/ops/memory/logs/2026/03/2026-03-02.md"
COMMIT = "1a2b3c4d5e6f" + "9" * 28
TODAY = date(2026, 3, 2)

HUMAN_TOPIC = (
    "---\n"
    "name: feedback_testing\n"
    "description: User preferences for how tests should be written\n"
    "type: feedback\n"
    "---\n"
    "\n"
    "Use `onTestFinished` from vitest for test cleanup instead of `afterEach`.\n"
    "**Why:** The user explicitly requested this pattern for reliability.\n"
    "**How to apply:** register cleanup via `onTestFinished`.   \n"
    "\n"
    "Trailing text without a final newline — 東京 ✓"
)
HUMAN_INDEX = (
    "# Memory Index\n\n## Feedback\n\n"
    "- [feedback_testing.md](feedback_testing.md) — Testing preferences\n\n## References\n\n"
    "- `docs/HISTORY.md` — chronological log\n"
)


def cfg(**overrides: Any) -> Config:
    return defaults().with_overrides({k: (v, "test") for k, v in overrides.items()})


def unit(
    topic: str,
    body: str,
    line: int = 1,
    *,
    action: str = "create",
    title: str | None = None,
    when: date | None = TODAY,
    corroborates: str | None = None,
    target: str = "experience",
) -> Unit:
    return Unit(
        title=title if title is not None else topic.capitalize(),
        body=body,
        target=target,
        action=action,
        topic=topic,
        sources=(f"{LOG}#L{line}-L{line}",),
        date=when,
        corroborates=corroborates,
    )


def integrate(
    files: dict[str, str],
    units: list[Unit],
    *,
    today: date = TODAY,
    slots: list[str] | None = None,
    **overrides: Any,
) -> ExperienceResult:
    return integrate_experience(
        AGENT, files, units, input_commit=COMMIT, today=today, cfg=cfg(**overrides), slots=slots or ()
    )


def apply(files: dict[str, str], result: ExperienceResult) -> dict[str, str]:
    out = dict(files)
    for path, text in result.changes.items():
        if text is None:
            out.pop(path)
        else:
            out[path] = text
    return out


def facts_of(text: str, block: str = "facts") -> list[factfmt.Fact]:
    return factfmt.parse(blocks.get(text, block) or "")


def dream_topic(slug: str, last: date, *, facts: int = 1, title: str | None = None) -> str:
    lines = "".join(
        f"- {slug} fact {i}\n  Sources: `{LOG}#L{i}-L{i}@abcdefabcdef` — seen 1 time, first {last}, last {last}\n"
        for i in range(1, facts + 1)
    )
    return (
        f"---\nname: {title or slug}\ndescription: about {slug}\ntype: project\norigin: gitdream\n---\n\n"
        f"# {title or slug}\n\n<!-- gitdream:begin facts -->\n{lines}<!-- gitdream:end facts -->\n"
    )


def test_new_topic_file_and_index_are_created() -> None:
    result = integrate({}, [unit("deploys", "Rollbacks need the previous image tag.", title="Deploys")])
    topic = result.changes[f"{MEM}/deploys.md"]
    assert topic is not None
    meta, _ = memoryfiles.split_front_matter(topic)
    assert meta == {
        "name": "Deploys",
        "description": "Rollbacks need the previous image tag.",
        "type": "project",
        "origin": "gitdream",
    }
    assert "\n# Deploys\n\n<!-- gitdream:begin facts -->\n- Rollbacks need the previous image tag.\n" in topic
    (fact,) = facts_of(topic)
    assert fact.sources == [f"{LOG}#L1-L1@1a2b3c4d5e6f"]
    assert (fact.seen, fact.first, fact.last) == (1, TODAY, TODAY)
    index = result.changes[INDEX]
    assert index is not None and index.startswith("# Memory index\n")
    assert blocks.get(index, "index") == "- [Deploys](deploys.md) — Rollbacks need the previous image tag.\n"
    assert result.created == 1 and result.topics_created == [f"{MEM}/deploys.md"]
    assert [f.to_json()["action"] for f in result.facts_written] == ["created"]
    assert result.to_json()["changes"] == {f"{MEM}/deploys.md": "written", INDEX: "written"}


def test_topics_a_person_already_listed_get_no_second_index_line() -> None:
    files = {INDEX: HUMAN_INDEX + "- [Deploys](deploys.md) — listed by hand\n"}
    result = integrate(files, [unit("deploys", "A fact."), unit("backups", "Another.", 2)])
    index = result.changes[INDEX] or ""
    assert index.startswith(files[INDEX])
    assert blocks.get(index, "index") == "- [Backups](backups.md) — Another.\n"
    only = integrate(files, [unit("deploys", "A fact.")])
    assert INDEX not in only.changes  # nothing to add: no empty block either


def test_topic_type_follows_claude_code_naming() -> None:
    result = integrate({}, [unit("feedback_reviews", "Keep reviews short.")])
    meta, _ = memoryfiles.split_front_matter(result.changes[f"{MEM}/feedback_reviews.md"] or "")
    assert meta is not None and meta["type"] == "feedback"


def test_human_topic_keeps_every_byte_outside_the_block() -> None:
    path = f"{MEM}/feedback_testing.md"
    files = {path: HUMAN_TOPIC, INDEX: HUMAN_INDEX}
    first = integrate(files, [unit("feedback_testing", "Prefer msw for HTTP mocks.")])
    new = first.changes[path]
    assert new is not None
    assert new.encode("utf-8").startswith(HUMAN_TOPIC.encode("utf-8"))
    rest = new[len(HUMAN_TOPIC) :]
    assert rest.startswith("\n\n<!-- gitdream:begin facts -->\n- Prefer msw for HTTP mocks.\n")
    assert INDEX not in first.changes  # a human topic gets no index line from gitdream
    second = integrate(apply(files, first), [unit("feedback_testing", "Create fresh stores per test.", 2)])
    newer = second.changes[path]
    assert newer is not None
    assert blocks.outside(newer).encode() == blocks.outside(new).encode()
    assert [f.text for f in facts_of(newer)] == [
        "Prefer msw for HTTP mocks.",
        "Create fresh stores per test.",
    ]


def test_a_topic_differing_only_in_case_uses_the_existing_file() -> None:
    path = f"{MEM}/Deploys.md"
    result = integrate({path: "# Deploys\n"}, [unit("deploys", "A fact.")])
    assert list(result.changes) == [path]


def test_crlf_human_topic_keeps_its_bytes_and_line_endings() -> None:
    path = f"{MEM}/notes.md"
    original = "# Notes\r\n\r\nHand-written line.\r\n"
    result = integrate({path: original}, [unit("notes", "A fact.")])
    new = result.changes[path]
    assert new is not None and new.startswith(original)
    assert "\r\n<!-- gitdream:begin facts -->\r\n" in new and "\n" not in new.replace("\r\n", "")


def test_corroboration_updates_the_fact_instead_of_adding_a_line() -> None:
    files = apply({}, integrate({}, [unit("deploys", "Rollbacks need the previous image tag.", 1)]))
    later = TODAY + timedelta(days=5)
    result = integrate(
        files,
        [
            unit(
                "deploys",
                "rollbacks need the previous image tag",
                7,
                action="corroborate",
                corroborates="Rollbacks need the previous image tag.",
                when=later,
            ),
            unit("deploys", "Rollbacks need the previous image tag.", 1, action="corroborate", when=TODAY),
        ],
        today=later,
    )
    (fact,) = facts_of(result.changes[f"{MEM}/deploys.md"] or "")
    assert fact.text == "Rollbacks need the previous image tag."
    # L1 is cited already: reading it again is not a corroboration (seen counts L1 and L7)
    assert fact.seen == 2 and fact.first == TODAY and fact.last == later
    assert fact.sources == [f"{LOG}#L1-L1@1a2b3c4d5e6f", f"{LOG}#L7-L7@1a2b3c4d5e6f"]
    assert result.corroborated == 2 and result.created == 0
    assert INDEX not in result.changes  # no topic created or demoted: the index is left alone


def test_corroborate_finds_the_fact_in_another_topic() -> None:
    files = apply({}, integrate({}, [unit("deploys", "Rollbacks need the previous image tag.")]))
    result = integrate(
        files,
        [unit("other", "x", 2, action="corroborate", corroborates="Rollbacks need the previous image tag.")],
    )
    assert list(result.changes) == [f"{MEM}/deploys.md"]
    assert facts_of(result.changes[f"{MEM}/deploys.md"] or "")[0].seen == 2


def test_integration_is_idempotent() -> None:
    units = [
        unit("deploys", "Rollbacks need the previous image tag.", 1),
        unit("deploys", "Smoke tests run on staging first.", 2),
        unit("backups", "Backups run at 02:00 UTC.", 3),
    ]
    once = apply({}, integrate({}, units))
    twice_result = integrate(once, units)
    twice = apply(once, twice_result)
    for path in (f"{MEM}/deploys.md", f"{MEM}/backups.md"):
        assert [f.text for f in facts_of(twice[path])] == [f.text for f in facts_of(once[path])]
        assert all(f.seen == 1 for f in facts_of(twice[path]))  # the same entries never count twice
        assert all(len(f.sources) == 1 for f in facts_of(twice[path]))
    assert twice[INDEX] == once[INDEX]
    assert twice_result.corroborated == 3 and twice_result.created == 0
    assert integrate(twice, []).changes == {}


def test_invalid_units_are_rejected_with_reasons() -> None:
    no_source = Unit("T", "body", "experience", "create", "deploys", ())
    bad_source = Unit("T", "body", "experience", "create", "deploys", ("a`b#L1-L1",))
    result = integrate(
        {f"{MEM}/broken.md": "<!-- gitdream:begin facts -->\nno end\n"},
        [
            unit("../escape", "x"),
            unit("MEMORY", "x"),
            unit("deploys", "x", target="skill"),
            no_source,
            bad_source,
            unit("broken", "x"),
            unit("deploys", "   "),
        ],
    )
    assert result.changes == {}
    reasons = [r.reason for r in result.rejected]
    assert reasons[0] == "unsafe topic slug '../escape'" and reasons[1] == "unsafe topic slug 'MEMORY'"
    assert "not experience" in reasons[2]
    assert reasons[3].startswith("no usable source") and reasons[4].startswith("no usable source")
    assert "cannot be written safely" in reasons[5] and "never ends" in reasons[5]
    assert reasons[6] == "empty fact text"


def test_marker_text_in_a_fact_cannot_break_the_file() -> None:
    result = integrate(
        {}, [unit("deploys", "see <!-- gitdream:end facts --> here", title="<!-- gitdream:x -->")]
    )
    text = result.changes[f"{MEM}/deploys.md"] or ""
    assert [b.name for b in blocks.parse(text)] == ["facts"]
    assert facts_of(text)[0].text == "see &lt;!-- gitdream:end facts --> here"


def test_memory_index_is_kept_within_its_limits() -> None:
    files = {INDEX: HUMAN_INDEX}
    units = [
        unit(f"topic-{i:02d}", f"fact {i} " + "x" * 60, i, when=TODAY - timedelta(days=i)) for i in range(30)
    ]
    result = integrate(files, units, memory_max_lines=25, memory_max_bytes=2000)
    index = result.changes[INDEX] or ""
    assert len(index.splitlines()) <= 25 and len(index.encode()) <= 2000
    assert index.startswith(HUMAN_INDEX)
    lines = (blocks.get(index, "index") or "").splitlines()
    assert lines[-1].startswith("- … and ") and "more topics are not listed here" in lines[-1]
    assert "topic-00.md" in index and "topic-29.md" not in index  # the newest stay listed
    assert result.index["unlisted"] == 30 - (len(lines) - 1)
    assert len(result.topics_created) == 30  # the facts stay in their topic files
    assert any("left out" in w for w in result.warnings)


def test_human_part_over_the_limits_warns_and_does_not_grow_the_block() -> None:
    big = HUMAN_INDEX + "".join(f"- human line {i}\n" for i in range(40))
    block = "<!-- gitdream:begin index -->\n- [Old](old.md) — old topic\n<!-- gitdream:end index -->\n"
    files = {INDEX: big + "\n" + block, f"{MEM}/old.md": dream_topic("old", TODAY)}
    result = integrate(files, [unit("brand-new", "A new fact.")], memory_max_lines=20)
    assert INDEX not in result.changes
    assert f"{MEM}/brand-new.md" in result.changes
    assert any("already over its limits" in w for w in result.warnings)
    no_block = integrate({INDEX: big}, [unit("brand-new", "A new fact.")], memory_max_lines=20)
    assert INDEX not in no_block.changes


def test_stale_dream_topics_are_demoted_whole_to_the_archive() -> None:
    stale_day = TODAY - timedelta(days=90)
    fresh_day = TODAY - timedelta(days=89)
    files = {
        f"{MEM}/stale.md": dream_topic("stale", stale_day, facts=2, title="Stale things"),
        f"{MEM}/fresh.md": dream_topic("fresh", fresh_day),
        f"{MEM}/human.md": "# Human\n\n" + "<!-- gitdream:begin facts -->\n- old\n"
        f"  Sources: `{LOG}#L1-L1@abcdefabcdef` — seen 1 time, first 2020-01-01, last 2020-01-01\n"
        "<!-- gitdream:end facts -->\n",
        INDEX: HUMAN_INDEX + "\n<!-- gitdream:begin index -->\n- [Stale things](stale.md) — about stale\n"
        "- [fresh](fresh.md) — about fresh\n<!-- gitdream:end index -->\n",
    }
    result = integrate(files, [], archive_days=90)
    assert result.changes[f"{MEM}/stale.md"] is None
    assert f"{MEM}/fresh.md" not in result.changes and f"{MEM}/human.md" not in result.changes
    archive = result.changes[f"{MEM}/archive/2026-03.md"] or ""
    meta, _ = memoryfiles.split_front_matter(archive)
    assert meta is not None and meta["origin"] == "gitdream"
    for line in files[f"{MEM}/stale.md"].splitlines():
        if "gitdream:" not in line:
            assert line in archive.splitlines()
    assert "## Stale things — stale.md, archived 2026-03-02" in archive
    assert [b.name for b in blocks.parse(archive)] == ["archived-1"]
    assert len(factfmt.parse(blocks.get(archive, "archived-1") or "")) == 2
    assert blocks.get(result.changes[INDEX] or "", "index") == "- [fresh](fresh.md) — about fresh\n"
    assert result.demoted == [
        {
            "slug": "stale",
            "path": f"{MEM}/stale.md",
            "archive": f"{MEM}/archive/2026-03.md",
            "last": str(stale_day),
        }
    ]
    assert result.loss.facts_before == result.loss.facts_after == 4
    # a second demotion in the same month appends with the next block number
    later = apply(files, result)
    later[f"{MEM}/old2.md"] = dream_topic("old2", stale_day)
    again = integrate(later, [], archive_days=90)
    archive2 = again.changes[f"{MEM}/archive/2026-03.md"] or ""
    assert archive2.startswith(archive)
    assert [b.name for b in blocks.parse(archive2)] == ["archived-1", "archived-2"]


@pytest.fixture
def freezable() -> Iterator[None]:
    """freezegun's default ignore list holds "gi" (PyGObject), a prefix of "gitdream", so by
    default it freezes no gitdream module; this fixture narrows it to "gi." for one test."""
    saved = list(freezegun_config.settings.default_ignore_list)
    freezegun_config.configure(default_ignore_list=[m for m in saved if m != "gi"] + ["gi."])
    yield
    freezegun_config.configure(default_ignore_list=saved)


@pytest.mark.usefixtures("freezable")
def test_demotion_follows_the_clock_of_the_run() -> None:
    files = {f"{MEM}/stale.md": dream_topic("stale", date(2026, 1, 1))}
    with freeze_time("2026-03-31T12:00:00Z"):
        assert integrate(files, [], today=clock.now().date(), archive_days=90).changes == {}
    with freeze_time("2026-04-01T12:00:00Z"):
        changes = integrate(files, [], today=clock.now().date(), archive_days=90).changes
    assert changes[f"{MEM}/stale.md"] is None and f"{MEM}/archive/2026-04.md" in changes


def test_topics_touched_in_the_run_are_not_demoted() -> None:
    files = {f"{MEM}/stale.md": dream_topic("stale", TODAY - timedelta(days=400))}
    result = integrate(files, [unit("stale", "An old fact, freshly read.", when=TODAY - timedelta(days=300))])
    assert result.changes[f"{MEM}/stale.md"] is not None


def test_a_human_archive_file_stops_demotion() -> None:
    files = {
        f"{MEM}/stale.md": dream_topic("stale", TODAY - timedelta(days=100)),
        f"{MEM}/archive/2026-03.md": "# My own archive\n",
    }
    result = integrate(files, [])
    assert result.changes == {}
    assert any("was not written by gitdream" in w for w in result.warnings)


def test_loss_guard_trips_when_facts_would_be_dropped() -> None:
    files = {f"{MEM}/a.md": dream_topic("a", TODAY, facts=4), f"{MEM}/b.md": dream_topic("b", TODAY, facts=4)}
    dropped = files[f"{MEM}/a.md"].split("- a fact 2")[0] + "<!-- gitdream:end facts -->\n"
    with pytest.raises(LossGuardError) as caught:
        check_loss(AGENT, files, {f"{MEM}/a.md": dropped}, max_fraction=0.25)
    assert "would drop 3 of 8 facts" in caught.value.message and caught.value.hint
    report = check_loss(AGENT, files, {f"{MEM}/a.md": dropped}, max_fraction=0.5)
    assert (report.facts_before, report.facts_after) == (8, 5)
    with pytest.raises(LossGuardError):
        check_loss(AGENT, files, {f"{MEM}/a.md": None}, max_fraction=0.25)
    with pytest.raises(LossGuardError):  # calling it archived does not hide facts that went nowhere
        check_loss(AGENT, files, {f"{MEM}/a.md": None}, max_fraction=0.25, archived={"a"})


def test_loss_guard_trips_when_index_lines_would_be_dropped() -> None:
    topics = {f"{MEM}/t{i}.md": dream_topic(f"t{i}", TODAY) for i in range(4)}
    block = "".join(f"- [t{i}](t{i}.md) — about\n" for i in range(4))
    files = {
        **topics,
        INDEX: f"# Index\n\n<!-- gitdream:begin index -->\n{block}<!-- gitdream:end index -->\n",
    }
    emptied = "# Index\n\n<!-- gitdream:begin index -->\n<!-- gitdream:end index -->\n"
    deleted = {f"{MEM}/t0.md": None, f"{MEM}/t1.md": None}
    moved = {f"{MEM}/archive/2026-03.md": "---\norigin: gitdream\n---\n" + topics[f"{MEM}/t0.md"]}
    with pytest.raises(LossGuardError) as caught:
        check_loss(AGENT, files, {INDEX: emptied, **deleted, **moved}, max_fraction=0.25)
    assert "index lines" in caught.value.message
    # lines left out while their topic files stay, or whose topics were archived, are kept
    report = check_loss(
        AGENT, files, {INDEX: emptied, **moved, f"{MEM}/t0.md": None}, max_fraction=0, archived={"t0"}
    )
    assert report.index_before == report.index_kept == 4


def test_ownership_guard_refuses_changes_outside_gitdream_blocks() -> None:
    files = {f"{MEM}/feedback_testing.md": HUMAN_TOPIC}
    from gitdream.dream.integrate import _check_ownership

    with pytest.raises(LossGuardError):
        _check_ownership(AGENT, files, {f"{MEM}/feedback_testing.md": HUMAN_TOPIC.replace("vitest", "jest")})
    with pytest.raises(LossGuardError):
        _check_ownership(AGENT, files, {f"{MEM}/feedback_testing.md": None})
    with pytest.raises(LossGuardError):
        _check_ownership(AGENT, files, {"agents/ops/agent.md": "x"})


def test_normal_runs_never_trip_the_loss_guard() -> None:
    files: dict[str, str] = {INDEX: HUMAN_INDEX, f"{MEM}/feedback_testing.md": HUMAN_TOPIC}
    day = TODAY
    for run_number in range(12):
        units = [unit(f"topic-{run_number}-{i}", f"fact {run_number} {i}", i, when=day) for i in range(6)] + [
            unit("feedback_testing", f"human topic fact {run_number}", 99, when=day)
        ]
        result = integrate(files, units, today=day, archive_days=30, memory_max_lines=30, max_loss_fraction=0)
        assert result.loss.facts_after >= result.loss.facts_before
        files = apply(files, result)
        index = files[INDEX]
        assert len(index.splitlines()) <= 30 and index.startswith(HUMAN_INDEX)
        assert files[f"{MEM}/feedback_testing.md"].startswith(HUMAN_TOPIC)
        day += timedelta(days=10)
    archives = [p for p in files if "/archive/" in p]
    assert archives, "some topics should have been demoted over 120 days"
    for text in files.values():
        for fact in facts_of(text) if "begin facts" in text else []:
            assert fact.sources and all(parse_source_ref(s) for s in fact.sources)


def test_front_matter_written_is_valid_yaml_for_hostile_titles() -> None:
    title = 'yes: no # "quoted" \\ 東京'
    result = integrate({}, [unit("weird", "- looks like a list: item", title=title)])
    text = result.changes[f"{MEM}/weird.md"] or ""
    meta = yaml.safe_load(text.split("---\n")[1])
    assert meta["name"] == title and meta["description"] == "- looks like a list: item"


BILLION_LAUGHS = (
    "---\nname: deploys\n"
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "---\n\n# Deploys\n\nHand-written.\n"
)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        (BILLION_LAUGHS, 4),
        ("---\nname: deploys\ndescription: Use when: deploying\n---\n\n# Deploys\n", 3),
        ("---\nname: deploys\n\n# Deploys\n", 1),
        ("---\n- a list\n- not a mapping\n---\n\n# Deploys\n", 2),
    ],
)
def test_topic_whose_front_matter_cannot_be_read_is_left_alone(text: str, line: int) -> None:
    """Regression test: a topic whose front matter was a YAML bomb, invalid YAML or
    unterminated was silently taken for a human-written topic and written to (its name,
    type and ownership unknown); now it is left alone with a warning naming the line, and
    the units' sources wait to be read again once it is fixed."""
    result = integrate({f"{MEM}/deploys.md": text}, [unit("deploys", "Rollbacks need the tag.", 3)])
    assert result.changes == {}
    assert [r.stage for r in result.rejected] == ["integrate"]
    assert "left alone" in result.rejected[0].reason
    assert result.waiting == [f"{LOG}#L3-L3"]
    (warning,) = result.warnings
    assert warning.startswith(f"{MEM}/deploys.md:{line}: ") and "left this topic alone" in warning


def test_terminal_escapes_and_bidi_overrides_never_reach_memory() -> None:
    """Regression test: a log line with ANSI colours, an OSC window-title sequence,
    backspaces or a right-to-left override ("Trojan Source") was written into topic files,
    MEMORY.md and front matter as it was, so `cat` or `git log -p` of memory could rewrite
    the reviewer's terminal or show text in another order than a model reads it."""
    hostile = "Deploy \x1b[31mfailed\x1b[0m \x1b]0;pwned\x07twice\x08\x08 \u202eexe.txt\u202c"
    result = integrate({}, [unit("deploys", hostile, title="De\u202eploys \x1b[1mbold")])
    written = "".join(t for t in result.changes.values() if t)
    assert written
    for bad in ("\x1b", "\x07", "\x08", "\u202e", "\u202c", "pwned"):
        assert bad not in written
    assert "Deploy failed twice exe.txt" in written
    assert "name: Deploys bold" in written


def test_sources_per_fact_are_capped_but_seen_counts_all() -> None:
    """Regression test: a fact corroborated 136 times carried a 9.5 KB Sources line."""
    from gitdream.dream.integrate import MAX_SOURCES, _FactList

    facts = _FactList([])
    fact = facts.add("Rollbacks need the previous tag.", ["a.md#L1-L1@aaaaaaaaaaaa"], None)
    for n in range(2, 40):  # every other line: consecutive lines would be one range
        facts.touch(fact, [f"a.md#L{2 * n}-L{2 * n}@aaaaaaaaaaaa"], None)
    assert fact.seen == 39
    assert len(fact.sources) == MAX_SOURCES
    assert fact.sources[0] == "a.md#L1-L1@aaaaaaaaaaaa"
    assert fact.sources[-1] == "a.md#L78-L78@aaaaaaaaaaaa"


def test_consecutive_sources_are_one_range_and_a_line_inside_it_is_no_new_corroboration() -> None:
    from gitdream.dream.integrate import _FactList

    facts = _FactList([])
    fact = facts.add("Rollbacks need the previous tag.", ["a.md#L1-L1@aaaaaaaaaaaa"], None)
    for n in range(2, 6):
        facts.touch(fact, [f"a.md#L{n}-L{n}@aaaaaaaaaaaa"], None)
    assert (fact.seen, fact.sources) == (5, ["a.md#L1-L5@aaaaaaaaaaaa"])
    facts.touch(fact, ["a.md#L3-L3@aaaaaaaaaaaa"], None)  # read again: already cited
    assert (fact.seen, fact.sources) == (5, ["a.md#L1-L5@aaaaaaaaaaaa"])


def test_malformed_index_markers_are_a_warning_naming_file_and_line() -> None:
    """Regression test: the warning read "…/MEMORY.md: …/MEMORY.md: line 3: end of block
    'index' without a matching begin" — the path twice and the line in another form than
    every other "path:LINE: message" warning."""
    broken = "# Memory\n\n<!-- gitdream:end index -->\n"
    result = integrate({INDEX: broken}, [unit("deploys", "Rollbacks need the tag.")])
    assert INDEX not in result.changes
    assert result.warnings == [
        f"{INDEX}:3: end of block 'index' without a matching begin; the index was not updated"
    ]


def test_the_index_line_shows_the_description_whole_not_cut_inside_a_word() -> None:
    # a long topic name leaves the description less room than its own limit: the
    # description is chosen and shortened for that room, so both read the same, whole
    fact = (
        "Attestations must carry a detached signature; the verifier rejects inline ones, "
        "and the sandbox keeps them for a day"
    )
    slug = "attestation-signer-and-verifier-notes"
    result = integrate({}, [unit(slug, fact)])
    meta, _ = memoryfiles.split_front_matter(result.changes[f"{MEM}/{slug}.md"] or "")
    line = (blocks.get(result.changes[INDEX] or "", "index") or "").strip()
    assert meta is not None
    assert meta["description"] == "Attestations must carry a detached signature"
    assert line.endswith(" — Attestations must carry a detached signature")
    assert len(line) <= 150


def test_a_recap_slot_of_the_agents_memory_does_not_describe_a_topic() -> None:
    # "Files and Code Sections" holds no name: every word of it is written in lower case in
    # the agent's memory ("the files … code sections" of another topic), so it is a slot of
    # a template, and the item filling it is what one session touched, not what the topic holds.
    files = {f"{MEM}/recaps.md": dream_topic("recaps", TODAY)}
    other = "The recap lists the files and the code sections a session changed, nothing else."
    slotted = "Files and Code Sections: `src/shelf/conftest.py`; Sets up the module path for the tests"
    result = integrate(
        files,
        [unit("recaps", other, 1), unit("shelf", slotted, 2), unit("shelf", "There's no Shelf team.", 3)],
    )
    meta, _ = memoryfiles.split_front_matter(result.changes[f"{MEM}/shelf.md"] or "")
    assert meta is not None
    assert meta["description"] == "There's no Shelf team."


@pytest.mark.parametrize(
    ("slot", "slotted", "standing"),
    [
        ("研究", "研究：章鱼的每条腕足都有独立的神经节。", "我们没有团队。"),
        ("조사", "조사: `scripts/sim.py` 파일은 작은 세상 네트워크를 모의한다.", "팀은 없다."),
    ],
)
def test_a_slot_the_engine_found_does_not_describe_a_topic_in_a_script_without_case(
    slot: str, slotted: str, standing: str
) -> None:
    # a label of a script without case holds no name by its letters: only the engine,
    # which saw it open unrelated notes day after day, knows it is a slot
    units = [unit("notes", slotted, 1), unit("notes", standing, 2)]
    plain = integrate({}, units)
    told = integrate({}, units, slots=[slot])
    described = [
        (memoryfiles.split_front_matter(r.changes[f"{MEM}/notes.md"] or "")[0] or {}).get("description")
        for r in (plain, told)
    ]
    assert described == [slotted, standing]
