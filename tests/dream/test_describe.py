"""What a topic holds, in one line (issue #14, item 6): the most salient current fact,
shortened at a boundary of its meaning, never an activity record cut mid-sentence."""

from __future__ import annotations

from datetime import date

import pytest

from gitdream.dream.describe import fit, shorten, summary_of
from gitdream.dream.facts import Fact
from gitdream.dream.grouping import Casing


def fact(text: str, seen: int = 1, day: int = 1) -> Fact:
    when = date(2026, 3, day)
    return Fact(text=text, sources=["x.md#L1-L1@0123456789ab"], seen=seen, first=when, last=when)


def test_the_most_salient_fact_describes_the_topic_not_the_newest() -> None:
    facts = [
        fact("NEVER retry a post that returned an id: the content is stored server-side.", day=1),
        fact("Replied to the thread about the outage.", day=5),
    ]
    assert summary_of(facts, "Moltbook").startswith("NEVER retry a post")
    facts = [fact("永远不要重试已经返回 id 的帖子。", day=1), fact("回复了用户的邮件。", day=5)]
    assert summary_of(facts, "论坛").startswith("永远不要重试")


def test_a_fact_restated_more_often_ranks_higher_among_equals() -> None:
    facts = [
        fact("The cache keeps entries for 10 minutes.", seen=1),
        fact("The queue keeps jobs for 3 days.", seen=6),
    ]
    assert summary_of(facts, "Limits").startswith("The queue")


def test_shortened_at_a_sentence_then_a_clause_never_inside_a_word() -> None:
    assert (
        shorten("Backups run at 03:00. They take an hour and page on failure.", 40) == "Backups run at 03:00."
    )
    long = (
        "Fork detection via multi-layer fingerprinting: content hash, structural hash, vocabulary fingerprint"
    )
    cut = shorten(long, 60)
    assert cut == "Fork detection via multi-layer fingerprinting: content hash…"
    # a whole clause ends at "; " or " — " without a mark: it states itself
    listed = "Keep package metadata current in pyproject.toml; review docs/ periodically; stage all files"
    assert shorten(listed, 60) == "Keep package metadata current in pyproject.toml"
    # a reason or a caveat added after a comma leaves a whole statement before it
    reasoned = "Never promote a build before its migrations ran, because build 415 broke checkout"
    assert shorten(reasoned, 60) == "Never promote a build before its migrations ran"
    assert (
        shorten("部署之前必须先跑迁移脚本，因为上次发布因此中断了结账流程。", 16)
        == "部署之前必须先跑迁移脚本"
    )
    # a one-word label is dropped rather than the end of the sentence
    marked = "IMPORTANT: You must activate the virtual environment in each new terminal first."
    assert shorten(marked, 70) == "You must activate the virtual environment in each new terminal first."
    assert shorten("部署之前，必须先跑冒烟测试，然后再合并。其余略。", 14) == "部署之前，必须先跑冒烟测试…"
    assert shorten("一二三四五六七八九十。十一十二", 6) == "一二三四五…"  # one clause: cut at a character


def test_a_standing_statement_describes_the_topic_rather_than_a_record_of_one_moment() -> None:
    # equal weight as knowledge; the newer one is what happened once (past tense)
    facts = [
        fact("The timeout is 30 seconds for slow clients.", day=1),
        fact("Raised the timeout to 30 seconds because the API dropped slow clients.", day=5),
    ]
    assert summary_of(facts, "Tools").startswith("The timeout is")
    facts = [
        fact("超时对慢客户端是 30 秒。", day=1),
        fact("把超时改成了 30 秒，因为接口断开了慢客户端。", day=5),
    ]
    assert summary_of(facts, "Tools").startswith("超时对")


def test_a_fact_that_fits_whole_is_preferred_to_one_that_must_be_cut() -> None:
    long = "Never retry a post that returned an id, " + "on the forum, the wiki, the board, the list, " * 3
    facts = [fact("Never retry a post that returned an id.", day=1), fact(long.strip(" ,") + ".", day=1)]
    assert summary_of(facts, "Posting", limit=60) == "Never retry a post that returned an id."


def test_no_current_fact_no_description() -> None:
    assert summary_of([], "x") == ""


