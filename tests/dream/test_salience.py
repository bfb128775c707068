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
from tests.dream.test_translations import TABLE

LOG = "agents/ops/memory/logs/2026/03/2026-03-02.md"
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
    "text",
    [*TABLE["an imperative rule"][1], "- Consider pinning the client version in the lock file."],
)
def test_a_plain_imperative_addressed_to_the_reader_is_a_rule(text: str) -> None:
    assert "rule" in feature(text), text
    # a user's message asks the listener for something in the session: no rule without a rule word
    assert "rule" not in feature(text.removeprefix("- "), role="user"), text
    assert "rule" not in feature(text, lead_in="Next steps:"), text  # a step of a plan


@pytest.mark.parametrize(
    "text",
    [
        "- Build failed on main.",  # a noun and its verb
        "- Update(README.md)",  # a tool's call
        "- Run 412 finished green.",
        "- Used blue-green deploys for the API.",  # past: a record
        "- 使用了蓝绿部署。",
        "- Use blue-green deploys for the API?",
        "- Consider it an investment rather than procrastination!",  # aimed at what is at hand
        "- Review it before the release.",
    ],
)
def test_a_noun_a_record_or_a_question_is_no_imperative(text: str) -> None:
    assert "rule" not in feature(text), text


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


@pytest.mark.parametrize("text", TABLE["an owner's preference told in the third person"][1])
def test_an_owners_preference_told_in_the_third_person_is_a_preference(text: str) -> None:
    assert "preference" in feature(text), text
    assert "preference" in feature(text.removeprefix("- "), role="assistant"), text


def test_what_the_user_wants_of_the_speaker_is_a_recount_not_a_preference() -> None:
    for asked in (
        feature("- The user wants me to expand the document."),
        feature("- The user wants to remove the old setup section."),
    ):
        assert "recount" in asked and "preference" not in asked
    stated = feature("- The user wants short commit messages.")
    assert "preference" in stated and "recount" not in stated


def test_words_inside_a_quotation_are_someone_elses() -> None:
    quoted = verdict('- funwolf wrote "never trust the cache, always verify" in the thread.')
    assert "rule" not in quoted.cues
    assert "rule" in verdict("- Never trust the cache; always verify.").cues


def test_reading_notes_weigh_against_an_entry() -> None:
    cited = verdict("- Key insight (Wartel et al. 2021): primate group sizes vary widely.")
    own = verdict("- Key insight: the probe misses forks that nobody witnessed.")
    assert "reading" in cited.cues and cited.score < own.score
    assert "reading" in verdict("- Sleep consolidates weak memories.", "Research: sleep").cues


def test_a_weak_lesson_heading_weighs_less_than_a_strong_one() -> None:
    notes = verdict("- The replica lags after the vacuum.", "Notes")
    lessons = verdict("- The replica lags after the vacuum.", "Lessons")
    assert 0 < notes.cues["lesson-heading-weak"] < lessons.cues["lesson-heading"]
    assert notes.score < lessons.score


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


def feature(text: str, *context: str, role: str | None = None, lead_in: str = "") -> dict[str, float]:
    kind = "transcript" if role else "log"
    entry = Entry(LOG, 1, 1, text, DAY, tuple(context), kind, role, lead_in=lead_in)
    return salience.features(entry, clean_text(entry, None), Cues())


@pytest.mark.parametrize(
    ("name", "texts"),
    [
        (
            "generic",
            [
                "- Uploads are private by default.",
                "- 上传默认是私有的。",
                "- 업로드는 기본적으로 비공개다.",
                "- アップロードはデフォルトで非公開になる。",
            ],
        ),
        (
            "contrast",
            [
                "- The reply endpoint works, but null ids are common.",
                "- 回复接口可用，但是经常返回空 id。",
                "- 답장 API는 동작하지만 빈 id가 자주 온다.",
                "- 返信 API は動くが、しかし空の id がよく返る。",
            ],
        ),
        (
            "behaviour",
            [
                "- The cache API returns an empty body after the TTL.",
                "- 缓存接口在过期后返回空内容。",
                "- 캐시 API는 만료 후 빈 응답을 반환한다.",
                "- キャッシュ API は期限切れの後に空の応答を返す。",
            ],
        ),
        (
            "momentary",
            [
                "- Don't merge anything for now.",
                "- 暂时不要合并任何东西。",
                "- 당분간 아무것도 머지하지 마.",
                "- 今回はマージしないでください。",
            ],
        ),
        (
            "date",
            [
                "- Suspended until 2026-02-20.",
                "- 暂停到 2月20日。",
                "- 2월 20일까지 정지.",
                "- 2月20日まで停止。",
            ],
        ),
        (
            "first-person",
            [
                "- I checked the inbox.",
                "- 我检查了收件箱。",
                "- 제가 받은편지함을 확인했다.",
                "- 私が受信箱を確認した。",
            ],
        ),
        (
            "past",
            ["- Fixed the parser.", "- 修好了解析器。", "- 파서를 고쳤다.", "- パーサーを直した。"],
        ),
        (
            "present",
            [
                "- The probe is read-only.",
                "- 探针是只读的。",
                "- 프로브는 읽기 전용이다.",
                "- プローブは読み取り専用です。",
            ],
        ),
    ],
)
def test_structural_and_linguistic_features_fire_in_every_language(name: str, texts: list[str]) -> None:
    for text in texts:
        assert name in feature(text), text
    assert name not in feature("- 42")


