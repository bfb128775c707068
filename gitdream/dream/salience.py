r"""Salience: which raw entries carry durable knowledge (and become facts) and which do not.

The offline engine cannot rewrite text the way a model does; it chooses. The question it
asks of each raw entry is the one the labels of `../shared/quality` ask: a month later,
would the agent act better for knowing this? The model is a **logistic score over
features** of the entry: each feature is something the entry shows — where it stands,
what form it has, what it says, what moment it records (`FEATURES`) — with a weight in
log-odds (`WEIGHTS`, plus `BIAS`); the **probability** that the entry is durable is the
logistic of the sum. An entry whose probability reaches the threshold
(`offline.salience_threshold`, default `DEFAULT_THRESHOLD`) may become a fact; below it,
the entry is *read and not kept*, counted in the receipt under the reason of its
strongest negative features (`REASONS`, summed per reason: status snapshot, activity record, plan or to-do,
narration, terminal or UI output, a question, reading notes, fragment), or "nothing
durable" when nothing spoke against it.

What speaks **for** an entry: a heading, a bold or colon label, or the sentence that
introduces its list ("The decisions we made:", `Entry.lead_in`) naming durable knowledge
(Lessons, Rules, Decisions, 교훈, 教训, 教訓 …); modal or imperative form (a rule, a limit,
an instruction: must, never, 必须, 반드시, 必ず, or a plain imperative addressed to the
reader — "Use …", "Verwende …", 使用…, …하라, …てください — outside a user's message, where
it asks for something in the session); a reason or purpose (because, 因为,
때문에, ため); an order of steps with a modal (a procedure); a correction (not X but Y,
turns out, 不是…而是, 아니라, ではなく, X → Y); a number with a limit word, or a duration
stated as a span ("expires after 24 hours", "within 5 min", 24小时后, 24시간 후에, 24時間以内:
a limit of the tool, not a moment — unless it counts time left or since, "23h remaining",
"2 days ago", is told in the past, or stands beside a clock time or a status); an owner's
stated preference (a user's message, a quoted `> ` line, or the user's or owner's told in
the third person: "the user prefers …", 用户喜欢, 사용자는 … 선호한다); a definition of a named thing
(`` `tool.py` — what it does``, "X — runs Y", "X is a Y", "A = B"); a labelled value or a
path, URL or command; a version of a named tool ("The staging cluster runs Kubernetes
1.29", "Python 3.13", v2.4.1), what a stable fact about a tool most often names — not when
an event moves it ("deploy api@4.12.0 staging", "发布 v2.8.1 到 prod", "Released v2.1"): a
record; a generic statement (by default, every time, usually, 默认, 기본적으로,
通常); a caveat (but, however, 但是, 하지만, しかし); how a tool behaves (returns, rejects,
expires, 返回, 반환, 返す); present tense; a word in capitals for stress; an explicit tag.

What speaks **against** it: a status snapshot (counts, "unread", "still", remaining time,
clock times, dates, emoji status marks), a one-off activity record (replied, posted, 했다,
已…了, しました, ids of posts and messages, past tense, the speaker recounting their
own doings), a plan or to-do, narration ("Let me …", 让我, 하겠습니다, します), terminal or UI
output (and, weaker, prose found inside a tool's output block, `gitdream.dream.terminal`),
a question, a fragment, a heading that is an event or a tally, notes from reading other
people's work (a research heading, a citation).

Words inside quotations ("…", “…”, 「…」) are someone else's: they state no rule, reason or
caveat of the agent's own. Structure carries across languages — headings, labels,
lead-ins, list layout, ids, numbers, code, questions, speakers — and the word lists
(`gitdream.dream.lexicons`) hold words for English, Chinese, Korean and Japanese, Spanish,
German, French and Portuguese, so no feature rests on English words alone. A word of a
state that persists ("still not", "toujours pas", "immer noch", "todavía no", "ainda não",
还没, 아직 안) is a status, and the "always" inside it no rule (`steady`); a comparison of
two quantities ("640 files instead of 90") no correction (`is_correction`); a hedged belief
("I think", "je pense que", "ich glaube", "creo que", "acho que", 我觉得, 생각합니다, と思う)
told in the past is a guess (`speculation`).

**Where the weights come from.** Each feature has a prior (`PRIOR`): the direction and
rough size the model above gives it, before any data. `bench/fit_salience.py` fits the
weights to hand-labelled real entries (`../shared/quality/labels.jsonl`) by logistic
regression pulled towards that prior (an L2 penalty on the distance from it), so a feature
the labels barely show keeps its prior; it writes them, the bias and the threshold into
`gitdream.dream.salience_weights`, reproducibly, and reports how the same procedure does
when fitted on one agent's logs and tested on the others' (bench/RESULTS.md). No feature
names an entry, an agent or its platforms.

Repetition across days — the same statement (same numbers) on two or more days, or
already a fact in memory — is what keeps being true; it ranks an entry higher among those
above the bar (`REPEATED_BONUS`, applied by the engine) but never lifts one over it: a
verdict depends on the entry alone, so material read again (a pending entry, `--full`) is
judged the same. The cue lists and the threshold are configurable (`offline.keep_cues`,
`offline.skip_cues`, `offline.salience_threshold`); configured cues weigh their prior.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

from gitdream.dream import terminal
from gitdream.dream.lexicons import (
    BEHAVIOUR_WORDS,
    COMPARISON_WORDS,
    COUNTDOWN_WORDS,
    OWNER_WORDS,
    PERSISTENCE_WORDS,
    PREFERS_WORDS,
    SPAN_AFTER_WORDS,
    SPAN_BEFORE_WORDS,
    STATUS_WORDS,
    TIME_UNIT_WORDS,
    UNTIL_WORDS,
    Cues,
    Lexicon,
    spaced,
)
from gitdream.dream.salience_weights import BIAS, THRESHOLD, WEIGHTS
from gitdream.dream.tags import files_entry
from gitdream.text import sentences
from gitdream.units import Entry

DEFAULT_THRESHOLD = THRESHOLD
"""An entry whose probability of being durable reaches this may become a fact
(`offline.salience_threshold`); fitted with the weights."""
REPEATED_BONUS = 1.0
"""Added to the rank (log-odds; not the verdict) of an entry whose statement repeats across days."""

# name: (prior weight in log-odds, what it is). The fitted weights are in salience_weights.
FEATURES: dict[str, tuple[float, str]] = {
    # where it stands
    "lesson-heading": (1.0, "under a heading that names durable knowledge (Lessons, Rules, 교훈, 教训)"),
    "lesson-heading-weak": (0.5, "under a heading that names a kind of reference (Notes, Setup, 메모, 备忘)"),
    "lesson-label": (1.0, "opens with a bold or colon label naming durable knowledge"),
    "lesson-label-weak": (0.5, "opens with a label naming a kind of reference"),
    "lead-in": (0.0, "an item of a list that a sentence introduces"),
    "lead-in-lesson": (0.5, "that sentence names a kind of knowledge (The decisions we made:, Issues:)"),
    "lead-in-plan": (-0.5, "that sentence is a plan (Next steps:, We will:)"),
    "lead-in-status": (-0.5, "that sentence is a status or an activity record (The commit includes:)"),
    "artifact-heading": (0.5, "under a heading that names a file or tool: facts about it"),
    "alert-heading": (0.5, "under a heading that raises an alert (⚠️, 🚨, words in capitals): an incident"),
    "plan-heading": (-1.0, "under a heading or label that names a plan or to-do list"),
    "status-label": (-0.5, "opens with a label naming a status slot (Inbox:, Status:)"),
    "event-heading": (-1.0, "under a heading that is an event or a tally (09:30 UTC, Writes (3))"),
    "reading": (-1.0, "notes from reading: a research heading or a citation (et al. 2021)"),
    "tagged": (
        2.0,
        "filed under an explicit tag (leading, or ending the entry; `tags.files_entry`): the agent filed it under a subject itself",
    ),
    "keep-cue": (2.0, "holds a configured keep cue (offline.keep_cues)"),
    "skip-cue": (-2.0, "holds a configured skip cue (offline.skip_cues)"),
    # what form it has
    "user": (0.0, "a user's message, or a quoted `> ` line of a diary"),
    "user-statement": (0.5, "a user's message of twelve words or more that is not a question"),
    "assistant": (0.0, "an assistant's message, or a `⏺` line of a terminal copy"),
    "output": (-2.0, "terminal or UI output, a file tree, a test summary, code"),
    "tool-output": (
        -1.0,
        "prose inside a tool's block: what an edit wrote, a tool's message, an indented list item",
    ),
    "narration": (-1.0, "an assistant narrating its own work (Let me …, 让我, 하겠습니다)"),
    "narration-weak": (-0.5, "opens like narration (Great, Okay, I've)"),
    "question": (-1.0, "a question: it asks, it does not tell"),
    "fragment": (-0.5, "a fragment: a few words ending with a colon"),
    "short": (-0.5, "four words or fewer (CJK: two characters a word)"),
    "recount": (-0.5, "a session recounted: who asked, noted, explained what"),
    "deictic": (
        -0.5,
        "opens with a pointer to what was just said or done (This…, These changes…, 这些, 이, この)",
    ),
    "expectation": (
        -2.0,
        "expects an effect of what was just done (These changes should make…, 这些修改会让…): a forecast",
    ),
    "acknowledgement": (
        -1.0,
        "an assistant's reply opening by agreeing with the listener (You're right - …, 你说得对, 맞습니다)",
    ),
    "session-request": (
        -1.5,
        "a request to the listener bound to the session (…you… at this time, review it …): not standing",
    ),
    # what it says
    "rule": (1.0, "modal or imperative form: a rule, a limit, an instruction"),
    "rule-weak": (0.5, "a weaker modal (should, ensure, fails, 应, 권장, 推奨)"),
    "reason": (0.5, "a reason, a purpose or a consequence (because, 因为, 때문에, ため)"),
    "procedure": (0.5, "a modal with an order of steps (before, after, whenever)"),
    "correction": (1.0, "a correction: not X but Y, turns out, no longer, X → Y"),
    "limit": (
        1.0,
        "a number with a limit word (280-character limit, at most 5), or a duration stated as a span (expires after 24 hours, 24小时后)",
    ),
    "preference": (1.0, "an owner's stated preference or standing instruction"),
    "definition": (1.0, "defines a named file or tool (`x.py` — what it does)"),
    "definition-weak": (0.5, "defines a name (X — runs Y, X is a Y, A = B, **Label:** long text)"),
    "reference": (1.0, "a labelled value: an endpoint, a path, a command, an address"),
    "path": (0.25, "holds a path, URL, command or code name"),
    "version": (
        1.0,
        "names a version of a tool (Kubernetes 1.29, Python 3.13, v2.4.1): a stable fact about it",
    ),
    "generic": (0.5, "a generic statement: by default, every time, usually"),
    "contrast": (0.5, "a caveat: but, however, although"),
    "behaviour": (0.5, "how a tool or system behaves: returns, rejects, expires"),
    "present": (0.25, "present tense, no past"),
    "emphasis": (0.5, "a word in capitals for stress (NEVER, EXTENDS)"),
    # what moment it records
    "status": (-1.0, "status words: unread, no new, still, remaining"),
    "momentary": (-1.0, "bound to the moment: for now, at this time, today, 暂时, 당분간, 今回は"),
    "counts": (-1.0, "several counts of things (11 matches, 0 unread)"),
    "clock": (-0.5, "a clock time or time left (12:24, 23h remaining)"),
    "time-bound": (
        -1.5,
        "bounded by a moment: until a clock time or a date, a countdown (wait until ~23:45)",
    ),
    "date": (-0.5, "a calendar date (2026-02-20, Feb 27)"),
    "status-mark": (-0.5, "opens with an emoji status mark"),
    "id": (-0.5, "opaque ids of posts, messages, commits"),
    "activity": (-1.0, "a one-off record of something done (replied, posted, 했다, しました)"),
    "decision": (1.0, "something done together with its reason or a correction: a decision"),
    "speculation": (
        -1.0,
        "a hedged guess at what happened (I suspect … were caused by, 也许…了, 아마 …했다): not what is known",
    ),
    "past": (-0.25, "past tense, no present"),
    "first-person": (-0.25, "the speaker's own doings (I, we, 我, 저는, 私)"),
    "plan": (-2.0, "a plan or a to-do (next, TODO, will, [ ], 계획, 予定): not a fact"),
}
"""Every feature: its prior weight (log-odds) and what it is (module docstring)."""
PRIOR: dict[str, float] = {name: prior for name, (prior, _) in FEATURES.items()}
PRIOR_BIAS = -2.2
"""The prior bias: about one entry in ten is worth keeping in real agent logs (logit 0.1)."""

REASONS = {
    "status": "status snapshot",
    "momentary": "status snapshot",
    "time-bound": "status snapshot",
    "expectation": "narration",
    "acknowledgement": "narration",
    "session-request": "a request for one session",
    "speculation": "a guess",
    "counts": "status snapshot",
    "clock": "status snapshot",
    "date": "status snapshot",
    "status-label": "status snapshot",
    "status-mark": "status snapshot",
    "activity": "activity record",
    "id": "activity record",
    "recount": "activity record",
    "event-heading": "activity record",
    "lead-in-status": "activity record",
    "reading": "reading notes",
    "plan": "plan or to-do",
    "plan-heading": "plan or to-do",
    "lead-in-plan": "plan or to-do",
    "narration": "narration",
    "narration-weak": "narration",
    "output": "terminal or UI output",
    "tool-output": "terminal or UI output",
    "question": "a question",
    "fragment": "fragment",
    "skip-cue": "skip cue",
}
"""Reason (receipt key, after "not kept: ") of each feature that speaks against an entry."""
NOT_DURABLE = "nothing durable"
PLACE = frozenset({"event-heading", "plan-heading", "lead-in-status", "lead-in-plan"})
"""Features of where an entry stands: they give the reason only when nothing the entry
itself shows speaks against it."""


# --- structure ------------------------------------------------------------------------------

_CLOCK = re.compile(
    r"(?<![\d:])(?:[01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?(?![\d:])|\b\d{1,2}\s?(?:am|pm)\b", re.I
)
# Time left or elapsed — a snapshot of a moment ("23h remaining", "~1hr", "2 days ago"); a
# duration in a rule ("backups older than 30 days") is not one.
_DURATION = re.compile(
    r"~\s?\d+(?:\.\d+)?\s?[^\W\d_]{0,7}"
    r"|\b\d+\+\s?(?:h|hrs?|hours?|min|mins|minutes?|days?)\b"
    r"|\b(?:in|within|after|for)\s+\d+(?:\.\d+)?\s?(?:h|hrs?|hours?|min|mins|minutes?)\b"
    r"|\b\d+\s?(?:h|hr|hrs)\b"
    r"|\b\d+(?:\.\d+)?\s?(?:h|hr|hrs|hours?|m|min|mins|minutes?|d|days?|s|sec|secs)\s+(?:remaining|left|ago)\b"
    r"|(?:剩余|还剩)\s?\d+|\d+\s?(?:小时|分钟|天)(?:后|前)|\d+\s?(?:시간|분|일)\s?(?:남음|남았|전)|残り\s?\d+",
    re.I,
)
_COUNT = re.compile(
    r"(?<![\w.#-])\d+\+?\s+(?!(?:19|20)\d\d)[^\W\d_]{2,}|(?<![\w.])[x×]\d+\b|\b\d+\s*(?:개|건|명|件|个|条|次|回)"
)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?%?(?![\w.])")
_OPAQUE_ID = re.compile(
    r"\b(?=[0-9a-f]{0,40}[a-f])(?=[0-9a-f]{0,40}\d)[0-9a-f]{7,40}\b"  # hex ids, commit hashes
    r"|(?<![A-Za-z0-9_-])[a-z]{1,20}_[A-Za-z0-9_-]{0,40}\d[A-Za-z0-9_-]{6,40}\b"  # prefixed ids: sh_comment_4sOj…
    r"|(?<![A-Za-z0-9])[A-Za-z0-9]{20,200}(?![A-Za-z0-9])"
    r"|(?<![\w.:/-])[A-Za-z][\w-]{0,40}-\d{8,}\b"  # a name with a long number: kid-1771042676
)
_PAREN_ID = re.compile(r"\((?:id:\s*)?(?=[^()\s]*\d)(?=[^()\s]*[A-Za-z])[A-Za-z0-9_-]{6,40}\)")
_ORDINAL = re.compile(r"^\s*(?:\d{1,3}[.)]|[-*+•])\s+")
_BOLD_LABEL = re.compile(r"^\s*(?:(?:\d{1,3}[.)]|[-*+•])\s+)?\*\*([^*\n]{1,80}?):?\*\*:?\s*(\S.*)$", re.S)
# A colon ends a label before a space, or (full-width "：", which NFKC makes ":") right before a
# letter of a script written without spaces: "决定：磁盘…", "田中さんの方針：公開…".
_COLON_LABEL = re.compile(
    r"^\s*(?:(?:\d{1,3}[.)]|[-*+•])\s+)?([^\s:：][^:：\n]{0,40}?)(?:[:：]\s+|[:：](?=[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u9fff\uac00-\ud7af]))(\S.*)$",
    re.S,
)
_CODE_NAME = re.compile(
    r"`[^`\n]{2,80}`|(?<![\w.-])[\w-][\w.-]{0,80}\.(?:py|sh|js|ts|md|json|toml|yaml|yml|ini|cfg|txt|rs|go)\b"
)
_DEFINES = re.compile(
    r"^\s*(?:\*\*)?`[^`\n]{2,80}`(?:\*\*)?[^—–:：=\n]{0,60}?\s*(?:—|–| - |:|：|=)\s*\S|^\s*(?:\*\*)?[\w./-]+\.(?:py|sh|js|ts|md|json|toml|yaml|yml|ini|rs|go)\b[^—–:：\n]{0,40}?\s*(?:—|–| - |:|：)\s*\S"
)
_IS_A = re.compile(r"\b(?:is|are)\s+(?:a|an|the|one of)\b|\blives? (?:at|in)\b|\blocated (?:at|in)\b", re.I)
_IS_A_DENSE = ("是一个", "是一种", "位于", "이다", "입니다", "에 있다", "である", "です。", "にある")
_ARROW = re.compile(r"\S\s*(?:→|->|=>|⇒|≠)\s*\S")
_OUTPUT_LINE = re.compile(
    r"^\s*(?:[⎿✓✗✔✘│├└┌┐╭╮╰╯║═$#>]|>>>|\.\.\.|={3,}|-{3,}|\+{3,}|@@|\d+\s{2,}|[A-Z_]+=)"
    r"|\(ctrl\+r to expand\)|^\s*[…]\s*\+\d+ lines"
)
# A version: "v1.2", "2.4.1", a name and a number with a dot ("Kubernetes 1.29", "Python
# 3.13"), or a word for "version" and a number (版本 3, 버전 2.1, バージョン 5) — not a
# measure ("1.5x", "2.5 s", "0.79"), nor four numbers (an address).
_VERSION = re.compile(
    r"(?<![\w.])v\d+(?:\.\d+){1,2}(?!\w|\.\d)"
    r"|(?<![\w.])\d+\.\d+\.\d+(?!\w|\.\d)"
    r"|(?<![\w.-])(?:[A-Z][\w+#.-]*|`[^`\n]{1,40}`)\s+v?[1-9]\d*\.\d+"
    r"(?!\d|\.\d|[A-Za-z]|\s?(?:%|×|ms|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?|[kmgt]i?b|[kmbx])\b)"
    r"|(?:\bversion|\bversión|\bversão|\bversione|版本|버전|バージョン)\s*v?\d+(?:\.\d+)*",
)
_WORD = re.compile(r"[^\W\d_]{2,}")
_HAN_KANA = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")  # scripts that end a sentence with "。"
_DENSE_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_EMOJI_STATUS = re.compile("[\u2705\u274c\u26a0\u2714\u2716\u2611\U0001f534\U0001f7e2\U0001f7e1\u23f3\u2b50]")
_EMPHASIS = re.compile(r"(?<![\w./-])[A-Z]{5,}(?![\w-]|\.\w)")  # not a file name (README, MEMORY.md)
_REFERENCE = re.compile(
    r"`[^`\n]{2,}`|https?://\S+|(?<![\w.~/-])(?:~|\.{1,2})?/[\w.-]{1,80}/[\w./{}:-]+|(?<![\w.-])[\w.-]{1,64}@[\w-]{1,64}\.\w+"
)
_NAME_DASH = re.compile(r"^\s*(?:\*\*)?[^\W\d][^—–:=\n]{0,40}?(?:\*\*)?(?:\s*\([^()\n]{1,40}\))?\s+[—–]\s+\S")
_EQUATION = re.compile(r"^\s*[^\W\d][\w .-]{0,30}\s=\s\S")
_QUOTATION = re.compile(
    r'"[^"\n]{1,400}"|“[^”\n]{1,400}”|「[^」\n]{1,400}」|『[^』\n]{1,400}』|«[^»\n]{1,400}»'
)


def is_quotation(text: str) -> bool:
    """True when sentence `text` is a quotation and nothing else ('"SOUL.md is the
    wiring."', “…”., 「…」, 『…』, «…»): someone's words, not a statement of the writer's."""
    return _QUOTATION.fullmatch(text.strip().rstrip(".。!！ ")) is not None


# A citation: an author and a year in parentheses — "(Wartel et al. 2021)", "(PNAS 2025, Campbell)".
_CITATION = re.compile(
    r"\([^()\n]{0,60}(?:et al\.?|[A-Z][A-Za-z&.-]+)[^()\n]{0,40}(?:19|20)\d\d[^()\n]{0,40}\)|\bet al\b|\barXiv\b"
)
_RECOUNT = re.compile(
    r"(?<![\w'])(?:the\s+)?(?:user|i|we)\s+(?:(?:is|was|are|were|has|have|had)\s+)?(?:\w+ly\s+)?"
    r"(?:asked|asks|asking|noted|notes|noting|explained|explains|explaining|discussed|discussing|encountered|"
    r"indicated|mentioned|mentions|mentioning|said|says|saying|requested|requests|requesting|wanted|wants|"
    r"agreed|talked|talking)\b|用户(?:要求|问|提到|表示|想)|"
    r"사용자가\s?(?:요청|물|언급)|ユーザーが(?:求め|尋ね|言及)",
    re.I,
)
_RECOUNT_POSSESSIVE = re.compile(
    r"\b(?:the\s+)?user(?:'s|s'|’s)\s+(?:\w+\s+)?(?:request|requests|goal|goals|intent|intention|concern|concerns)\b"
    r"|用户的(?:要求|请求|目标|意图)|사용자의\s?(?:요청|목표|의도)|ユーザーの(?:要望|依頼|目的|意図)",
    re.I,
)
"""A session summed up in the third person: "The user's main request was …"."""
_DEICTIC = re.compile(
    r"^\W*(?:this|these|that|those|it)(?:\s+\w+)?\s+(?:is|are|was|were|should|will|would|can|could|may|"
    r"makes?|means?|ensures?|maintains?|helps?|provides?|keeps?)\b|^\W*(?:这些|这个|这样|那些|那个)|"
    r"^\W*(?:이것|이렇게|그것|이\s|그\s)|^\W*(?:これ|それ|この|その)",
    re.I,
)
_NARRATION_GLYPH = re.compile(r"^\s*[⏺●✻]")
_QUOTED_USER = re.compile(r"^\s*>\s")
# An English imperative aimed at what is in front of the speaker: a verb opening a
# sentence (or a clause after "and"), then "it", "this", "them" … as its object ("review it
# and describe it in the commit message"). Not a subject pronoun or a joint opening it, and
# not "this is …" (a statement).
_IMPERATIVE_AT_HAND = re.compile(
    r"(?:^|[.!?;:]\s+|\band\s+)(?:please\s+)?"
    r"(?!(?:it|its|this|that|these|those|there|here|what|which|who|how|why|when|where|is|are|was|were|"
    r"do|does|did|and|but|or|so|if|then|as|of|in|on|at|to|for|with|from|by|about|like|all|let|has|have|had)\b)"
    r"[a-z]{3,}\s+(?:it|this|that|them|these|those)\b"
    r"(?!\s+(?:is|are|was|were|will|would|should|can|could|may|might|must|has|have|had|does|did)\b)",
    re.I,
)
_COPULA = re.compile(r"\b(?:is|are|am)\b|'s\b|是|이다|입니다|です|である")
_CLAUSE_BREAK = re.compile(r"[,，;；、]\s*|(?<!\s)\s+[—–]\s+|(?<=[>`])\s+")
_CLAUSES_WEIGHED = 8
"""Only the first clause breaks of a sentence are weighed (`_statement_before_request`)."""


SESSION_TALK = frozenset({"session-request", "speculation", "acknowledgement", "expectation"})
"""Features of talk about the session itself: a request for it, a guess at what happened
in it, an agreeing reply, an expectation about the change just made."""


def is_session_talk(entry: Entry, text: str, cues: Cues | None = None) -> bool:
    """True when `text`, as `entry`'s text, is talk about the session itself (one of
    `SESSION_TALK`): the offline engine does not open a fact with such a sentence. Pure."""
    return not SESSION_TALK.isdisjoint(features(entry, text, cues or _DEFAULT_CUES))


def said_by_user(entry: Entry) -> bool:
    """True when `entry` is a user's message: a transcript's user turn, or a quoted `> `
    line of a diary (a terminal copy)."""
    return entry.role == "user" or bool(_QUOTED_USER.match(entry.text.strip().split("\n", 1)[0]))


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


_VERB_HEAD = re.compile(r"^\s*[^\W\d_]+(?:ed|t)\s+", re.I)


def opening_of(text: str) -> str:
    """`text` without a leading past-tense verb ("Created `x` — …" → "`x` — …")."""
    return _VERB_HEAD.sub("", text, count=1)


def label_of(text: str) -> tuple[str | None, str]:
    """`(label, rest)`: a leading bold label (`**Label:** rest`) or short colon label
    (`Label: rest`), else `(None, text)`."""
    match = _BOLD_LABEL.match(text)
    if match:
        return match.group(1).strip().rstrip(":："), match.group(2)
    match = _COLON_LABEL.match(text)
    if match and "`" not in match.group(1) and "http" not in match.group(1).lower():
        return match.group(1).strip(), match.group(2)
    return None, text


_INDENTED = re.compile(r"^(?: {4,}|\t)")
_NOT_BUT = re.compile(r"\bNOT\b|\bnot\b[^.;]{1,60}\bbut\b")


def _prose_item(line: str) -> bool:
    """True for a list item of prose (a marker, then at least four words, mostly letters),
    however deeply indented: a line of a document shown in a diff or a file's listing."""
    match = _ORDINAL.match(line)
    if match is None:
        return False
    rest = line[match.end() :]
    letters = sum(map(str.isalpha, rest))
    return content_words(rest) >= 4 and letters >= 0.6 * len(rest.replace(" ", ""))


def _output_share(text: str) -> float:
    lines = [line for line in text.split("\n") if line.strip()]
    if not lines:
        return 1.0
    if _QUOTED_USER.match(lines[0]):
        return 0.0
    if _INDENTED.match(lines[0]):
        return 1.0  # an indented code block (Markdown), or a tool's output in a terminal log
    out = 0
    for line in lines:
        bare = " ".join(_ORDINAL.sub("", line, count=1).split())  # runs of spaces are layout
        letters = sum(map(str.isalpha, bare))
        if _OUTPUT_LINE.search(line) or letters < 0.4 * len(bare):
            out += 1
    return out / len(lines)


def is_event_heading(heading: str, cues: Cues | None = None) -> bool:
    """A heading that is an event or a tally: a clock time, a count ("Writes (3)",
    "3 writes + 2 likes"), or a status/activity heading word."""
    cues = cues or _DEFAULT_CUES
    text = _norm(heading)
    if _CLOCK.search(text) or re.search(r"\(\s*\d+[^)]*\)|\b\d+\s*[^\W\d_]+\s*[+,&]\s*\d+", text):
        return True
    words = re.sub(r"[\W\d_]+", " ", text).strip()
    return bool(words) and cues.status_heading.count(words) > 0 and not cues.lesson.search(words)


_DATE = re.compile(
    r"\b(?:19|20)\d\d-\d\d-\d\d\b"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?\b"
    r"|\d{1,2}\s*月\s*\d{1,2}\s*日|\d{1,2}\s*월\s*\d{1,2}\s*일",
    re.I,
)
_TIME_POINT = (
    _CLOCK.pattern.replace("(?<![\\d:])", "")  # a clock time …
    + r"|(?:19|20)\d\d-\d\d-\d\d|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b"
    + r"|\d{1,2}\s*(?:月\s*\d{1,2}\s*日|월\s*\d{1,2}\s*일|시|時|点|點)|\d{1,2}:\d\d"
    + r"|tomorrow|tonight|明天|明日|내일|오늘 밤"
)
_LATIN_UNTIL = "|".join(re.escape(w) for w in sorted(filter(spaced, UNTIL_WORDS), key=len, reverse=True))
_DENSE_UNTIL = "|".join(re.escape(w) for w in UNTIL_WORDS if not spaced(w))
_UNTIL = re.compile(
    rf"\b(?:{_LATIN_UNTIL})\s+(?:about\s+|around\s+|~\s?)?(?:{_TIME_POINT})"  # "wait until ~23:45"
    rf"|(?:{_TIME_POINT})\s*(?:UTC|KST|JST|CST)?\s*(?:{_DENSE_UNTIL})"  # "23:45까지", "2月27日まで"
    rf"|(?:直到|等到)\s*(?:{_TIME_POINT})",  # "等到 23:45"
    re.I,
)
"""A statement bounded by a moment: "until" and a clock time or date (or the time, then 까지/まで/之前)."""
# Every match of `_UNTIL` holds one of its words, and every match of `_CLOCK`, `_DURATION`,
# `_DATE` and `_COUNT` a digit: a text without them is not searched with the long patterns.
_UNTIL_WORD = re.compile("|".join(re.escape(w) for w in UNTIL_WORDS), re.I)
_DIGIT = re.compile(r"\d")


def _bounded(text: str) -> bool:
    """True when `text` holds a span bounded by a moment (`_UNTIL`)."""
    return _UNTIL_WORD.search(text) is not None and _UNTIL.search(text) is not None


# Tense, per language: English verb forms; Chinese aspect particles; Korean and Japanese
# past endings. A sentence of "present" form states what holds; of "past" form, what happened.
# Irregular past forms, and a regular one where it is a verb: opening the entry ("Fixed the
# probe") or after a subject pronoun ("we tried") — elsewhere "-ed" is often an adjective.
_PAST_EN = re.compile(
    r"(?<![\w'-])(?:was|were|had|did|made|sent|wrote|built|ran|got|went|found|saw|took|gave|"
    r"told|said|thought|began|left|kept|brought|became)(?![\w'-])"
    r"|^\W*[a-z]{3,}ed(?![\w'-])|\b(?:i|we|he|she|they|it)\s+[a-z]{3,}ed(?![\w'-])"
    r"|\b(?:has|have|had)\s+been\s+(?:\w+ly\s+)?[a-z]{3,}ed(?![\w'-])",
    re.I,
)
_ALERT = re.compile("[\u26a0\U0001f6a8\u2757\u203c]|(?<![\\w./-])[A-Z]{3,}(?:[\\s-]+[A-Z]{2,})+(?![\\w-])")
_PERFECT = re.compile(r"\b(?:has|have)\s+been\b", re.I)
_PRESENT_EN = re.compile(
    r"(?<![\w'-])(?:is|are|isn't|aren't|has|have|does|doesn't|do|don't|can|cannot|can't|must|should)(?![\w'-])",
    re.I,
)
# Chinese marks what happened with the particles 了 and 过 after a verb, or 已经; Japanese
# with the past ending た. The same characters inside a word of another meaning are no
# past: 了 in 为了 (in order to), 除了 (except), 了解 (understand; not 了 + 解析, 解决 …),
# 不了 (cannot); 过 in 过期 (expire), 过滤 (filter), 过程 (process), 通过 (pass, by means
# of), 超过 (exceed), 不过 (but), 经过 (through); した in したがって (therefore), したい
# (want to), したら (if).
_PAST_DENSE = re.compile(
    r"(?<![为除不])了(?!解(?![析决释除锁冻]))"
    r"|(?<![通超经不越略错])过(?![期滤程度于多长大小高低载时])"
    r"|已经|した(?!がって|い|ら)|った(?!ら)|ました|でした|だった"
)
# Korean marks the past with the final consonant ㅆ on the verb stem (했다, 고쳤다, 갔음):
# a syllable whose final is ㅆ, before an ending — not 있 (there is: 있다, 있습니다, whose
# past is 있었다) nor 겠 (will, would: 하겠습니다), which carry that final in the present.
_PAST_HANGUL = re.compile(
    "["
    + "".join(c for c in (chr(0xAC00 + i * 28 + 20) for i in range(19 * 21)) if c not in "있겠")
    + "](?=다|음|어|습|고|는데)"
)
_PRESENT_DENSE = re.compile(
    r"(?:[는은]다|이다|한다|된다|있다|없다|합니다|입니다|됩니다|する|される|いる|ある|ない|です|ます|だ)[。.!]?\s*$"
    r"|是|会|能|可以|总是|不会"  # Chinese states what holds with a copula or a modal
)


def _phrases(words: tuple[str, ...]) -> str:
    """A regular expression matching any of `words` as `Lexicon` does: a word of a spaced
    script whole (its words apart by any spaces), a CJK one anywhere; longest first."""
    latin = sorted((w for w in words if spaced(w)), key=len, reverse=True)
    dense = sorted((w for w in words if not spaced(w)), key=len, reverse=True)
    alternatives = []
    if latin:
        joined = "|".join(r"\s+".join(map(re.escape, w.split())) for w in latin)
        alternatives.append(rf"(?<![^\W_])(?:{joined})(?![^\W_])")
    alternatives.extend(map(re.escape, dense))
    return "|".join(alternatives)


_PERSISTENCE = re.compile(_phrases(PERSISTENCE_WORDS), re.I)


def _units() -> str:
    """A regular expression matching a unit of time (`TIME_UNIT_WORDS`) right after a
    number: a Latin one ending a word ("24h", "24 hours"), a CJK one anywhere."""
    latin = sorted(filter(spaced, TIME_UNIT_WORDS), key=len, reverse=True)
    dense = sorted((w for w in TIME_UNIT_WORDS if not spaced(w)), key=len, reverse=True)
    return (
        "(?:(?:" + "|".join(map(re.escape, latin)) + r")(?![^\W_])|" + "|".join(map(re.escape, dense)) + ")"
    )


_SPAN = rf"\d+(?:[.,]\d+)?\s?{_units()}"
_LIMIT_SPAN = re.compile(
    rf"(?:{_phrases(SPAN_BEFORE_WORDS)})\s*{_SPAN}|{_SPAN}\s*(?:{_phrases(SPAN_AFTER_WORDS)})", re.I
)
"""A duration stated as a span a rule sets: "expires after 24 hours", "within 5 min",
"every 4 h", "24小时后", "24시간 후에", "24時間以内", "nach 24 Stunden"."""
_COUNTDOWN = re.compile(
    rf"(?:{_phrases(COUNTDOWN_WORDS)})\s*{_SPAN}|{_SPAN}\s*(?:{_phrases(COUNTDOWN_WORDS)})", re.I
)
"""A duration counting time left or since: "23h remaining", "2 days ago", "剩余23小时",
"23시간 남음", "残り23時間", "vor 2 Stunden", "il y a 2 heures"."""
_FIRST_SENTENCE = re.compile(r"(?:[^.!?;。！？；\n]|[.!?;](?!\s|$))*[.!?;。！？；]?")
"""The first sentence of a text: up to a stop that ends it (a Latin one before a space or
the end: "api@4.12.0" and "e.g." go on)."""
# A verb and what follows it as its object: not a number, a call ("Update(README.md)"), a
# possessive, or a verb of its own ("Build failed", "Test is flaky"), which make the first
# word a noun.
_VERB_OBJECT = re.compile(
    r"^\W*([^\W\d_]+)\s+(?!\d|[(:]|(?:is|are|was|were|has|have|had|will|would|can|could|should|"
    r"must|may|might|does|did|do|gets|got|went|goes|passes|fails)\b|[a-z]+ed\b)\S",
    re.I,
)
_THIRD_PREFERENCE = re.compile(
    rf"(?:{_phrases(OWNER_WORDS)})[^.。!?！？;；\n]{{0,40}}?(?:{_phrases(PREFERS_WORDS)})"
    r"(?!\s+(?:me|us|you|him|her|them)\b)(?!(?<=wants)\s+to\b)",
    re.I,
)
"""An owner's preference told in the third person ("The user prefers short commit
messages", "用户喜欢简短的提交信息", "사용자는 짧은 커밋 메시지를 선호한다", "ユーザーは短い
コミットメッセージを好む", "L'utilisateur préfère …"): standing, as the owner's own message
is — unless it wants something of the one speaking, or wants to do something ("the user
wants me to …", "the user wants to remove …": the session's request, a recount)."""
_STATUS_BEHAVIOUR = Lexicon(w for w in STATUS_WORDS if w in frozenset(BEHAVIOUR_WORDS))
"""Status words that also say how a thing behaves ("expires", "expire", "caduca", "läuft
ab"): in a stated limit ("expires after 24 hours") they describe it, they report no state."""


def steady(text: str) -> str:
    """`text` without the words of a state that persists (`PERSISTENCE_WORDS`: "still not",
    "toujours pas", "immer noch", "todavía no", "ainda não", 还没, 아직 안, まだ): there a word
    that elsewhere makes a rule or a generic statement ("toujours", "immer", 不, 안 된다) says
    that a status holds still, so the rule, generic and standing words are looked for in what
    is left. ("Le compte n'est toujours pas actif" is a status; "Toujours vérifier …" a rule.)"""
    return _PERSISTENCE.sub(" ", text)


_LATIN_COMPARISON = _phrases(tuple(filter(spaced, COMPARISON_WORDS)))
_DENSE_COMPARISON = "|".join(re.escape(w) for w in COMPARISON_WORDS if not spaced(w))
_QUANTITY_COMPARISON = re.compile(
    rf"(?:{_LATIN_COMPARISON})\s+(?:~\s?|≈\s?)?\d"  # "640 files instead of 90"
    rf"|\d[^\s\d]{{0,4}}\s*(?:{_DENSE_COMPARISON})|(?:{_DENSE_COMPARISON})\s*\d",  # "90개 대신", "而不是 90 个"
    re.I,
)
_COMPARISON = Lexicon(COMPARISON_WORDS)


def is_correction(text: str, cues: Cues | None = None) -> bool:
    """True when `text` (NFKC) corrects something: a correction word ("turns out", "no
    longer", 不是…而是, 아니라), "not X but Y", or a comparison phrase that sets aside a way
    or a thing ("use `rsync` instead of `cp`", "au lieu de", "statt", "en lugar de", "em
    vez de"). A comparison of two quantities ("copies 640 files instead of 90", "90개 대신
    640개") measures, it corrects nothing: it is looked past."""
    cues = cues or _DEFAULT_CUES
    if _DIGIT.search(text):
        text = _QUANTITY_COMPARISON.sub(" ", text)
    return bool(cues.correction.search(text) or _COMPARISON.search(text) or _NOT_BUT.search(text))


class _Reading:
    """The features of one entry (`FEATURES`), found in three passes: where it stands
    (headings, labels, lead-in, tags), what form it has (speaker, output, narration,
    questions), and what it says and what moment it records. `values` maps each feature
    that fired to its strength, 0 to 1."""

    def __init__(self, entry: Entry, text: str, cues: Cues) -> None:
        self.entry = entry
        self.cues = cues
        self.tool = terminal.block_kind(entry.text) in ("edit", "message") and bool(text)
        self.raw = _norm(text if self.tool else entry.text)  # a tool block: the prose it holds
        self.body = _norm(text)
        self.said = _QUOTATION.sub(" ", self.body)  # someone else's words, quoted, state no rule of ours
        self.steady = steady(self.said)  # "toujours pas", "immer noch": a status, no "always"
        self.first = self.raw.strip().split("\n", 1)[0]
        self.headings = [_norm(h) for h in entry.context[-2:]]
        label, rest = label_of(self.raw.split("\n", 1)[0] if self.raw.strip() else self.raw)
        if label is None:
            label, rest = label_of(self.body)
        self.label, self.rest = label, rest
        self.values: dict[str, float] = {}
        self.span = False  # a duration stated as a limit (`_stated_span`), found by `knowledge`

    def fire(self, name: str, value: float = 1.0) -> None:
        self.values[name] = min(1.0, self.values.get(name, 0.0) + value)

    def place(self) -> None:
        """Headings, labels, the lead-in, tags and configured cues."""
        cues, fire, label = self.cues, self.fire, self.label
        if any(cues.strong_lesson.search(h) and not _CLOCK.search(h) for h in self.headings):
            fire("lesson-heading")
        elif any(cues.lesson.search(h) and not _CLOCK.search(h) for h in self.headings):
            fire("lesson-heading-weak")
        elif any(cues.plan_heading.search(h) and not cues.lesson.search(h) for h in self.headings):
            fire("plan-heading")
        if label is not None and cues.strong_lesson.search(label):
            fire("lesson-label")
        elif label is not None and cues.lesson.search(label):
            fire("lesson-label-weak")
        elif label is not None and cues.plan_heading.search(label):
            fire("plan-heading")
            if cues.plan.search(label):
                fire("plan")  # "Next step: …", "下一步：…": what may be done, offered, not what is
        elif label is not None and cues.status_heading.search(label):
            fire("status-label")
        if any(is_event_heading(h, cues) for h in self.headings[-1:]):
            fire("event-heading")
        if any(_CODE_NAME.search(h) for h in self.headings[-1:]):
            fire("artifact-heading")
        if any(_ALERT.search(h) for h in self.headings[-1:]):
            fire("alert-heading")
        # a heading naming a date is the day's title ("2026-03-02 연구 보조 로그"): not the section's subject
        titles = [h for h in self.headings if not _DATE.search(h)]
        if any(cues.reading.search(h) for h in titles) or _CITATION.search(self.body):
            fire("reading")
        if self.entry.lead_in:
            self._lead_in(_norm(self.entry.lead_in))
        if cues.keep.search(self.body):
            fire("keep-cue")
        if self.entry.tags and files_entry(self.entry.text, self.entry.tags):
            fire("tagged")
        if cues.skip.search(self.body):
            fire("skip-cue")

    def _lead_in(self, lead: str) -> None:
        """The sentence that introduces the entry's list, read as its heading."""
        cues = self.cues
        self.fire("lead-in")
        body = _NARRATION_GLYPH.sub("", lead).strip()
        if is_plan(lead, cues):
            self.fire("lead-in-plan")
        elif cues.lesson.search(body):
            self.fire("lead-in-lesson")
        elif is_record(lead, cues):
            self.fire("lead-in-status")

    def form(self) -> None:
        """Speaker, output, narration, questions, fragments, a session recounted."""
        cues, fire, body, first = self.cues, self.fire, self.body, self.first
        user = self.entry.role == "user" or bool(_QUOTED_USER.match(self.first))
        if user:
            fire("user")
        elif self.entry.role == "assistant" or _NARRATION_GLYPH.match(first):
            fire("assistant")
        if self.tool or (_INDENTED.match(self.raw) and _prose_item(self.first)):
            fire("tool-output")  # prose inside a tool's block: what an edit wrote, a diff's line
        elif _output_share(self.raw) >= 0.5 or "(ctrl+r to expand)" in self.raw:
            fire("output")
        glyph = _NARRATION_GLYPH.match(first) and cues.narration.starts(_NARRATION_GLYPH.sub("", first))
        if glyph or (self.entry.role == "assistant" and cues.narration.starts(body)):
            fire("narration")
        elif not user and (
            cues.narration.starts(body)
            # the fact text no longer holds an acknowledgement opener ("Great, …", "好的，…":
            # `offline.without_acknowledgement`): read it in a log's entry as written. Not in
            # an assistant's turn, whose opener acknowledges what it was told: the engine
            # reads a turn that restates the user's instruction as its echo
            or (
                self.entry.role != "assistant"
                and cues.narration.starts(_ORDINAL.sub("", first, count=1).lstrip(" *_"))
            )
        ):
            fire("narration-weak")
        stripped = body.rstrip()
        if stripped.endswith(("?", "？")):
            fire("question")
        words = content_words(stripped)
        if stripped.endswith((":", "：")) and words < 12:
            fire("fragment")
        if user and words >= 12 and not stripped.endswith(("?", "？")):
            fire("user-statement")
        if words <= 4:
            fire("short")
        told = _THIRD_PREFERENCE.sub(" ", body)  # "the user wants X" states, it recounts nothing
        if _RECOUNT.search(told) or _RECOUNT_POSSESSIVE.search(told):
            fire("recount")
        if _DEICTIC.match(body):
            fire("deictic")  # it does not state itself: its subject is outside the entry
            if cues.expectation.search(self.said):
                fire("expectation")  # "These changes should make it clearer": the effect hoped for
        assistant = not user and (self.entry.role == "assistant" or bool(_NARRATION_GLYPH.match(first)))
        if assistant and cues.agreement.starts(_NARRATION_GLYPH.sub("", body)):
            fire("acknowledgement")  # "You're right - …": this turn's answer to the listener
        addressed = cues.address.search(self.said) and (
            cues.pointer.search(self.said) or cues.moment.search(self.said)
        )
        at_hand = _IMPERATIVE_AT_HAND.search(self.said) and not cues.generic.search(self.steady)
        if user and (addressed or at_hand) and not cues.standing.search(self.steady):
            fire("session-request")  # "don't change any code at this time", "review it": this session only

    def knowledge(self) -> None:
        """Rules, reasons, procedures, corrections, limits, preferences, definitions,
        references, generic statements, caveats, behaviour, tense, emphasis."""
        cues, fire, body, said, label, rest = (
            self.cues,
            self.fire,
            self.body,
            self.said,
            self.label,
            self.rest,
        )
        kept = self.steady
        if cues.rule.search(kept) or self._imperative():
            fire("rule")
        elif cues.weak_rule.search(kept):
            fire("rule-weak")
        if cues.reason.search(said):
            fire("reason")
        ordered = cues.procedure.search(said)
        if ordered and not self.values.keys() & {"rule", "rule-weak", "user"} and cues.request.starts(rest):
            fire("rule-weak")  # an instruction with an order of steps: "Check … first", "Vérifier d'abord …"
        if ("rule" in self.values or "rule-weak" in self.values or cues.weak_rule.search(kept)) and ordered:
            fire("procedure")
        if is_correction(body, cues):
            fire("correction")
        if _NUMBER.search(body) and cues.limit.search(body):
            fire("limit")
        user = self.entry.role == "user" or bool(_QUOTED_USER.match(self.first))
        if (user and cues.preference.search(body)) or _THIRD_PREFERENCE.search(said):
            fire("preference")  # the owner's own message, or the owner's preference told
        if _EMPHASIS.search(said):
            fire("emphasis")
        if label is not None and _REFERENCE.search(rest):
            fire("reference")
        elif _REFERENCE.search(body) or _CODE_NAME.search(body):
            fire("path")
        shown = "output" in self.values or "tool-output" in self.values
        if not shown and _DIGIT.search(said) and _VERSION.search(said):
            opening = rest if label is not None else body
            moved = cues.release.starts(opening) or cues.release.ends(opening)  # "deploy api@4.12.0"
            if not moved and not cues.activity.starts(opening):
                fire("version")  # stated; in a tool's block it is what a file or a tool shows
        self._definition(body, label, rest)
        for name, lexicon in (
            ("generic", cues.generic),
            ("contrast", cues.contrast),
            ("behaviour", cues.behaviour),
        ):
            if lexicon.search(kept if name == "generic" else said):
                fire(name)
        past = len(_PAST_EN.findall(said)) + len(_PAST_DENSE.findall(said)) + len(_PAST_HANGUL.findall(said))
        perfect = len(_PERFECT.findall(said))  # "has been removed" is done, not a present state
        present = len(_PRESENT_EN.findall(said)) - perfect + (1 if _PRESENT_DENSE.search(said) else 0)
        if present and not past:
            fire("present")
        elif past and not present:
            fire("past")
        if past and past >= present and cues.hedge.search(said):
            fire("speculation")  # "I suspect the issues were caused by …": a guess at a cause
        self.span = self._stated_span(body)
        if self.span:
            fire("limit")

    def _imperative(self) -> bool:
        """True when the entry opens with a plain imperative addressed to the reader ("Use
        blue-green deploys for the API.", "Verwende …", "Utilisez …", "使用蓝绿部署发布 API。",
        "블루-그린 배포를 사용하라.", "ブルーグリーンデプロイを使ってください。"): its first
        sentence (after a label) opens with a request verb (`REQUEST_WORDS`; Chinese:
        `IMPERATIVE_OPENING_WORDS`) or, in Korean and Japanese, ends with an imperative
        (`IMPERATIVE_ENDING_WORDS`), and is no question nor told in the past. A notes file's
        reader is the agent itself: that is an instruction, a rule. Not so in a user's message
        — there it asks the listener for something in the session (`session-request`), and
        a standing one says so with a rule word ("always", "from now on") — nor in a tool's
        block or a terminal's output, nor as a step of a plan or to-do list, nor inside a
        quotation, nor aimed at what is at hand ("Review it", "Consider it an investment":
        `_IMPERATIVE_AT_HAND`), nor moving one version ("deploy api@4.12.0 staging": one
        release, `RELEASE_WORDS`)."""
        if self.entry.role == "user" or _QUOTED_USER.match(self.first) or "user" in self.values:
            return False
        if "output" in self.values or "tool-output" in self.values:
            return False  # a line of a tool's block or a terminal: written for the session, not the reader
        if not self.values.keys().isdisjoint({"plan-heading", "lead-in-plan", "plan"}):
            return False  # a step of a plan or a to-do list ("Need to either: … 3. Wait for …")
        opening = _QUOTATION.sub(" ", self.rest if self.label is not None else self.body)
        opening = _NARRATION_GLYPH.sub("", opening)
        sentence = _FIRST_SENTENCE.match(opening)
        first = (sentence.group(0) if sentence else opening).strip()
        if not first or first.endswith(("?", "？")) or _PAST_EN.search(first) or _PAST_DENSE.search(first):
            return False
        if _IMPERATIVE_AT_HAND.match(first):
            return False  # "Review it", "Consider it an investment": aimed at what is at hand, not standing
        cues = self.cues
        if _VERSION.search(first) and (cues.release.starts(first) or cues.release.ends(first)):
            return False  # "deploy api@4.12.0 staging": one release, a task or its record, no standing rule
        if cues.imperative_ending.ends(first) or cues.imperative_opening.starts(first):
            return True
        verb = _VERB_OBJECT.match(first)
        return bool(verb and cues.request.starts(verb.group(1)))

    def _stated_span(self, body: str) -> bool:
        """True when `body` states a duration as a limit ("The API key expires after 24
        hours", "API密钥24小时后过期", "Der Schlüssel läuft nach 24 Stunden ab"): a span
        (`_LIMIT_SPAN`), told not in the past, with no duration counting time left or since
        (`_COUNTDOWN`: "23h remaining", "2 days ago"), no clock time or date, and no status
        word beyond one that says how a thing behaves ("expires"). Such a duration is a
        rule of the tool, not a moment: it fires `limit`, and neither `clock` nor that word's
        `status`."""
        if not _DIGIT.search(body) or "past" in self.values or not _LIMIT_SPAN.search(body):
            return False
        if _COUNTDOWN.search(body) or _CLOCK.search(body) or _DATE.search(body):
            return False
        return self.cues.status.count(body) <= _STATUS_BEHAVIOUR.count(body)

    def _definition(self, body: str, label: str | None, rest: str) -> None:
        self.artifact = bool(_CODE_NAME.search(body[:120]))
        if (_DEFINES.match(body) or _DEFINES.match(opening_of(body))) and self.artifact:
            self.fire("definition")
        elif (
            _NAME_DASH.match(body)
            or _EQUATION.match(body)
            or _IS_A.search(body)
            or any(w in body for w in _IS_A_DENSE)
            or (label is not None and len(rest.split()) >= 4 and "**" in self.raw[:4] + self.first[:6])
        ):
            self.fire("definition-weak")  # "Ocean Tiger — runs the mail service", "ASS = a × b"

    def moment(self) -> None:
        """Status, counts, clock times, dates, ids, activity, plans: what was true at a moment."""
        cues, fire, body, label = self.cues, self.fire, self.body, self.label
        status_hits = cues.status.count(body)
        if self.span:  # "expires after 24 hours": how the thing behaves, a limit (`_stated_span`)
            status_hits -= _STATUS_BEHAVIOUR.count(body)
        if status_hits > 0:
            fire("status", min(2.0, float(status_hits)) / 2)
        # "今日の学び：…", "Today's lesson: …": the moment in a lesson's label is when it was
        # learnt, not how long the statement holds
        timed = _norm(self.rest) if "lesson-label" in self.values else body
        if cues.moment.search(_QUOTATION.sub(" ", timed)):
            fire("momentary")
        digit = _DIGIT.search(body) is not None
        counted = _COUNT.findall(body) if digit else []
        if len(counted) >= 2 and "limit" not in self.values:
            fire("counts", min(2.0, (len(counted) - 1) / 2) / 2)
        spans = _LIMIT_SPAN.sub(" ", body) if self.span else body  # a stated limit is no moment
        if digit and (_CLOCK.search(body) or _DURATION.search(spans)):
            fire("clock")
        if _bounded(body):
            fire("time-bound")  # "wait until ~23:45": true until then, stale after
        if digit and _DATE.search(timed):
            fire("date")
        ids = len(_OPAQUE_ID.findall(self.raw)) + len(_PAREN_ID.findall(self.raw))  # the fact text lost them
        if ids:
            fire("id", min(2.0, float(ids)) / 2)
        if cues.first_person.search(self.said):
            fire("first-person")
        opening = self.rest if label is not None else body
        acted = cues.activity.starts(opening) or cues.activity.starts(body) or cues.activity.ends(body)
        if acted or (label is not None and cues.activity.search(label)):
            if not (self.artifact and _DEFINES.match(opening_of(body)) and len(body.split()) >= 5):
                fire("activity")  # made a named tool or file and said what it does: a definition
            if ("reason" in self.values or "correction" in self.values) and "id" not in self.values:
                fire("decision")  # the ids of a post or message: a reply that argues, not a decision
        if (
            cues.plan.starts(opening)
            or cues.plan.starts(body)
            or re.match(r"^\s*(?:[-*+]\s+)?\[ \]", self.raw)
        ):
            fire("plan")
        # the mark is layout the fact text no longer holds (`clean_text` drops emoji): read
        # it in the entry as written, after its list marker ("- ✅ Smoke tests green")
        if _EMOJI_STATUS.search(_ORDINAL.sub("", self.first, count=1).lstrip(" *_")[:3]):
            fire("status-mark")


def features(entry: Entry, text: str, cues: Cues) -> dict[str, float]:
    """`{feature: strength 0-1}` of one entry whose cleaned fact text is `text`, for every
    feature that fired (`FEATURES`). Pure: depends on the entry (text, headings, lead-in,
    role, tags) and the cues alone; never raises."""
    reading = _Reading(entry, text, cues)
    reading.place()
    reading.form()
    reading.knowledge()
    reading.moment()
    return reading.values


@dataclass(frozen=True)
class Judgement:
    """The salience of one entry: `score` (log-odds of being durable), `probability`,
    the features that fired (name → weight × strength, the contribution to the score),
    and `reason` — None when the entry is kept, else why it is not."""

    score: float
    probability: float
    cues: dict[str, float]
    reason: str | None

    @property
    def kept(self) -> bool:
        return self.reason is None


def probability(score: float) -> float:
    """The logistic of a log-odds `score`."""
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, score))))


def is_plan(lead_in: str, cues: Cues | None = None) -> bool:
    """True when a list's lead-in sentence is a plan ("Next steps:", "Need to either:",
    "I'll prepare a document that covers:", "다음 할 일:"): its items are a to-do list."""
    cues = cues or _DEFAULT_CUES
    body = _NARRATION_GLYPH.sub("", _norm(lead_in)).strip()
    return bool(body) and bool(
        cues.plan.search(body) or cues.plan_heading.search(body) or cues.future.search(body)
    )


INTENTION_REACH = 3
"""A plan word (`PLAN_WORDS`) at most this many words after the speaker's own subject opens
a statement of intention ("I plan to …", "we intend to …", "I eventually want to …")."""
_COPULA_END = re.compile(r"(?:입니다|이다|이에요|예요|임|です|だ|である|でした)?[\s.。!！]*$")
_DENSE_HEAD = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def states_intention(sentence: str, cues: Cues | None = None) -> bool:
    """True when `sentence` states what its speaker plans or intends to do, not what is:
    it opens with a plan word or the speaker's own future ("Next: …", "I'll …", "We will
    …", "Let's …", "我会…", "我们将…": `PLAN_WORDS`, `FUTURE_WORDS`); or the speaker's own
    subject opens it and a plan word follows within `INTENTION_REACH` words ("I plan to
    eventually publish this", "We intend to migrate", "Ich werde …"; in Chinese, within
    as many characters of 我/我们: "我打算下个月…"); or, in Korean and Japanese, whose verb
    comes last, it ends with a plan word before its copula ("공개할 예정입니다", "公開するつもりです").
    Structure over the lexicons, so it holds in every language they cover. A plan is not a
    standing fact: it is no topic's description (`describe.summary_of`)."""
    cues = cues or _DEFAULT_CUES
    text = _NARRATION_GLYPH.sub("", _norm(sentence)).strip(" \t*_>\"'“‘「『(-–—")
    if not text:
        return False
    if cues.plan.starts(text) or cues.future.starts(text):
        return True
    if cues.first_person.starts(text):
        if _DENSE_HEAD.match(text):
            subject = re.match(r"我们|我們|我|私たちは|私は|僕は|저희는|우리는|저는|제가|나는|내가", text)
            rest = text[subject.end() :] if subject else text[1:]
            if any(cues.plan.starts(rest[i:].lstrip()) for i in range(INTENTION_REACH + 1)):
                return True
        else:
            words = text.split()
            return any(cues.plan.starts(" ".join(words[i:])) for i in range(1, INTENTION_REACH + 2))
    if _DENSE_HEAD.search(text):
        return cues.plan.ends(_COPULA_END.sub("", text))
    return False