def test_a_record_of_one_activity_never_describes_a_topic_that_holds_a_standing_fact() -> None:
    facts = [
        fact("`attest` creates signed attestations in JWK format.", day=1),
        fact("Added `envelope` command: JSON envelope with a detached Ed25519 signature.", day=5),
    ]
    assert summary_of(facts, "attestation-signer").startswith("`attest` creates")
    facts = [
        fact("`attest` 명령은 JWK 형식의 서명된 증명을 만든다.", day=1),
        fact("`envelope` 명령을 추가했다.", day=5),
    ]
    assert summary_of(facts, "attestation-signer").startswith("`attest` 명령은")


@pytest.mark.parametrize(
    ("remark", "rule"),
    [
        (
            "These changes should make it much clearer that the environment is required.",
            "Activate the virtual environment before running any command.",
        ),
        ("这些修改应该会让文档更清楚。", "运行任何命令之前必须先激活虚拟环境。"),
        (
            "이 변경으로 문서가 더 명확해질 것입니다.",
            "명령을 실행하기 전에 반드시 가상 환경을 활성화해야 한다.",
        ),
    ],
)
def test_a_sentence_that_does_not_state_itself_never_describes_a_topic(remark: str, rule: str) -> None:
    facts = [fact(rule, day=1), fact(remark, day=5)]
    assert summary_of(facts, "Setup") == rule


def test_the_standing_sentence_of_a_fact_describes_the_topic_not_its_first_one() -> None:
    facts = [fact("Replied to the thread on provenance. Signatures prove custody, not intent.")]
    assert summary_of(facts, "Clawk") == "Signatures prove custody, not intent."
    facts = [fact("回复了关于溯源的帖子。签名证明的是保管，不是意图。")]
    assert summary_of(facts, "Clawk") == "签名证明的是保管，不是意图。"


def test_a_long_fact_ends_where_a_sentence_or_a_listed_clause_ends() -> None:
    text = "Jevons: efficiency gains spur more use. " + "Cheaper inference means more calls. " * 20
    cut = fit(text, 120)
    assert len(cut) <= 120 and cut.endswith(".") and not cut.endswith("…")
    listed = "Key findings: " + "; ".join(f"finding number {i} holds in general" for i in range(30))
    cut = fit(listed, 150)
    assert len(cut) <= 150 and cut.endswith("holds in general") and "…" not in cut
    chinese = "效率提升会带来更多使用。" * 40
    cut = fit(chinese, 50)
    assert len(cut) <= 50 and cut.endswith("。")
    assert fit("Short enough.", 50) == "Short enough."


def test_a_long_fact_keeps_its_key_sentence_rather_than_its_first_ones() -> None:
    opening = "I suspect the trouble came from what I asked towards the end of the last session, " * 3
    key = "Always explain the purpose of a file you add."
    text = opening.strip(" ,") + ". " + key
    ranked = fit(text, 120, rank=lambda part: 1.0 if "Always" in part else 0.0)
    assert ranked == key
    chinese = "我怀疑问题出在上次会话结束时我给的指示上，" * 4 + "。每次新增文件都必须说明它的用途。"
    assert (
        fit(chinese, 40, rank=lambda part: 1.0 if "必须" in part else 0.0)
        == "每次新增文件都必须说明它的用途。"
    )


def test_a_description_does_not_repeat_the_topics_title_as_a_label() -> None:
    facts = [fact("Forum: Posts with an id are stored server-side; never retry them.")]
    assert summary_of(facts, "Forum") == "Posts with an id are stored server-side; never retry them."
    facts = [fact("论坛：返回了 id 的帖子已经保存在服务器上，永远不要重试。")]
    assert summary_of(facts, "论坛") == "返回了 id 的帖子已经保存在服务器上，永远不要重试。"


def test_the_speakers_account_of_their_own_work_does_not_describe_a_topic() -> None:
    facts = [
        fact("The package list in pyproject.toml keeps specs out of the build.", day=1),
        fact("I had to make one fix to the pyproject.toml file and removed the classifiers.", day=5),
    ]
    assert summary_of(facts, "Packaging").startswith("The package list")


