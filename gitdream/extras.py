"""Optional extras: the anthropic SDK is not installed with gitdream unless asked for.

`pip install gitdream` brings what the offline engine and every command need;
`pip install 'gitdream[anthropic]'` adds the anthropic SDK for `--engine anthropic`. This
module says whether the SDK is there and new enough **without importing it** (it reads the
installed distribution's metadata), so `status` and the engine's up-front check stay on
the idle path's budget (DESIGN §2 principle 5).

The floor, `ANTHROPIC_FLOOR`, is the lowest SDK release the engine's tests pass with; it is
the one declared in `pyproject.toml` (a test keeps the two equal) and `.ci/run` runs the
engine's tests against exactly that release. Older releases install but fail at run
time: 2.4 lacks `APIStatusError.api_message` (every API error crashed with exit 3), 0.60
lacks the client middleware gitdream uses to cap retry waits.
"""

from __future__ import annotations

import re
from importlib import metadata

from gitdream.errors import EngineError

ANTHROPIC_DIST = "anthropic"
ANTHROPIC_FLOOR = (2, 5)
"""Lowest anthropic SDK release (major, minor) the engine supports."""
ANTHROPIC_EXTRA = "gitdream[anthropic]"
_VERSION = re.compile(r"^(\d+)\.(\d+)")


def _floor_text() -> str:
    return ".".join(str(part) for part in ANTHROPIC_FLOOR)


def installed_version(dist: str = ANTHROPIC_DIST) -> str | None:
    """The installed version string of distribution `dist`, or None when it is not
    installed. Reads metadata only; imports nothing."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def anthropic_problem() -> EngineError | None:
    """Why the anthropic SDK cannot be used here — not installed, or older than
    `ANTHROPIC_FLOOR` — as an EngineError whose hint is the pip command; None when it can.
    Does not import the SDK."""
    return sdk_version_problem(installed_version())


def sdk_version_problem(version: str | None) -> EngineError | None:
    """`anthropic_problem` for an installed SDK `version` string (None: not installed)."""
    install = f"pip install '{ANTHROPIC_EXTRA}' (in the environment gitdream runs in)"
    if version is None:
        return EngineError(
            "the anthropic engine needs the anthropic SDK, which is not installed "
            "(it is an optional extra of gitdream)",
            hint=f"{install}, or use --engine offline",
        )
    match = _VERSION.match(version)
    found = (int(match[1]), int(match[2])) if match else (0, 0)
    if found < ANTHROPIC_FLOOR:
        return EngineError(
            f"the installed anthropic SDK is {version}; the anthropic engine needs {_floor_text()} or newer",
            hint=f"pip install --upgrade '{ANTHROPIC_EXTRA}'",
        )
    return None