def is_record(lead_in: str, cues: Cues | None = None) -> bool:
    """True when a list's lead-in frames it as a record of what was done or what is now
    ("The commit includes:", "All tests pass:", "The user asked about:"), not as knowledge."""
    cues = cues or _DEFAULT_CUES
    body = _NARRATION_GLYPH.sub("", _norm(lead_in)).strip()
    if not body or cues.strong_lesson.search(body):
        return False
    own_past = bool(_PAST_EN.search(body) or _PAST_HANGUL.search(body) or _PAST_DENSE.search(body))
    if cues.narration.starts(body) or (cues.first_person.starts(body) and own_past):
        return (
            True  # "I've cleaned up the project as requested:", "I had to make one fix:": own work summed up
        )
    if cues.lesson.search(body):
        return False
    return bool(
        cues.status.search(body)
        or cues.status_heading.search(body)
        or cues.activity.search(body)
        or _RECOUNT.search(body)
    )


def prior_score(entry: Entry, text: str, cues: Cues) -> float:
    """The sum of the prior weights (`PRIOR`) of the features `text` shows as `entry`'s
    text: a ranking of texts by the model's design alone, whatever the fitted weights
    (the offline engine picks an entry's most salient sentences with it, so the material
    the weights are fitted on does not depend on the weights)."""
    return sum(PRIOR[name] * value for name, value in features(entry, text, cues).items())


