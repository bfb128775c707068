"""Agent ids must name git refs: the ground floor checks that without pygit2 (issue 12),
and the check agrees with libgit2's own."""

from __future__ import annotations

import pygit2
import pytest

from gitdream.agents import valid_ref_name

NAMES = [
    *("ops", "a.b", "-x", "x-", "a@b", "é", "日本", "x.locks", "a.lock.b", "a{b}", "a]b", "a!b"),
    *("a'b", 'a"b', "a#b", "a%b", "a&b", "a;b", "a<b", "a>b", "a|b", "a=b", "a,b", "a+b"),
    *("a b", "a~b", "a^b", "a:b", "a?b", "a*b", "a[b", "a\\b", "a\x01b", "a\x7fb", "a\tb"),
    *(".ops", "ops.", "ops.lock", ".lock", "a..b", "a@{b", "@{", "@", "a//b", "ops/x", ""),
    *("\u200b", "a\u0085b", "lock", "a@", "{", "}"),
]


@pytest.mark.parametrize("name", NAMES)
def test_valid_ref_name_agrees_with_libgit2(name: str) -> None:
    ref = f"refs/gitdream/watermark/{name}"
    assert valid_ref_name(ref) == pygit2.reference_is_valid_name(ref)
