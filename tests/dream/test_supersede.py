"""Superseding (issue #14, item 4): a newer value for the same subject replaces the older
fact, which is kept with its sources in the topic's `superseded` block; corroboration never
supersedes; re-reading material never inflates `seen`. Engine-independent: integration does
it for any engine's units."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from gitdream.agents import make_agent
from gitdream.config import defaults
from gitdream.contract import DistillContext, MemoryView
from gitdream.dream import facts as factfmt
from gitdream.dream import memoryfiles
from gitdream.dream.integrate import apply_changes, integrate_experience
from gitdream.dream.supersede import subject_names, supersedes
from gitdream.engines.offline import OfflineEngine
from gitdream.text import blocks
from gitdream.units import Unit
from tests.helpers import commit_all, dream_until_done, write

AGENT = make_agent("agents/ops", defaults())
MEM = "agents/ops/memory"
LOG = f"{MEM}/logs/2026/03/2026-03-02.md"
COMMIT = "1a2b3c4d5e6f" + "0" * 28
TODAY = date(2026, 3, 20)


@pytest.mark.parametrize(
    ("old", "new", "why"),
    [
        (
            "The registry keeps the last 10 image tags.",
            "The registry keeps the last 20 image tags.",
            "numbers revised",
        ),
        ("注册表只保留最近10个镜像标签。", "注册表只保留最近20个镜像标签。", "numbers revised"),
        ("Uploads are time-limited.", "Uploads are NOT time-limited.", "negation flipped"),
        ("업로드는 시간 제한이 있다.", "업로드는 시간 제한이 없다.", "negation flipped"),
        ("アップロードは時間制限がある。", "アップロードは時間制限がない。", "negation flipped"),
        (
            "Deploy window: Tuesdays after 10:00.",
            "Deploy window: never on Fridays, any weekday morning.",
            "same label, new value",
        ),
    ],
)
def test_a_new_value_for_the_same_subject_supersedes(old: str, new: str, why: str) -> None:
    assert supersedes(new, old) == why


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The registry keeps the last 10 image tags.", "The registry keeps the last 10 image tags."),
        ("Rollbacks need the previous image tag.", "Smoke tests run on staging first."),
        ("Promoted build 412 to production.", "Build 418 broke checkout on a missing config key."),
        ("Deploy window: Tuesdays.", "Deploy window: Tuesdays, from 10:00."),
    ],
)
def test_the_same_fact_or_another_subject_is_never_superseded(old: str, new: str) -> None:
    assert supersedes(new, old) is None


def unit(
    text: str, line: int, *, action: str = "create", corroborates: str | None = None, when: date
) -> Unit:
    return Unit(
        "Deploys", text, "experience", action, "deploys", (f"{LOG}#L{line}-L{line}",), when, corroborates
    )


def integrate(files: dict[str, str], units: list[Unit]) -> dict[str, str]:
    result = integrate_experience(AGENT, files, units, input_commit=COMMIT, today=TODAY, cfg=defaults())
    return apply_changes(files, result.changes)


def block(text: str, name: str) -> list[factfmt.Fact]:
    return factfmt.parse(blocks.get(text, name) or "")


def test_the_older_fact_moves_to_the_superseded_block_with_its_sources_date_and_successor() -> None:
    old = "The registry keeps the last 10 image tags."
    new = "The registry keeps the last 20 image tags."
    files = integrate({}, [unit(old, 1, when=date(2026, 3, 2))])
    result = integrate_experience(
        AGENT, files, [unit(new, 9, when=date(2026, 3, 8))], input_commit=COMMIT, today=TODAY, cfg=defaults()
    )
    text = apply_changes(files, result.changes)[f"{MEM}/deploys.md"]
    assert [f.text for f in block(text, "facts")] == [new]
    (gone,) = block(text, "superseded")
    assert gone.text == f"{old} — superseded 2026-03-08 by: {new}"
    assert gone.sources == [f"{LOG}#L1-L1@1a2b3c4d5e6f"] and gone.first == date(2026, 3, 2)
    assert result.superseded == 1 and result.loss.facts_after == result.loss.facts_before + 1
    assert f"- {old} — superseded 2026-03-08" in text  # visible in the diff, never deleted


def test_a_models_correct_unit_supersedes_the_fact_it_names() -> None:
    files = integrate({}, [unit("Suspensions last 24 hours.", 1, when=date(2026, 3, 2))])
    files = integrate(
        files,
        [
            unit(
                "Suspensions end only when the captcha solver works.",
                5,
                action="correct",
                corroborates="Suspensions last 24 hours.",
                when=date(2026, 3, 5),
            )
        ],
    )
    text = files[f"{MEM}/deploys.md"]
    assert [f.text for f in block(text, "facts")] == ["Suspensions end only when the captcha solver works."]
    assert block(text, "superseded")[0].text.startswith(
        "Suspensions last 24 hours. — superseded 2026-03-05 by:"
    )


def test_a_human_topic_keeps_its_bytes_and_gets_the_superseded_block_appended() -> None:
    human = "---\nname: Deploys\ntype: project\n---\n\n# Deploys\n\nWritten by the team.\n"
    files = integrate(
        {f"{MEM}/deploys.md": human},
        [unit("The registry keeps the last 10 image tags.", 1, when=date(2026, 3, 2))],
    )
    files = integrate(files, [unit("The registry keeps the last 30 image tags.", 2, when=date(2026, 3, 3))])
    text = files[f"{MEM}/deploys.md"]
    assert text.startswith(human)
    assert blocks.outside(text).startswith(blocks.outside(human).rstrip("\n"))
    assert len(block(text, "superseded")) == 1


def test_corroboration_is_counted_once_per_entry_and_never_supersedes() -> None:
    files = integrate({}, [unit("Rollbacks need the previous image tag.", 1, when=date(2026, 3, 2))])
    again = [
        unit(
            "Rollbacks need the previous image tag.",
            1,
            action="corroborate",
            corroborates="Rollbacks need the previous image tag.",
            when=date(2026, 3, 2),
        )
    ]
    files = integrate(files, again)  # the same entry read again: not a new sighting
    (fact,) = block(files[f"{MEM}/deploys.md"], "facts")
    assert fact.seen == 1 and blocks.get(files[f"{MEM}/deploys.md"], "superseded") is None


def test_material_read_again_with_shifted_lines_is_recognised_by_content_and_file() -> None:
    from gitdream.units import Entry

    text = "- Never promote a build before its migrations have run."
    files = integrate({}, [unit(text[2:], 4, when=date(2026, 3, 2))])
    shifted = Entry(LOG, 6, 6, text, date(2026, 3, 2), ("Lessons",))  # two lines were inserted above
    cfg = defaults()
    result = OfflineEngine(cfg).distill(
        DistillContext(AGENT, [shifted], MemoryView(files), cfg, COMMIT, TODAY)
    )
    assert result.units == []
    assert result.skipped[0][1].startswith("already consolidated")


def test_an_entry_cited_by_a_superseded_fact_is_already_consolidated() -> None:
    from gitdream.units import Entry

    files = integrate({}, [unit("The registry keeps the last 10 image tags.", 1, when=date(2026, 3, 2))])
    files = integrate(files, [unit("The registry keeps the last 20 image tags.", 9, when=date(2026, 3, 8))])
    old_entry = Entry(
        LOG,
        1,
        1,
        "- [deploy] The registry keeps the last 10 image tags.",
        date(2026, 3, 2),
        (),
        tags=("deploy",),
    )
    cfg = defaults()
    result = OfflineEngine(cfg).distill(
        DistillContext(AGENT, [old_entry], MemoryView(files), cfg, COMMIT, TODAY)
    )
    assert result.units == [] and result.skipped[0][1].startswith("already consolidated")


def test_the_description_and_index_line_say_what_the_topic_holds_now() -> None:
    files = integrate({}, [unit("The registry keeps the last 10 image tags.", 1, when=date(2026, 3, 2))])
    files = integrate(files, [unit("The registry keeps the last 20 image tags.", 9, when=date(2026, 3, 8))])
    topic = memoryfiles.read_topic("deploys", f"{MEM}/deploys.md", files[f"{MEM}/deploys.md"])
    assert topic.description == "The registry keeps the last 20 image tags."
    assert "— The registry keeps the last 20 image tags." in files[f"{MEM}/MEMORY.md"]
    assert "last 10" not in (blocks.get(files[f"{MEM}/MEMORY.md"], "index") or "")


def test_related_topics_are_linked() -> None:
    units = [
        Unit(
            "Deploys",
            "Rollbacks need the registry's previous image tag.",
            "experience",
            "create",
            "deploys",
            (f"{LOG}#L1-L1",),
            date(2026, 3, 2),
        ),
        Unit(
            "Registry",
            "The registry keeps the last 10 image tags; older tags need a rebuild.",
            "experience",
            "create",
            "registry",
            (f"{LOG}#L2-L2",),
            date(2026, 3, 2),
        ),
    ]
    files = integrate({}, units)
    assert "Related: [Registry](registry.md)" in (blocks.get(files[f"{MEM}/deploys.md"], "related") or "")


def test_when_memory_md_is_over_its_limits_gitdreams_topics_are_indexed_beside_it() -> None:
    human = "# Memory\n\n" + "".join(f"- a line a person wrote, number {n}\n" for n in range(300))
    cfg = defaults()
    result = integrate_experience(
        AGENT,
        {f"{MEM}/MEMORY.md": human},
        [unit("Rollbacks need the previous image tag.", 1, when=date(2026, 3, 2))],
        input_commit=COMMIT,
        today=TODAY,
        cfg=cfg,
    )
    assert f"{MEM}/MEMORY.md" not in result.changes
    overflow = result.changes[f"{MEM}/gitdream-topics.md"]
    assert overflow is not None and "[Deploys](deploys.md)" in overflow
    assert any("gitdream-topics.md" in w and "over its limits" in w for w in result.warnings)


def test_the_size_bound_never_changes_a_verdict_of_the_similarity_bar() -> None:
    # supersede compares every new fact with every fact of its topic; sets whose sizes
    # rule the bar out are skipped, which must give exactly what jaccard gives
    from gitdream.dream.supersede import _at_least
    from gitdream.text.similarity import jaccard, shingles

    texts = [
        "",
        "The registry keeps the last 10 image tags.",
        "The registry keeps the last # image tags, so rollbacks beyond that need a rebuild.",
        "uploads are NOT time-limited",
        "uploads are time-limited",
        "部署前必须先确认迁移脚本已在预发环境执行。",
        "部署前必须确认迁移脚本已执行。",
    ]
    for a in texts:
        for b in texts:
            for bar in (0.5, 0.8):
                expected = jaccard(a, b) >= bar
                assert _at_least(frozenset(shingles(a)), frozenset(shingles(b)), bar) == expected, (a, b, bar)


def test_the_prefilter_finds_what_comparing_with_every_fact_finds() -> None:
    # find_superseded hands a fact to `supersedes` only when one of its rules can hold;
    # the newest fact superseded must be the one a plain scan of every fact finds
    from gitdream.dream.supersede import find_superseded

    texts = [
        "The registry keeps the last 10 image tags.",
        "The registry keeps the last 20 image tags.",
        "The registry keeps the last 10 image tags and prunes nightly at 02:00.",
        "Uploads are time-limited.",
        "Uploads are NOT time-limited.",
        "Uploads are not time-limited for admins.",
        "Deploy window: Tuesdays after 10:00.",
        "Deploy window: never on Fridays, any weekday morning.",
        "Deploy window: Tuesdays.",
        "DB: 5 replicas.",
        "DB: three replicas in two zones.",
        "注册表只保留最近10个镜像标签。",
        "注册表只保留最近20个镜像标签。",
        "업로드는 시간 제한이 있다.",
        "업로드는 시간 제한이 없다.",
        "不",
        "没",
        "Rollbacks need the previous image tag.",
    ]
    facts = [factfmt.Fact(text=t, sources=[], seen=1) for t in texts]
    facts[9].raw = "- DB: 5 replicas."  # a hand-edited line is never superseded
    extra = ["The registry keeps the last 30 image tags.", "Deploy window: Mondays only."]
    extra += [
        "Correction: the registry keeps the last 25 image tags, not 10.",
        "上传不是有时间限制的，而是不限时。",
    ]
    for new in [*texts, *extra]:
        for end in range(len(facts) + 1):
            scan = next(
                (
                    (f, why)
                    for f in reversed(facts[:end])
                    if f.raw is None and (why := supersedes(new, f.text)) is not None
                ),
                None,
            )
            assert find_superseded(new, facts[:end]) == scan, (new, end)


def test_the_candidate_index_finds_what_scanning_the_list_finds_as_the_list_changes() -> None:
    # integration keeps a `Candidates` index in step with a topic's facts (added,
    # superseded in place, refined, a raw line adopted); each lookup must give what
    # find_superseded gives on the list as it is
    import random

    from gitdream.dream.integrate import _FactList
    from gitdream.dream.supersede import find_superseded

    rng = random.Random(7)
    subjects = [
        "The registry keeps the last {} image tags.",
        "Deploy window: {}.",
        "Uploads are {}time-limited.",
    ]
    values = ["10", "20", "Tuesdays", "never on Fridays", "NOT ", "", "3 and 4", "注册表只保留最近{}个"]
    texts = [s.format(v) for s in subjects for v in values] + ["不", "Rollbacks need the previous tag."]
    start = [factfmt.Fact(text=t, sources=[], seen=1) for t in rng.sample(texts, 6)]
    start.append(factfmt.Fact(text="DB: 5 replicas.", sources=[], raw="- DB: 5 replicas."))
    facts = _FactList(start)
    for _ in range(300):
        new = rng.choice(texts)
        expected = find_superseded(new, facts.facts)
        assert facts.candidates.find(new) == expected, new
        action = rng.random()
        if expected is not None and action < 0.5:
            facts.supersede(expected[0], new, [], None)
        elif action < 0.7 and facts.facts:
            facts.touch(rng.choice(facts.facts), [], None, new_text=rng.choice(texts))
        elif action < 0.75 and facts.facts:
            facts.touch(rng.choice(facts.facts), [], None)  # adopts a raw line
        elif facts.find(new) is None:
            facts.add(new, [], None)


# --- a label that only names the subject: the slot comes from what the fact states -------


SLOT = "same label, new value"


@pytest.mark.parametrize(
    ("old", "new", "why", "without_names"),
    [
        (
            "Forum: ban lifted, posting available again",
            "Forum: suspended until March 9",
            "same subject, new state",
            SLOT,
        ),
        ("论坛：已解封", "论坛：封禁至三月九日", "same subject, new state", SLOT),
        ("포럼: 차단 해제됨", "포럼: 3월 9일까지 정지", "same subject, new state", SLOT),
        (
            "Forum: Each failed captcha extends the ban",
            "Forum: suspended until March 9",
            None,
            SLOT,
        ),  # a rule
        # two rules under one label are two rules, with or without the topic's names
        (
            "Forum: Never repost a post that returned an id",
            "Forum: Always solve the captcha first",
            None,
            None,
        ),
        (
            "Forum: Each failed captcha extends the ban",
            "Forum: Hit a 30-minute cooldown after a repost",
            None,
            SLOT,
        ),
    ],
)
def test_a_label_naming_only_the_subject_supersedes_only_a_state_with_a_state(
    old: str, new: str, why: str | None, without_names: str | None
) -> None:
    subjects = subject_names("forum", "Forum BAN LIFTED", "论坛", "포럼")
    assert supersedes(new, old, subjects) == why
    assert supersedes(new, old) == without_names  # no topic names: the label is the slot


def _log(repo: Path, day: str, body: str) -> None:
    write(repo, f"agents/ops/memory/logs/2026/03/{day}.md", f"# {day}\n\n{body}")
    commit_all(repo, f"log {day}", date=f"{day}T12:00:00Z")


def _current_and_superseded(repo: Path) -> tuple[list[str], list[str]]:
    current: list[str] = []
    gone: list[str] = []
    for path in sorted((repo / "agents/ops/memory").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        current += [f.text for f in block(text, "facts")]
        gone += [f.text for f in block(text, "superseded")]
    return current, gone


def test_on_a_real_repository_a_status_replaces_a_status_and_never_a_rule(agent_repo: Path) -> None:
    _log(
        agent_repo,
        "2026-03-02",
        "## Forum SUSPENDED UNTIL MARCH 9\n"
        "- Each failed captcha EXTENDS the suspension\n"
        "- Forum: ban lifted, posting is available again\n",
    )
    _log(
        agent_repo,
        "2026-03-10",
        "## Forum BAN LIFTED\n- Hit a 30-minute cooldown after a repost\n- Forum: suspended again, posting is blocked for a week\n",
    )
    dream_until_done(agent_repo)
    current, gone = _current_and_superseded(agent_repo)
    rule = [f for f in current if "Each failed captcha EXTENDS the suspension" in f]
    assert rule, current  # a rule is never replaced by a status or a record about the same subject
    assert not any("Each failed captcha" in f for f in gone), gone
    assert any("suspended again" in f for f in current), current  # the current status stands
    assert not any("ban lifted, posting is available" in f for f in current), current
    assert any(f.startswith("Forum: ban lifted, posting is available again — superseded") for f in gone), gone


def test_an_older_statement_read_late_never_replaces_the_newer_one(agent_repo: Path) -> None:
    newer = "Forum: suspended again, posting is blocked for a week"
    older = "Forum: ban lifted, posting is available again"
    # Statuses are below the default salience bar; this test is about superseding them.
    write(agent_repo, "gitdream.toml", "[offline]\nsalience_threshold = 0.1\n")
    _log(agent_repo, "2026-03-10", f"## Forum\n- {newer}\n")
    dream_until_done(agent_repo)
    _log(agent_repo, "2026-03-02", f"## Forum\n- {older}\n")  # a log of an earlier day, committed late
    dream_until_done(agent_repo)
    current, gone = _current_and_superseded(agent_repo)
    assert newer in current and older not in current, current
    assert f"{older} — superseded 2026-03-10 by: {newer}" in gone, gone


@pytest.mark.parametrize(
    ("new", "old", "why"),
    [
        (
            "Files and Code Sections: `app/conftest.py`; Simplified to set up the module path",
            "Files and Code Sections: `app/README.md`; Updated to stress activating the environment",
            None,
        ),
        (
            "文件与代码: `app/conftest.py`；简化为只设置模块路径",
            "文件与代码: `app/README.md`；更新为强调激活环境",
            None,
        ),
        (
            "Config file: `deploy/prod.yaml`",
            "Config file: `settings.ini`",
            "same label, new value",
        ),  # name = value
        ("Deploy window: Fridays after 10:00", "Deploy window: Tuesdays only", "same label, new value"),
    ],
)
def test_a_section_label_shared_by_facts_about_their_own_names_is_no_subject(
    new: str, old: str, why: str | None
) -> None:
    """Regression test (review §5.3): the README summary line was archived as "superseded
    by" the conftest.py one — they describe different files and only share the glued
    label."""
    assert supersedes(new, old) == why


# --- two rules under one label; explicit corrections -------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "Backup: nightly backups run at 02:00 UTC and must finish before 04:00",
            "Backup: nightly backups must be verified with a test restore every Monday because an "
            "untested backup is no backup",
        ),
        ("Deploys: never on Fridays", "Deploys: always tag the image before pushing it"),
        (
            "备份：夜间备份在凌晨两点运行，必须在四点前完成。",
            "备份：每周一必须用恢复测试验证夜间备份，因为没验证过的备份不算备份。",
        ),
        (
            "백업: 야간 백업은 새벽 2시에 실행되며 4시 전에 끝나야 한다.",
            "백업: 매주 월요일 복원 테스트로 야간 백업을 반드시 검증해야 한다.",
        ),
    ],
)
def test_two_rules_under_one_label_never_supersede_each_other(old: str, new: str) -> None:
    """Regression test (audit B): a label ("Backup:") is shared by two different rules; the
    newer one archived the older as superseded. Only values of one slot replace each other."""
    assert supersedes(new, old) is None
    assert supersedes(old, new) is None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Entry point: `scripts/old_main.py`", "Entry point: `bin/run-service`"),
        ("Deploy window: Tuesdays after 10:00", "Deploy window: never on Fridays, any weekday morning"),
        ("部署窗口：周二十点以后", "部署窗口：除周五外任何工作日上午"),
    ],
)
def test_a_new_value_of_the_same_slot_under_one_label_still_supersedes(old: str, new: str) -> None:
    assert supersedes(new, old) == "same label, new value"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "The registry keeps only the last 10 image tags.",
            "Correction: the registry keeps the last 25 image tags, not 10.",
        ),
        (
            "The registry keeps only the last 10 image tags.",
            "The registry keeps the last 25 image tags (not 10).",
        ),
        (
            "Copy the backups with `cp` to the NAS.",
            "Copy the backups with `rsync` instead of `cp` to the NAS.",
        ),
        ("The cache TTL is 60s.", "The cache TTL was 60s, now it is 300s."),
        ("The staging database is db-old.", "The staging database is db-old → db-new."),
        ("注册表只保留最近10个镜像标签。", "更正：注册表保留的不是10个，而是最近25个镜像标签。"),
        ("注册表只保留最近10个镜像标签。", "注册表保留最近25个镜像标签，而不是10个。"),
        (
            "레지스트리는 최근 10개의 이미지 태그만 보관한다.",
            "정정: 레지스트리는 10개가 아니라 최근 25개의 이미지 태그를 보관한다.",
        ),
        (
            "レジストリは直近10個のイメージタグだけを保持する。",
            "訂正：レジストリは10個ではなく直近25個のイメージタグを保持する。",
        ),
    ],
)
def test_an_explicit_correction_supersedes_the_fact_holding_its_old_value(old: str, new: str) -> None:
    """Regression test (audit B2): "…25 image tags, not 10." sat beside "…only the last 10
    image tags…": quoting the old value, a correction names the fact it replaces."""
    assert supersedes(new, old) == "corrected"
    assert supersedes(old, new) != "corrected"  # the older text corrects nothing


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # the old value is not in the fact
        (
            "The registry keeps only the last 12 image tags.",
            "The registry keeps the last 25 image tags, not 10.",
        ),
        # the old value is, but the fact is about something else
        (
            "`cp` preserves timestamps only with -p.",
            "Copy the backups with `rsync` instead of `cp` to the NAS.",
        ),
        ("构建缓存保留10天。", "注册表保留最近25个镜像标签，而不是10个。"),
        # the same correction said again is no new value
        (
            "The registry keeps the last 25 image tags, not 10.",
            "Correction: registry keeps the last 25 tags, not 10.",
        ),
        # "not only … but also" sets nothing aside
        ("The proxy is fast.", "The proxy is not only fast but also cheap."),
        # a chain of arrows is a flow, and a long text holding a short fact's words is no
        # correction of it (both seen on real logs)
        ("Commands: keygen, sign, verify, jwk", "Full round-trip verified: keygen → sign → verify ✓"),
        (
            "Observer thread: 30 replies",
            "Thread has 14 replies including RoseProtocol (real burn rate data: $30→$18.70), "
            "SnappedAI (gift economy) and Cortana (traditional pricing)",
        ),
    ],
)
def test_a_correction_replaces_only_the_fact_of_its_subject_that_holds_its_old_value(
    old: str, new: str
) -> None:
    assert supersedes(new, old) != "corrected"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Correction: the registry keeps 25 tags.", "The registry keeps 25 tags."),
        ("UPDATE: deploys moved to Tuesdays.", "Deploys moved to Tuesdays."),
        ("更正：注册表保留25个标签。", "注册表保留25个标签。"),
        ("정정: 태그는 25개다.", "태그는 25개다."),
        ("訂正：タグは25個。", "タグは25個。"),
        ("Corrections are reviewed weekly.", "Corrections are reviewed weekly."),  # no label
    ],
)
def test_a_correction_label_is_layout(text: str, expected: str) -> None:
    from gitdream.dream.supersede import without_correction_label

    assert without_correction_label(text) == expected


