"""Near-duplicate detection: character n-gram Jaccard similarity with a prefix-filter index.

The measure (used by the offline engine against `offline.similarity`):

1. Normalise: Unicode NFKC, case-fold, and turn every run of characters that are not letters,
   digits or combining marks into one space (so punctuation, Markdown emphasis, full-width vs
   half-width forms and letter case do not matter).
2. Split the normalised text into runs of *no-space scripts* (Han, Hiragana, Katakana, Hangul,
   Thai, Lao, Myanmar, Khmer) and runs of everything else.
3. Shingles: character **bigrams** inside no-space runs (a one-character run is its own
   shingle) and character **trigrams** of the other runs, padded with one space on each side.
   So Chinese or Japanese text without spaces is compared as finely as English.
4. Similarity = Jaccard |A ∩ B| / |A ∪ B| of the two shingle sets, from 0 to 1. Texts that are
   equal after normalisation score 1. A text with no letter or digit at all (say "→ ✓") is
   one shingle: its case-folded, space-collapsed self.

`ShingleIndex` finds the most similar stored text at or above a threshold `t` without
comparing against every stored text (AllPairs prefix filtering): shingles are ordered globally
from rare to common (document frequencies counted up front by `Vocabulary`); a stored text is
indexed by its first |B| - ceil(t·|B|) + 1 shingles, a query looks up its first
|A| - ceil(t·|A|) + 1; any pair with Jaccard >= t shares at least one of those, so no match is
missed. Candidates are then checked exactly (with the length bound t·|A| <= |B| <= |A|/t).
Ties go to the text stored first, so results do not depend on hashing or dict order.
"""

from __future__ import annotations

import math
import re
import unicodedata
from array import array
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

_NO_SPACE = (
    "\u0e00-\u0eff"  # Thai, Lao
    "\u1000-\u109f"  # Myanmar
    "\u1100-\u11ff"  # Hangul Jamo
    "\u1780-\u17ff"  # Khmer
    "\u2e80-\u2fdf"  # CJK radicals
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3100-\u312f\u3130-\u318f\u31a0-\u31ff"  # Bopomofo, Hangul compat, Katakana ext
    "\u3400-\u4dbf\u4e00-\u9fff"  # CJK ideographs
    "\ua960-\ua97f\uac00-\ud7af"  # Hangul
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\U00020000-\U0003134f"  # CJK extensions B-H
)
# Word characters plus the combining marks of common scripts (Python's \w leaves out Mn/Mc).
_NOT_WORD = re.compile(
    r"[^\w\u0300-\u036f\u0900-\u0dff\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3099\u309a]+|_+"
)
_RUNS = re.compile(rf"([{_NO_SPACE}]+)|([^{_NO_SPACE}]+)")


def normalise(text: str) -> str:
    """NFKC, case-folded, non-word runs collapsed to one space, stripped."""
    return _NOT_WORD.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def shingles(text: str) -> set[str]:
    """The shingle set of `text` (see module docstring)."""
    norm = normalise(text)
    out: set[str] = set()
    for match in _RUNS.finditer(norm):
        dense, other = match.groups()
        if dense:
            if len(dense) == 1:
                out.add(dense)
            else:
                out.update(dense[i : i + 2] for i in range(len(dense) - 1))
        else:
            run = other.strip()
            if run:
                padded = f" {run} "
                out.update(padded[i : i + 3] for i in range(len(padded) - 2))
    if not out:
        fallback = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
        if fallback:
            out.add(fallback)
    return out


def jaccard(a: str, b: str) -> float:
    """Similarity of two texts (see module docstring), from 0 to 1."""
    sa, sb = shingles(a), shingles(b)
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


class Vocabulary:
    """Document frequencies of shingles, turned into a global rare-first order.

    Call `count(text)` for every text that will be stored or queried (it returns the text's
    shingle codes, 4 bytes each), then `freeze()`; afterwards `ranks(codes)` gives the
    shingles as sorted integer ranks, rarest first (ties in first-seen order, so the order
    does not depend on hashing). `ids(text)` shingles a text anew; shingles first met after
    `freeze()` get ranks below all counted ones (they are rarer than anything counted),
    consistently for the same shingle.
    """

    def __init__(self) -> None:
        self._code: dict[str, int] = {}
        self._df: list[int] = []
        self._rank: list[int] | None = None

    def count(self, text: str) -> array:
        """Count the shingles of `text`; returns their codes (pass them to `ranks`)."""
        if self._rank is not None:
            raise RuntimeError("vocabulary is frozen")
        code_of, df = self._code, self._df
        codes = array("i")
        for shingle in shingles(text):
            code = code_of.get(shingle)
            if code is None:
                code = code_of[shingle] = len(df)
                df.append(0)
            df[code] += 1
            codes.append(code)
        return codes

    def freeze(self) -> None:
        df = self._df
        order = sorted(range(len(df)), key=df.__getitem__)  # stable: ties keep first-seen order
        rank = [0] * len(df)
        for position, code in enumerate(order):
            rank[code] = position
        self._rank = rank
        self._df = []

    def ranks(self, codes: Iterable[int]) -> list[int]:
        """Sorted ranks of shingle codes returned by `count`."""
        if self._rank is None:
            self.freeze()
        rank = self._rank
        assert rank is not None
        return sorted([rank[code] for code in codes])

    def ids(self, text: str) -> list[int]:
        """Sorted ranks of the shingles of `text`."""
        if self._rank is None:
            self.freeze()
        rank = self._rank
        assert rank is not None
        out = []
        for shingle in shingles(text):
            code = self._code.get(shingle)
            if code is None:
                code = self._code[shingle] = len(rank)
                rank.append(-(code + 1))
            out.append(rank[code])
        out.sort()
        return out