def logit(chance: float) -> float:
    """The log-odds of a probability (the inverse of `probability`)."""
    chance = min(max(chance, 1e-12), 1 - 1e-12)
    return math.log(chance / (1 - chance))


def judge(entry: Entry, text: str, cues: Cues, threshold: float) -> Judgement:
    """The Judgement of one entry whose cleaned fact text is `text` (module docstring):
    kept when its probability of being durable is at least `threshold` (0-1); below
    it, the reason (`REASONS`) whose features speak against it the most, summed — the
    entry's own features first, then those of where it stands (`PLACE`) — or
    `NOT_DURABLE` when none does.

    Pure: the verdict depends on the entry (text, headings, lead-in, role, tags) alone;
    never raises."""
    values = features(entry, text, cues)
    contributions = {name: round(WEIGHTS.get(name, PRIOR[name]) * value, 3) for name, value in values.items()}
    score = round(BIAS + sum(contributions.values()), 3)
    chance = probability(score)
    if chance >= threshold:
        return Judgement(score, chance, contributions, None)
    against: dict[str, float] = {}
    for own in (True, False):  # what the entry itself shows first, then where it stands
        for name, value in contributions.items():
            if value < 0 and name in REASONS and (name in PLACE) != own:
                against[REASONS[name]] = against.get(REASONS[name], 0.0) + value
        if against:
            break
    if not against:
        return Judgement(score, chance, contributions, NOT_DURABLE)
    return Judgement(score, chance, contributions, min(against, key=lambda r: (against[r], r)))


