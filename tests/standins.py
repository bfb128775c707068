"""Small stand-ins for functions another branch provides, passed to the code under test
explicitly (no patching): `gitdream.dream.slugs.slugify` and `gitdream.dream.dates.absolutize`.

They do just enough for these tests; the real ones (branch `readers`) replace them in the
pipeline through the engine's default imports.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date, timedelta


def simple_slugify(name: str, taken: set[str]) -> str:
    """ASCII slug of `name` ("topic" when nothing is left), unique in `taken` (case-folded)."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    base = re.sub(r"[^a-z0-9]+", "-", ascii_name.lower()).strip("-")[:60].strip("-") or "topic"
    folded = {t.casefold() for t in taken}
    slug, number = base, 2
    while slug.casefold() in folded:
        slug = f"{base}-{number}"
        number += 1
    return slug


_RELATIVE = {"today": 0, "yesterday": -1, "tomorrow": 1, "今天": 0, "昨天": -1, "明天": 1}


def simple_absolutize(text: str, on: date) -> str:
    """Rewrite today/yesterday/tomorrow (and 今天/昨天/明天) as ISO dates relative to `on`."""

    def swap(match: re.Match[str]) -> str:
        return (on + timedelta(days=_RELATIVE[match.group(0).lower()])).isoformat()

    return re.sub(r"(?i)\b(?:today|yesterday|tomorrow)\b|今天|昨天|明天", swap, text)
