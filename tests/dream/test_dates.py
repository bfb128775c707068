from datetime import date

import pytest

from gitdream.dream.dates import absolutize, date_from_path, date_from_timestamp, date_in, parse_day

MON = date(2026, 3, 2)  # a Monday
THU = date(2026, 3, 5)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("agents/ops/memory/logs/2026/03/2026-03-01.md", date(2026, 3, 1)),
        ("memory/2026-02-10.md", date(2026, 2, 10)),
        ("notes-2026-12-31-late.md", date(2026, 12, 31)),
        ("logs\\2026-01-02.md", date(2026, 1, 2)),
        ("2026-02-30.md", None),  # not a date
        ("2026-02-30-and-2026-02-28.md", date(2026, 2, 28)),
        ("2026-03-01/notes.md", None),  # a folder's date does not count
        ("day-003.md", None),
        ("120260301.md", None),
        ("", None),
    ],
)
def test_date_from_path(path: str, expected: date | None) -> None:
    assert date_from_path(path) == expected


def test_parse_day_and_date_in() -> None:
    assert parse_day("2026-03-01") == date(2026, 3, 1)
    assert parse_day(" 2026-03-01 ") == date(2026, 3, 1)
    assert parse_day("2026-13-01") is None
    assert parse_day("on 2026-03-01") is None
    assert date_in("# 2026-02-10 Daily Log") == date(2026, 2, 10)
    assert date_in("Heartbeat ~00:33 UTC") is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-01-21T06:20:30.851Z", date(2026, 1, 21)),
        ("2026-01-21T23:30:00-08:00", date(2026, 1, 21)),  # the writer's own day
        ("2026-01-21 06:20", date(2026, 1, 21)),
        ("2026-01-21", date(2026, 1, 21)),
        ("2026-01-21Tgarbage", date(2026, 1, 21)),
        (1768976430, date(2026, 1, 21)),
        (1768976430.5, date(2026, 1, 21)),
        ("1768976430", date(2026, 1, 21)),
        (1768976430851, date(2026, 1, 21)),  # milliseconds
        (10**30, None),
        (float("nan"), None),
        (True, None),
        (None, None),
        ("yesterday", None),
        ({"a": 1}, None),
    ],
)
def test_date_from_timestamp(value: object, expected: date | None) -> None:
    assert date_from_timestamp(value) == expected


@pytest.mark.parametrize(
    ("text", "on", "expected"),
    [
        ("yesterday the deploy failed", MON, "yesterday (2026-03-01) the deploy failed"),
        ("Yesterday it broke", MON, "Yesterday (2026-03-01) it broke"),
        ("TODAY", MON, "TODAY (2026-03-02)"),
        ("fixed today.", MON, "fixed today (2026-03-02)."),
        ("today's deploy", MON, "today's (2026-03-02) deploy"),
        ("tonight", MON, "tonight (2026-03-02)"),
        ("this morning", MON, "this morning (2026-03-02)"),
        ("last night", MON, "last night (2026-03-01)"),
        ("tomorrow", MON, "tomorrow (2026-03-03)"),
        ("the day before yesterday", MON, "the day before yesterday (2026-02-28)"),
        ("day after tomorrow", MON, "day after tomorrow (2026-03-04)"),
        ("3 days ago", MON, "3 days ago (2026-02-27)"),
        ("a day ago", MON, "a day ago (2026-03-01)"),
        ("two days ago", MON, "two days ago (2026-02-28)"),
        ("in 10 days", MON, "in 10 days (2026-03-12)"),
        ("last week", THU, "last week (week of 2026-02-23)"),
        ("this week", THU, "this week (week of 2026-03-02)"),
        ("next week", THU, "next week (week of 2026-03-09)"),
        ("2 weeks ago", THU, "2 weeks ago (week of 2026-02-16)"),
        ("in a week", THU, "in a week (week of 2026-03-09)"),
        ("last month", date(2026, 1, 15), "last month (2025-12)"),
        ("next month", date(2026, 12, 15), "next month (2027-01)"),
        ("this month", MON, "this month (2026-03)"),
        ("last Monday", MON, "last Monday (2026-02-23)"),  # strictly before
        ("last Monday", THU, "last Monday (2026-03-02)"),
        ("next monday", MON, "next monday (2026-03-09)"),
        ("next Friday", THU, "next Friday (2026-03-06)"),
        ("this Sunday", MON, "this Sunday (2026-03-08)"),
        # Chinese
        ("今天", MON, "今天(2026-03-02)"),
        ("昨天部署失败了", MON, "昨天(2026-03-01)部署失败了"),
        ("前天", MON, "前天(2026-02-28)"),
        ("大前天", MON, "大前天(2026-02-27)"),
        ("明天", MON, "明天(2026-03-03)"),
        ("后天", MON, "后天(2026-03-04)"),
        ("上周", THU, "上周(week of 2026-02-23)"),
        ("下周", THU, "下周(week of 2026-03-09)"),
        ("3天前", MON, "3天前(2026-02-27)"),
        ("三天前", MON, "三天前(2026-02-27)"),
        ("十二天后", MON, "十二天后(2026-03-14)"),
        ("上个月", MON, "上个月(2026-02)"),
        # Japanese
        ("今日は晴れ", MON, "今日(2026-03-02)は晴れ"),
        ("昨日", MON, "昨日(2026-03-01)"),
        ("明日", MON, "明日(2026-03-03)"),
        ("一昨日", MON, "一昨日(2026-02-28)"),
        ("先週", THU, "先週(week of 2026-02-23)"),
        ("来週", THU, "来週(week of 2026-03-09)"),
        ("5日前", MON, "5日前(2026-02-25)"),
        ("来月", MON, "来月(2026-04)"),
    ],
)
def test_absolutize_annotates_relative_dates(text: str, on: date, expected: str) -> None:
    assert absolutize(text, on) == expected