def without_moment_marks(text: str) -> str:
    """`text` without what dates it: a span bounded by a moment ("until Feb 27"), clock
    times, dates."""
    text = _norm(text)
    if _UNTIL_WORD.search(text):
        text = _UNTIL.sub(" ", text)
    if _DIGIT.search(text):
        text = _DATE.sub(" ", _CLOCK.sub(" ", text))
    return " ".join(text.split())


def names_a_thing(text: str) -> bool:
    """True when `text` names its own subject: a file or code name, a path, a URL, an
    address, or (Latin script) a capitalised name after its first word."""
    if _CODE_NAME.search(text) or _REFERENCE.search(text):
        return True
    return bool(re.search(r"(?<=[\w,;:] )[A-Z][a-z]{2,}", text))


def _statement_before_request(sentence: str, cues: Cues) -> str | None:
    """The statement that opens `sentence` when the rest of it asks the listener to do
    something now ("My e-mail is x, update the license and your credits" → "My e-mail is
    x."): a clause, after a comma, a dash or a value, that opens with a request (an
    English imperative; 请, 해 주세요, してください in it) and speaks to or points at the
    listener and the work at hand, with no word that makes it standing; None when there
    is no such shape."""
    if not cues.request.search(sentence):
        return None
    for number, brk in enumerate(_CLAUSE_BREAK.finditer(sentence)):
        if number >= _CLAUSES_WEIGHED:
            break
        head, clause = sentence[: brk.start()].strip(), sentence[brk.end() :]
        asks = cues.request.starts(clause) or (not clause.isascii() and cues.request.search(clause))
        if not asks or not _COPULA.search(head):
            continue
        if (cues.address.search(clause) or cues.pointer.search(clause)) and not cues.standing.search(clause):
            if head.endswith((".", "。", "!", "！")):
                return head
            return head + ("。" if _HAN_KANA.search(head[-1:]) else ".")
    return None


