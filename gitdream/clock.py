"""The one source of "now".

All time comes from `now()`, so freezegun freezes all of gitdream. libgit2 stamps signatures
from its own C clock, which freezegun cannot reach, so commits get explicit times from
`git_time()` (pygit2's `Signature` without
`time` calls libgit2's `git_signature_now`).
"""

from __future__ import annotations

from datetime import UTC, datetime


def now() -> datetime:
    """Return the current time as an aware UTC datetime."""
    return datetime.now(UTC)


def epoch() -> float:
    """Return the current time in seconds since the Unix epoch (float)."""
    return now().timestamp()


def git_time(dt: datetime | None = None) -> tuple[int, int]:
    """Return `(epoch_seconds, offset_minutes)` for a git signature.

    The offset is the local time zone's at `dt` (git's own convention for author and
    committer dates); `dt` defaults to `now()`.
    """
    dt = dt or now()
    local = dt.astimezone()
    offset = local.utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset is not None else 0
    return int(dt.timestamp()), minutes


def iso(dt: datetime) -> str:
    """Format an aware datetime as ISO 8601 UTC with a `Z` suffix, to the second."""
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(text: str) -> datetime:
    """Parse what `iso()` writes (and any ISO 8601 form `datetime.fromisoformat` reads).

    Raises ValueError for text that is not ISO 8601. Naive values are taken as UTC.
    """
    dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt
