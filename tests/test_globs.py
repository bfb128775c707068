"""Glob patterns (gitdream.globs): pathlib's syntax, and which engine matches them."""

from __future__ import annotations

import re

import pytest

from gitdream.globs import collapse, compile_glob, glob_match, is_simple


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("agents/*", "agents/kit", True),
        ("agents/*", "agents/kit/memory", False),
        ("memory/logs/**/*.md", "memory/logs/2026/02/2026-02-10.md", True),
        ("memory/logs/**/*.md", "memory/logs/today.md", True),  # ** is also no component
        ("memory/logs/**/*.md", "memory/today.md", False),
        ("sessions/**/*.jsonl", "sessions/a/b/c.jsonl", True),
        ("notes/day-?.md", "notes/day-1.md", True),
        ("notes/[!x]*.md", "notes/x1.md", False),
        ("*a*a*a*b", "aaab", True),  # several stars in a component: RE2
        ("*a*a*a*b", "a" * 3000, False),
    ],
)
def test_globs_match_as_pathlib_does(pattern: str, path: str, matches: bool) -> None:
    assert glob_match(pattern, path) is matches


def test_a_glob_that_cannot_backtrack_is_matched_with_re_and_others_with_re2() -> None:
    """The built-in globs (one `*` a component, one `**`) need no RE2, so the idle path
    never loads it; a glob whose stars compete (`*a*b`, two `**` runs) is RE2's."""
    for simple in ("agents/*", "memory/logs/**/*.md", "sessions/**/*.jsonl", "a/**/**/b"):
        assert is_simple(collapse(simple)), simple
        assert isinstance(compile_glob(simple), re.Pattern), simple
    for linear in ("*a*b", "**/x/**/*.md", "a/*x*/b"):
        assert not is_simple(collapse(linear)), linear
        assert not isinstance(compile_glob(linear), re.Pattern), linear