def standing_sentences(text: str, cues: Cues | None = None, *, user: bool = False) -> str:
    """`text` (one line) without the sentences that hold only for the moment: one bounded
    by a clock time or a date ("Hit the 30-min cooldown. Need to wait until ~23:45 to
    retry." → "Hit the 30-min cooldown."): status, stale once it passes; and one that
    announces the speaker's own next step ("… Let me update the documentation:", "我来改一下。",
    "수정하겠습니다."): narration, done by the next turn. `text` itself when no sentence
    would be left (the entry is then judged, and usually not kept, whole).

    When `user` (the text is a user's message, `said_by_user`), a sentence that states
    something and then, in the same sentence, asks the listener to act on the work at hand
    keeps its statement only (`_statement_before_request`)."""
    cues = cues or _DEFAULT_CUES
    parts = sentences.split(text)
    if user:
        cut = [_statement_before_request(part, cues) for part in parts]
        if any(cut):
            text = sentences.join([c or p for c, p in zip(cut, parts, strict=True)])
            parts = sentences.split(text)
    standing = [
        part
        for part in parts
        if not _bounded(_norm(part)) and not (cues.future.starts(part) and not cues.rule.search(part))
    ]
    return sentences.join(standing) if standing and len(standing) < len(parts) else text


def content_words(text: str) -> int:
    """A rough count of words: Latin-script words of two letters or more, plus one per
    two CJK characters."""
    return len(_WORD.findall(text)) + len(_DENSE_CHAR.findall(text)) // 2