def test_a_later_sentence_that_continues_the_one_before_it_does_not_stand_as_the_line() -> None:
    # "Strong memories" takes up "weak memories" of the sentence before: read alone it is a
    # fragment of a contrast, so the fact's opening describes the topic.
    english = (
        "Sleep preferentially consolidates weak memories via spindle activity. Strong memories don't "
        "benefit — always stable. Fast spindle density correlates with retention of poorly-encoded "
        "items across many studies."
    )
    assert summary_of([fact(english)], "Sleep research") == (
        "Sleep preferentially consolidates weak memories via spindle activity."
    )
    korean = (
        "수면은 방추파 활동을 통해 약한 기억을 우선적으로 강화한다. 강한 기억은 절대 이득을 보지 않는다 — "
        "이미 안정적이다. 빠른 방추파 밀도는 잘 부호화되지 않은 항목의 유지와 상관관계가 있으며 여러 "
        "연구에서 확인되었다."
    )
    assert (
        summary_of([fact(korean)], "수면 연구")
        == "수면은 방추파 활동을 통해 약한 기억을 우선적으로 강화한다."
    )
    # a sentence opening with a contrast leans on the one before it: the short fact is the line
    contrast = (
        "Deploys go out through the staging cluster first. But never on Fridays, always wait for Monday."
    )
    assert summary_of([fact(contrast)], "Deploys") == contrast


def test_a_continuation_does_not_give_way_to_an_opening_that_records_one_moment() -> None:
    text = (
        "Created `verify.py` in the repo yesterday afternoon for the tiers work. Verify.py never trusts "
        "a key it has not pinned itself, always check the pin first before anything else."
    )
    assert summary_of([fact(text)], "Verification").startswith("Verify.py never trusts")


def test_a_clause_is_cut_before_its_bracket_never_inside_it() -> None:
    english = (
        "My name is Ann Lee, my e-mail is ann@example.org so update the contributors list (acknowledge "
        "yourself, Claude, noting your model version) in TOML."
    )
    assert (
        shorten(english, 100)
        == "My name is Ann Lee, my e-mail is ann@example.org so update the contributors list…"
    )
    chinese = (
        "项目的维护者是李安，邮箱是 ann@example.org，请更新贡献者名单（也写上你自己，注明你现在的模型版本，"
        "以及其他的一些详细信息和说明）以及许可证文件里面的内容。"
    )
    assert shorten(chinese, 60) == "项目的维护者是李安，邮箱是 ann@example.org…"


def test_a_cut_never_splits_a_word_of_a_script_written_with_spaces() -> None:
    from gitdream.text.clip import clip

    assert clip("회의 요약: " + "가나다라마바사아자차카타파하" * 3, 30) == "회의 요약:…"
    assert clip("Итог встречи: " + "длинноесловобезпробелов" * 3, 40) == "Итог встречи:…"
    # Chinese is written without spaces: a cut may fall after any character
    assert (
        clip("会议总结：" + "这是一个很长的句子没有任何空格" * 3, 20)
        == "会议总结：这是一个很长的句子没有任何空…"
    )


def test_a_topic_is_described_by_a_fact_about_its_subject_not_one_that_landed_there() -> None:
    # The survey note is the most salient sentence, but it does not name the topic: the
    # line says what `scripts.md` is about.
    facts = [
        fact("`scripts/deploy-check.py` verifies the release manifest before a deploy.", day=1),
        fact(
            "Raft survey (Ongaro 2014): a leader must hold a majority, because two majorities overlap.", day=2
        ),
        fact("`scripts/log-rotate.py` keeps seven days of logs.", day=3),
    ]
    assert "scripts/" in summary_of(facts, "Scripts")
    facts = [
        fact("部署前必须先在预发布环境跑一遍冒烟测试。", day=1),
        fact("Raft 共识算法必须使用多数派，因为两个多数派总会重叠。", day=2),
    ]
    assert summary_of(facts, "部署").startswith("部署前")
    # A title no fact names chooses among all of them.
    assert summary_of(facts, "General").startswith("Raft 共识算法必须")
    # A fact that names no other subject is about the topic it is in, named or not.
    facts = [
        fact("No deploys on Friday afternoon, as agreed last week.", day=1),
        fact("Never promote a build before its migrations have run, because checkout broke once.", day=2),
    ]
    assert summary_of(facts, "Deploy").startswith("Never promote a build")


# --- a plan or a request is no topic's description while a standing fact exists ---


