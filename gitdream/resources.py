"""Locate the shipped `hooks/` and `templates/` folders.

In a wheel they are force-included as `gitdream/_data/hooks` and `gitdream/_data/templates`
(pyproject.toml); in a source checkout or editable install they are the repository's
top-level folders. `tests/test_packaging.py` proves the wheel path.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path


@cache
def data_root() -> Path:
    """The folder holding `hooks/` and `templates/`."""
    package = Path(__file__).resolve().parent
    shipped = package / "_data"
    if (shipped / "templates").is_dir():
        return shipped
    return package.parent


def hooks_dir() -> Path:
    """The shipped hook scripts."""
    return data_root() / "hooks"


def templates_dir() -> Path:
    """The shipped templates (agent skeleton, prompts, schedules, demo, CI)."""
    return data_root() / "templates"


def read_template(relative: str) -> str:
    """Read `templates/<relative>` as UTF-8 text.

    Raises FileNotFoundError (with the full path) when the installation lacks it.
    """
    return (templates_dir() / relative).read_text(encoding="utf-8")