@pytest.mark.parametrize(
    "text",
    [
        "todays",
        "yesterdays",
        "Todayville",
        "a yesterday-ish mood",
        "see `date -d yesterday` for help",
        "```\nrm -rf today\nyesterday\n```",
        "~~~\nyesterday\n",  # unterminated fence: still code
        "https://example.com/today/yesterday",
        "3月1日前に提出",  # before March 1st, not "1 day ago"
        "明日香",  # a name
        "yesterday (2026-01-01)",  # already annotated (even with another date)
        "last week (week of 2026-02-23)",
        "99999999 days ago",  # out of range: left alone
        "",
    ],
)
def test_absolutize_leaves_alone(text: str) -> None:
    assert absolutize(text, MON) == text


@pytest.mark.parametrize(
    "text",
    [
        "yesterday the deploy failed; today we fixed it; tomorrow we ship",
        "3 days ago, in 2 days, last week, next month, last Friday",
        "昨天部署失败，今天修好了，3天前也一样，上周",
        "昨日は失敗、今日は成功、先週も",
        "mixed `yesterday` code and yesterday prose",
        "```\nyesterday\n```\nyesterday after the fence",
    ],
)
def test_absolutize_is_idempotent(text: str) -> None:
    once = absolutize(text, MON)
    assert once != text
    assert absolutize(once, MON) == once
    assert absolutize(once, date(2030, 1, 1)) == once


def test_absolutize_keeps_code_and_rewrites_prose_around_it() -> None:
    text = "yesterday: ran `today.sh`\n```\ntoday\n```\ntoday"
    assert (
        absolutize(text, MON) == "yesterday (2026-03-01): ran `today.sh`\n```\ntoday\n```\ntoday (2026-03-02)"
    )


@pytest.mark.parametrize("value", [10**400, -(10**400), float("nan"), float("inf"), "1e400", 10**20])
def test_date_from_timestamp_never_raises_for_hostile_numbers(value: object) -> None:
    """Regression test: a transcript record whose timestamp is a 400-digit JSON integer made
    `float()` raise OverflowError outside the guard, and the whole run crashed."""
    assert date_from_timestamp(value) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("어제 배포가 실패했다", "어제(2026-03-03) 배포가 실패했다"),
        ("내일부터 적용한다", "내일(2026-03-05)부터 적용한다"),
        ("그저께 바꿨다", "그저께(2026-03-02) 바꿨다"),
        ("3일 전에 정했다", "3일 전(2026-03-01)에 정했다"),
        # Sino-Korean numerals: without them "삼일 전" matched and was left unannotated.
        ("삼일 전에 정했다", "삼일 전(2026-03-01)에 정했다"),
        ("십일 후 출시", "십일 후(2026-03-14) 출시"),
        ("이주 전 회의", "이주 전(week of 2026-02-16) 회의"),
        ("삼일절 전에", "삼일절 전에"),  # the March 1st holiday, not "3 days"
        ("지난주 결정", "지난주(week of 2026-02-23) 결정"),
        ("다음 주에 회의", "다음 주(week of 2026-03-09)에 회의"),
        ("지난달 장애", "지난달(2026-02) 장애"),
        ("오늘날 많은 팀이", "오늘날 많은 팀이"),  # "nowadays", not today
        ("다음 주제는 캐시", "다음 주제는 캐시"),  # "the next topic", not next week
        ("先々週の障害", "先々週(week of 2026-02-16)の障害"),
        ("2週間前に決めた", "2週間前(week of 2026-02-16)に決めた"),
        ("再来週リリース", "再来週(week of 2026-03-16)リリース"),
    ],
)
def test_korean_and_japanese_relative_dates(text: str, expected: str) -> None:
    assert absolutize(text, date(2026, 3, 4)) == expected


@pytest.mark.parametrize(
    "text",
    [
        'He wrote "yesterday" in the ticket',
        "她说“昨天”是最后一次",
        "「昨日」と書いてあった",
        "『어제』라는 말",
        "le ticket dit «yesterday»",
        "`date -d yesterday`",
    ],
)
def test_relative_dates_inside_quotations_or_code_are_left_alone(text: str) -> None:
    assert absolutize(text, date(2026, 3, 4)) == text


def test_a_quotation_does_not_hide_the_dates_around_it() -> None:
    text = 'Yesterday he said "tomorrow"; tomorrow we ship.'
    assert absolutize(text, date(2026, 3, 4)) == (
        'Yesterday (2026-03-03) he said "tomorrow"; tomorrow (2026-03-05) we ship.'
    )
