"""Dates of raw entries, and relative dates made absolute.

`absolutize(text, on)` keeps the writer's words and appends the absolute date in
parentheses, so nothing is lost and a misread is visible:

    "yesterday the deploy failed" (on 2026-03-02) → "yesterday (2026-03-01) the deploy failed"
    "昨天部署失败了"                                → "昨天(2026-03-01)部署失败了"
    "last week"                                   → "last week (week of 2026-02-23)"
    "last month"                                  → "last month (2026-02)"

Day expressions get `(YYYY-MM-DD)`, week expressions `(week of YYYY-MM-DD)` (the Monday of
that ISO week), month expressions `(YYYY-MM)`. English annotations are preceded by a space,
Chinese and Japanese ones are not. An expression already followed by such an annotation is
left alone, so the function is idempotent. Code spans, fenced blocks and URLs are never
touched; English words match whole words only ("todays" is not "today"; "today's" becomes
"today's (2026-03-02)"). "last Monday" is the latest Monday strictly before the date,
"next Monday" the first strictly after it, "this Monday" the Monday of the same ISO week;
"last night" is the day before. Expressions recognised (case-insensitive):

- English: today, tonight, this morning/afternoon/evening, yesterday, last night, tomorrow,
  the day before yesterday, the day after tomorrow, N days ago, in N days, last/this/next
  week, N weeks ago, in N weeks, last/this/next month, last/this/next <weekday>
  (N: digits or a/an/one...ten).
- Chinese: 今天 今早 今晚 昨天 昨晚 前天 大前天 明天 后天/後天 大后天 上周/上星期/上礼拜
  本周/这周/這週 下周/下星期/下礼拜 上个月 本月/这个月 下个月 N天前 N天后/N天後 (N: digits
  or 一...九十九).
- Japanese: 今日 本日 今朝 今夜 今晩 昨日 昨夜 昨晩 一昨日 明日 明後日 先週 先々週 今週 来週
  再来週 先月 先々月 今月 来月 再来月 N日前 N日後 N週間前 N週間後 ("3月1日前" is a date, not
  "1 day ago").
- Korean: 오늘 어제 어젯밤 그제 그저께 내일 모레 지난주/저번 주 이번 주 다음 주 지난달/저번 달
  이번 달 다음 달 N일 전 N일 후/뒤 N주 전 N주 후 (N: digits or 일...구십); a word followed by
  more Hangul that is not a particle is another word (오늘날 "nowadays" is left alone).

Never inside quotations ("…", “…”, 「…」, 『…』, «…», ‘…’): quoted words are someone's words
as they were said.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta

from gitdream.text.prose import segments

DATE_RE = re.compile(r"(?<![0-9])([0-9]{4})-([0-9]{2})-([0-9]{2})(?![0-9])")


def parse_day(text: str) -> date | None:
    """The date of an exact "YYYY-MM-DD" string, or None (also for 2026-02-30)."""
    match = DATE_RE.fullmatch(text.strip())
    return _valid(*match.groups()) if match else None


def date_in(text: str) -> date | None:
    """The first valid YYYY-MM-DD anywhere in `text`, or None."""
    for match in DATE_RE.finditer(text):
        day = _valid(*match.groups())
        if day is not None:
            return day
    return None


def date_from_path(path: str) -> date | None:
    """The first valid YYYY-MM-DD in the file name (last `/` or `\\` component) of `path`.

    `memory/logs/2026/03/2026-03-01.md` → 2026-03-01; a date only in a folder name does not
    count; None when there is none. Never raises.
    """
    name = re.split(r"[/\\]", path)[-1]
    return date_in(name)


def _valid(year: str, month: str, day: str) -> date | None:
    try:
        return date(int(year), int(month), int(day))
    except ValueError:
        return None


_NUMERIC = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?")


def date_from_timestamp(value: object) -> date | None:
    """The date of a transcript timestamp, or None when it is missing or unreadable.

    Accepts ISO 8601 strings (the date as written, in the writer's own offset: no conversion
    to UTC) and epoch numbers or numeric strings (seconds; values above 1e11 are taken as
    milliseconds) converted to a UTC date. Never raises.
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        if _NUMERIC.fullmatch(text):
            return date_from_timestamp(float(text))
        try:
            return datetime.fromisoformat(text).date()
        except ValueError:
            match = DATE_RE.match(text)
            return _valid(*match.groups()) if match else None
    if isinstance(value, int | float):
        try:  # float() of a 400-digit JSON integer overflows; NaN and inf fail below
            seconds = float(value)
            if abs(seconds) > 1e11:
                seconds /= 1000
            return datetime.fromtimestamp(seconds, UTC).date()
        except (OverflowError, OSError, ValueError):
            return None
    return None


