"""Run ids: short, unique, sortable.

A run id is 12 characters of Crockford base32 (lower case): 9 for the run's start time in
milliseconds since the epoch (good until the year 3084) and 3 random (32 768 values per
millisecond). Ids sort by start time as plain strings, and like git object names they can
be given by any unique prefix.
"""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime

from gitdream import clock

ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32: no i, l, o, u
TIME_CHARS = 9
RANDOM_CHARS = 3
LENGTH = TIME_CHARS + RANDOM_CHARS


def _encode(value: int, width: int) -> str:
    chars = []
    for _ in range(width):
        value, digit = divmod(value, 32)
        chars.append(ALPHABET[digit])
    return "".join(reversed(chars))


def new_run_id() -> str:
    """Return a new run id for the current time (see the module docstring)."""
    millis = int(clock.epoch() * 1000)
    return _encode(millis, TIME_CHARS) + _encode(secrets.randbelow(32**RANDOM_CHARS), RANDOM_CHARS)


def is_run_id_prefix(text: str) -> bool:
    """True when `text` could be a run id or a prefix of one (1 to 12 base32 characters)."""
    return 0 < len(text) <= LENGTH and all(c in ALPHABET for c in text)


_LAST = re.compile(r"last(?:~[0-9]+)?")


def is_run_ref(text: str) -> bool:
    """True when `text` has the form of a run reference (`gitdream.dream.runs.resolve`): a
    run id or a prefix of one, `last` or `last~N`, case-insensitive, surrounding blanks
    ignored. Says nothing of whether it names a run."""
    text = text.strip().lower()
    return bool(_LAST.fullmatch(text)) or is_run_id_prefix(text)


RUN_REF_FORMS = (
    "a run id as `gitdream log` prints it (12 characters of 0-9 and a-z, no i, l, o, u) "
    "or any unique prefix of one, `last` (the newest run that made a commit) or `last~N` "
    "(the N-th such run before it)"
)
"""What a run reference may be, in words, for messages and help."""


def run_time(run_id: str) -> datetime | None:
    """The start time encoded in a run id (UTC, to the millisecond), or None when
    `run_id` is not a whole run id. Used when a run has no receipt, only trailers."""
    if len(run_id) != LENGTH or not is_run_id_prefix(run_id):
        return None
    millis = 0
    for char in run_id[:TIME_CHARS]:
        millis = millis * 32 + ALPHABET.index(char)
    try:
        return datetime.fromtimestamp(millis / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return None
