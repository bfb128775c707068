"""Optional extras: the anthropic SDK is not installed with gitdream unless asked for.

`pip install gitdream` brings what the offline engine and every command need;
`pip install 'gitdream[anthropic]'` (from a checkout: `pip install '.[anthropic]'`) adds the
anthropic SDK for `--engine anthropic`; the missing-SDK hint names the command for how
gitdream was installed (`install_extra_command`). This
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

import json
import re
import shlex
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

from gitdream.errors import EngineError

ANTHROPIC_DIST = "anthropic"
ANTHROPIC_FLOOR = (2, 5)
"""Lowest anthropic SDK release (major, minor) the engine supports."""
ANTHROPIC_EXTRA = "gitdream[anthropic]"
GITDREAM_DIST = "gitdream"
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


def installed_from(
    dist: str = GITDREAM_DIST, path: list[str] | None = None
) -> tuple[Path | None, bool] | None:
    """Where distribution `dist` was installed from, read from its PEP 610
    `direct_url.json`: `(folder, editable)` for a checkout (`pip install .` or `pip
    install -e .`), `(None, False)` for a package from an index (no such file, or not a
    folder), and None when `dist` is not installed at all (gitdream runs from a source
    tree on `PYTHONPATH`). `path`: the folders to look in (default `sys.path`). Reads
    metadata only."""
    if path is None:
        found = next(iter(metadata.distributions(name=dist)), None)  # on sys.path
    else:
        found = next(iter(metadata.distributions(name=dist, path=path)), None)
    if found is None:
        return None
    try:
        record = json.loads(found.read_text("direct_url.json") or "null")
    except ValueError:
        record = None
    if not isinstance(record, dict) or not isinstance(record.get("dir_info"), dict):
        return None, False
    url = urlparse(str(record.get("url", "")))
    if url.scheme != "file":
        return None, False
    return Path(unquote(url.path)), record["dir_info"].get("editable") is True


def install_extra_command(
    extra: str = "anthropic", dist: str = GITDREAM_DIST, path: list[str] | None = None
) -> str:
    """The pip command that adds gitdream's optional `extra` the way gitdream was
    installed (`installed_from`): `pip install -e '/checkout[anthropic]'` for an editable
    install, `pip install '/checkout[anthropic]'` for one from a checkout, `pip install
    'gitdream[anthropic]'` for a package, and the SDK alone (`pip install
    'anthropic>=2.5'`) when no distribution is installed. Asking an index for `gitdream`
    when it came from a checkout would install another package, or someone else's."""
    source = installed_from(dist, path)
    if source is None:
        return f"pip install {shlex.quote(f'anthropic>={_floor_text()}')}"
    folder, editable = source
    if folder is None:
        return f"pip install {shlex.quote(f'{dist}[{extra}]')}"
    return f"pip install {'-e ' if editable else ''}{shlex.quote(f'{folder}[{extra}]')}"


def sdk_version_problem(version: str | None) -> EngineError | None:
    """`anthropic_problem` for an installed SDK `version` string (None: not installed);
    the hint is `install_extra_command()`, or the upgrade of the SDK itself."""
    install = f"{install_extra_command()} (in the environment gitdream runs in)"
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
            hint=f"pip install --upgrade {shlex.quote(f'anthropic>={_floor_text()}')} "
            "(in the environment gitdream runs in)",
        )
    return None