_KIND_LABEL = re.compile(
    r"^\s*(?:key\s+)?(?:lesson|lessons|learning|learnings|learned|insight|insights|takeaway|"
    r"note|tip|finding|교훈|메모|팁|教训|心得|笔记|教訓|メモ|学び)(?:\s+learned)?\s*[:：]\s*(?=\S)",
    re.I,
)


def without_kind_label(text: str) -> str:
    """`text` without a leading label that only says what kind of knowledge follows
    ("Lesson: X", "Key insight: X", "교훈: X" → "X"); the salience of the entry was judged
    with it."""
    rest = _KIND_LABEL.sub("", text, count=1)
    return rest[:1].upper() + rest[1:] if rest is not text and rest[:1].islower() else rest


def is_lesson_heading(heading: str, cues: Cues | None = None) -> bool:
    """True when `heading` holds nothing but words that name a kind of knowledge
    ("Lessons learned", "Notes", "교훈"): it says what kind, not what about."""
    cues = cues or _DEFAULT_CUES
    words = re.sub(r"[\W\d_]+", " ", _norm(heading)).split()
    # a Latin word under three letters is a joint ("of", "to"); two CJK characters are a word
    return bool(words) and all(cues.lesson.search(w) or (len(w) < 3 and w.isascii()) for w in words)


