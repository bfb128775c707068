"""Salience (issue #14, item 1): durable knowledge is kept, status, activity, plans,
narration and output are read and not kept — in English, Chinese, Korean and Japanese, by
structure. Each cue has a test that fails without it."""

from __future__ import annotations

from datetime import date

import pytest

from gitdream.dream import salience
from gitdream.dream.salience import Cues, judge
from gitdream.engines.offline import clean_text
from gitdream.units import Entry

DAY = date(2026, 3, 2)


def verdict(
    text: str, *context: str, role: str | None = None, tags: tuple[str, ...] = (), cues: Cues | None = None
):
    kind = "transcript" if role else "log"
    entry = Entry(
        "agents/ops/memory/logs/2026/03/2026-03-02.md", 1, 1, text, DAY, tuple(context), kind, role, tags
    )
    return judge(entry, clean_text(entry, None), cues or Cues(), salience.DEFAULT_THRESHOLD)


@pytest.mark.parametrize(
    ("text", "heading"),
    [
        ("- The replica lags when the nightly vacuum runs.", "Lessons learned"),
        ("- 夜间清理运行时副本会延迟。", "教训"),
        ("- 야간 정리 작업이 돌 때 복제본이 지연된다.", "교훈"),
        ("- 夜間のバキューム中はレプリカが遅れる。", "教訓"),
        ("- The replica lags when the nightly vacuum runs.", "Decisions"),
        ("- 야간 정리 작업이 돌 때 복제본이 지연된다.", "결정"),
    ],
)
def test_a_lesson_heading_keeps_a_plain_statement(text: str, heading: str) -> None:
    assert verdict(text, "2026-03-02", heading).kept
    assert "lesson-heading" in verdict(text, "2026-03-02", heading).cues
    assert not verdict(text, "2026-03-02", "Heartbeat 09:00 UTC").kept  # the same words under an event


@pytest.mark.parametrize(
    "text",
    [
        "- Never retry a post that returned an id.",
        "- 部署前必须先跑冒烟测试。",
        "- 배포 전에 반드시 스모크 테스트를 실행해야 한다.",
        "- デプロイ前に必ずスモークテストを実行すること。",
    ],
)
def test_a_rule_in_modal_or_imperative_form_is_kept(text: str) -> None:
    judged = verdict(text)
    assert judged.kept and "rule" in judged.cues, judged


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("- **Inbox:** 11 matches, 0 unread, 180 discover", "status snapshot"),
        ("- Build 412 still green; no new alerts (23h remaining).", "status snapshot"),
        ("- 받은편지함: 새 메시지 없음, 아직 대기 중 3건", "status snapshot"),
        ("- Replied to funwolf (627e8a45) about the thread.", "activity record"),
        ("- 스레드에 답장했다.", "activity record"),
        ("- 已回复了用户的邮件。", "activity record"),
        ("- TODO: write the post-mortem tomorrow.", "plan or to-do"),
        ("⏺ Let me check the configuration file first.", "narration"),
        ("- 让我先看一下配置文件。", "narration"),
        ("- 먼저 설정 파일을 확인하겠습니다.", "narration"),
        ("- まず設定ファイルを確認します。", "narration"),
        ("     ============ 4 passed in 0.26s ============", "terminal or UI output"),
        ("- Why did the build fail?", "a question"),
    ],
)
def test_status_activity_plans_narration_output_and_questions_are_read_and_not_kept(
    text: str, reason: str
) -> None:
    judged = verdict(text)
    assert judged.reason == reason, judged


def test_a_statement_with_nothing_for_it_is_not_durable() -> None:
    assert verdict("- The weather was grey.").reason == salience.NOT_DURABLE


def test_a_reason_and_a_procedure_make_a_how_to() -> None:
    judged = verdict(
        "- Run the migrations first, then promote the build, because checkout needs the new key."
    )
    assert judged.kept and {"reason", "procedure"} <= set(judged.cues)


def test_a_correction_is_kept() -> None:
    judged = verdict("- The reply limit is actually 280 characters, not 300.")
    assert judged.kept and "correction" in judged.cues and "limit" in judged.cues


def test_an_artifact_defined_is_a_stable_fact_even_when_it_was_just_made() -> None:
    judged = verdict(
        "- Created `scripts/lag-probe.py` — checks the replica lag and pages when it passes 30 s"
    )
    assert judged.kept and "definition" in judged.cues and "activity" not in judged.cues
    assert not verdict("- Created a few files in the specs folder").kept  # no name, no definition


def test_a_labelled_reference_value_is_kept() -> None:
    judged = verdict("- **Auth:** `Authorization: Bearer KEY` or `X-API-Key: KEY`", "lobchan API")
    assert judged.kept and "reference" in judged.cues


def test_an_owners_standing_preference_in_a_transcript_is_kept() -> None:
    text = "I prefer small commits because reviews stay readable."
    assert verdict(text, role="user").kept
    assert "preference" not in verdict(text, role="assistant").cues


def test_words_inside_a_quotation_are_someone_elses() -> None:
    quoted = verdict('- funwolf wrote "never trust the cache, always verify" in the thread.')
    assert "rule" not in quoted.cues
    assert "rule" in verdict("- Never trust the cache; always verify.").cues


def test_reading_notes_weigh_against_an_entry() -> None:
    cited = verdict("- Key insight (Wartel et al. 2021): primate group sizes vary widely.")
    own = verdict("- Key insight: the probe misses forks that nobody witnessed.")
    assert "reading" in cited.cues and cited.score < own.score
    assert "reading" in verdict("- Sleep consolidates weak memories.", "Research: sleep").cues


def test_a_weak_lesson_heading_weighs_half_a_strong_one() -> None:
    notes = verdict("- The replica lags after the vacuum.", "Notes")
    lessons = verdict("- The replica lags after the vacuum.", "Lessons")
    assert notes.cues["lesson-heading"] == pytest.approx(lessons.cues["lesson-heading"] / 2)


def test_an_explicit_tag_counts_for_the_entry() -> None:
    assert verdict("- [deploy] The registry keeps the last 10 tags.", tags=("deploy",)).kept
    assert not verdict("- The registry keeps the last 10 tags.").kept


def test_words_in_capitals_for_stress_count() -> None:
    judged = verdict("- Each failed attempt EXTENDS the ban.")
    assert "emphasis" in judged.cues


def test_configured_keep_and_skip_cues_in_any_language() -> None:
    cues = Cues.configured(keep=["배포 규칙"], skip=["standup"])
    assert verdict("- 배포 규칙: 금요일 오후 금지", cues=cues).cues.get("keep-cue")
    assert "skip-cue" in verdict("- standup notes for the team", cues=cues).cues


def test_the_verdict_depends_on_the_entry_alone() -> None:
    text = "- Never deploy on Friday afternoon."
    assert verdict(text) == verdict(text)


def test_an_english_word_list_alone_does_not_decide_other_languages() -> None:
    """The same lesson in four languages, under its language's heading, is kept in each."""
    for text, heading in (
        ("- Backups older than 30 days are deleted.", "Rules"),
        ("- 超过30天的备份会被删除。", "规则"),
        ("- 30일이 지난 백업은 삭제된다.", "규칙"),
        ("- 30日を過ぎたバックアップは削除される。", "ルール"),
    ):
        assert verdict(text, heading).kept, (text, heading)
