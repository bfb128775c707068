"""Emphasis that is only layout, told from code and names (gitdream.text.markup), and the
clean-up of a fact's text that rests on it (gitdream.engines.offline.strip_layout)."""

from __future__ import annotations

import pytest

from gitdream.engines.offline import clean_name, strip_layout
from gitdream.text.markup import unemphasize


@pytest.mark.parametrize(
    "text",
    [
        "Keeping necessary __init__.py files for test discovery",  # a dunder file name
        "making `__init__.py` optional",  # inside a code span
        'run it as a module: if __name__ == "__main__": main()',
        "snake__case names and a*b*c stay",  # inside a word
        "def f(*args, **kwargs) takes anything",
        "`**kwargs` and `*args`",
        "the _private_ helper and my_module_name.py",  # one word between underscores
        "2*3*4 is 24",
        "see https://example.test/__init__.py for it",  # a URL
        "```\n**not bold** in a fence\n```",
    ],
)
def test_code_and_names_are_never_taken_for_emphasis(text: str) -> None:
    assert unemphasize(text, italic=True) == text


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("**Moltbook:** comments need a captcha", "Moltbook: comments need a captcha"),
        ("**NEVER** retry a post", "NEVER retry a post"),
        ("__very important__ rule", "very important rule"),
        ("**`scripts/pulse.py`** — a health check", "`scripts/pulse.py` — a health check"),
        ("**kwargs in prose and **this** stressed", "**kwargs in prose and this stressed"),
        ("**部署：** 先备份", "部署： 先备份"),
        ("**배포:** 먼저 백업", "배포: 먼저 백업"),
    ],
)
def test_bold_markers_are_dropped(text: str, plain: str) -> None:
    assert unemphasize(text) == plain


def test_italic_is_dropped_only_when_asked() -> None:
    assert unemphasize("*really* careful") == "*really* careful"
    assert unemphasize("*really* careful", italic=True) == "really careful"
    assert unemphasize("_two words_ here", italic=True) == "two words here"


def test_a_fact_keeps_its_code_identifiers() -> None:
    """Regression test: bold-marker removal read `__init__` as bold "init", so a fact said
    "Keeping necessary init.py files" and "making `init.py` optional"."""
    assert strip_layout("Keeping necessary __init__.py files") == "Keeping necessary __init__.py files"
    assert strip_layout("- **Concepts:** making `__init__.py` optional") == (
        "- Concepts: making `__init__.py` optional"
    )
    assert strip_layout("Pass **kwargs through; see __main__") == "Pass **kwargs through; see __main__"


def test_a_topic_name_keeps_its_code_identifiers() -> None:
    assert clean_name("`__init__.py` layout") == "__init__.py layout"
    assert clean_name("**Deploys** and *CI*") == "Deploys and CI"
    assert clean_name("snake__case *args") == "snake__case *args"  # a code name stays as written


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("__Rule__: never deploy on Fridays", "Rule: never deploy on Fridays"),
        ("*Note:* backups take an hour", "Note: backups take an hour"),
        ("_Heads up_: the API is rate-limited", "Heads up: the API is rate-limited"),
        ("*注意：*部署前先备份", "注意：部署前先备份"),
        ("Deployed the hotfix to production — ✅", "Deployed the hotfix to production"),
        ("The registry keeps 25 tags (ref: 0f3a9c)", "The registry keeps 25 tags"),
        ("Moltbook comments need a captcha (msg #4412).", "Moltbook comments need a captcha."),
        ("重要： 部署前先备份", "重要：部署前先备份"),
        ("**重要：** 部署前先备份", "重要：部署前先备份"),
    ],
)
def test_layout_around_a_fact_is_dropped(text: str, plain: str) -> None:
    """Regression test (audit): underscore and italic labels, a closing status mark, a
    closing "(ref: …)"/"(msg #…)" id and the space after a full-width colon survived."""
    assert strip_layout(text) == plain


@pytest.mark.parametrize(
    "text",
    [
        "__init__: the constructor runs first",  # an identifier, not a label
        "_private_: helpers stay internal",
        "Uses Ed25519 keys (RFC 8032)",  # a reference, not an id
        "Suspension extended to 2026-02-27 (offense #3)",  # a count, not an id
        "5 scenarios: typo fix ✅, value drift ⚠️, takeover 🔴",  # marks of items: content
        "run `printf '重要： 部署'` to see it",  # code keeps its spaces
    ],
)
def test_what_only_looks_like_layout_stays(text: str) -> None:
    assert strip_layout(text) == text
