"""Topics by subject: which topic a fact belongs to, and what a new topic is called.

The offline engine groups facts by what they are about, not by the heading that happened to
sit above them:

1. **Terms.** Each text is reduced to its terms (`terms`): words of two letters or more in
   scripts with spaces (case-folded, a short list of function words left out), Korean words
   without their trailing particle, CJK bigrams in scripts without spaces, and the stems of
   file and command names (`scripts/fork-fingerprint.py` → `fork-fingerprint`).
2. **Names.** The candidate subjects of a text (`names`): file and code names, capitalised
   or mixed-case words and short bold labels in Latin script, explicit tags. A capitalised
   word opening a sentence is a name when the material shows it is one (`proper_names`): it
   is capitalised inside a sentence elsewhere, or it opens several entries and is never
   written in lower case ("Alertmanager must run …"). In scripts without case (Chinese,
   Japanese, Korean) a Latin word is a name, and so is a term in corner brackets or title
   marks. A name that many entries of the run mention is a better subject than one they
   mention once.
3. **Match.** An entry joins the existing topic — human-written or gitdream's — that is
   about one of its names: whose own name is one of them (same family; a term of the
   entry that is a topic's name counts as a name, however it is written), else whose facts or
   text mention two of them (a name counts for a topic when a share of its facts mention it,
   `MENTION_SHARE`, not when one fact of many does); failing that, the topic whose profile (name, description,
   facts, a person's text) is most similar (tf-idf cosine at least `FALLBACK_COSINE`,
   rare terms weighing more, a term of the topic's name three times). A topic a person
   wrote that is about none of the entry's names is joined by similarity only at
   `FALLBACK_COSINE`, never by the weaker step 7. Otherwise it starts a new topic
   (`TopicMatcher.best`).
4. **Naming.** A new topic is named after the entry's most-mentioned fit name, else its
   nearest fit heading, else `DEFAULT_TOPIC`. A name is *unfit* (`unfit_name`) when it is a
   clock time, a date, a weekday or month, a turn, heartbeat or session counter, a tally
   ("3 writes 2 likes"), a count in parentheses, or holds nothing but such words — those
   say when something happened, not what it is about. By structure in every script: an hour
   and its counter ("3시", "3点", "3時"), an ordinal of a turn ("第3次", "3회차"), two counted
   actions ("写了3条 点赞2次"); a word of a script without spaces is read as the words it is
   made of ("今日の作業"). Once its facts are placed, a topic the
   run created is named again after the subject most of them share (`subject_of`): counted
   by facts, a fit name before a common word (`common_word`) before a poor name
   (`poor_name`: a path, a file, an identifier, a counter).
5. **Families.** Names that differ only by trailing words of a family ("lessons",
   "lessons-learned", "lessons-learned-today") fold into one topic: the first significant
   word, singular, is the family key (`family`).

6. **One fact, many sources.** A new text that restates a fact of *any* topic of the agent
   (`containment`: the rarer-weighted share of the shorter text's terms the other holds,
   at least `RESTATE_CONTAINMENT`; `Restatements` finds the candidates) corroborates that
   fact instead of becoming a copy of it in another topic.

7. **No catch-all.** A fact that nothing the material shares names (step 4 finds no name)
   joins the existing topic most like it (`NEAREST_COSINE`), else a topic named after its
   own file, code or proper name, else — once every other fact is placed — the topic its
   log section went to (the same headings of the same file, or a list item beside it). A
   fact that names nothing itself and is weak is read and not kept; only a durable fact
   with no subject at all, in no section, lands in `DEFAULT_TOPIC`.

**Related.** `relations` lists, for each topic, the topics it is related to (a `Related:`
line, the relation completion of the seed documents): by the names they are about, else by
facts that are alike.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from gitdream.dream import lexicons
from gitdream.dream.lexicons import LESSON_WORDS, Lexicon

DEFAULT_TOPIC = "general"
MATCH_THRESHOLD = 0.2
FALLBACK_COSINE = 0.4
"""An entry that names nothing a topic is about joins it only when this similar."""
"""Cosine similarity (tf-idf) between an entry and a topic's profile for the entry to join it."""
NAME_WEIGHT = 3.0
MENTION_SHARE = 4
"""A topic is about a name its facts or text mention when at least one in this many of them
mention it, or `MENTION_MIN` do: a name one fact of many mentions in passing ("Byzantine
fractions" in one of twenty script notes) is that fact's subject, not the topic's."""
MENTION_MIN = 3
MAX_RELATED = 3
RELATED_MIN_SCORE = 3.0
"""Summed rarity (idf among the topics) of the names both of two topics are about, for them
to be related (`relations`); one topic about the other's own name is related at any score."""
RELATED_MIN_COSINE = 0.15
"""Without names in common, two topics are related when their facts are at least this alike
(tf-idf cosine over every text of the agent's topics, `relations`)."""
MIN_MENTIONS = 3
"""A name founds a topic only when at least this many entries of the material mention it."""
NEAREST_COSINE = 0.15
"""A fact that nothing the material shares names joins the topic most like it when at least
this similar (tf-idf cosine) with `NEAREST_SHARED` terms in common (step 7)."""
NEAREST_SHARED = 2
RESTATE_CONTAINMENT = 0.8
"""A text restates a fact when the rarer-weighted share of the shorter one's terms that the
other holds is at least this (`containment`)."""
INSTRUCTION_CONTAINMENT = 0.6
"""An instruction (the rule sentence of a fact, `salience.instruction_of`) restates another
when this share of the shorter one's terms (rarer-weighted) is in the other: the same rule
said in other words ("Always activate the virtual environment before running any
commands" / "You must activate the virtual environment … before running any commands")."""
INSTRUCTION_MIN_SHARED = 4
"""Two instructions must share at least this many terms for one to restate the other."""
RESTATE_MIN_TERMS = 3
"""Both texts must have, and share, at least this many terms for one to restate the other."""
RESTATE_POSTING_MAX = 400
"""A term held by more facts than this is too common to find restatement candidates by."""

_STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "but",
        "if",
        "then",
        "else",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "into",
        "onto",
        "over",
        "under",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "not",
        "no",
        "yes",
        "do",
        "does",
        "did",
        "done",
        "have",
        "has",
        "had",
        "having",
        "can",
        "could",
        "will",
        "would",
        "should",
        "may",
        "might",
        "must",
        "shall",
        "i",
        "me",
        "my",
        "we",
        "our",
        "you",
        "your",
        "he",
        "she",
        "they",
        "them",
        "their",
        "his",
        "her",
        "him",
        "us",
        "what",
        "which",
        "who",
        "whom",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "some",
        "each",
        "every",
        "more",
        "most",
        "less",
        "least",
        "very",
        "just",
        "also",
        "only",
        "so",
        "too",
        "than",
        "such",
        "via",
        "per",
        "about",
        "after",
        "before",
        "again",
        "against",
        "between",
        "both",
        "during",
        "few",
        "further",
        "nor",
        "off",
        "once",
        "other",
        "own",
        "same",
        "through",
        "until",
        "up",
        "down",
        "out",
        "now",
        "new",
        "one",
        "two",
        "three",
        "get",
        "got",
        "use",
        "used",
        "using",
        "make",
        "made",
        "like",
        "let",
        "lets",
        "it's",
        "i'm",
        "i've",
        "we've",
        "you've",
        "don't",
        "didn't",
        "can't",
        "still",
        "yet",
        "even",
        "much",
        "many",
        "way",
        "thing",
        "things",
        "lot",
        "lots",
        "really",
        "well",
        "good",
        "great",
    ]
)
_GENERIC_NAME = frozenset(
    [
        "log",
        "logs",
        "daily",
        "diary",
        "journal",
        "journals",
        "notes",
        "note",
        "misc",
        "miscellaneous",
        "entries",
        "entry",
        "heartbeat",
        "heartbeats",
        "session",
        "sessions",
        "today",
        "yesterday",
        "tomorrow",
        "summary",
        "summaries",
        "update",
        "updates",
        "standup",
        "day",
        "days",
        "week",
        "weekly",
        "morning",
        "afternoon",
        "evening",
        "night",
        "utc",
        "gmt",
        "am",
        "pm",
        "status",
        "checks",
        "check",
        "platform",
        "platforms",
        "writes",
        "write",
        "writing",
        "actions",
        "action",
        "likes",
        "like",
        "replies",
        "reply",
        "engagement",
        "progress",
        "done",
        "completed",
        "changelog",
        "stats",
        "totals",
        "total",
        "build",
        "builds",
        "research",
        "notable",
        "continuation",
        "carryover",
        "recap",
        "misc",
        "other",
        "others",
        "general",
        "todo",
        "next",
        "plan",
        "plans",
        "turn",
        "turns",
        "round",
        "rounds",
        "cycle",
        "cycles",
        "run",
        "runs",
        "step",
        "steps",
        "part",
        "time",
        "new",
        "more",
        "mon",
        "tue",
        "tues",
        "wed",
        "thu",
        "thur",
        "thurs",
        "fri",
        "sat",
        "sun",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "jan",
        "feb",
        "mar",
        "apr",
        "may",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "january",
        "february",
        "march",
        "april",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
        "日志",
        "日誌",
        "笔记",
        "筆記",
        "日记",
        "日記",
        "今天",
        "昨天",
        "明天",
        "记录",
        "記録",
        "ログ",
        "メモ",
        "日報",
        "ノート",
        "作業ログ",
        "进度",
        "状态",
        "일지",
        "일기",
        "오늘",
        "어제",
        "내일",
        "기록",
        "로그",
        "메모",
        "진행",
        "상태",
        "요약",
        "세션",
        "회차",
        "작업",
        "업데이트",
        "今日",
        "昨日",
        "明日",
        "進捗",
        "状況",
        "まとめ",
        "セッション",
        "作業",
        # the moments of a day and the function words around them, in other languages
        "上午",
        "下午",
        "早上",
        "中午",
        "晚上",
        "傍晚",
        "夜间",
        "回顾",
        "오전",
        "오후",
        "아침",
        "점심",
        "저녁",
        "밤",
        "회고",
        "午前",
        "午後",
        "朝",
        "昼",
        "夕方",
        "夜",
        "振り返り",
        "mañana",
        "tarde",
        "noche",
        "mediodía",
        "turno",
        "morgen",
        "vormittag",
        "nachmittag",
        "abend",
        "nacht",
        "mittag",
        "schicht",
        "matin",
        "après-midi",
        "soir",
        "nuit",
        "midi",
        "après",
        "manhã",
        "noite",
        "de",
        "del",
        "la",
        "el",
        "en",
        "y",
        "der",
        "die",
        "das",
        "und",
        "le",
        "du",
        "des",
        "et",
        "da",
        "do",
    ]
)
_GENERIC_NAME = _GENERIC_NAME | {
    "key",
    "change",
    "changes",
    "item",
    "items",
    "thing",
    "stuff",
    "updated",
    "created",
    "added",
    "fixed",
    "removed",
    "done",
    "finished",
    "started",
    "self",
    "maintenance",
}
# The routine's words of `_GENERIC_NAME` in Chinese, Korean and Japanese: heartbeat, check,
# turn or round, session, week, todo (as "heartbeat", "check", "turn", "session", "week",
# "todo" are above), so "하트비트 3" or "心跳检查" is as unfit as "Heartbeat 3".
_GENERIC_NAME = _GENERIC_NAME | {
    "心跳",
    "하트비트",
    "ハートビート",
    "检查",
    "檢查",
    "巡检",
    "점검",
    "チェック",
    "点検",
    "回合",
    "轮次",
    "輪次",
    "라운드",
    "턴",
    "ラウンド",
    "ターン",
    "会话",
    "會話",
    "本周",
    "上周",
    "下周",
    "这周",
    "本週",
    "上週",
    "下週",
    "今週",
    "先週",
    "来週",
    "이번주",
    "지난주",
    "다음주",
    "주간",
    "待办",
    "待辦",
    "할일",
    "やること",
}
_MEMORY_TYPES = frozenset({"user", "feedback", "project", "reference"})
_PARTICLES = (
    "으로부터",
    "에서부터",
    "에게서",
    "으로써",
    "이라는",
    "라는",
    "에서는",
    "에서도",
    "으로는",
    "에서",
    "에게",
    "으로",
    "하고",
    "이나",
    "부터",
    "까지",
    "처럼",
    "보다",
    "마다",
    "이랑",
    "은",
    "는",
    "이",
    "가",
    "을",
    "를",
    "에",
    "의",
    "로",
    "와",
    "과",
    "도",
    "만",
    "나",
    "랑",
)
_CLOCK = re.compile(r"\d{1,2}:\d{2}|\b\d{1,2}\s?(?:am|pm)\b|\butc\b|\bgmt\b", re.I)
_DATE = re.compile(
    r"\d{4}[-/.]\d{1,2}(?:[-/.]\d{1,2})?|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}|\d{1,2}\s*(?:月|월)\s*\d{1,2}|\d+\s*(?:日|일|号|號)"
)
_TALLY = re.compile(
    r"\d+\s*[^\W\d_]+\s*(?:[+,&/]|and)\s*\d+|\(\s*\d+[^)]*\)|#\s*\d+|\b(?:turn|round|cycle|heartbeat|session|run|step|part|day|week)\s*#?\d+",
    re.I,
)
# The same in scripts without spaces (NFKC has made full-width digits ASCII). A clock time:
# an hour with its counter ("3시", "3点", "3時"; not a duration, "3시간", "24時間") or a
# moment of the day before a number ("오후 3", "下午3", "午後3").
_CJK_CLOCK = re.compile(
    r"\d{1,2}\s*(?:시|時|时|点|點)(?!\s*(?:간|間|间))"
    r"|(?:오전|오후|새벽|上午|下午|凌晨|早上|中午|晚上|傍晚|午前|午後)\s*\d"
)
_NUMERAL = r"[\d〇零一二三四五六七八九十百千两兩]+"
# An ordinal of an occurrence — a turn, a round, a time, a day or week of a series: 第N次,
# 第N回, 第二轮, 제N회, N회차, N번째, 두 번째, N回目, N日目 ("Turn 12", "Day 3" in English).
_ORDINAL = re.compile(
    rf"(?:第|제)\s*{_NUMERAL}\s*(?:次|回|轮|輪|场|場|遍|趟|届|屆|期|天|日|周|週|회|차|번|일|주)"
    r"|\d+\s*(?:회차|번째|차례|일차|주차|回目|度目|番目|日目|周目|轮|輪)"
    r"|(?:첫|두|세|네|다섯|여섯|일곱|여덟|아홉|열)\s*번째"
)
# A count: a number and its counter (3次, 2回, 5条, 1件, 4个, 3회, 2개, 3번, 1건 …). Two of
# them in a name are a tally of actions ("写了3条 点赞2次", "2회 작성 1회 좋아요": "3 writes 2
# likes"); one is taken out of the name before its words are read ("心跳3次" is a heartbeat).
_COUNT = r"\d+\s*(?:次|回|条|條|件|个|個|篇|则|則|회|개|번|건|편|つ)"
_CJK_COUNT = re.compile(_COUNT)
_CJK_TALLY = re.compile(rf"{_COUNT}(?:(?!\d).){{0,16}}?{_COUNT}")
# Parts of a date that say when and nothing else, taken out of a name before its words are
# read: a year or month (2026年, 2월), a weekday (星期一, 周五, 月曜日, 월요일).
_CALENDAR = re.compile(
    r"\d{1,4}\s*(?:年|년|月|월)"
    r"|(?:星期|礼拜|禮拜|周|週)[一二三四五六日天]"
    r"|[月火水木金土日]曜日?"
    r"|[월화수목금토일]요일"
)
_JOINERS = frozenset("の的之和与與及と・、")
"""Characters that join words in Chinese and Japanese ("今日の作業", "今天的进度")."""
_HANGUL = re.compile(r"[\uac00-\ud7af]")
_DENSE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]+")
_WORDS = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")
_CODE = re.compile(r"`([^`\n]{2,80})`")
_LATIN_IN_DENSE = re.compile(r"(?<![A-Za-z0-9_`.-])[A-Za-z][A-Za-z0-9_.+-]{2,30}(?![A-Za-z0-9_`])")
_BRACKETED = re.compile(r"[「『《]([^「」『』《》\s]{2,20})[」』》]")
_FILE = re.compile(
    r"(?<![\w/.-])(?:[\w.-]+/)*([\w-]{2,60})\.(?:py|sh|js|ts|tsx|md|json|toml|yaml|yml|ini|cfg|rs|go|rb|java|txt)\b"
)
_BOLD = re.compile(r"\*\*([^*\n]{2,40}?)\*\*")
_LINE_HEAD = re.compile(r"^\s*(?:#+\s+|>\s*|(?:[-*+•]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?)*(?:\*\*)?")
_CAPITAL = re.compile(
    # CamelCase, an acronym (at most five capitals: a longer run is emphasis), a capitalised word
    r"(?<![\w'])([A-Z][a-z]+[A-Z][\w]*|[A-Z]{2,5}[a-z]*|[A-Z][a-z]{2,}(?:[-.][A-Za-z]+)*)(?![\w'])"
)


