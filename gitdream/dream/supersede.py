"""Superseding: a newer fact that states a different value for the same subject replaces the
older one, which is kept — with its sources, the date and what superseded it — in the topic's
`superseded` block (DESIGN §5 phase 6; issue #14 "supersede, never accumulate
contradictions"). Engine-independent: the offline engine's `create` units and a model's
`correct` units both go through `supersedes` and `Superseded`.

Same subject, different value (`supersedes(new, old)`), in any language, by structure:

- **numbers revised**: the two texts are the same once numbers are taken out (word-shingle
  similarity of the skeletons at least `SKELETON_SIMILARITY`) and state different numbers —
  "the registry keeps the last 10 tags" → "the registry keeps the last 20 tags";
- **negation flipped**: the texts are nearly the same once negation words are taken out
  (`NEGATIONS`, several languages) and exactly one of them is negated — "uploads are
  time-limited" → "uploads are NOT time-limited";
- **corrected**: the newer text is an explicit correction — "X, not Y", "not Y but X", "X
  instead of Y", "Y → X", "was Y, now X", "changed from Y to X", and the same structures in
  Chinese (不是Y而是X, X而不是Y, 原来是Y，现在…), Korean (Y가 아니라 X, Y 대신) and Japanese
  (YではなくX, Yの代わりに) — whose old value Y appears in the older fact (the same words,
  or the same numbers: "10 tags" in "10개"), and the two are about the same thing (most
  of the older fact's shingles, numbers and the old value abstracted, are in the
  correction's, `CORRECTION_OVERLAP`, and much of the correction's in the fact's,
  `CORRECTION_SCOPE`; an arrow is a correction only alone in the text — "a →
  b → c" is a flow): "Correction: the registry keeps the last 25 image tags, not 10."
  replaces "The registry keeps only the last 10 image tags." (`correction_of`);
- **same label, new value**: both open with the same short label ("Moltbook suspension:",
  "Deploy window:") and what follows differs and shares little (a value that only adds to
  the other — "Tuesdays" → "Tuesdays, from 10:00" — is a refinement, not a new value), and
  both state a *value of the same slot*: what follows the labels is the same once values
  (numbers, code spans, quoted text, URLs) are abstracted ("Config: `a.toml`" →
  "Config: `b.toml`"), or both are value statements — a phrase of at most
  `VALUE_MAX_WORDS` words, one clause, no reason — that are not both rules. Two rules or
  instructions under one label are two rules, never one replacing the other: "Backup:
  nightly backups must be verified with a test restore every Monday because …" leaves
  "Backup: nightly backups run at 02:00 UTC and must finish before 04:00" standing;
- **same subject, new state**: a label that only names the fact's *subject* — who or what
  it is about, as the topic's own name does ("Moltbook:" in topic Moltbook, often lent by
  a heading) — says nothing of its *slot*, the attribute the fact states. Two such facts
  supersede each other only when both state the subject's state (`STATE_WORDS`,
  `STATUS_WORDS`, no rule): "Moltbook: suspended until Feb 27" replaces "Moltbook: ban
  lifted", but "Moltbook: each failed attempt extends the ban" (a rule) is never replaced by
  a status, nor one rule about Moltbook by another;
- a label shared by facts that each name their own subject after it (a file or command in
  backticks, then what is said of it) is a section's label, not a slot: "Files and Code
  Sections: `README.md`; Updated …" never replaces "…: `conftest.py`; Simplified …".

A fact corroborated again is not superseded (the caller corroborates first); two facts that
merely share words are never superseded, so nothing is replaced by a guess.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import date
from functools import lru_cache

from gitdream.dream.facts import Fact, one_line
from gitdream.dream.lexicons import REASON_WORDS, RULE_WORDS, STATE_WORDS, STATUS_WORDS, Lexicon
from gitdream.text import sentences
from gitdream.text.clip import clip
from gitdream.text.prose import URL
from gitdream.text.similarity import jaccard, normalise, shingles

SKELETON_SIMILARITY = 0.8
NEGATION_SIMILARITY = 0.8
LABEL_MAX_WORDS = 4
VALUE_MAX_WORDS = 8
"""What follows a label is a value statement ("Tuesdays after 10:00", "suspended until March
9") at most this many words long (a Latin word, a number, or two CJK characters): longer, it
is a sentence of its own — a rule, a lesson — and a label shared with another one is a
section's, not a slot's (module docstring, "same label, new value")."""
CORRECTION_OVERLAP = 0.6
"""A correction is about the fact holding its old value when at least this share of the
older fact's shingles (numbers and the old value abstracted) is in the correction's: a
correction says again what it corrects, with the new value."""
CORRECTION_SCOPE = 0.4
"""… and at least this share of the correction's shingles is in the older fact's: it says
little else (a long summary holding a short fact's words corrects nothing)."""
BY_MAX_CHARS = 160
"""The "by: …" text of a superseded fact is clipped to this many characters."""

NEGATIONS = (
    "not|no|never|none|cannot|can't|don't|doesn't|isn't|aren't|won't|wasn't|weren't|without|"
    "不|没|沒|无|無|非|别|勿|안|않|못|없|아니|ない|ぬ|ません|ず"
)
_LATIN_NEG = re.compile(
    r"(?<![\w'])(?:" + "|".join(re.escape(w) for w in NEGATIONS.split("|") if w.isascii()) + r")(?![\w'])",
    re.I,
)
_DENSE_NEG = tuple(w for w in NEGATIONS.split("|") if not w.isascii())
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_LABEL = re.compile(r"^\s*([^:：\n]{1,60}?)(?::\s+|：\s*)(\S.*)$")  # "：" needs no space


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _negated(text: str) -> bool:
    norm = _norm(text)
    return bool(_LATIN_NEG.search(norm)) or any(w in norm for w in _DENSE_NEG)


def is_negated(text: str) -> bool:
    """True when `text` holds a negation word of any language in `NEGATIONS` ("not",
    "never", "不", "없", "ない" …)."""
    return _negated(text)


# The positive half of a pair whose other half is a negation: 있다/없다, ある/ない.
_AFFIRMATIONS = ("있", "ある")


def _without_negation(text: str) -> str:
    norm = _LATIN_NEG.sub(" ", _norm(text))
    for word in _DENSE_NEG + _AFFIRMATIONS:
        norm = norm.replace(word, "")
    return norm


def _comparable(label: str) -> bool:
    """True for a label long enough to compare: three characters, or two of a script
    without spaces ("论坛", "포럼"), where two are a word."""
    return len(label) >= 3 or (len(label) == 2 and not label.isascii())


def _label(text: str) -> tuple[str, str] | None:
    match = _LABEL.match(text)
    if match is None or len(match.group(1).split()) > LABEL_MAX_WORDS:
        return None
    return _norm(match.group(1)).strip(" *`_"), match.group(2)


@dataclass(frozen=True)
class _Profile:
    """What `supersedes` compares of one fact text, computed once per text."""

    line: str
    numbers: tuple[str, ...]
    skeleton: frozenset[str]
    negated: bool
    unnegated: frozenset[str]
    label: tuple[str, str] | None
    label_key: str | None  # the label when long enough to compare ("same label, new value")
    correction: str | None  # the old value an explicit correction sets aside (`correction_of`)


@lru_cache(maxsize=1 << 15)  # a topic of thousands of facts is compared with each new one
def _profile(text: str) -> _Profile:
    label = _label(text)
    return _Profile(
        line=_norm(one_line(text)),
        numbers=tuple(sorted(_NUMBER.findall(text))),
        skeleton=frozenset(shingles(_NUMBER.sub("#", text))),
        negated=_negated(text),
        unnegated=frozenset(shingles(_without_negation(text))),
        label=label,
        label_key=label[0] if label is not None and _comparable(label[0]) else None,
        correction=correction_of(text),
    )


def _at_least(a: frozenset[str], b: frozenset[str], bar: float) -> bool:
    """Whether the Jaccard index of `a` and `b` (as `similarity.jaccard`) is at least
    `bar`; sets whose sizes already rule it out are not intersected (|a∩b|/|a∪b| ≤
    min/max of the sizes), which keeps a topic of thousands of facts fast."""
    if not a and not b:
        return True
    size_a, size_b = len(a), len(b)
    if min(size_a, size_b) < bar * max(size_a, size_b):
        return False
    common = len(a & b)
    return common / (size_a + size_b - common) >= bar  # |a ∪ b| without building it


_STATE = Lexicon(STATE_WORDS + STATUS_WORDS)
_RULE = Lexicon(RULE_WORDS)


def states(value: str) -> bool:
    """True when `value` (what follows a label) states a state — a state or status word of
    any language in `STATE_WORDS`/`STATUS_WORDS` ("suspended", "still", "封禁", "정지") and
    no rule word ("never", "must", "不要") — rather than a rule, a lesson or a record."""
    return _STATE.search(value) and not _RULE.search(value)


def subject_names(*names: str) -> frozenset[str]:
    """The normalised forms of a topic's names (title, slug) that a label naming only the
    fact's subject repeats: casefolded, `-`/`_` read as spaces."""
    out = set()
    for name in names:
        norm = " ".join(re.sub(r"[-_]+", " ", _norm(name)).split()).strip(" *`_")
        if norm:
            out.add(norm)
    return frozenset(out)


def names_subject(label: str, subjects: frozenset[str]) -> bool:
    """True when normalised label `label` only names the topic's subject: it is one of
    the topic's names `subjects`, or a run of whole words of one ("forum" in a topic named
    "Forum BAN LIFTED")."""
    return any(label == name or f" {label} " in f" {name} " for name in subjects)


_OWN_SUBJECT = re.compile(r"^\s*`([^`\n]+)`\s*(?:[;；,，:：—–-]\s*)?(?=\S)")


def _own_subjects_differ(value_new: str, value_old: str) -> bool:
    """True when both values open with a name of their own — a code span (a file, a
    command) with more said after it — and the names differ: the label was a section's
    ("Files and Code Sections: `README.md`; Updated …" beside "…: `conftest.py`;
    Simplified …"), each fact is about its own name, and neither replaces the other. A
    value that is the name alone ("Config: `a.toml`" → "Config: `b.toml`") is a new value."""
    new, old = _OWN_SUBJECT.match(value_new), _OWN_SUBJECT.match(value_old)
    return new is not None and old is not None and new.group(1).strip() != old.group(1).strip()


# --- same label: a value of the same slot, or two rules ------------------------------------

# Values a slot holds, abstracted for its skeleton: code spans, quoted text, URLs, numbers.
_VALUE = re.compile(
    r"`[^`\n]+`|\"[^\"\n]{1,80}\"|“[^”\n]{1,80}”|「[^」\n]{1,80}」|" + URL.pattern + r"|\d+(?:[.,:]\d+)*"
)
_VALUE_WORD = re.compile(r"[^\W\d_]+|\d+(?:[.,:]\d+)*|`[^`\n]+`")
_DENSE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_REASON = Lexicon(REASON_WORDS)


def _value_words(value: str) -> int:
    """Words of `value`: Latin-script words, numbers and code spans, and one per two CJK
    characters (Chinese and Japanese do not separate words; a Korean word is about two)."""
    dense = len(_DENSE.findall(value))
    return len(_VALUE_WORD.findall(_DENSE.sub(" ", value))) + (dense + 1) // 2


def _is_value(value: str) -> bool:
    """True when what follows a label is a value statement: one clause of at most
    `VALUE_MAX_WORDS` words and no reason ("because", "因为", "때문에") — a value, not a
    sentence of its own."""
    return (
        _value_words(value) <= VALUE_MAX_WORDS
        and len(sentences.split(value)) <= 1
        and not _REASON.search(_norm(value))
    )


def _same_slot(value_new: str, value_old: str) -> bool:
    """True when two values under one label state a value of the same slot (module
    docstring, "same label, new value"): their skeletons (values abstracted, `_VALUE`) match,
    or both are value statements (`_is_value`) and not both rules (`RULE_WORDS`)."""
    skeleton_new = frozenset(shingles(_VALUE.sub("#", value_new)))
    skeleton_old = frozenset(shingles(_VALUE.sub("#", value_old)))
    if _at_least(skeleton_new, skeleton_old, SKELETON_SIMILARITY):
        return True
    if not (_is_value(value_new) and _is_value(value_old)):
        return False
    return not (_RULE.search(value_new) and _RULE.search(value_old))


# --- explicit corrections ----------------------------------------------------------------------

# A leading label saying that a correction follows is layout: the fact states the correction.
_CORRECTION_LABEL = re.compile(
    r"^\s*(?:correction|corrected|update|updated|fix|fixed|erratum|errata|"
    r"更正|纠正|糾正|修正|订正|정정|수정|訂正)\s*[:：]\s*(?=\S)",
    re.I,
)


def without_correction_label(text: str) -> str:
    """`text` without a leading correction label ("Correction: X", "Update: X", "Fix: X",
    "更正：X", "정정: X", "訂正：X" → "X", the first letter capitalised); `text` itself
    otherwise."""
    rest = _CORRECTION_LABEL.sub("", text, count=1)
    if rest is text or rest == text:
        return text
    return rest[:1].upper() + rest[1:] if rest[:1].islower() else rest


_OLD = r"(?P<old>`[^`\n]+`|[^\s,.;:!?()`]+(?:\s+[^\s,.;:!?()`]+){0,3})"  # up to four words
_DENSE_OLD = r"(?P<old>[^\s,.;:!?()、。，；]{1,20}?)"
_CORRECTIONS = (
    # "X, not Y." / "X (not Y)" / "X, not Y, so …" — "not Y" closing a clause
    re.compile(r"[,;(]\s*(?:and\s+|but\s+)?not\s+" + _OLD + r"\s*\)?\s*(?:[.!。,;]|$)"),
    # "not Y but X" ("not only … but also" is no correction)
    re.compile(r"\bnot\s+(?!only\b|just\b|merely\b)" + _OLD + r",?\s+but\b(?!\s+also\b)"),
    re.compile(r"\b(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+" + _OLD),
    # "Y → X" (`_ARROW`: alone in the text)
    re.compile(r"(?P<old>`[^`\n]+`|[^\s`→>]+)\s*(?:→|->|=>|⇒|⟶)\s*\S"),
    re.compile(r"\bwas\s+" + _OLD + r"\s*[,;]\s*(?:(?:it\s+)?is\s+|it's\s+)?now\b"),
    re.compile(
        r"\b(?:changed|moved|raised|lowered|increased|decreased|reduced|bumped|switched|went|"
        r"updated|corrected)\s+(?:\w+\s+)?from\s+" + _OLD + r"\s+to\s+\S"
    ),
    # Chinese: 不是Y(，)而是X · X而不是Y · X，不是Y。 · 原来是Y，现在X
    re.compile(r"(?<!而)不是" + _DENSE_OLD + r"\s*,?\s*而是"),
    re.compile(r"(?:而不是|而非)" + _DENSE_OLD + r"(?:$|[\s,.;:!?、。，；])"),
    re.compile(r",\s*(?:而)?不是" + _DENSE_OLD + r"\s*(?:[.!。]|$)"),
    re.compile(r"(?:原来|原先|以前|之前)是?" + _DENSE_OLD + r"\s*,\s*(?:现在|如今|目前)"),
    # Korean: Y가/이 아니라 X · Y 대신(에) X
    re.compile(r"(?:^|(?<=\s))" + _DENSE_OLD + r"(?:이|가)?\s*아니라"),
    re.compile(r"(?:^|(?<=\s))" + _DENSE_OLD + r"\s*대신(?:에)?\s"),
    # Japanese: YではなくX · Yの代わりにX
    re.compile(r"(?P<old>[^\s,.;:!?()、。はがをにでのともへ]{1,20})(?:ではなく|じゃなく|でなく)"),
    re.compile(r"(?P<old>[^\s,.;:!?()、。はがをにでともへ]{1,20})の代わりに"),
)


_ARROW = re.compile(r"→|->|=>|⇒|⟶")
_ARROW_RULE = 3  # the index of the arrow's pattern in `_CORRECTIONS`


def correction_of(text: str) -> str | None:
    """The old value an explicit correction in `text` sets aside (module docstring,
    "corrected": "the registry keeps the last 25 image tags, not 10." → "10"; "保留25个，
    而不是10个" → "10个"), normalised (NFKC, case-folded, backticks and quotes stripped); None
    when `text` corrects nothing."""
    norm = _norm(text)
    flow = len(_ARROW.findall(norm)) > 1  # "a → b → c": a flow, not a correction
    for pattern in _CORRECTIONS:
        if flow and pattern is _CORRECTIONS[_ARROW_RULE]:
            continue
        match = pattern.search(norm)
        if match is not None:
            old = match.group("old").strip(" `'\"“”「」")
            if old and any(ch.isalnum() for ch in old):
                return old
    return None


def _holds(text: str, value: str) -> bool:
    """True when normalised `text` states normalised `value`: the same numbers (a value with
    a number is that number, whatever unit word follows: "10" in "10개", "10 tags"), else the
    same words (whole words in a spaced script)."""
    numbers = _NUMBER.findall(value)
    if numbers:
        return set(numbers) <= set(_NUMBER.findall(text))
    if value.isascii():
        return re.search(r"(?<![\w])" + re.escape(value) + r"(?![\w])", text) is not None
    return value in text


def corrects(new: str, old: str) -> bool:
    """True when fact text `new` is an explicit correction (`correction_of`) of fact text
    `old`: `old` states the value `new` sets aside, and the two are about the same thing
    (`CORRECTION_OVERLAP` of the older fact's shingles, numbers and the old value
    abstracted, are in the correction's, and `CORRECTION_SCOPE` of the correction's in the
    fact's)."""
    found = correction_of(new)
    if found is None:
        return False
    old_norm = _norm(old)
    value = next((v for v in _readings(found) if _holds(old_norm, v)), None)
    if value is None:
        return False
    earlier = correction_of(old)
    if earlier is not None and _holds(earlier, value):  # the same correction said again
        return False
    a = shingles(_NUMBER.sub("#", _norm(without_correction_label(new)).replace(value, "#")))
    b = shingles(_NUMBER.sub("#", old_norm.replace(value, "#")))
    if not a or not b:
        return False
    common = len(a & b)
    return common >= CORRECTION_OVERLAP * len(b) and common >= CORRECTION_SCOPE * len(a)


_ARTICLES = frozenset({"a", "an", "the", "its", "their", "our", "my", "your"})


def _readings(value: str) -> list[str]:
    """The old values a correction's set-aside words may be, shortest first: the words after
    "instead of" run on into the sentence ("instead of cp to copy the backups" → "cp", "cp
    to", …); an article alone is no value."""
    words = value.split()
    out = [" ".join(words[:k]) for k in range(1, len(words) + 1)]
    return [v for v in out if v not in _ARTICLES]


def supersedes(new: str, old: str, subjects: frozenset[str] = frozenset()) -> str | None:
    """Why fact text `new` supersedes fact text `old` ("corrected", "numbers revised",
    "negation flipped", "same label, new value", "same subject, new state"), or None when it does not
    (module docstring). `subjects` are the names of the topic the facts are in
    (`subject_names`): a label equal to one names the subject, not a slot."""
    p_new, p_old = _profile(new), _profile(old)
    if p_new.line == p_old.line:
        return None
    if p_new.correction is not None and corrects(new, old):
        return "corrected"
    revised = p_new.numbers and p_old.numbers and p_new.numbers != p_old.numbers
    if revised and _at_least(p_new.skeleton, p_old.skeleton, SKELETON_SIMILARITY):
        return "numbers revised"
    if p_new.negated != p_old.negated and _at_least(p_new.unnegated, p_old.unnegated, NEGATION_SIMILARITY):
        return "negation flipped"
    label_new, label_old = p_new.label, p_old.label
    if label_new and label_old and label_new[0] == label_old[0] and _comparable(label_new[0]):
        value_new, value_old = normalise(label_new[1]), normalise(label_old[1])
        extends = value_old in value_new or value_new in value_old  # more detail, not another value
        if extends or jaccard(value_new, value_old) >= 0.5:
            return None
        if _own_subjects_differ(label_new[1], label_old[1]):
            return None
        if not names_subject(label_new[0], subjects):
            return "same label, new value" if _same_slot(label_new[1], label_old[1]) else None
        if states(label_new[1]) and states(label_old[1]):  # the subject's state, both
            return "same subject, new state"
    return None


def find_superseded(
    new: str, facts: list[Fact], subjects: frozenset[str] = frozenset()
) -> tuple[Fact, str] | None:
    """The newest of `facts` (raw human lines excepted) that `new` supersedes, with why.

    A topic by subject holds thousands of facts, and each new one is compared with all of
    them: a fact is given to `supersedes` only when one of its three rules can hold (the
    same label; or other numbers, or the other polarity, with shingle-set sizes that allow
    the similarity bar) — a necessary condition, so the verdict is that of `supersedes`
    on every fact."""
    p_new = _profile(new)
    numbers, negated, label = p_new.numbers, p_new.negated, p_new.label_key
    n_skeleton, n_unnegated = len(p_new.skeleton), len(p_new.unnegated)
    for fact in reversed(facts):
        if fact.raw is not None:
            continue
        old = _profile(fact.text)
        if not (
            p_new.correction is not None  # a correction: any fact may hold its old value
            or (label is not None and old.label_key == label)
            or (
                numbers
                and old.numbers
                and old.numbers != numbers
                and _sizes_allow(n_skeleton, len(old.skeleton), SKELETON_SIMILARITY)
            )
            or (old.negated != negated and _sizes_allow(n_unnegated, len(old.unnegated), NEGATION_SIMILARITY))
        ):
            continue
        why = supersedes(new, fact.text, subjects)
        if why is not None:
            return fact, why
    return None


def _sizes_allow(a: int, b: int, bar: float) -> bool:
    """False when sets of sizes `a` and `b` cannot reach a Jaccard index of `bar`
    (`_at_least`'s size bound; two empty sets do)."""
    return a >= bar * b and b >= bar * a


class Candidates:
    """The facts of one list, indexed by what `supersedes` compares, so that finding the
    fact a new one supersedes does not read every fact of a topic of thousands: by label,
    by skeleton size (facts stating numbers) and by polarity and size without negation.
    `find(new)` gives what `find_superseded(new, facts)` gives on the list in its order,
    provided the list's changes are told: `add` (appended, or at a position: `seq`),
    `remove` (returns the fact's position key, for the fact that takes its place)."""

    def __init__(self, facts: list[Fact] | None = None, subjects: frozenset[str] = frozenset()) -> None:
        self.subjects = subjects  # the topic's names (`subject_names`)
        self._seq: dict[int, tuple[int, Fact]] = {}  # id(fact) → (position key, fact)
        self._label: dict[str, set[int]] = {}
        self._skeleton: dict[int, set[int]] = {}  # skeleton size → facts stating numbers
        self._unnegated: dict[tuple[bool, int], set[int]] = {}  # (negated, size) → facts
        self._next = 0
        for fact in facts or ():
            self.add(fact)

    def _keys(self, fact: Fact) -> list[tuple[dict, object]]:
        p = _profile(fact.text)
        keys: list[tuple[dict, object]] = [(self._unnegated, (p.negated, len(p.unnegated)))]
        if p.label_key is not None:
            keys.append((self._label, p.label_key))
        if p.numbers:
            keys.append((self._skeleton, len(p.skeleton)))
        return keys

    def add(self, fact: Fact, seq: int | None = None) -> None:
        """Index `fact`: after every fact (`seq` None) or at position key `seq`."""
        if seq is None:
            seq = self._next
        self._next = max(self._next, seq + 1)
        self._seq[id(fact)] = (seq, fact)
        for table, key in self._keys(fact):
            table.setdefault(key, set()).add(id(fact))

    def remove(self, fact: Fact) -> int:
        """Unindex `fact` (its text as indexed); returns its position key."""
        seq, _ = self._seq.pop(id(fact))
        for table, key in self._keys(fact):
            table[key].discard(id(fact))
        return seq

    def find(self, new: str) -> tuple[Fact, str] | None:
        """The newest fact (raw human lines excepted) that `new` supersedes, with why."""
        p = _profile(new)
        found: set[int] = set()
        if p.correction is not None:  # rare: every fact may hold the value it sets aside
            found |= {key for key in self._seq}
        if p.label_key is not None:
            found |= self._label.get(p.label_key, set())
        if p.numbers:
            n = len(p.skeleton)
            for size, ids in self._skeleton.items():
                if _sizes_allow(n, size, SKELETON_SIMILARITY):
                    found |= ids
        n = len(p.unnegated)
        for (negated, size), ids in self._unnegated.items():
            if negated != p.negated and _sizes_allow(n, size, NEGATION_SIMILARITY):
                found |= ids
        for _, fact in sorted((self._seq[i] for i in found), reverse=True):  # newest first
            if fact.raw is None:
                why = supersedes(new, fact.text, self.subjects)
                if why is not None:
                    return fact, why
        return None


SUPERSEDED_TAIL = " — superseded {day} by: {by}"


@dataclass
class Superseded:
    """A fact moved out of a topic's `facts` block: the old fact (text, sources, seen,
    dates kept), the day it was superseded and the text that replaced it."""

    fact: Fact
    day: date
    by: str

    def as_fact(self) -> Fact:
        """The line written into the `superseded` block (facts format, so `audit` and the
        loss guard count and resolve it like any fact)."""
        tail = SUPERSEDED_TAIL.format(day=self.day.isoformat(), by=clip(one_line(self.by), BY_MAX_CHARS))
        return Fact(
            text=self.fact.text + tail,
            sources=list(self.fact.sources),
            seen=self.fact.seen,
            first=self.fact.first,
            last=self.fact.last,
        )