@pytest.mark.parametrize(
    ("plan", "standing"),
    [
        (
            "I plan to eventually publish this to github.",
            "Minimize code - every line should justify its existence, and I would rather delete than document",
        ),
        ("We will migrate the database next week.", "The database keeps backups for 7 days."),
        ("我打算下个月把它发布到 GitHub。", "我发现这个项目必须先激活虚拟环境。"),
        (
            "저는 다음 달에 깃허브에 공개할 예정입니다.",
            "저는 가상 환경을 먼저 활성화해야 한다는 것을 알았습니다.",
        ),
        ("私は来月GitHubで公開する予定です。", "私は仮想環境を先に有効にする必要があると気づいた。"),
    ],
)
def test_a_plan_never_describes_a_topic_that_holds_a_standing_fact(plan: str, standing: str) -> None:
    facts = [fact(standing, day=1), fact(plan, day=5)]
    assert summary_of(facts, "General") == standing


def test_a_topic_of_plans_only_is_still_described() -> None:
    assert summary_of([fact("I plan to eventually publish this to github.")], "General").startswith("I plan")


# --- a sentence filling a slot of a template is a record of its session ---


@pytest.mark.parametrize(
    ("slotted", "standing"),
    [
        (
            "Files and Code Sections: `src/shelf/conftest.py`; Sets up the module path for the tests",
            "There's no Shelf team.",
        ),
        ("세션 요약: `src/shelf/conftest.py` 파일은 테스트의 모듈 경로를 설정한다", "팀은 없다."),
        # "Notes" names a kind of reference, which a routine fills every session: no promise
        # of durable knowledge, unlike "Lesson" or "Rule"
        ("Notes: `src/shelf/conftest.py`; Sets up the module path for the tests", "There's no Shelf team."),
    ],
)
def test_a_sentence_filling_a_slot_of_a_template_does_not_describe_a_topic(
    slotted: str, standing: str
) -> None:
    # "Files and Code Sections:" opens an item of every session's recap: what follows is
    # what that session touched, not what the topic holds. A label that holds no name —
    # every word a common one, which memory also writes in lower case, or a generic word
    # ("세션 요약", session summary) — is such a slot; without knowing it, the recap's
    # item is the line.
    facts = [fact(slotted, day=1), fact(standing, day=1)]
    slot = Casing(["the files and the code sections it changed", slotted, standing]).holds_no_name
    assert summary_of(facts, "Shelf").startswith(slotted[:20])
    assert summary_of(facts, "Shelf", slot=slot) == standing


def test_a_slot_that_names_a_kind_of_knowledge_still_describes_a_topic() -> None:
    # "Key lesson:" opens an item of every day's routine too, but it says its value is durable.
    facts = [
        fact("Key lesson: never retry a post that returned an id.", day=1),
        fact("There's no forum team."),
    ]
    slot = Casing(["the key lesson of the day", *(f.text for f in facts)]).holds_no_name
    assert slot("Key lesson")
    assert summary_of(facts, "Forum", slot=slot).startswith("Key lesson: never retry")


@pytest.mark.parametrize(
    "rule",
    [
        "Research: VACUUM FULL locks the table, so never run it during business hours.",
        "조사: VACUUM FULL은 테이블을 잠그므로 업무 시간에 실행하면 안 된다.",
    ],
)
def test_a_rule_filling_a_slot_still_describes_a_topic_of_weaker_facts(rule: str) -> None:
    # the slot's value is judged alone and as a record, not dropped: a rule stays a rule
    label = rule.split(":")[0]
    facts = [fact(rule, day=1), fact("There's no team.", day=1)]
    assert summary_of(facts, "Postgres", slot=lambda written: written == label) == rule


@pytest.mark.parametrize(
    ("fact_text", "opening"),
    [
        (
            'clove — OpenClaw agent, liked and replied to the octopus thread. "SOUL.md + TOOLS.md are the wiring."',
            "clove",
        ),
        ("clove 是 OpenClaw 上的代理，专做记忆工具。「SOUL.md 和 TOOLS.md 就是接线。」", "clove 是"),
        (
            "clove は OpenClaw のエージェントで、記憶ツールを作る。「SOUL.md と TOOLS.md が配線だ。」",
            "clove は",
        ),
    ],
)
def test_a_quotation_after_the_sentence_naming_its_speaker_does_not_stand_as_the_line(
    fact_text: str, opening: str
) -> None:
    # read alone, someone's words have no speaker: the fact's opening describes the topic
    assert summary_of([fact(fact_text)], "New connections").startswith(opening)