def test_on_a_real_repository_a_correction_replaces_the_fact_it_corrects(agent_repo: Path) -> None:
    """The correction is written under another heading, which would give it a topic of its
    own: it joins the topic of the fact it corrects, where it supersedes it, and its
    "Correction:" label is not kept."""
    old = "The registry keeps only the last 10 image tags, so a rollback further back needs a rebuild."
    _log(agent_repo, "2026-03-02", f"## Lessons\n- {old}\n")
    dream_until_done(agent_repo)
    _log(
        agent_repo,
        "2026-03-05",
        "## Harbor mirror\n- [harbor] Correction: the registry keeps the last 25 image tags, not 10, so rollbacks "
        "reach further back.\n",
    )
    dream_until_done(agent_repo)
    current, gone = _current_and_superseded(agent_repo)
    assert any(f.startswith("The registry keeps the last 25 image tags, not 10") for f in current), current
    assert not any("Correction" in f for f in current), current
    assert old not in current
    assert any(
        f.startswith(f"{old} — superseded 2026-03-05 by: The registry keeps the last 25") for f in gone
    ), gone


def test_a_correction_joins_the_topic_of_the_fact_it_corrects() -> None:
    """Filed under its own tag and heading, a correction would open a topic of its own and
    the fact it corrects would stand beside it; it joins that fact's topic instead."""
    from gitdream.units import Entry

    old = "The registry keeps only the last 10 image tags."
    files = integrate({}, [unit(old, 1, when=date(2026, 3, 2))])
    correction = Entry(
        LOG,
        5,
        5,
        "- [harbor] Correction: the registry keeps the last 25 image tags, not 10.",
        date(2026, 3, 5),
        ("Harbor",),
        tags=("harbor",),
    )
    cfg = defaults().with_overrides({"offline.salience_threshold": (0.0, "test")})
    result = OfflineEngine(cfg).distill(
        DistillContext(AGENT, [correction], MemoryView(files), cfg, COMMIT, TODAY)
    )
    assert [(u.action, u.topic) for u in result.units] == [("create", "deploys")]
    files = integrate(files, result.units)
    current, gone = (
        block(files[f"{MEM}/deploys.md"], "facts"),
        block(files[f"{MEM}/deploys.md"], "superseded"),
    )
    assert [f.text for f in current] == [result.units[0].body] and "Correction" not in result.units[0].body
    assert [f.text.split(" — superseded")[0] for f in gone] == [old]


