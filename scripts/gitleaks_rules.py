"""Generate `gitdream/dream/screen_gitleaks.py` from gitleaks' rule set.

gitleaks (https://github.com/gitleaks/gitleaks, MIT licence) keeps a well-maintained table
of secret formats in `config/gitleaks.toml`. The scanner takes its rules from there instead
of copying them by hand: this script reads that file, translates each regular expression
from Go's RE2 syntax to Python's `re` (scoped inline flags, `\\z`, POSIX classes), checks
that every translation compiles, and writes the table with gitleaks' licence notice.

    git clone https://github.com/gitleaks/gitleaks /tmp/gitleaks
    python scripts/gitleaks_rules.py /tmp/gitleaks [--output gitdream/dream/screen_gitleaks.py]

The argument is a clone of gitleaks, with a work tree or bare (its `config/gitleaks.toml`
and `LICENSE` are read, from HEAD for a bare clone). Rules left out, and why, are
listed in `SKIPPED` below and in the generated file. Run it again to pick up new rules; the
output is deterministic (sorted by rule id), so the diff shows exactly what changed.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
import tomllib
from pathlib import Path

# Rules gitdream does not take, with the reason (the generated file repeats them).
SKIPPED = {
    "generic-api-key": "matches any 'key: value' with a long value; gitdream's own "
    "high-entropy-secret and secret-assignment rules cover it with fewer false positives "
    "on notes about keys and tokens",
}

_POSIX = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "lower": "a-z",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
    "space": r" \t\n\r\f\v",
    "word": r"\w",
    "punct": r"!-/:-@\[-`{-~",
}


class Untranslatable(ValueError):
    """A Go regular expression this translator does not handle."""


def translate(go: str) -> str:
    """`go` (RE2 syntax, as gitleaks writes it) as a Python `re` pattern.

    RE2's inline flags `(?i)` apply from where they stand to the end of the enclosing
    group; Python accepts them only at the very start, so a later one becomes a scoped
    group `(?i:…)` closed where the enclosing group closes. `\\z` (end of text) is `\\Z`;
    POSIX classes (`[[:alnum:]]`) are spelled out; a literal `[` inside a class is escaped
    (Python warns about possible nested sets). Raises Untranslatable for anything else
    that Python would read differently (`\\Q…\\E`, `\\p{…}`, `(?U)`).
    """
    out: list[str] = []
    # per open group (the pattern itself first): the flags of the scoped groups opened in it
    opened: list[list[str]] = [[]]
    i = 0
    n = len(go)
    while i < n:
        char = go[i]
        if char == "\\":
            if i + 1 >= n:
                raise Untranslatable("trailing backslash")
            nxt = go[i + 1]
            if nxt in "QEpPCU":
                raise Untranslatable(f"\\{nxt} has no Python equivalent here")
            out.append("\\Z" if nxt == "z" else go[i : i + 2])
            i += 2
            continue
        if char == "[":
            end, text = _char_class(go, i)
            out.append(text)
            i = end
            continue
        if char == "(":
            flags = re.match(r"\(\?([a-zA-Z-]+)\)", go[i:])
            if flags:
                if set(flags[1]) - set("ims-"):
                    raise Untranslatable(f"inline flags {flags[0]}")
                if not out:
                    out.append(flags[0])  # at the very start: Python takes it as it is
                else:
                    out.append(f"(?{flags[1]}:")
                    opened[-1].append(flags[1])
                i += len(flags[0])
                continue
            out.append("(")
            opened.append([])
            i += 1
            continue
        if char == ")":
            if len(opened) == 1:
                raise Untranslatable("unbalanced ')'")
            out.append(")" * len(opened.pop()))
            out.append(")")
            i += 1
            continue
        if char == "|" and opened[-1]:
            # RE2's flags hold to the end of the group, across alternatives: close the
            # scoped groups for this alternative and open them again for the next one
            out.append(")" * len(opened[-1]) + "|" + "".join(f"(?{f}:" for f in opened[-1]))
            i += 1
            continue
        out.append(char)
        i += 1
    if len(opened) != 1:
        raise Untranslatable("unbalanced '('")
    out.append(")" * len(opened[0]))
    return "".join(out)


def _char_class(go: str, start: int) -> tuple[int, str]:
    """The bracket expression starting at `go[start]` ("["), translated; returns the
    index after it and its Python spelling."""
    i = start + 1
    parts = ["["]
    if i < len(go) and go[i] == "^":
        parts.append("^")
        i += 1
    first = True
    while i < len(go):
        char = go[i]
        if char == "]" and not first:
            parts.append("]")
            return i + 1, "".join(parts)
        first = False
        if char == "[":
            posix = re.match(r"\[:(\^?)([a-z]+):\]", go[i:])
            if posix:
                if posix[1] or posix[2] not in _POSIX:
                    raise Untranslatable(f"POSIX class {posix[0]}")
                parts.append(_POSIX[posix[2]])
                i += len(posix[0])
                continue
            parts.append("\\[")
            i += 1
            continue
        if char == "\\":
            nxt = go[i + 1]
            if nxt in "QEpPC":
                raise Untranslatable(f"\\{nxt} in a character class")
            parts.append(go[i : i + 2])
            i += 2
            continue
        if char in "&~|-" and i + 1 < len(go) and go[i + 1] == char:
            parts.append(char + "\\" + char)  # Python warns about set operations
            i += 2
            continue
        parts.append(char)
        i += 1
    raise Untranslatable("unterminated character class")


def _allowlist(raw: dict[str, object], rule: str) -> dict[str, object]:
    target = raw.get("regexTarget", "secret")
    if target not in ("secret", "match", "line"):
        raise Untranslatable(f"{rule}: allowlist regexTarget {target!r}")
    regexes = []
    for pattern in raw.get("regexes", []) or []:
        python = translate(str(pattern))
        re.compile(python)
        regexes.append(python)
    return {
        "target": target,
        "regexes": tuple(regexes),
        "stopwords": tuple(str(s).lower() for s in raw.get("stopwords", []) or []),
        "condition": str(raw.get("condition", "OR")).upper(),
        "paths_only": not regexes and not raw.get("stopwords"),
    }


def build(config_text: str) -> tuple[list[dict[str, object]], dict[str, object], dict[str, str]]:
    """`(rules, global allowlist, skipped {id: reason})` from the text of gitleaks' TOML."""
    data = tomllib.loads(config_text)
    glob = data.get("allowlist", {})
    global_allow = {
        "regexes": tuple(translate(p) for p in glob.get("regexes", [])),
        "stopwords": tuple(str(s).lower() for s in glob.get("stopwords", [])),
    }
    for pattern in global_allow["regexes"]:  # type: ignore[attr-defined]
        re.compile(pattern)
    rules: list[dict[str, object]] = []
    skipped = dict(SKIPPED)
    for raw in data["rules"]:
        rule_id = str(raw["id"])
        if rule_id in SKIPPED:
            continue
        if "regex" not in raw:
            skipped[rule_id] = "matches file names only (gitdream scans text, not paths)"
            continue
        try:
            python = translate(str(raw["regex"]))
            re.compile(python)
            allow = [_allowlist(a, rule_id) for a in raw.get("allowlists", [])]
        except (Untranslatable, re.error) as exc:
            skipped[rule_id] = f"its regular expression cannot be translated: {exc}"
            continue
        rules.append(
            {
                "id": rule_id,
                "regex": python,
                "secret_group": int(raw.get("secretGroup", 0)),
                "entropy": float(raw.get("entropy", 0.0)),
                "keywords": tuple(sorted(str(k).lower() for k in raw.get("keywords", []))),
                "allow": tuple(a for a in allow if not a["paths_only"]),
            }
        )
    rules.sort(key=lambda r: str(r["id"]))
    return rules, global_allow, dict(sorted(skipped.items()))