# --- relative dates ----------------------------------------------------------------------

_WORD_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_CJK_DIGITS = dict(zip("一二两兩三四五六七八九", (1, 2, 2, 2, 3, 4, 5, 6, 7, 8, 9), strict=True))
# Sino-Korean numerals (일 이 삼 … 구, 십) read as the Chinese ones they come from: "삼일 전"
# is "3 days ago", "십일 후" "in 10 days".
_KO_DIGITS = str.maketrans("일이삼사오육칠팔구십", "一二三四五六七八九十")
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

_EN_N = r"(?P<n>[0-9]{1,4}|" + "|".join(_WORD_NUMBERS) + ")"
_CJK_N = r"(?<![0-9月一二两兩三四五六七八九十])(?P<n>[0-9]{1,4}|[一二两兩三四五六七八九十]{1,3})"
_ANNOTATED = re.compile(r"\s?[(（](?:week of )?[0-9]{4}-[0-9]{2}(?:-[0-9]{2})?[)）]")


def _number(text: str) -> int | None:
    text = text.lower().translate(_KO_DIGITS)
    if text.isdigit():
        return int(text)
    if text in _WORD_NUMBERS:
        return _WORD_NUMBERS[text]
    # Chinese numerals up to 99: 三, 十, 十三, 二十, 二十三.
    if "十" in text:
        tens, _, ones = text.partition("十")
        if (tens and tens not in _CJK_DIGITS) or (ones and ones not in _CJK_DIGITS) or len(text) > 3:
            return None
        return _CJK_DIGITS.get(tens, 1) * 10 + _CJK_DIGITS.get(ones, 0)
    return _CJK_DIGITS.get(text) if len(text) == 1 else None


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _add_months(day: date, months: int) -> str:
    index = day.year * 12 + day.month - 1 + months
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


def _day(offset: int) -> Callable[[date, re.Match[str]], str]:
    return lambda on, _m: (on + timedelta(days=offset)).isoformat()


def _week(offset: int) -> Callable[[date, re.Match[str]], str]:
    return lambda on, _m: "week of " + _monday(on + timedelta(weeks=offset)).isoformat()


def _month(offset: int) -> Callable[[date, re.Match[str]], str]:
    return lambda on, _m: _add_months(on, offset)


def _n_days(sign: int) -> Callable[[date, re.Match[str]], str | None]:
    def value(on: date, match: re.Match[str]) -> str | None:
        n = _number(match["n"])
        return None if n is None else (on + timedelta(days=sign * n)).isoformat()

    return value


def _n_weeks(sign: int) -> Callable[[date, re.Match[str]], str | None]:
    def value(on: date, match: re.Match[str]) -> str | None:
        n = _number(match["n"])
        return None if n is None else "week of " + _monday(on + timedelta(weeks=sign * n)).isoformat()

    return value