def _lesson_lexicon():  # the words that say a label is a kind of knowledge, not a subject

    return Lexicon(LESSON_WORDS)


class _Lazy:
    """The lesson lexicon, built on first use (salience imports this module's callers)."""

    def __init__(self) -> None:
        self._lexicon: Any = None

    def search(self, text: str) -> bool:
        if self._lexicon is None:
            self._lexicon = _lesson_lexicon()
        return self._lexicon.search(text)


_LESSON = _Lazy()


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _strip_particle(word: str) -> str:
    for particle in _PARTICLES:
        if word.endswith(particle) and len(word) > len(particle) + 1:
            return word[: -len(particle)]
    return word


def terms(text: str) -> list[str]:
    """The terms of `text` (module docstring, step 1), in order, with repeats."""
    norm = _norm(text)
    out: list[str] = []
    for match in _FILE.finditer(text):
        out.append(_norm(match.group(1)))
    for run in _DENSE.findall(norm):
        if len(run) == 1:
            out.append(run)
        out.extend(run[i : i + 2] for i in range(len(run) - 1))
    for word in _WORDS.findall(_DENSE.sub(" ", norm)):
        if _HANGUL.search(word):
            word = _strip_particle(word)
            if len(word) >= 2:
                out.append(word)
            continue
        if len(word) < 2 or word in _STOP or word.isdigit():
            continue
        out.append(_stem(word))
    return out


def _stem(word: str) -> str:
    """A Latin-script word without its possessive and plural -s ("registry's" → "registry",
    "tags" → "tag"); other words as they are."""
    word = word.removesuffix("'s")
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")) and word.isascii():
        return word[:-1]
    return word


_POSSESSIVE = re.compile(r"['’]s$")
_CODE_SPAN = re.compile(r"`[^`]*`")
_NON_SPACE = re.compile(r"\S+")


def _bare_word(word: str) -> str:
    """A word without the punctuation around it and a possessive ("Gendolf's," → "Gendolf")."""
    return _POSSESSIVE.sub("", word.strip("*_\"'“”‘’()[]{},.;:!?")).strip("'’")


def _shouted(line: str) -> bool:
    """True when `line` is written in capitals only, three words or more (a heading or
    a warning in capitals): its capitalised words are emphasis, not names."""
    words = [w for w in re.findall(r"[^\W\d_]+", line) if w.isascii()]
    return len(words) >= 3 and all(w.isupper() for w in words)


def _opens_next(word: str) -> bool:
    """True when the word after `word` opens a sentence or a label's value, so its capital
    may be the sentence's and not a name's: `word` ends one ("done.", "Build:", a bold
    label's "**Build:**") or is only marks ("-", "—", "*"). A semicolon does not: the word
    after it is written small unless it is a name ("confirms; Grafana shows …")."""
    bare = word.rstrip("*_`'\"’”)")
    return bare.endswith((".", "!", "?", ":", "—", "-", "。", "：")) or not any(c.isalnum() for c in word)


OPENER_MIN = MIN_MENTIONS
"""A capitalised word that opens at least this many of the texts, and that they never write
in lower case, is a proper name (`proper_names`)."""
FAMILY_PREFIX = 5
"""Two words share a family for `proper_names` when they share their first letters: all but
the last three, and at least this many ("Extracts" and "extracted", "Ensures" and "ensure")."""
_CUE_WORDS = frozenset(
    word.casefold()
    for key, words in vars(lexicons).items()
    if key.endswith("_WORDS") and isinstance(words, tuple)
    for word in words
    if " " not in word
)
"""Every cue word of salience (`gitdream.dream.lexicons`): words of a language for what an
entry is — "Never", "Always", "Posted", "Fixed" — never a name, however often they open one."""
_LOWER_WORD = re.compile(r"(?<![\w./\\-])([^\W\d_]+(?:-[^\W\d_]+)*)(?![\w/\\-]|\.[A-Za-z])")
"""A word as prose writes it: not part of a path, a file name or an identifier."""