@pytest.mark.parametrize(
    ("name", "heading"),
    [
        ("artifact-heading", "Build: lag-probe.py v2"),
        ("alert-heading", "⚠️ Deploys frozen"),
        ("alert-heading", "INCIDENT REVIEW"),
    ],
)
def test_headings_that_name_a_file_or_raise_an_alert(name: str, heading: str) -> None:
    assert name in feature("- Checks the replica lag.", heading)
    assert name not in feature("- Checks the replica lag.", "Tools")


def test_something_done_with_its_reason_is_a_decision() -> None:
    assert "decision" in feature("- Added an explicit package list to prevent confusion between packages.")
    assert "decision" in feature("- 添加了显式的包列表，以免混淆两个包。") or "decision" not in feature(
        "- 42"
    )
    assert "decision" not in feature("- Added an explicit package list.")
    assert "decision" not in feature(
        "- Replied to funwolf (627e8a45) because the thread asked."
    )  # a reply record


def test_a_users_long_statement_weighs_for_it_and_a_short_command_does_not() -> None:
    long = "I do not need any backwards compatibility, so we should remove the old setup files entirely."
    assert "user-statement" in feature(long, role="user")
    assert "user-statement" not in feature("commit", role="user")
    assert "user-statement" not in feature(long + " Right?", role="user")
    assert "user-statement" not in feature(long, role="assistant")


def test_prose_inside_a_tool_block_weighs_less_than_the_same_words_outside() -> None:
    inside = "  ⎿  Updated CLAUDE.md with 1 addition\n     3  - Always run the smoke test before a deploy."
    assert "tool-output" in feature(inside) and "output" not in feature(inside)
    assert verdict(inside).score < verdict("- Always run the smoke test before a deploy.").score


def test_a_cue_word_inside_a_compound_name_is_not_that_word() -> None:
    assert "status" not in feature("- The claude-dev-log-diary folder is excluded from the hooks.", "Rules")
    assert "emphasis" not in feature("- Updated MEMORY.md and README.md with the new endpoints.")
    assert "emphasis" in feature("- NEVER retry a post that returned an id.")


def test_a_one_character_word_of_one_language_does_not_fire_inside_another() -> None:
    # Japanese 次 ("next") inside Chinese 这次 ("this time"); Japanese 計 inside 設計 ("design")
    assert "plan-heading" not in feature("- 备份放在凌晨运行。", "这次故障的教训")
    assert "status" not in feature("- 设计文档在 docs/ 目录。", "設計")


def test_the_reason_is_what_the_entry_itself_shows_before_where_it_stands() -> None:
    judged = verdict("- Let me check the dashboard first.", "Heartbeat 09:00")
    assert "event-heading" in judged.cues and judged.reason == "narration"
    judged = verdict("- **Inbox:** 11 matches, 0 unread, 180 discover")
    assert judged.reason == "status snapshot"  # status label, counts and status words together