def _read(checkout: Path, rel: str) -> tuple[str, str | None]:
    """The text of `rel` in a gitleaks checkout — a work tree, or a bare clone (read from
    its HEAD) — and the commit it came from (None when unknown)."""
    commit = subprocess.run(
        ["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    )
    head = commit.stdout.strip() if commit.returncode == 0 else None
    if (checkout / rel).is_file():
        return (checkout / rel).read_text(encoding="utf-8"), head
    shown = subprocess.run(
        ["git", "-C", str(checkout), "show", f"HEAD:{rel}"], capture_output=True, check=False
    )
    if shown.returncode != 0:
        raise FileNotFoundError(f"{checkout}: no {rel} (neither a file nor in its HEAD)")
    return shown.stdout.decode("utf-8"), head


def render(
    rules: list[dict[str, object]],
    global_allow: dict[str, object],
    skipped: dict[str, str],
    licence: str,
    source: str,
) -> str:
    """The generated module's text."""
    lines = [
        '"""Secret rules generated from gitleaks\' rule set — do not edit by hand.',
        "",
        "Generated by `scripts/gitleaks_rules.py` from gitleaks (https://github.com/gitleaks/gitleaks),",
        f"{source}. Each regular expression is gitleaks' own, translated from",
        "Go's RE2 syntax to Python's; `gitdream.dream.screen` applies them the way gitleaks does",
        "(keywords first, the secret group, the entropy floor, the allowlists).",
        "",
        "gitleaks' licence notice, which applies to the rule data below:",
        "",
        *[("    " + line).rstrip() for line in licence.strip().splitlines()],
        '"""',
        "",
        "# fmt: off",
        "# ruff: noqa: E501",
        "",
        "# (id, regex, secret group (0: the first non-empty group), entropy floor (0: none),",
        "#  keywords (lower case; one must occur in the lower-cased text), allowlists)",
        "RULES = (",
    ]
    for rule in rules:
        allow = tuple(
            (a["target"], a["regexes"], a["stopwords"], a["condition"])
            for a in rule["allow"]  # type: ignore[attr-defined]
        )
        lines.append(
            f"    ({rule['id']!r}, {rule['regex']!r}, {rule['secret_group']!r}, {rule['entropy']!r}, "
            f"{rule['keywords']!r}, {allow!r}),"
        )
    lines += [
        ")",
        "",
        "# gitleaks' global allowlist: a secret matching one of these, or holding a stopword, is not a finding",
        f"ALLOW_REGEXES = {global_allow['regexes']!r}",
        f"STOPWORDS = {global_allow['stopwords']!r}",
        "",
        "# rules not taken, and why",
        "SKIPPED = {",
        *[f"    {k!r}: {v!r}," for k, v in skipped.items()],
        "}",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path, help="a clone of gitleaks (work tree or bare)")
    parser.add_argument(
        "--output",
        type=Path,
        default=Path(__file__).resolve().parent.parent / "gitdream" / "dream" / "screen_gitleaks.py",
    )
    args = parser.parse_args(argv)
    checkout: Path = args.checkout
    try:
        config_text, commit = _read(checkout, "config/gitleaks.toml")
        licence, _ = _read(checkout, "LICENSE")
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    digest = hashlib.sha256(config_text.encode("utf-8")).hexdigest()
    source = (f"commit {commit}, " if commit else "") + f"config/gitleaks.toml sha256 {digest}"
    rules, global_allow, skipped = build(config_text)
    text = render(rules, global_allow, skipped, licence, source)
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}: {len(rules)} rules, {len(skipped)} skipped", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