def _weekday(on: date, match: re.Match[str]) -> str:
    target = _WEEKDAYS.index(match["wd"].lower())
    which = match["which"].lower()
    if which == "last":
        back = (on.weekday() - target) % 7 or 7
        return (on - timedelta(days=back)).isoformat()
    if which == "next":
        ahead = (target - on.weekday()) % 7 or 7
        return (on + timedelta(days=ahead)).isoformat()
    return (_monday(on) + timedelta(days=target)).isoformat()


def _unnamed(pattern: str) -> str:
    return re.sub(r"\(\?P<\w+>", "(?:", pattern)


_Rule = tuple[str, Callable[[date, re.Match[str]], str | None]]

_EN_RULES: list[_Rule] = [
    (r"(?:the\s+)?day\s+before\s+yesterday", _day(-2)),
    (r"(?:the\s+)?day\s+after\s+tomorrow", _day(2)),
    (r"yesterday", _day(-1)),
    (r"last\s+night", _day(-1)),
    (r"today|tonight|this\s+(?:morning|afternoon|evening)", _day(0)),
    (r"tomorrow", _day(1)),
    (_EN_N + r"\s+days?\s+ago", _n_days(-1)),
    (r"in\s+" + _EN_N + r"\s+days?", _n_days(1)),
    (_EN_N + r"\s+weeks?\s+ago", _n_weeks(-1)),
    (r"in\s+" + _EN_N + r"\s+weeks?", _n_weeks(1)),
    (r"last\s+week", _week(-1)),
    (r"this\s+week", _week(0)),
    (r"next\s+week", _week(1)),
    (r"last\s+month", _month(-1)),
    (r"this\s+month", _month(0)),
    (r"next\s+month", _month(1)),
    (r"(?P<which>last|this|next)\s+(?P<wd>" + "|".join(_WEEKDAYS) + ")", _weekday),
]
_CJK_RULES: list[_Rule] = [
    (_CJK_N + r"天前", _n_days(-1)),
    (_CJK_N + r"天[后後]", _n_days(1)),
    (_CJK_N + r"日前", _n_days(-1)),
    (_CJK_N + r"日後", _n_days(1)),
    (r"大前天", _day(-3)),
    (r"大[后後]天", _day(3)),
    (r"一昨日", _day(-2)),
    (r"明後日", _day(2)),
    (r"前天", _day(-2)),
    (r"[后後]天", _day(2)),
    (r"昨天|昨晚|昨日|昨夜|昨晩", _day(-1)),
    (r"今天|今早|今晚|今日|本日|今朝|今夜|今晩", _day(0)),
    (r"明天|明日(?!香)", _day(1)),
    (r"上周|上星期|上礼拜|上禮拜|先週", _week(-1)),
    (r"本周|这周|這週|這周|今週", _week(0)),
    (r"下周|下星期|下礼拜|下禮拜|来週", _week(1)),
    (r"上个月|上個月|先月", _month(-1)),
    (r"本月|这个月|這個月|今月", _month(0)),
    (r"下个月|下個月|来月", _month(1)),
]
_KO_N = r"(?<![0-9])(?P<n>[0-9]{1,4}|[일이삼사오육칠팔구십]{1,3})"
# A Korean word ends where a particle or a non-Hangul character follows (오늘날 is "nowadays").
_KO_END = r"(?=$|[^가-힣]|[은는이가을를에의도만부까로와과]|보다|처럼)"
_KO_RULES: list[_Rule] = [
    (_KO_N + r"\s?일\s?(?:전|前)", _n_days(-1)),
    (_KO_N + r"\s?일\s?(?:후|뒤|後)", _n_days(1)),
    (_KO_N + r"\s?주\s?(?:전|前)", _n_weeks(-1)),
    (_KO_N + r"\s?주\s?(?:후|뒤|後)", _n_weeks(1)),
    (r"그저께|그제" + _KO_END, _day(-2)),
    (r"어제|어젯밤" + _KO_END, _day(-1)),
    (r"오늘(?!날)" + _KO_END, _day(0)),
    (r"내일" + _KO_END, _day(1)),
    (r"모레" + _KO_END, _day(2)),
    (r"(?:지난|저번)\s?주" + _KO_END, _week(-1)),
    (r"이번\s?주" + _KO_END, _week(0)),
    (r"다음\s?주(?![제소식])" + _KO_END, _week(1)),
    (r"(?:지난|저번)\s?달" + _KO_END, _month(-1)),
    (r"이번\s?달" + _KO_END, _month(0)),
    (r"다음\s?달" + _KO_END, _month(1)),
]
_JA_RULES: list[_Rule] = [
    (_CJK_N + r"週間前", _n_weeks(-1)),
    (_CJK_N + r"週間後", _n_weeks(1)),
    (r"先々週|先先週", _week(-2)),
    (r"再来週", _week(2)),
    (r"先々月", _month(-2)),
    (r"再来月", _month(2)),
]
_CJK_RULES = _JA_RULES + _CJK_RULES + _KO_RULES
_RULES = [(True, p, f) for p, f in _EN_RULES] + [(False, p, f) for p, f in _CJK_RULES]
_COMPILED = [re.compile(p, re.IGNORECASE) for _en, p, _f in _RULES]
# Inner named groups are read again from the rule's own pattern (their names repeat). The
# word-boundary checks and the first-character guard are factored out of the alternatives so
# that a position is rejected once, not once per rule (a tenfold speed-up on long logs).
_ALTERNATIVES = [f"(?P<r{i}>{_unnamed(p)})" for i, (_en, p, _f) in enumerate(_RULES)]
_EN_COUNT = len(_EN_RULES)
_PATTERN = re.compile(
    r"(?<![\w'’-])(?=[0-9a-z])(?:" + "|".join(_ALTERNATIVES[:_EN_COUNT]) + r")(?:['’]s)?(?![\w'’-])"
    r"|(?=[0-9一二两兩三四五六七八九十大明前后後昨今本上下这這先来再그어오내모지저이다일삼사육칠팔구십])(?:"
    + "|".join(_ALTERNATIVES[_EN_COUNT:])
    + ")",
    re.IGNORECASE,
)


