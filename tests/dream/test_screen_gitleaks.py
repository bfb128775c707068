"""The gitleaks rule table: generated (scripts/gitleaks_rules.py), never hand-edited, with
gitleaks' licence notice; the RE2 → Python translation keeps each pattern's meaning."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from gitdream.dream import screen_gitleaks
from tests.helpers import PACKAGE_ROOT, git

sys.path.insert(0, str(PACKAGE_ROOT / "scripts"))
import gitleaks_rules

TABLE = PACKAGE_ROOT / "gitdream" / "dream" / "screen_gitleaks.py"


@pytest.mark.parametrize(
    ("go", "python", "matches", "misses"),
    [
        # RE2's inline flags hold to the end of the group, across alternatives
        (r"a(?i)b|c", r"a(?i:b)|(?i:c)", ["aB", "C"], ["AB"]),
        (r"\b(p8e-(?i)[a-z0-9]{4})\b", r"\b(p8e-(?i:[a-z0-9]{4}))\b", ["p8e-AbC1"], ["P8E-abcd"]),
        (r"(?i)key", r"(?i)key", ["KEY"], []),
        (r"[[:alnum:]]{3}\z", r"[a-zA-Z0-9]{3}\Z", ["a1Z"], ["a1Z\n"]),
        (r"[\w.=-]+", r"[\w.=-]+", ["a.b=c-d"], []),
    ],
)
def test_translation_keeps_the_meaning(go: str, python: str, matches: list[str], misses: list[str]) -> None:
    translated = gitleaks_rules.translate(go)
    assert translated == python
    pattern = re.compile(translated, re.ASCII)
    assert all(pattern.fullmatch(m) for m in matches)
    assert not any(pattern.fullmatch(m) for m in misses)


def test_untranslatable_constructs_are_refused_not_guessed() -> None:
    for go in (r"\Qa.b\E", r"\p{Greek}+", r"(?U)a+"):
        with pytest.raises(gitleaks_rules.Untranslatable):
            gitleaks_rules.translate(go)


def test_the_table_carries_the_licence_and_its_source() -> None:
    doc = screen_gitleaks.__doc__ or ""
    assert "do not edit by hand" in doc and "scripts/gitleaks_rules.py" in doc
    assert "Copyright (c) 2019 Zachary Rice" in doc and "Permission is hereby granted" in doc
    assert re.search(r"commit [0-9a-f]{40}", doc)
    assert len(screen_gitleaks.RULES) >= 200
    assert "generic-api-key" in screen_gitleaks.SKIPPED


def test_the_generator_reproduces_the_table_from_a_gitleaks_clone(tmp_path: Path) -> None:
    """Run the script on a small bare clone-like repository holding a gitleaks.toml and a
    LICENSE: the output is deterministic and has the shape the scanner reads."""
    clone = tmp_path / "gitleaks"
    clone.mkdir()
    git(clone, "init", "-q")
    (clone / "config").mkdir()
    (clone / "config" / "gitleaks.toml").write_text(
        "title = \"t\"\n[allowlist]\nregexes = ['''^x+$''']\nstopwords = [\"Example\"]\n"
        "[[rules]]\nid = \"b-rule\"\ndescription = \"d\"\nregex = '''\\b(bb_(?i)[a-z0-9]{8})\\b'''\n"
        'entropy = 2\nkeywords = ["BB_"]\n'
        "[[rules]]\nid = \"a-rule\"\ndescription = \"d\"\nregex = '''aa_[[:alnum:]]{8}'''\nkeywords = [\"aa_\"]\n"
        "[[rules.allowlists]]\nregexTarget = \"line\"\nregexes = ['''test''']\n"
        "[[rules]]\nid = \"p12\"\ndescription = \"d\"\npath = '''\\.p12$'''\n"
    )
    (clone / "LICENSE").write_text("MIT License\n\nCopyright (c) 2019 Zachary Rice\n")
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", "rules")
    script = str(PACKAGE_ROOT / "scripts" / "gitleaks_rules.py")
    outputs = []
    for attempt in range(2):
        out = tmp_path / f"table{attempt}.py"
        proc = subprocess.run(
            [sys.executable, script, str(clone), "--output", str(out)], capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stderr
        outputs.append(out.read_text())
    first = outputs[0]
    assert outputs[1] == first, "the output is deterministic"
    namespace: dict[str, object] = {}
    exec(compile(first, str(out), "exec"), namespace)
    rules = namespace["RULES"]
    assert [r[0] for r in rules] == ["a-rule", "b-rule"]  # type: ignore[index]
    assert rules[1][1] == r"\b(bb_(?i:[a-z0-9]{8}))\b" and rules[1][4] == ("bb_",)  # type: ignore[index]
    assert rules[0][5] == (("line", ("test",), (), "OR"),)  # type: ignore[index]
    assert namespace["STOPWORDS"] == ("example",)
    assert "p12" in namespace["SKIPPED"]  # type: ignore[operator]
    assert "Copyright (c) 2019 Zachary Rice" in first


def test_the_committed_table_is_what_the_generator_writes() -> None:
    """The table is the generator's output: rendering its own rules again gives the same
    rule lines (nobody edited a pattern by hand)."""
    text = TABLE.read_text(encoding="utf-8")
    rules = [
        {
            "id": r[0],
            "regex": r[1],
            "secret_group": r[2],
            "entropy": r[3],
            "keywords": r[4],
            "allow": tuple(
                {"target": a[0], "regexes": a[1], "stopwords": a[2], "condition": a[3]} for a in r[5]
            ),
        }
        for r in screen_gitleaks.RULES
    ]
    doc = screen_gitleaks.__doc__ or ""
    source = re.search(r"(commit [0-9a-f]{40}, config/gitleaks.toml sha256 [0-9a-f]{64})", doc)
    licence = doc.split("applies to the rule data below:\n", 1)[1]
    licence = "\n".join(line[4:] for line in licence.splitlines())
    assert source is not None
    rendered = gitleaks_rules.render(
        rules,
        {"regexes": screen_gitleaks.ALLOW_REGEXES, "stopwords": screen_gitleaks.STOPWORDS},
        dict(screen_gitleaks.SKIPPED),
        licence,
        source[1],
    )
    assert rendered.strip() == text.strip()