def test_a_related_block_left_empty_goes_from_gitdreams_topic_and_stays_in_a_persons() -> None:
    """No empty `related` block is left in a topic file gitdream owns; a person's topic
    keeps the (empty) block, since its bytes outside gitdream's blocks never change."""
    owned = (
        "---\nname: Deploys\ndescription: x\ntype: project\norigin: gitdream\n---\n\n# Deploys\n\n"
        "<!-- gitdream:begin facts -->\n<!-- gitdream:end facts -->\n\n"
        "<!-- gitdream:begin related -->\nRelated: [Gone](gone.md)\n<!-- gitdream:end related -->\n"
    )
    person = "# Deploys\n\nWritten by a person.\n\n<!-- gitdream:begin related -->\nRelated: [Gone](gone.md)\n<!-- gitdream:end related -->\n"
    for text, kept in ((owned, False), (person, True)):
        files = integrate(
            {f"{MEM}/deploys.md": text}, [unit("Rollbacks need the previous image tag.", 1, when=TODAY)]
        )
        written = files[f"{MEM}/deploys.md"]
        assert "Related:" not in written
        assert ("gitdream:begin related" in written) is kept
        assert not written.endswith("\n\n")
        if kept:
            assert written.startswith(
                "# Deploys\n\nWritten by a person.\n\n<!-- gitdream:begin related -->\n"
            )