def proper_names(texts: Iterable[str]) -> set[str]:
    """Case-folded proper names of `texts`, which a sentence may also start with: words
    written with a capital somewhere other than at the start of a sentence, and words that
    open at least `OPENER_MIN` of the texts (a subject that always starts its sentence:
    "Alertmanager must run …", "Alertmanager routes …") that no text writes in lower case
    outside code, nor a word of their family (`FAMILY_PREFIX`: "Extracts" beside
    "extracted" is a verb), and that are no function or cue word (`_STOP`, `_CUE_WORDS`)."""
    out: set[str] = set()
    opened: Counter[str] = Counter()
    lower: set[str] = set()
    for text in texts:
        first = True
        for line in _CODE_SPAN.sub(" ", text).split("\n"):
            lower.update(w for w in _LOWER_WORD.findall(line) if w.islower())
            if _shouted(line):
                continue
            sentence_start = True
            for match in _NON_SPACE.finditer(_LINE_HEAD.sub("", line)):
                word = match.group(0)
                cap = _CAPITAL.fullmatch(_bare_word(word))
                if cap and not sentence_start:
                    out.add(cap.group(1).casefold())
                elif cap and first and cap.group(1).istitle():
                    opened[cap.group(1).casefold()] += 1
                first = False
                sentence_start = _opens_next(word)
    for word, count in opened.items():
        if count < OPENER_MIN or word in _STOP or word in _CUE_WORDS or word in out or word in lower:
            continue
        stem = word[: max(FAMILY_PREFIX, len(word) - 3)]
        if not any(w.startswith(stem) for w in lower if "-" not in w):
            out.add(word)
    return out