def absolutize(text: str, on: date) -> str:
    """`text` with relative dates annotated with absolute ones computed from `on`.

    `on` is the entry's date. See the module docstring for the form and the expressions;
    idempotent; code and URLs are untouched. Never raises (a date that would fall outside
    year 1-9999 is left as it was).
    """
    return "".join(_unquoted(piece, on) if prose else piece for piece, prose in segments(text))


# Quotations are someone's words as they were said: a date in them is not rewritten.
_QUOTED = re.compile(
    r'"[^"\n]{0,500}"|“[^”\n]{0,500}”|„[^“”\n]{0,500}[“”]|「[^」\n]{0,500}」|『[^』\n]{0,500}』'
    r"|«[^»\n]{0,500}»|(?<![\w])‘[^’\n]{0,500}’(?![\w])"
)


def _unquoted(text: str, on: date) -> str:
    out: list[str] = []
    pos = 0
    for match in _QUOTED.finditer(text):
        out.append(_annotate(text[pos : match.start()], on))
        out.append(match.group(0))
        pos = match.end()
    out.append(_annotate(text[pos:], on))
    return "".join(out)


def _annotate(text: str, on: date) -> str:
    out: list[str] = []
    pos = 0
    for match in _PATTERN.finditer(text):
        if _ANNOTATED.match(text, match.end()):
            continue
        index = int(match.lastgroup[1:]) if match.lastgroup else -1
        english, _pattern, rule = _RULES[index]
        inner = _COMPILED[index].match(match[f"r{index}"])
        try:
            value = rule(on, inner) if inner else None
        except (OverflowError, ValueError):
            value = None
        if value is None:
            continue
        out.append(text[pos : match.end()])
        out.append((" (" if english else "(") + value + ")")
        pos = match.end()
    out.append(text[pos:])
    return "".join(out)
