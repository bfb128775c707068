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

    Call `count(text)` for every text that will be stored or queried, then `freeze()`;
    afterwards `ids(text)` gives the text's shingles as integer ranks (rarest first).
    Shingles first met after `freeze()` get new ranks below all counted ones (they are rarer
    than anything counted), consistently for the same shingle.
    """

    def __init__(self) -> None:
        self._df: Counter[str] = Counter()
        self._rank: dict[str, int] | None = None

    def count(self, text: str) -> None:
        if self._rank is not None:
            raise RuntimeError("vocabulary is frozen")
        self._df.update(shingles(text))

    def freeze(self) -> None:
        ordered = sorted(self._df.items(), key=lambda item: (item[1], item[0]))
        self._rank = {shingle: rank for rank, (shingle, _) in enumerate(ordered)}
        self._df = Counter()

    def ids(self, text: str) -> list[int]:
        """Sorted ranks of the shingles of `text`."""
        if self._rank is None:
            self.freeze()
        rank = self._rank
        assert rank is not None
        out = []
        for shingle in shingles(text):
            value = rank.get(shingle)
            if value is None:
                value = -(len(rank) + 1)
                rank[shingle] = value
            out.append(value)
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

    Memory per stored text: its shingle ranks as a 4-byte array plus its prefix postings.
    """

    vocabulary: Vocabulary
    threshold: float
    _keys: list[K] = field(default_factory=list)
    _items: list[array] = field(default_factory=list)
    _postings: dict[int, list[int]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self._keys)

    def _prefix(self, size: int) -> int:
        return size - math.ceil(self.threshold * size - 1e-9) + 1

    def add(self, key: K, text: str) -> None:
        ids = self.vocabulary.ids(text)
        position = len(self._keys)
        self._keys.append(key)
        self._items.append(array("i", ids))
        for shingle in ids[: self._prefix(len(ids))]:
            self._postings.setdefault(shingle, []).append(position)

    def best(self, text: str) -> Match[K] | None:
        """The stored key most similar to `text` (score >= threshold), or None."""
        if not self._keys:
            return None
        ids = self.vocabulary.ids(text)
        if self.threshold <= 0:
            return Match(self._keys[0], _score(set(ids), self._items[0]))
        size = len(ids)
        candidates: set[int] = set()
        for shingle in ids[: self._prefix(size)]:
            hits = self._postings.get(shingle)
            if hits:
                candidates.update(hits)
        if not candidates:
            return None
        query = set(ids)
        low, high = self.threshold * size - 1e-9, size / self.threshold + 1e-9
        best_position, best_score = -1, -1.0
        for position in candidates:
            other = self._items[position]
            if not low <= len(other) <= high:
                continue
            score = _score(query, other)
            if score >= self.threshold - 1e-12 and (
                score > best_score or (score == best_score and position < best_position)
            ):
                best_position, best_score = position, score
        if best_position < 0:
            return None
        return Match(self._keys[best_position], best_score)

    def extend(self, items: Iterable[tuple[K, str]]) -> None:
        for key, text in items:
            self.add(key, text)


def _score(query: set[int], other: array) -> float:
    inter = len(query.intersection(other))
    union = len(query) + len(other) - inter
    return inter / union if union else 1.0