def names(text: str, tags: Iterable[str] = (), proper: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """Candidate subject names of `text` (module docstring, step 2), as written, in order
    of appearance, without repeats; unfit names are left out. `proper` (from
    `proper_names`) lets a proper name count at the start of a sentence too."""
    found: list[str] = []
    found.extend(t for t in tags)
    for match in _FILE.finditer(text):
        found.append(match.group(1))
        folder = re.search(r"([\w-]{2,40})/[\w.-]+$", match.group(0))
        if folder:
            found.append(folder.group(1))  # the folder groups its files: scripts/, docs/
    for match in _CODE.finditer(text):
        inner = match.group(1).strip()
        if " " not in inner and not inner.startswith("-") and len(inner) <= 40:
            found.append(re.sub(r"\.(?:py|sh|js|ts|md|json|toml|yaml|yml)$", "", inner.rsplit("/", 1)[-1]))
    for match in _BOLD.finditer(text):
        label = match.group(1).strip(" :：`")
        if 1 <= len(label.split()) <= 3 and not _LESSON.search(label):
            found.append(label)
    for line in _CODE_SPAN.sub(" ", text).split("\n"):
        if _shouted(line):
            continue  # "FIRST CROSS-AGENT ATTESTATION": capitals for emphasis, not names
        sentence_start = True
        phrase: list[str] = []  # the capitalised words of a name of several ("Apple Books")
        for match in _NON_SPACE.finditer(_LINE_HEAD.sub("", line)):
            word = match.group(0)
            cap = _CAPITAL.fullmatch(_bare_word(word))
            if cap and not (
                sentence_start and cap.group(1).istitle() and cap.group(1).casefold() not in proper
            ):
                found.append(cap.group(1))  # a capital mid-sentence: a proper name
                phrase.append(cap.group(1))
                if word != cap.group(1):  # punctuation after it ends the name
                    _add_phrase(found, phrase)
            else:
                _add_phrase(found, phrase)
            sentence_start = _opens_next(word)
        _add_phrase(found, phrase)
    dense = len("".join(_DENSE.findall(text))) + len(_HANGUL.findall(text))
    if dense * 5 > 2 * len(re.sub(r"\s", "", text)):
        # In Chinese, Japanese or Korean text — no capitals to tell a name — a Latin word is
        # a name (a tool, a product: "Alertmanager 必须…", "Redis는"; it ends where the CJK
        # text resumes), and so is a term in corner brackets or title marks (「…」, 『…』, 《…》),
        # which set a name apart in those scripts.
        latin = _LATIN_IN_DENSE.findall(_CODE_SPAN.sub(" ", text))
        found.extend(w.rstrip(".-") for w in latin if w.casefold() not in _STOP)
        found.extend(m.group(1) for m in _BRACKETED.finditer(text))
    out: list[str] = []
    seen: set[str] = set()
    for name in found:
        name = name.strip(" -_*:：")
        key = family(name)
        if not name or not key or key in seen or unfit_name(name):
            continue
        seen.add(key)
        out.append(name)
    return out


def _add_phrase(found: list[str], phrase: list[str]) -> None:
    """Put the name of two or three capitalised words that `phrase` holds ("Apple Books",
    "Byzantine Fault Tolerance") into `found` before its first word, so the whole name is the
    subject its family is named after; then empty `phrase`. `phrase`'s words are the last
    ones of `found`."""
    if 2 <= len(phrase) <= 3:
        found.insert(len(found) - len(phrase), " ".join(phrase))
    phrase.clear()


def artifact_names(text: str) -> list[str]:
    """The files and code names `text` mentions, as stems ("Build: `isnad-sign.py` v2" →
    ["isnad-sign"]), fit ones only, in order."""
    found = [m.group(1) for m in _FILE.finditer(text)]
    found += [
        re.sub(r"\.(?:py|sh|js|ts|md|json|toml|yaml|yml)$", "", m.group(1).strip().rsplit("/", 1)[-1])
        for m in _CODE.finditer(text)
        if " " not in m.group(1).strip() and not m.group(1).strip().startswith("-")
    ]
    return [name for name in dict.fromkeys(found) if name and not unfit_name(name)]


_COMPOUND = re.compile(r"[^\W\d_]{2,}(?:-[^\W\d_]{2,})+")


def keyword(text: str, shared: Counter[str], matcher: TopicMatcher) -> str | None:
    """The compound term of `text` (words joined by "-", no digits: the way tools,
    commands and settings are often named — "pre-commit", "dry-run", "rate-limit") that
    most of the run's facts share — at least MIN_MENTIONS of them (`shared`: how many
    facts hold each term), rarest in the material first — as written in `text`; None when
    there is none. It names a topic for facts that name nothing else."""
    best: tuple[float, str] | None = None
    for term in dict.fromkeys(terms(text)):
        if shared.get(term, 0) < MIN_MENTIONS or not _COMPOUND.fullmatch(term):
            continue
        if term in _GENERIC_NAME or term in _STOP or _LESSON.search(term) or unfit_name(term):
            continue
        score = shared[term] * matcher.idf(term)
        if best is None or score > best[0]:
            best = (score, term)
    if best is None:
        return None
    term = best[1]
    for word in _WORDS.findall(text):
        if _stem(_norm(word)) == term or _strip_particle(_norm(word)) == term:
            return word
    return term


@functools.lru_cache(maxsize=65536)
def unfit_name(name: str) -> bool:
    """True when `name` must not name a topic (module docstring, step 4).

    By structure first, in any script: a clock time (`_CLOCK`, `_CJK_CLOCK`), a date
    (`_DATE`), a tally or a counter (`_TALLY`, `_CJK_TALLY`), an ordinal of a turn, a round
    or a day (`_ORDINAL`), more digits than a third of it. Then by its words, once the counts
    and the parts of a date are out of it (`_CJK_COUNT`, `_CALENDAR`): unfit when every word
    is generic (`_GENERIC_NAME`: when, not what), a function word or a kind of knowledge
    ("Key insight", "Lessons learned", "Notes"). A word of a script without spaces is read
    as the words it is made of (`_generic_run`: "今日の作業" is today + work), a Korean one
    without its particle ("오늘의" is "오늘")."""
    text = _norm(name)
    if not text.strip() or _CLOCK.search(text) or _DATE.search(text) or _TALLY.search(text):
        return True
    if _CJK_CLOCK.search(text) or _ORDINAL.search(text) or _CJK_TALLY.search(text):
        return True
    if sum(ch.isdigit() for ch in text) > len(text) / 3:
        return True
    rest = _KIND_PHRASES.sub(" ", _CALENDAR.sub(" ", _CJK_COUNT.sub(" ", text)))
    words = [w for w in _WORDS.findall(rest) if not w.isdigit()]
    if not words:
        return True
    tokens = [t for w in words for t in re.findall(r"[^\W_]+", w)]
    return all(_generic_token(t) for t in tokens)


def _generic_token(token: str) -> bool:
    """True when word `token` (case-folded) says nothing of a subject: generic, a function
    word, one letter, a kind of knowledge; in Chinese, Japanese or Korean, when it is made
    of such words only (`_generic_run`)."""
    if token in _GENERIC_NAME or token in _STOP or len(token) < 2 or token.isdigit():
        return True
    if token.isascii() or not (_DENSE.search(token) or _HANGUL.search(token)):
        return bool(_LESSON.search(token))
    return _generic_run(_strip_particle(token) if _HANGUL.search(token) else token)


_DENSE_KINDS = frozenset(w for w in LESSON_WORDS if _DENSE.search(w) or _HANGUL.search(w))
"""The kinds of knowledge (`LESSON_WORDS`) written in Chinese, Japanese or Korean; those of
two words ("배운 점") are taken out of a name whole (`_KIND_PHRASES`)."""
_KIND_PHRASES = re.compile(
    "|".join(re.escape(w) for w in sorted(_DENSE_KINDS, key=len, reverse=True) if " " in w) or "(?!)"
)


def _generic_run(run: str) -> bool:
    """True when `run`, a word of a script without spaces, can be read as generic words
    (`_GENERIC_NAME`), kinds of knowledge, digits and joining characters (`_JOINERS`) only:
    "今日の作業", "心跳检查", "오늘점검". The longest reading is tried first, a word at a time
    (at most eight characters)."""
    reachable = [True] + [False] * len(run)
    for start in range(len(run)):
        if not reachable[start]:
            continue
        if run[start] in _JOINERS or run[start].isdigit():
            reachable[start + 1] = True
        for end in range(start + 2, min(len(run), start + 8) + 1):
            piece = run[start:end]
            if piece in _GENERIC_NAME or piece in _DENSE_KINDS:
                reachable[end] = True
    return reachable[-1]


def family(name: str) -> str:
    """The family key of a topic name (module docstring, step 5): its first significant
    word, case-folded, a plural -s dropped ("Lessons learned today" → "lesson")."""
    words = re.findall(r"[^\W_]+", _norm(name))
    if len(words) > 1 and words[0] in _MEMORY_TYPES:
        words = words[1:]  # Claude Code's type prefixes: feedback_x, user_x, project_x
    for word in words:
        if word in _STOP or word.isdigit():
            continue
        if _HANGUL.search(word):
            return _strip_particle(word)
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        return word
    dense = _DENSE.findall(_norm(name))
    return dense[0] if dense else ""


def is_subject_family(name: str) -> bool:
    """True when the family of `name` says what it is about (not a generic word such as
    "heartbeat", "notes", "log"), so names of that family may fold into one topic."""
    key = family(name)
    return bool(key) and key not in _GENERIC_NAME and not unfit_name(name)


SUBJECT_SHARE = 3
"""A new topic is renamed after a subject its facts share (`subject_of`) only when at least
one in this many of its facts names it (and at least two do)."""
_PATH_SEGMENT = r"(?:[/\\]{name}|{name}[/\\]|(?<![\w.-]){name}\.[A-Za-z]{{1,5}}\b)"
_IDENTIFIER = re.compile(r"[^\W_]_[^\W_]|\.[A-Za-z]{1,5}$|[/\\]|\d|[(（\[][^)）\]]*[)）\]]\s*$")


def poor_name(name: str, texts: Iterable[str] = ()) -> bool:
    """True when `name`, though fit (`unfit_name`), names a topic poorly: a path or a file
    name (`docs/x`, `pyproject.toml`), a code identifier in snake_case or CONSTANT_CASE
    (`snowflake_default`, `MATCH_BY_COLUMN_NAME`), a name with a number or a trailing
    parenthesis (a counter, an ordinal, a version: "worker-07 (zweites Mal)"), or a word
    that `texts` write only as a segment of a path or a file's stem ("claude-dev-log-diary/…":
    a directory; "conftest" of `conftest.py`; "pytest" also run alone is a tool's name)."""
    text = name.strip()
    if _IDENTIFIER.search(text):
        return True
    within = re.compile(_PATH_SEGMENT.format(name=re.escape(text)), re.I)
    alone = re.compile(rf"(?<![\w./\\-]){re.escape(text)}(?![\w/\\-]|\.[A-Za-z])", re.I)
    texts = list(texts)
    return any(within.search(t) for t in texts) and not any(alone.search(t) for t in texts)


def _subjects(text: str, proper: set[str] | frozenset[str]) -> dict[str, str]:
    """Family key → name as written, for each subject `text` names (`names`) and each
    compound term it holds ("pre-commit", "dry-run": how tools and settings are named)."""
    found: dict[str, str] = {}
    for name in names(text, (), proper):
        found.setdefault(family(name), name)
    for word in _WORDS.findall(_CODE_SPAN.sub(" ", text)):
        if _COMPOUND.fullmatch(word) and not unfit_name(word) and is_subject_family(word):
            found.setdefault(family(word), word)
    return {key: name for key, name in found.items() if key and key not in _GENERIC_NAME}


_LABEL_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")


class Casing:
    """How the material writes each word (case-folded, `_stem`med): how often in lower case
    in prose (`lower`: not in code, a path or a file name) and how often with a capital
    inside a sentence (`inside`: not where a sentence, a line or a label's value opens).

    Built once a run from the texts of the material (`Casing(texts)`); `holds_no_name` reads
    a label with it."""

    def __init__(self, texts: Iterable[str]) -> None:
        self.lower: Counter[str] = Counter()
        self.inside: Counter[str] = Counter()
        for text in texts:
            for line in _CODE_SPAN.sub(" ", text).split("\n"):
                self.lower.update(_stem(w) for w in _LOWER_WORD.findall(line) if w.islower())
                if _shouted(line):
                    continue
                sentence_start = True
                for match in _NON_SPACE.finditer(_LINE_HEAD.sub("", line)):
                    word = match.group(0)
                    bare = _bare_word(word)
                    if not sentence_start and bare[:1].isupper() and bare.isalpha():
                        self.inside[_stem(bare.casefold())] += 1
                    sentence_start = _opens_next(word)

    def common(self, word: str) -> bool:
        """True when `word`, as written in a label, is a common word and not a name: a
        function word, a generic word (`_GENERIC_NAME`: when, not what) or a kind of
        knowledge; or a word written with a capital only as a title is ("Files", "Sections"
        of "Files and Code Sections") that the material also writes in lower case at least
        as often as with a capital inside a sentence ("code" 35 times, "Code" 4). A word
        never written in lower case ("Moltbook"), mostly capitalised inside sentences
        ("Clawk"), an acronym, a mixed-case or a word with digits is a name; so is a word
        the label writes in lower case (a handle, a command: "funwolf"), which `names` never
        reads as a name anyway. In a script without case, only generic words are common
        (`_generic_token`): a caseless label is a slot by repetition alone
        (`offline.label_slots`)."""
        folded = _norm(word)
        tokens = re.findall(r"[^\W_]+", folded)
        if tokens and all(_generic_token(t) for t in tokens):
            return True
        if not word.isalpha() or _DENSE.search(word) or _HANGUL.search(word):
            return False
        if not word.istitle() or (len(word) > 1 and word.isupper()):
            return False  # a word in lower case, an acronym, MixedCase
        key = _stem(folded)
        return self.lower[key] > 0 and self.lower[key] >= self.inside[key]

    def holds_no_name(self, label: str) -> bool:
        """True when inline label `label` ("Files and Code Sections") is made of common words
        only (`common`), with no name in it: a slot of a template, which names no topic."""
        if _CODE_SPAN.search(label) or _FILE.search(label):
            return False  # a file or a code name is a name
        words = [_bare_word(w) for w in label.split()]
        words = [w for w in words if w and not all(ch in "#~+-–—&/()" for ch in w)]
        return bool(words) and all(_LABEL_WORD.fullmatch(w) and self.common(w) for w in words)


def common_word(name: str, texts: Iterable[str]) -> bool:
    """True when `name`, a single capitalised word ("Stage", "Review", "Order"), is also
    written small in `texts` outside code, or is written with its capital only where a
    sentence, a clause, a list item or a heading opens ("…; Keep package metadata …"): a
    common word, not a proper name (which keeps its capital inside a sentence too)."""
    if " " in name or not name[:1].isupper() or name.isupper() or not name.isalpha():
        return False
    texts = [_CODE_SPAN.sub(" ", t) for t in texts]
    small = re.compile(rf"(?<![\w/.\\-]){re.escape(name[0].lower() + name[1:])}(?![\w/\\-])")
    if any(small.search(t) for t in texts):
        return True
    inside = re.compile(rf"[^\W\d_][,)]? {re.escape(name)}(?![\w/\\-])")
    return not any(inside.search(t) for t in texts)  # capitalised only where a clause opens


def subject_of(
    texts: Sequence[str],
    current: str,
    proper: set[str] | frozenset[str] = frozenset(),
    context: Sequence[str] = (),
) -> str | None:
    """The subject most of `texts` (the facts of a new topic named `current`) share, as a
    better name for the topic; None when `current` names it as well or nothing better does.

    Each candidate — a name or compound term of a fact (`_subjects`) — counts the facts
    that name it, not how often a word recurs; only one that at least two facts and one in
    `SUBJECT_SHARE` name may rename the topic. Candidates come in tiers: a fit name (a tool,
    a product, a person, a procedure), then a common word (`common_word`: "Stage" is also
    written "stage"), then a poor name (`poor_name`: a path, a file, an identifier, a
    counter). The fit candidate most facts name replaces `current` when more facts name it
    than `current`, or as many and `current` is poor or a common word; when `current` is poor
    and no fit candidate is shared, a poor one more facts name than `current` replaces it (a
    file the facts are about beats a directory they do not mention). A common word never
    renames a topic. `context` (the raw entries the facts came from) shows what `current`
    is: "claude-dev-log-diary/day-002.md" in an entry makes it a directory."""
    if not texts:
        return None
    seen = [*texts, *context]
    counts: Counter[str] = Counter()
    written: dict[str, Counter[str]] = {}
    first: dict[str, int] = {}
    for order, text in enumerate(texts):
        for key, name in _subjects(text, proper).items():
            counts[key] += 1
            written.setdefault(key, Counter())[name] += 1
            first.setdefault(key, order)
    need = max(2, math.ceil(len(texts) / SUBJECT_SHARE))

    def spelled(key: str) -> str:
        forms = written[key]
        return max(forms, key=lambda form: (forms[form], -list(forms).index(form)))

    def tier(name: str) -> int:
        if poor_name(name, seen) or unfit_name(name):
            return 0
        return 1 if common_word(name, seen) else 2

    mine = family(current)
    shared = [key for key in counts if counts[key] >= need and key != mine]
    if not shared:
        return None
    best = max(shared, key=lambda key: (tier(spelled(key)), counts[key], -first[key]))
    best_tier, mine_tier = tier(spelled(best)), tier(current)
    more, as_many = counts[best] > counts.get(mine, 0), counts[best] >= counts.get(mine, 0)
    if best_tier == 2 and (more or (as_many and mine_tier < 2)):
        return spelled(best)
    if best_tier == 0 and mine_tier == 0 and more:
        return spelled(best)
    return None


class TopicMatcher:
    """Topics as term profiles, and the best topic for a text (module docstring, step 3).

    `df` counts, for each term, how many documents (entries of the run and topics) hold it;
    rare terms weigh more (idf)."""

    def __init__(self, documents: Iterable[Iterable[str]]) -> None:
        self.df: Counter[str] = Counter()
        self.n = 0
        for doc in documents:
            self.n += 1
            self.df.update(set(doc))
        self.profiles: dict[str, Counter[str]] = {}
        self.name_terms: dict[str, set[str]] = {}
        self._norms: dict[str, float] = {}
        self.own_names: dict[str, set[str]] = {}
        self.mentioned: dict[str, Counter[str]] = {}  # slug → family → texts mentioning it
        self.named_texts: Counter[str] = Counter()  # slug → texts whose names were added
        self.human: set[str] = set()  # topics a person wrote (`add_topic(human=True)`)
        self._idf: dict[str, float] = {}  # `df` and `n` are fixed once built

    def idf(self, term: str) -> float:
        """The rarity weight of `term`: ln((n + 1) / (df + 1)) + 1, computed once a term."""
        value = self._idf.get(term)
        if value is None:
            value = self._idf[term] = math.log((self.n + 1) / (self.df.get(term, 0) + 1)) + 1.0
        return value

    def add_topic(self, slug: str, name: str, texts: Iterable[str], *, human: bool = False) -> None:
        """Add topic `slug` named `name` with its `texts` (description, facts, a person's
        text) to the profiles; `human` for a topic a person wrote, which a text naming
        something else joins by similarity only at `FALLBACK_COSINE` (`best`)."""
        self._norms.pop(slug, None)
        if human:
            self.human.add(slug)
        profile = self.profiles.setdefault(slug, Counter())
        name_terms = set(terms(name)) | set(terms(slug.replace("-", " ").replace("_", " ")))
        self.name_terms.setdefault(slug, set()).update(name_terms)
        profile.update(name_terms)
        for text in texts:
            profile.update(set(terms(text)))

    def add_text(self, slug: str, text: str) -> None:
        self._norms.pop(slug, None)
        self.profiles.setdefault(slug, Counter()).update(set(terms(text)))

    def _norm_of(self, slug: str) -> float:
        norm = self._norms.get(slug)
        if norm is None:
            profile, names_ = self.profiles[slug], self.name_terms.get(slug, set())
            norm = math.sqrt(sum(self._weight(t, c, names_) ** 2 for t, c in profile.items())) or 1.0
            self._norms[slug] = norm
        return norm

    def _weight(self, term: str, count: int, names_: set[str]) -> float:
        boost = NAME_WEIGHT if term in names_ else 1.0
        return boost * (1.0 + math.log(count)) * self.idf(term)

    def _own_families(self) -> set[str]:
        return {f for names_ in self.own_names.values() for f in names_}

    def add_names(self, slug: str, found: Iterable[str], *, own: bool = False) -> None:
        """Record names (families) a topic is about: `own` for its name, else the names one
        of its texts (a fact, a description, a person's text) mentions — one call a text,
        so `mentions` can tell a name many of them mention from one mentioned in passing."""
        families = {f for f in map(family, found) if f and f not in _GENERIC_NAME}
        if own:
            self.own_names.setdefault(slug, set()).update(families)
            return
        self.mentioned.setdefault(slug, Counter()).update(families)
        self.named_texts[slug] += 1

    def mentions(self, slug: str, families: set[str]) -> set[str]:
        """Those of `families` that topic `slug`'s texts mention often enough to be what it
        is about (`MENTION_SHARE`, `MENTION_MIN`)."""
        counts = self.mentioned.get(slug)
        if not counts:
            return set()
        texts = self.named_texts[slug]
        return {f for f in families if counts[f] >= MENTION_MIN or counts[f] * MENTION_SHARE >= texts > 0}

    def best(
        self,
        text: str,
        entry_names: Iterable[str] = (),
        threshold: float = MATCH_THRESHOLD,
        *,
        fallback: float = FALLBACK_COSINE,
        min_shared: int = 3,
    ) -> tuple[str, float] | None:
        """`(slug, score)` of the topic the entry is about (module docstring, step 3): the
        topic whose own name is one of the entry's names (`entry_names`), else the one whose
        facts or text mention two of them, most and rarest first; else the topic whose
        profile is most similar (tf-idf cosine at least `fallback`, `min_shared` terms in
        common; step 7 asks with `NEAREST_COSINE`, `NEAREST_SHARED`). Ties go to the topic
        added first.

        A topic a person wrote (`human`) that is about none of the entry's names — neither
        its own name nor one its texts mention — is joined by similarity only at
        `FALLBACK_COSINE`, whatever `fallback` asks: facts about Alertmanager sharing a few
        words with a person's `database.md` about PostgreSQL (cosine 0.15) are not its
        subject, and go to a topic of their own name instead."""
        families = {f for f in map(family, entry_names) if f}
        own = set(terms(text))
        if not own and not families:
            return None
        # A topic's name written in lower case (lobchan), or a compound of its family
        # (isnad-rfc for a topic isnad-sign: the name family, step 5).
        families |= (own | {family(t) for t in own if "-" in t}) & self._own_families()
        artifacts = {f for f in map(family, artifact_names(text)) if f}  # one file name is subject enough
        own_norm = math.sqrt(sum(self.idf(t) ** 2 for t in own)) or 1.0
        best: tuple[str, float] | None = None
        for slug, profile in self.profiles.items():
            named = families & self.own_names.get(slug, set())
            # One file name the topic mentions is subject enough; other names count when a
            # share of its texts mention them (`mentions`).
            filed = families & artifacts & set(self.mentioned.get(slug, ())) - named
            mentioned = self.mentions(slug, families - named) | filed
            shared = [t for t in own if t in profile]
            names_ = self.name_terms.get(slug, set())
            dot = sum(self.idf(t) * self._weight(t, profile[t], names_) for t in shared)
            cosine = dot / (own_norm * self._norm_of(slug))
            if named:
                score = 10.0 + sum(self.idf(f) for f in named) + cosine
            elif (len(mentioned) >= 2 or filed) and cosine >= threshold / 4:
                score = 5.0 + sum(self.idf(f) for f in mentioned) + cosine
            elif cosine >= self._similarity_bar(slug, families, fallback) and len(shared) >= min_shared:
                score = cosine
            else:
                continue
            if best is None or score > best[1]:
                best = (slug, score)
        return best

    def _similarity_bar(self, slug: str, families: set[str], fallback: float) -> float:
        """The cosine an entry naming `families` needs to join topic `slug` by similarity
        alone (`best`): `fallback`, or at least `FALLBACK_COSINE` for a person's topic about
        none of them."""
        named = {f for f in families if f not in _GENERIC_NAME}
        if slug not in self.human or not named:
            return fallback
        about = self.own_names.get(slug, set()) | set(self.mentioned.get(slug, ()))
        return fallback if named & about else max(fallback, FALLBACK_COSINE)


def relations(
    topics: Mapping[str, tuple[str, Sequence[str]]], wanted: Iterable[str], limit: int = MAX_RELATED
) -> dict[str, list[str]]:
    """The `Related:` links of each topic in `wanted` (module docstring, "Related"): up to
    `limit` slugs of `topics`, most related first.

    `topics` maps a slug to `(name, texts)` — the topic's name and its facts (or, for a
    topic a person wrote without facts, its body text). Two topics are related by the names
    they are about, not by the words they happen to share: one is about the other's own name
    (its facts mention it often enough, `MENTION_SHARE`/`MENTION_MIN`: "Scripts" mentioning
    Clawk once in twenty facts is not about Clawk), or both are about a name few topics are
    about (weighted by its rarity among the topics). Failing names, two topics are related
    when their facts are alike (tf-idf cosine at least `RELATED_MIN_COSINE`: a term weighs
    more the more of a topic's texts hold it and the fewer of all the texts do, so that an agent's everyday words — "tool", "post" —
    relate nothing). A topic related to everything relates nothing: each link must beat the
    score `RELATED_MIN_SCORE`."""
    proper = proper_names(t for _, texts in topics.values() for t in texts)
    own: dict[str, set[str]] = {}
    for slug, (name, _texts) in topics.items():
        keys = {family(name), family(slug.replace("-", " ").replace("_", " "))}
        own[slug] = {f for f in keys if f and f not in _GENERIC_NAME}
    every_own = set().union(*own.values()) if own else set()
    df: Counter[str] = Counter()
    n_texts = 0
    term_sets: dict[str, Counter[str]] = {}
    about: dict[str, set[str]] = {}
    for slug, (_name, texts) in topics.items():
        mentioned: Counter[str] = Counter()
        profile: Counter[str] = Counter()
        for text in texts:
            text_terms = set(terms(text))
            n_texts += 1
            df.update(text_terms)
            profile.update(text_terms)
            found = {family(n) for n in names(text, (), proper)} | (text_terms & every_own)
            mentioned.update(f for f in found if f and f not in _GENERIC_NAME)
        term_sets[slug] = profile
        size = len(texts)
        about[slug] = {
            f for f, c in mentioned.items() if c >= MENTION_MIN or c * MENTION_SHARE >= size
        } - own[slug]
    topic_df: Counter[str] = Counter()
    for slug in topics:
        topic_df.update(own[slug] | about[slug])
    n_topics = len(topics)

    def name_idf(f: str) -> float:
        return math.log((n_topics + 1) / (topic_df[f] + 1)) + 1.0

    def term_idf(t: str) -> float:  # no +1: a word most texts hold weighs next to nothing
        return math.log((n_texts + 1) / (df[t] + 1))

    def weight(count: int, t: str) -> float:
        return (1.0 + math.log(count)) * term_idf(t)

    norms = {
        slug: math.sqrt(sum(weight(c, t) ** 2 for t, c in profile.items())) or 1.0
        for slug, profile in term_sets.items()
    }
    out: dict[str, list[str]] = {}
    for slug in wanted:
        if slug not in topics:
            continue
        scored: list[tuple[float, str]] = []
        for other in topics:
            if other == slug:
                continue
            linked = (own[other] & about[slug]) | (own[slug] & about[other])
            shared = (about[slug] & about[other]) - linked
            score = sum(name_idf(f) for f in shared if topic_df[f] * 3 <= n_topics)
            if linked:  # one is about the other's own name: related, however few the topics
                score += RELATED_MIN_SCORE + sum(2 * name_idf(f) for f in linked)
            if score < RELATED_MIN_SCORE:
                mine, theirs = term_sets[slug], term_sets[other]
                dot = sum(weight(mine[t], t) * weight(theirs[t], t) for t in mine.keys() & theirs.keys())
                cosine = dot / (norms[slug] * norms[other])
                if cosine < RELATED_MIN_COSINE:
                    continue
                score = RELATED_MIN_SCORE * cosine / RELATED_MIN_COSINE
            scored.append((-score, other))
        out[slug] = [other for _, other in sorted(scored)[:limit]]
    return out


def containment(
    a: set[str] | frozenset[str], b: set[str] | frozenset[str], idf: Callable[[str], float]
) -> float:
    """How much of the smaller of the term sets `a` and `b` the other holds, each term
    weighed by its rarity (`idf`): 1.0 when one text's terms all occur in the other, 0.0
    when they share none (module docstring, step 6). Terms of two texts in any language
    (`terms`); 0.0 when either is empty."""
    if not a or not b:
        return 0.0
    small, large = (a, b) if sum(map(idf, a)) <= sum(map(idf, b)) else (b, a)
    total = sum(idf(t) for t in small)
    return sum(idf(t) for t in small if t in large) / total if total else 0.0


K = TypeVar("K")


class Restatements(Generic[K]):
    """Facts by their terms, to find the one a new text restates (module docstring, step 6).

    `idf(term)` weighs terms (rare ones more: `TopicMatcher.idf`). Candidates are the facts
    sharing at least `RESTATE_MIN_TERMS` terms that are not too common
    (`RESTATE_POSTING_MAX`), so no text is compared with every fact."""

    def __init__(
        self,
        idf: Callable[[str], float],
        containment: float = RESTATE_CONTAINMENT,
        min_shared: int = RESTATE_MIN_TERMS,
    ) -> None:
        """`containment`, `min_shared`: the bar of a restatement (`RESTATE_CONTAINMENT`,
        `RESTATE_MIN_TERMS`; `INSTRUCTION_CONTAINMENT`, `INSTRUCTION_MIN_SHARED` for an
        index of instructions)."""
        self.idf = idf
        self.containment = containment
        self.min_shared = min_shared
        self._items: list[tuple[K, frozenset[str]]] = []
        self._weights: list[tuple[float, tuple[tuple[str, float], ...]]] = []  # summed idf, (term, idf)s
        self._postings: dict[str, list[int]] = {}

    def add(self, key: K, text: str) -> None:
        """Index fact `key` whose text is `text`."""
        own = frozenset(terms(text))
        if len(own) < RESTATE_MIN_TERMS:
            return
        number = len(self._items)
        self._items.append((key, own))
        pairs = tuple((t, self.idf(t)) for t in own)  # in the set's order, as `containment` sums
        self._weights.append((sum(w for _, w in pairs), pairs))
        for term in own:
            self._postings.setdefault(term, []).append(number)

    def find(self, text: str, accept: Callable[[K], bool] = lambda _key: True) -> K | None:
        """The fact `text` restates — most contained first, the earliest on a tie — among
        those `accept` allows (the caller's checks: same numbers, same polarity); None
        when there is none."""
        own = frozenset(terms(text))
        if len(own) < RESTATE_MIN_TERMS:
            return None
        shared: Counter[int] = Counter()
        for term in own:
            posting = self._postings.get(term, ())
            if len(posting) <= RESTATE_POSTING_MAX:
                shared.update(posting)
        best: tuple[float, int] | None = None
        own_pairs = tuple((t, self.idf(t)) for t in own)
        own_weight = sum(w for _, w in own_pairs)
        for number, count in shared.items():
            if count < self.min_shared:
                continue
            key, other = self._items[number]
            # `containment(own, other, idf)`, each text's terms weighed once, summed in the same order
            other_weight, other_pairs = self._weights[number]
            if own_weight <= other_weight:
                small, large, total = own_pairs, other, own_weight
            else:
                small, large, total = other_pairs, own, other_weight
            score = sum(w for t, w in small if t in large) / total if total else 0.0
            better = best is None or (-score, number) < (-best[0], best[1])
            if score >= self.containment and better and accept(key):
                best = (score, number)
        return None if best is None else self._items[best[1]][0]