K = TypeVar("K")


@dataclass
class Match(Generic[K]):
    """A stored key and its similarity to the query."""

    key: K
    score: float


@dataclass
class ShingleIndex(Generic[K]):
    """Stored texts (by key) searchable for the most similar one with Jaccard >= `threshold`.

    Filters, all exact (no match is ever missed), before the Jaccard of a candidate is
    computed:

    - length: t·|A| <= |B| <= |A|/t;
    - prefix (AllPairs): Jaccard >= t needs |A ∩ B| >= o = t/(1+t)·(|A|+|B|) >= t·|X| for
      X = A and B, so the rarest common shingle lies within the first |X| - ceil(t·|X|) + 1
      shingles of each: stored texts are indexed by that prefix, queries probe theirs;
    - overlap bound: with c shingles common to both prefixes, |A ∩ B| <= c + (the number of
      shingles after whichever prefix ends at the lower rank); below o, no check.

    Identical shingle sets (repeated lines) are found first, by a dictionary lookup.

    Memory per stored text: a tuple of its shingle ranks (the int objects are shared with
    the vocabulary), one posting per prefix shingle, and four integers.
    """

    vocabulary: Vocabulary
    threshold: float
    _keys: list[K] = field(default_factory=list)
    _items: list[tuple[int, ...]] = field(default_factory=list)
    _sizes: list[int] = field(default_factory=list)
    _tails: list[int] = field(default_factory=list)
    _lasts: list[int] = field(default_factory=list)
    _postings: dict[int, list[int]] = field(default_factory=dict)
    _exact: dict[tuple[int, ...], int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self._keys)

    def _prefix(self, size: int) -> int:
        return max(1, min(size, size - math.ceil(self.threshold * size - 1e-9) + 1))

    def add(self, key: K, text: str, ids: list[int] | None = None) -> None:
        """Store `text` under `key` (`ids`: its `vocabulary.ids(text)`, when already known)."""
        ids = self.vocabulary.ids(text) if ids is None else ids
        position = len(self._keys)
        prefix = self._prefix(len(ids)) if ids else 0
        self._keys.append(key)
        item = tuple(ids)
        self._items.append(item)
        self._exact.setdefault(item, position)
        self._sizes.append(len(ids))
        self._tails.append(len(ids) - prefix)
        self._lasts.append(ids[prefix - 1] if ids else 0)
        for shingle in ids[:prefix]:
            self._postings.setdefault(shingle, []).append(position)

    def best(self, text: str, ids: list[int] | None = None) -> Match[K] | None:
        """The stored key most similar to `text` (score >= threshold), or None; ties go to the
        key stored first. `ids`: `vocabulary.ids(text)`, when already known."""
        if not self._keys:
            return None
        ids = self.vocabulary.ids(text) if ids is None else ids
        if self.threshold <= 0:
            return Match(self._keys[0], _score(set(ids), self._items[0]))
        size = len(ids)
        if not size:
            return None
        same = self._exact.get(tuple(ids))
        if same is not None:  # an identical shingle set: score 1, and the first stored wins
            return Match(self._keys[same], 1.0)
        prefix = self._prefix(size)
        postings = self._postings
        hits: list[int] = []
        for shingle in ids[:prefix]:
            found = postings.get(shingle)
            if found:
                hits += found
        if not hits:
            return None
        counts = Counter(hits)
        t = self.threshold
        need = t / (1 + t)
        low, high = t * size - 1e-9, size / t + 1e-9
        tail, last = size - prefix, ids[prefix - 1]
        sizes, tails, lasts, items = self._sizes, self._tails, self._lasts, self._items
        query: set[int] | None = None
        best_position, best_score = -1, -1.0
        for position, common in counts.items():
            length = sizes[position]
            if length < low or length > high:
                continue
            if (
                common + (tail if last <= lasts[position] else tails[position])
                < need * (size + length) - 1e-9
            ):
                continue
            if query is None:
                query = set(ids)
            inter = len(query.intersection(items[position]))
            score = inter / (size + length - inter)
            if score >= t - 1e-12 and (
                score > best_score or (score == best_score and position < best_position)
            ):
                best_position, best_score = position, score
        if best_position < 0:
            return None
        return Match(self._keys[best_position], best_score)

    def extend(self, items: Iterable[tuple[K, str]]) -> None:
        for key, text in items:
            self.add(key, text)


def _score(query: set[int], other: tuple[int, ...]) -> float:
    inter = len(query.intersection(other))
    union = len(query) + len(other) - inter
    return inter / union if union else 1.0
