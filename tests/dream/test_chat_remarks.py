"""What a session says about itself is not durable (issue #14, items 1 and 5): a request
made for one session, an expectation about the change just made, a next-step offer, an
assistant's summary of its own work, a statement bounded by a moment. Recognised by
structure — who speaks to whom, what the sentence points at, a label, a time — in
English, Chinese, Korean and Japanese; each rule has a test that fails without it."""

from __future__ import annotations

from datetime import date

import pytest

from gitdream.dream import salience
from gitdream.dream.salience import Cues, judge
from gitdream.engines.offline import clean_text
from gitdream.units import Entry

LOG = "agents/ops/memory/logs/2026/03/2026-03-02.md"
DAY = date(2026, 3, 2)


def entry(text: str, *context: str, role: str | None = None, lead_in: str = "") -> Entry:
    kind = "transcript" if role else "log"
    return Entry(LOG, 1, 1, text, DAY, tuple(context), kind, role, lead_in=lead_in)


def judged(text: str, *context: str, role: str | None = None, lead_in: str = "") -> salience.Judgement:
    item = entry(text, *context, role=role, lead_in=lead_in)
    return judge(item, clean_text(item, None), Cues(), salience.DEFAULT_THRESHOLD)


@pytest.mark.parametrize(
    "text",
    [
        "I don't want you to do any code changes at this time. Let's review where we are.",
        "You can also take my manual change into the same commit, please.",
        "这次你先不要改代码，我们先看看现在的进度。",
        "지금은 코드를 수정하지 말고 현재 상태만 검토해 주세요.",
        "今回はコードを変更しないでください。",
    ],
)
def test_a_request_for_one_session_is_not_a_standing_instruction(text: str) -> None:
    said = judged(text, role="user")
    assert "session-request" in said.cues and not said.kept, said
    assert said.reason is not None


def test_a_request_for_one_session_is_counted_as_such() -> None:
    said = judged("Please don't touch the tests in this session, just review the code with me.", role="user")
    assert said.reason == "a request for one session"


@pytest.mark.parametrize(
    "text",
    [
        "Please always run the tests before you commit anything to this repository.",
        "以后你每次提交之前都要先跑测试，不要跳过。",
        "앞으로는 커밋하기 전에 항상 테스트를 실행해 주세요.",
        "今後はコミットの前に必ずテストを実行してください。",
    ],
)
def test_a_request_that_says_it_stands_is_an_instruction(text: str) -> None:
    said = judged(text, role="user")
    assert "session-request" not in said.cues and said.kept, said


@pytest.mark.parametrize(
    "text",
    [
        "These changes should make it much clearer that the environment is required before any command.",
        "这些修改应该会让文档更清楚，必须先激活环境。",
        "이 변경으로 환경을 먼저 활성화해야 한다는 점이 더 명확해질 것입니다.",
        "この変更で環境を先に有効にする必要があることが明確になるはずです。",
    ],
)
def test_an_expectation_about_the_change_just_made_is_not_kept(text: str) -> None:
    said = judged(text, role="assistant")
    assert "expectation" in said.cues and not said.kept, said
    # the same modal without a pointer at what was just done is a rule
    assert "expectation" not in judged("Migrations should run before the deploy.").cues


@pytest.mark.parametrize(
    "text",
    [
        "Optional Next Step: implement the export to Markdown, as the TODO file says.",
        "下一步：实现导出到 Markdown 的功能。",
        "다음 단계: Markdown 내보내기 기능을 구현한다.",
        "次のステップ: Markdown へのエクスポートを実装する。",
    ],
)
def test_a_next_step_offer_is_a_plan(text: str) -> None:
    said = judged(text)
    assert "plan" in said.cues and not said.kept, said
    assert said.reason == "plan or to-do"


@pytest.mark.parametrize(
    "lead",
    [
        "I've cleaned up the project as requested:",
        "I had to make two fixes to the pyproject.toml file:",
        "我已经完成了以下修改：",
        "제가 파일을 정리했습니다:",
    ],
)
def test_a_list_introduced_as_a_summary_of_ones_own_work_is_a_record(lead: str) -> None:
    assert salience.is_record(lead)
    assert not salience.is_record("The decisions we made:")
    assert "lead-in-status" in judged("Removed setup.py in favour of pyproject.toml", lead_in=lead).cues


def test_a_session_summed_up_in_the_third_person_is_a_recount() -> None:
    assert (
        "recount" in judged("Primary Request and Intent: The user's main request was to modernize it.").cues
    )
    assert "recount" in judged("用户的要求是把项目结构现代化。").cues
    assert "recount" not in judged("The parser's main job is to split entries.").cues


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (
            "Hit the 30-min cooldown trying to repost. Need to wait until ~23:45 to retry.",
            "Hit the 30-min cooldown trying to repost.",
        ),
        ("게시 쿨다운은 30분이다. 23:45까지 기다려야 한다.", "게시 쿨다운은 30분이다."),
        ("投稿のクールダウンは30分。23時まで待つ必要がある。", "投稿のクールダウンは30分。"),
        ("发帖冷却时间是 30 分钟。等到 23:45 再试。", "发帖冷却时间是 30 分钟。"),
    ],
)
def test_a_sentence_bounded_by_a_moment_leaves_the_fact(text: str, kept: str) -> None:
    assert salience.standing_sentences(text).startswith(kept)
    assert "23" not in salience.standing_sentences(text)
    bounded = text[len(kept) :].strip(" .")
    assert "time-bound" in judged(bounded).cues, bounded
    # a rule about a duration is not bounded by a moment
    assert salience.standing_sentences("Backups older than 30 days are deleted.") == (
        "Backups older than 30 days are deleted."
    )


def test_a_statement_bounded_by_a_moment_weighs_less_than_the_same_without() -> None:
    bounded = judged("The forum rejects new posts until Feb 27.")
    standing = judged("The forum rejects new posts from suspended accounts.")
    assert "time-bound" in bounded.cues and bounded.score < standing.score


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (
            "We should follow YAGNI and drop the unused sections. Let me update the documentation:",
            "We should follow YAGNI and drop the unused sections.",
        ),
        ("未使用的章节应该删除。我来更新一下文档。", "未使用的章节应该删除。"),
    ],
)
def test_the_speakers_announced_next_step_leaves_the_fact(text: str, kept: str) -> None:
    assert salience.standing_sentences(text) == kept


@pytest.mark.parametrize(
    "text",
    [
        "⏺ You're right - this should be automated rather than relying on remembering to run it manually.",
        "⏺ 你说得对，这一步应该自动化，而不是靠记得手动运行。",
        "⏺ 맞습니다. 이 단계는 수동으로 실행하는 대신 자동화해야 합니다.",
        "⏺ おっしゃる通りです。手動で実行する代わりに自動化すべきです。",
    ],
)
def test_an_assistants_reply_agreeing_with_the_listener_is_an_acknowledgement(text: str) -> None:
    said = judged(text)
    assert "acknowledgement" in said.cues, said
    # the same words as a user's own statement are not one
    assert "acknowledgement" not in judged(text.removeprefix("⏺ "), role="user").cues