_DEFAULT_CUES = Cues()


DURABLE_FEATURES = frozenset(
    {
        "lesson-heading",
        "lesson-label",
        "tagged",
        "keep-cue",
        "user-statement",
        "rule",
        "rule-weak",
        "reason",
        "procedure",
        "correction",
        "limit",
        "preference",
        "decision",
        "behaviour",
        "generic",
        "contrast",
    }
)
"""Features that say an entry carries knowledge beyond what was done: a rule, a reason, a
correction, a limit, a preference, how something behaves (`is_activity_record`)."""

_OPENING_CLAUSE = re.compile(r"\s(?:—|–|-{1,2})\s|[:：;；,，。.!?]\s*")


def is_activity_record(entry: Entry, text: str, cues: Cues | None = None) -> bool:
    """True when fact text `text` of `entry` only records that something was done once
    ("Created `appendix.md` in the repo — a deliverable", "Added `envelope` command: …",
    "cosmo engaging with tool.py", "部署了新版本", "배포했다"): it is told in the past or as an
    activity (the `past` or `activity` feature, or an activity word in its opening clause,
    before a dash or a colon) and carries none of `DURABLE_FEATURES`. Such a record may
    join the topic of its subject, but is no subject of its own (the offline engine opens
    no topic for it alone). Pure."""
    cues = cues or _DEFAULT_CUES
    fired = features(entry, text, cues)
    if not DURABLE_FEATURES.isdisjoint(fired):
        return False
    if "past" in fired or "activity" in fired:
        return True
    opening = _OPENING_CLAUSE.split(_norm(text), maxsplit=1)[0]
    return cues.activity.search(opening) or cues.activity.ends(opening)


LISTED_RECORD_FEATURES = frozenset({"rule", "rule-weak", "procedure"})
"""Durable features a rule word fires wherever it stands ("with required dependencies",
"after the migration"): in an item of a log of what was done they do not make it knowledge
(`is_listed_record`)."""


def is_listed_record(entry: Entry, text: str, cues: Cues | None = None) -> bool:
    """True when fact text `text` of `entry`, an item of a list whose other items record
    what was done once (`is_activity_record`; the caller decides that by the list), is one
    more record of that log: "Set up Python 3.13 virtual environment with required
    dependencies" beside "Created requirements.txt …" says what was done, told with its verb
    first as a log's items are ("Set up …", "Add …", "配置了 …"), though "required" is a rule
    word. Decided by structure: such an item is a record unless it states more than the
    log's form — a reason, a correction, a limit, a preference or another durable feature
    beyond a rule word (`LISTED_RECORD_FEATURES`), or a rule word it opens with ("Always
    activate the venv first", "Never …", "반드시 …"), which makes it an instruction. An item
    with no rule word is not this case (False): salience and `is_activity_record` judge it
    as they judge any entry. Pure."""
    cues = cues or _DEFAULT_CUES
    fired = features(entry, text, cues)
    if LISTED_RECORD_FEATURES.isdisjoint(fired):
        return False
    if not (DURABLE_FEATURES - LISTED_RECORD_FEATURES).isdisjoint(fired):
        return False
    return not cues.rule.starts(steady(_norm(text)))


def instruction_of(text: str, cues: Cues | None = None) -> str | None:
    """The instruction fact text `text` gives: its first sentence holding a rule word of
    any language (`RULE_WORDS`: "must", "always", "never", "必须", "반드시", "必ず"), without
    a leading label ("IMPORTANT: You must …" → "You must …"); None when no sentence does.
    Two facts giving the same instruction in other words are one fact (the offline engine
    corroborates the first with the second, `grouping.INSTRUCTION_CONTAINMENT`)."""
    cues = cues or _DEFAULT_CUES
    for part in sentences.split(_norm(text)) or [text]:
        label, rest = label_of(part)
        said = rest if label is not None and len(label.split()) <= 2 else part
        if cues.rule.search(steady(said)):
            return said
    return None