def test_the_prior_ranks_texts_whatever_the_fitted_weights(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = Entry("agents/ops/memory/logs/2026/03/2026-03-02.md", 1, 1, "x", DAY)
    rule, status = "Never deploy on Friday.", "Inbox: 3 unread, still waiting."
    before = salience.prior_score(entry, rule, Cues()) - salience.prior_score(entry, status, Cues())
    monkeypatch.setattr(salience, "WEIGHTS", {name: -w for name, w in salience.WEIGHTS.items()})
    after = salience.prior_score(entry, rule, Cues()) - salience.prior_score(entry, status, Cues())
    assert before == after > 0


def test_the_configured_default_threshold_is_the_fitted_one() -> None:
    from gitdream.config import defaults

    assert defaults().float("offline.salience_threshold") == salience.DEFAULT_THRESHOLD
    assert 0 < salience.DEFAULT_THRESHOLD < 1
    assert set(salience.WEIGHTS) == set(salience.FEATURES)


@pytest.mark.parametrize(
    "text",
    [
        "- These changes should make the setup much clearer.",
        "- 这些改动让文档更清楚。",
        "- 이 변경으로 문서가 더 명확해졌다.",
        "- この変更でドキュメントが明確になった。",
    ],
)
def test_an_entry_pointing_at_what_was_just_done_does_not_state_itself(text: str) -> None:
    assert "deictic" in feature(text)
    assert "deictic" not in feature("- The cache returns an empty body after the TTL.")


def test_a_session_recounted_in_the_progressive_is_a_recount() -> None:
    assert "recount" in feature("- The user is asking me to expand the document.")
    assert "recount" in feature("- 用户要求我们扩展文档。")


@pytest.mark.parametrize(
    ("name", "fires", "lead_in", "does_not"),
    [
        (
            "lesson-label-weak",
            "- Tip: run the linter before every push.",
            "",
            "- Rule: run the linter before every push.",
        ),
        ("lesson-label-weak", "- 메모: 린터는 푸시 전에 돌린다.", "", "- 린터는 푸시 전에 돌린다."),
        ("lead-in-plan", "- Rotate the signing keys.", "Next steps:", "- Rotate the signing keys."),
        ("lead-in-plan", "- 서명 키를 교체한다.", "다음 할 일:", "- 서명 키를 교체한다."),
        (
            "status-label",
            "- **Inbox:** three new messages from the team",
            "",
            "- **Auth:** three new messages",
        ),
        ("status-label", "- 상태: 배포 대기 중", "", "- 배포 대기 중"),
        ("narration-weak", "- Great, the build passes on staging.", "", "- The build passes on staging."),
        ("narration-weak", "- 好的，构建在预发布环境通过。", "", "- 构建在预发布环境通过。"),
        ("question", "- Why does the build fail on Fridays?", "", "- The build fails on Fridays."),
        ("question", "- 为什么周五构建会失败？", "", "- 周五构建会失败。"),
        (
            "definition-weak",
            "- Ocean Tiger — runs the mail service",
            "",
            "- Ocean Tiger runs the mail service",
        ),
        ("definition-weak", "- Ocean Tiger is a mail relay.", "", "- Ocean Tiger relays mail."),
        ("status-mark", "- ✅ Smoke tests green on staging.", "", "- Smoke tests green on staging."),
        ("status-mark", "- **⚠️ Smoke tests flaky on staging.**", "", "- **Smoke tests flaky on staging.**"),
    ],
)
def test_each_feature_of_place_form_and_moment_fires_where_it_should(
    name: str, fires: str, lead_in: str, does_not: str
) -> None:
    """Each of these features fires on the first text and not on the second, which differs
    only by what the feature reads (a label, a lead-in, an opening, a mark)."""
    assert name in feature(fires, lead_in=lead_in), fires
    assert name not in feature(does_not), does_not


def test_an_emoji_status_mark_is_read_in_the_entry_as_written() -> None:
    """The fact text has lost the mark (`clean_text` drops emoji), so it is read in the
    entry: "✅ Smoke tests green" under Lessons is a status, and scores below the same
    statement without the mark."""
    marked = verdict("- ✅ Smoke tests green on staging.", "2026-03-02", "Lessons")
    plain = verdict("- Smoke tests green on staging.", "2026-03-02", "Lessons")
    assert "status-mark" in marked.cues and marked.score < plain.score
    assert not marked.kept and marked.reason == "status snapshot"


@pytest.mark.parametrize(
    ("past", "not_past"),
    [
        ("- 我们试过这个代理。", "- 请求通过这个代理。"),  # 过 after a verb; 通过 (by means of)
        ("- 缓存刷新过一次。", "- 缓存一小时后过期。"),  # 过期 (expire)
        ("- 修好了解析器。", "- 为了安全，先备份数据库。"),  # 为了 (in order to)
        ("- 설정 파일을 옮겼다.", "- 설정 파일은 docs 폴더에 있음."),  # 있음 (there is)
        ("- 설정 파일을 확인했습니다.", "- 설정 파일은 docs 폴더에 있습니다."),
        ("- 설정 파일을 옮겼음.", "- 설정 파일을 확인하겠음."),  # 겠 (will)
        ("- 設定ファイルを直した。", "- したがって再起動が必要。"),  # したがって (therefore)
    ],
)
def test_a_past_marker_inside_a_word_of_another_meaning_is_no_past(past: str, not_past: str) -> None:
    """过 in 过期/通过, 了 in 为了, the final ㅆ of 있다 and 겠, した in したがって: no past."""
    assert "past" in feature(past), past
    assert "past" not in feature(not_past), not_past


@pytest.mark.parametrize(
    "text",
    [
        "- The API key expires after 24 hours.",
        "- API密钥24小时后过期。",
        "- API 키는 24시간 후에 만료된다.",
        "- APIキーは24時間後に期限切れになる。",
        "- Der API-Schlüssel läuft nach 24 Stunden ab.",
        "- La clé API expire après 24 heures.",
        "- La clave de la API caduca después de 24 horas.",
        "- Sessions time out within 30 min of inactivity.",
    ],
)
def test_a_duration_stated_as_a_limit_is_a_limit_not_a_moment(text: str) -> None:
    fired = feature(text)
    assert "limit" in fired and "clock" not in fired and "status" not in fired, fired


@pytest.mark.parametrize(
    "text",
    [
        "- The API key expired 2 hours ago.",  # past, and time since
        "- Account suspended, 23h remaining.",  # time left
        "- 账号被暂停，剩余23小时。",
        "- 계정 정지, 23시간 남음.",
        "- アカウント停止中、残り23時間。",
        "- Retry after 30 minutes, still waiting.",  # a status beside it
        "- The key expires after 24 hours, at 14:30 UTC.",  # a clock time
    ],
)
def test_a_duration_counting_time_left_or_since_is_a_moment(text: str) -> None:
    fired = feature(text)
    assert "clock" in fired or "status" in fired, fired
    assert "limit" not in fired, fired


@pytest.mark.parametrize(
    ("version", "measure"),
    [
        ("- The staging cluster runs Kubernetes 1.29.", "- The staging cluster runs at load 1.29."),
        ("- 预发布集群运行 Kubernetes 1.29。", "- 预发布集群的负载是 1.29。"),
        ("- Pin the client to v2.4.1.", "- The client is 1.5x faster."),
        ("- 버전 3.2부터 이 옵션을 지원한다.", "- 응답 시간은 2.5 s이다."),
        ("- Requires Python 3.13.", "- Precision 0.79 on the held-out set."),
    ],
)
def test_a_version_of_a_named_tool_is_a_stable_fact_and_a_measure_is_not(version: str, measure: str) -> None:
    assert "version" in feature(version), version
    assert "version" not in feature(measure), measure
    assert "version" not in feature(
        "     rev: v4.5.0\n     hooks: []"
    )  # what a file shows, in a tool's block


@pytest.mark.parametrize(
    "text",
    [
        "- deploy api@4.12.0 staging",
        "- 发布 order-service v2.8.1 到 prod",
        "- order-service v2.8.1을 prod에 배포",
        "- order-service v2.8.1 を本番にデプロイ",
        "- Upgraded the runner to Python 3.13",
    ],
)
def test_a_version_an_event_moves_is_a_record_not_a_stable_fact(text: str) -> None:
    fired = feature(text)
    assert "version" not in fired and "rule" not in fired, fired


@pytest.mark.parametrize(
    ("sentence", "intends"),
    [
        ("I plan to eventually publish this to github.", True),
        ("We will migrate the database next week.", True),
        ("I eventually want to open-source it.", True),
        ("Ich werde es später veröffentlichen.", True),
        ("我打算下个月把它发布到 GitHub。", True),
        ("我们计划下周迁移数据库。", True),
        ("저는 다음 달에 깃허브에 공개할 예정입니다.", True),
        ("私は来月公開する予定です。", True),
        ("来月GitHubで公開するつもりです。", True),
        ("Deploys will fail when the migration is missing.", False),  # a behaviour, not the speaker's plan
        ("We never deploy on Fridays.", False),
        ("The plan is stored in plans/q3.md.", False),
        ("部署前必须先跑迁移脚本。", False),
        ("이 API는 예정된 작업을 실행한다.", False),
    ],
)
def test_the_speakers_own_plan_is_an_intention_in_every_language(sentence: str, intends: bool) -> None:
    assert salience.states_intention(sentence) is intends
