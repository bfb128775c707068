"""The deterministic secret and personal-data scanner (DESIGN §5, phase 5).

It runs on every unit of every engine, before any model screener, and sees only the
unit's text (title, body, topic). A unit with a finding is rejected with the rule's name
and a *masked* excerpt — the receipt must not become the leak it prevents.

Rules (`RULES`, each with the documentation it follows) cover API keys and tokens of
common providers, private-key blocks, credentials in URLs, `.env`-style secret
assignments, e-mail addresses and home-directory paths, plus high-entropy values that
follow a secret-ish name. The rules lean toward few false positives on ordinary notes:
prose, CJK text, code, git SHAs, UUIDs, dates and URLs without credentials pass.

Placeholders are not findings: a home directory named `<USER>`, `$USER`, `${USER}`,
`%USERNAME%`, `{user}`, `USER`, `username`, `you`, `me`, or a generic CI/VM account
(`runner`, `ubuntu`, `ec2-user`, `vagrant`, `circleci`, `Shared`); a password written as
`***`, `xxx`, `<password>`, `$VAR`, `changeme`, `password`; addresses at the reserved
example domains (RFC 2606: `example.com/.org/.net`, `*.example`, `*.test`,
`*.invalid`, `*.localhost`) and `git@` SSH remotes of code hosts.

Configuration: `screen.deny` adds regular expressions (each match is a finding named
`deny[i]`); `screen.allow` lists regular expressions searched in a finding's matched
text — a finding that matches one is dropped (e.g. `@corp\\.example$`, `^/home/ci/`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gitdream.config import Config
from gitdream.contract import ScreenResult
from gitdream.errors import ConfigError

if TYPE_CHECKING:
    from gitdream.units import Unit


@dataclass(frozen=True)
class Finding:
    """One match: `rule` (its name), `start`/`end` (character offsets into the scanned
    text), `text` (the matched secret — keep it in memory only, never print it) and
    `masked` (a safe excerpt for messages and receipts)."""

    rule: str
    start: int
    end: int
    text: str
    masked: str


@dataclass(frozen=True)
class Rule:
    """A scanner rule: `name`, a compiled `pattern` (group `secret` marks the part to
    report, else the whole match), an optional `accept(match) -> bool` filter that can
    veto a match (placeholders, low entropy), and `source` — where the format is
    documented."""

    name: str
    pattern: re.Pattern[str]
    source: str
    accept: Callable[[re.Match[str]], bool] | None = None


def mask(secret: str) -> str:
    """A safe excerpt of `secret`: at most its first 4 characters (a quarter of it when
    shorter than 16), an ellipsis and the length, e.g. `ghp_… (40 chars)`."""
    keep = min(4, len(secret) // 4)
    return f"{secret[:keep]}… ({len(secret)} chars)"


def entropy(text: str) -> float:
    """Shannon entropy of `text` in bits per character (0 for an empty string)."""
    if not text:
        return 0.0
    counts: dict[str, int] = {}
    for char in text:
        counts[char] = counts.get(char, 0) + 1
    total = len(text)
    return -sum(n / total * math.log2(n / total) for n in counts.values())


_PLACEHOLDER_VALUE = re.compile(
    r"""^(?:\*+|x+|X+|\.\.\.|…|<[^>]*>|\[[^\]]*\]|\{\{[^}]*\}\}|\{[^}]*\}|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%[A-Za-z_]+%
    |password|passwd|pass|pwd|secret|token|changeme|change-me|redacted|example|placeholder|dummy|none|null|true|false
    |your[-_]?(?:password|secret|token|key|api[-_]?key)(?:[-_]here)?)$""",
    re.IGNORECASE | re.VERBOSE,
)


def _not_placeholder(group: str) -> Callable[[re.Match[str]], bool]:
    def accept(match: re.Match[str]) -> bool:
        return not _PLACEHOLDER_VALUE.match(match[group])

    return accept


def _mixed(group: str, min_entropy: float = 0.0) -> Callable[[re.Match[str]], bool]:
    """Accept a value that has both letters and digits (real keys do; words and
    identifiers such as `sk-learn-tutorial-for-beginners` rarely do) and enough entropy."""

    def accept(match: re.Match[str]) -> bool:
        value = match[group]
        return (
            any(c.isdigit() for c in value)
            and any(c.isalpha() for c in value)
            and entropy(value) >= min_entropy
        )

    return accept


_GENERIC_USERS = {
    "user",
    "username",
    "yourname",
    "your-name",
    "your_name",
    "you",
    "me",
    "name",
    "example",
    "runner",
    "ubuntu",
    "ec2-user",
    "vagrant",
    "circleci",
    "shared",
    "guest",
    "default",
    "public",
}


def _key_like(group: str) -> Callable[[re.Match[str]], bool]:
    """Accept a random-looking key body: letters and digits, >= 3.5 bits/char, and few
    hyphens (a slug such as `sk-2024-release-notes-for-the-team` has many)."""
    mixed = _mixed(group, 3.5)

    def accept(match: re.Match[str]) -> bool:
        value = match[group]
        return mixed(match) and value.count("-") <= len(value) * 0.08

    return accept


def _secret_value(match: re.Match[str]) -> bool:
    """Accept an assigned value unless it is a placeholder or a short number (a count)."""
    value = match["secret"]
    if value.isdigit() and len(value) < 6:
        return False
    return not _PLACEHOLDER_VALUE.match(value)


def _personal_home(match: re.Match[str]) -> bool:
    name = match["user"]
    if name.lower() in _GENERIC_USERS or (name.isupper() and name.isalpha()):
        return False  # /Users/USER/, /home/NAME/: written as placeholders
    return not re.fullmatch(r"[<$%{*~.].*", name)


_RESERVED_DOMAIN = re.compile(
    r"(?:^|\.)(?:example\.(?:com|org|net)|example|test|invalid|localhost)$", re.IGNORECASE
)
_CODE_HOSTS = {"github.com", "gitlab.com", "bitbucket.org", "ssh.dev.azure.com", "codeberg.org"}


_NO_REPLY = re.compile(r"(?:do[-_.]?)?no[-_.]?reply(?:[-_.+][A-Za-z0-9._+-]*)?", re.IGNORECASE)


def _personal_email(match: re.Match[str]) -> bool:
    local, domain = match["local"], match["domain"]
    if _RESERVED_DOMAIN.search(domain):
        return False
    if local.lower() == "git" and domain.lower() in _CODE_HOSTS:
        return False  # git@github.com:org/repo is an SSH remote, not a person
    if _NO_REPLY.fullmatch(local) or domain.lower().startswith("users.noreply."):
        return False  # noreply@anthropic.com in Co-Authored-By lines: nobody's inbox
    # icon@2x.png and friends: a retina asset name, not an address
    return not re.fullmatch(r"\d+x\.(?:png|jpe?g|gif|svg|webp)", domain, re.IGNORECASE)


def _r(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)


# Token characters; a key ends where they end (no \b: `-` and `_` are key characters).
_T = r"A-Za-z0-9_\-"
_END = rf"(?![{_T}])"
_START = rf"(?<![{_T}])"

# At most 8 name parts before the secret-ish word (MY_APP_PROD_DB_PASSWORD has 4): an
# unbounded `(...)*` rescanned every "a-a-a-…" run from each of its letters, so one unit of
# a few kB took seconds and a long one hung the scanner.
_SECRET_NAME = (
    r"(?:[A-Za-z0-9]+[_\-.]){0,8}(?:password|passwd|passphrase|pwd|secret|secret[_\-]?key|token|"
    r"auth[_\-]?token|access[_\-]?token|refresh[_\-]?token|api[_\-]?key|apikey|access[_\-]?key|"
    r"private[_\-]?key|client[_\-]?secret|credentials?)"
)

RULES: tuple[Rule, ...] = (
    Rule(
        "private-key",
        # The whole block from BEGIN (headers, base64 body, END line: what a mask must
        # cover); the END line alone too: an encrypted PEM key has a blank line after its
        # headers, so in a Markdown log its body and END line are a paragraph of their own.
        _r(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[A-Za-z0-9+/=\s:,\-]*"
            r"|-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        ),
        "RFC 7468 (PKCS#8, RSA, EC, OPENSSH, ENCRYPTED), RFC 4880 (PGP PRIVATE KEY BLOCK)",
    ),
    Rule(
        "aws-access-key-id",
        _r(rf"{_START}(?P<secret>(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{{16}}){_END}"),
        "AWS IAM unique identifier prefixes (IAM User Guide, 'Unique identifiers')",
    ),
    Rule(
        "aws-secret-access-key",
        _r(
            r"(?i)aws[A-Za-z0-9_\-. ]{0,20}?(?:secret|sk)[A-Za-z0-9_\-. ]{0,20}?['\"]?\s*[:=]\s*['\"]?"
            r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
        "AWS secret access key: 40 base64 characters, assigned to an aws…secret name",
    ),
    Rule(
        "azure-storage-key",
        _r(
            r"(?i)(?<![A-Za-z0-9])(?:AccountKey|SharedAccessKey|AccessKey)\s*=\s*"
            r"(?P<secret>[A-Za-z0-9+/]{20,}={0,2})(?![A-Za-z0-9+/=])"
        ),
        "Azure storage and Service Bus/Event Hubs connection strings (AccountKey=…, SharedAccessKey=…)",
    ),
    Rule(
        "gcp-api-key",
        _r(rf"{_START}(?P<secret>AIza[0-9A-Za-z_\-]{{35}}){_END}"),
        "Google Cloud API keys (AIza + 35 characters)",
    ),
    Rule(
        "google-oauth-token",
        _r(rf"{_START}(?P<secret>ya29\.[0-9A-Za-z_\-]{{20,}})"),
        "Google OAuth 2.0 access tokens (ya29.)",
    ),
    Rule(
        "github-token",
        _r(
            rf"{_START}(?P<secret>(?:ghp|gho|ghs|ghu|ghr)_[A-Za-z0-9]{{36,255}}|github_pat_[A-Za-z0-9_]{{22,255}}){_END}"
        ),
        "GitHub token formats (github.blog 2021-04-05, fine-grained github_pat_)",
    ),
    Rule(
        "gitlab-token",
        _r(rf"{_START}(?P<secret>gl(?:pat|dt|rt|ptt|cbt|oas)-[A-Za-z0-9_\-]{{20,}}){_END}"),
        "GitLab token prefixes (docs.gitlab.com, 'Token prefixes')",
    ),
    Rule(
        "slack-token",
        _r(rf"{_START}(?P<secret>xox[abprse]-[A-Za-z0-9\-]{{10,}}){_END}"),
        "Slack token types (xoxb, xoxp, xoxa, xoxr, xoxs, xoxe)",
    ),
    Rule(
        "slack-webhook",
        _r(r"(?P<secret>https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_+\-]{8,})"),
        "Slack incoming webhook URLs",
    ),
    Rule(
        "discord-webhook",
        _r(
            r"(?P<secret>https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]{5,}/[A-Za-z0-9_\-]{20,})"
        ),
        "Discord webhook URLs",
    ),
    Rule(
        "discord-bot-token",
        _r(
            rf"{_START}(?P<secret>[MNO][A-Za-z0-9_\-]{{23,27}}\.[A-Za-z0-9_\-]{{6}}\.[A-Za-z0-9_\-]{{27,40}}){_END}"
        ),
        "Discord bot tokens (base64 user id . timestamp . HMAC)",
        _mixed("secret"),
    ),
    Rule(
        "telegram-bot-token",
        _r(rf"(?<![0-9])(?P<secret>[0-9]{{8,10}}:AA[A-Za-z0-9_\-]{{33}}){_END}"),
        "Telegram Bot API tokens (core.telegram.org/bots/api)",
    ),
    Rule(
        "stripe-key",
        _r(rf"{_START}(?P<secret>(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{{20,}}){_END}"),
        "Stripe secret and restricted keys (docs.stripe.com/keys)",
    ),
    Rule(
        "anthropic-key",
        _r(rf"{_START}(?P<secret>sk-ant-[A-Za-z0-9_\-]{{20,}}){_END}"),
        "Anthropic API keys (sk-ant-api03-…, sk-ant-admin01-…)",
    ),
    Rule(
        "openai-key",
        _r(rf"{_START}(?P<secret>sk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{{32,}}){_END}"),
        "OpenAI API keys (sk-…, sk-proj-…, sk-svcacct-…)",
        _key_like("secret"),
    ),
    Rule(
        "twilio-api-key",
        _r(rf"{_START}(?P<secret>SK[0-9a-fA-F]{{32}}){_END}"),
        "Twilio API key SIDs (SK + 32 hex)",
    ),
    Rule(
        "twilio-account-sid",
        _r(rf"{_START}(?P<secret>AC[0-9a-f]{{32}}){_END}"),
        "Twilio account SIDs (AC + 32 hex), which identify an account",
    ),
    Rule(
        "sendgrid-key",
        _r(rf"{_START}(?P<secret>SG\.[A-Za-z0-9_\-]{{22}}\.[A-Za-z0-9_\-]{{43}}){_END}"),
        "SendGrid API keys (SG.<22>.<43>)",
    ),
    Rule(
        "npm-token",
        _r(rf"{_START}(?P<secret>npm_[A-Za-z0-9]{{36}}){_END}"),
        "npm access tokens (npm_ + 36 characters)",
    ),
    Rule(
        "pypi-token",
        _r(rf"{_START}(?P<secret>pypi-AgE[A-Za-z0-9_\-]{{50,}}){_END}"),
        "PyPI API tokens (macaroons: pypi-AgE…)",
    ),
    Rule(
        "jwt",
        _r(rf"{_START}(?P<secret>eyJ[A-Za-z0-9_\-]{{10,}}\.[A-Za-z0-9_\-]{{10,}}\.[A-Za-z0-9_\-]*){_END}"),
        "JSON Web Tokens (RFC 7519): base64url header starting eyJ ('{\"'), payload, signature",
    ),
    Rule(
        "bearer-token",
        _r(r"(?i)\bbearer\s+(?P<secret>[A-Za-z0-9._~+/\-]{20,}=*)"),
        "HTTP Authorization: Bearer credentials (RFC 6750)",
        _mixed("secret", 3.0),
    ),
    Rule(
        "url-credentials",
        _r(
            r"(?i)\b[a-z][a-z0-9+.\-]{1,20}://(?P<user>[^\s/:@'\"<>]+):(?P<secret>[^\s/@'\"<>]+)@"
            r"[A-Za-z0-9.\-\[\]]+"
        ),
        "userinfo in URIs (RFC 3986 §3.2.1: user:password@host is deprecated)",
        _not_placeholder("secret"),
    ),
    Rule(
        "secret-assignment",
        _r(
            rf"(?im)(?<![A-Za-z0-9_])(?:export\s+)?(?P<name>{_SECRET_NAME})\s*=\s*(?P<q>['\"]?)"
            r"(?P<secret>[A-Za-z0-9_\-+/=.:@!%^*~#]{4,}?)(?P=q)(?=\s|$|[;,&)\]}])"
        ),
        ".env files (dotenv): NAME=value with a secret-ish name (PASSWORD, SECRET, TOKEN, API_KEY…)",
        _secret_value,
    ),
    Rule(
        "high-entropy-secret",
        _r(
            rf"(?i)(?<![A-Za-z0-9])[\"']?{_SECRET_NAME}[\"']?\s*(?::|=|\bis\b)\s*[\"']?"
            r"(?P<secret>[A-Za-z0-9+/_\-]{32,}={0,2})(?![A-Za-z0-9+/_\-])"
        ),
        "a long random value (>= 32 chars, >= 3.5 bits/char) right after a secret-ish name and ':' or '='",
        _mixed("secret", 3.5),
    ),
    Rule(
        "email-address",
        _r(
            r"(?<![A-Za-z0-9._%+\-])(?P<secret>(?P<local>[A-Za-z0-9._%+\-]+)@"
            r"(?P<domain>[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?)*"
            r"\.[A-Za-z]{2,24}))(?![A-Za-z0-9\-])"
        ),
        "e-mail addresses (RFC 5322 addr-spec, common subset)",
        _personal_email,
    ),
    Rule(
        "home-path",
        _r(
            r"(?<![\w.\-\\])(?P<secret>(?:/home|/Users|[A-Za-z]:[\\/]Users)[\\/]"
            r"(?P<user>[^\s/\\'\"<>()|]+?))(?=[\\/]|[\s'\"<>(),;:]|\.(?:\s|$)|$)"
        ),
        "home directories on Linux (/home/NAME), macOS (/Users/NAME), Windows (C:\\Users\\NAME)",
        _personal_home,
    ),
)


def _compile_user(patterns: Iterable[str], key: str) -> list[re.Pattern[str]]:
    compiled = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern))
        except re.error as exc:
            raise ConfigError(
                f"key '{key}' has the pattern {pattern!r}, which is not a valid regular expression: {exc}",
                hint=f"fix '{key}' (Python `re` syntax)",
            ) from None
    return compiled


def scan_text(
    text: str, *, allow: Sequence[str | re.Pattern[str]] = (), deny: Sequence[str | re.Pattern[str]] = ()
) -> list[Finding]:
    """All findings in `text`, sorted by position; of overlapping findings only the one of
    the earlier rule (built-in rules in `RULES` order, then `deny`) is kept.

    `deny` are extra regular expressions (each match is a finding named `deny[i]`);
    `allow` are regular expressions searched in each finding's matched text — a match
    drops the finding. Raises ConfigError for an invalid pattern.
    """
    allow_re = [p if isinstance(p, re.Pattern) else _compile_user([p], "screen.allow")[0] for p in allow]
    deny_re = [p if isinstance(p, re.Pattern) else _compile_user([p], "screen.deny")[0] for p in deny]
    found: list[Finding] = []
    for rule in RULES:
        for match in rule.pattern.finditer(text):
            if rule.accept is not None and not rule.accept(match):
                continue
            group = "secret" if "secret" in rule.pattern.groupindex else 0
            start, end = match.span(group)
            found.append(Finding(rule.name, start, end, match[group], mask(match[group])))
    for index, pattern in enumerate(deny_re):
        for match in pattern.finditer(text):
            if match.end() > match.start():
                found.append(Finding(f"deny[{index}]", match.start(), match.end(), match[0], mask(match[0])))
    found = [f for f in found if not any(a.search(f.text) for a in allow_re)]
    # Overlaps go to the earlier rule (RULES is ordered from specific to generic), so the
    # password of `postgres://u:pw@host` is url-credentials, not an e-mail address.
    kept: list[Finding] = []
    for finding in found:
        if not any(finding.start < k.end and k.start < finding.end for k in kept):
            kept.append(finding)
    kept.sort(key=lambda f: f.start)
    return kept


def user_patterns(cfg: Config) -> tuple[list[re.Pattern[str]], list[re.Pattern[str]]]:
    """`(allow, deny)` compiled from `screen.allow` and `screen.deny` (ConfigError when one
    is not a valid regular expression)."""
    return _compile_user(cfg.list("screen.allow"), "screen.allow"), _compile_user(
        cfg.list("screen.deny"), "screen.deny"
    )


def redact(
    text: str, *, allow: Sequence[str | re.Pattern[str]] = (), deny: Sequence[str | re.Pattern[str]] = ()
) -> str:
    """`text` with every finding replaced by its masked excerpt (`ghp_… (40 chars)`): for
    text that is recorded or shown (receipts, warnings, errors), never written as memory."""
    for finding in reversed(scan_text(text, allow=allow, deny=deny)):
        text = text[: finding.start] + finding.masked + text[finding.end :]
    return text


_LONG_TOKEN = re.compile(r"[!-~]{20,}")


def elide_tokens(text: str) -> str:
    """`text` with every long run of ASCII without spaces (20 characters or more, letters
    and digits mixed) masked like a finding: for titles and topic names an engine made up
    and nothing vouched for, which may hold a secret the scanner cannot recognise (cut
    short, lower-cased)."""

    def mask_run(match: re.Match[str]) -> str:
        run = match[0]
        mixed = any(c.isdigit() for c in run) and any(c.isalpha() for c in run)
        return mask(run) if mixed else run

    return _LONG_TOKEN.sub(mask_run, text)


def redact_json(
    value: Any, *, allow: Sequence[str | re.Pattern[str]] = (), deny: Sequence[str | re.Pattern[str]] = ()
) -> Any:
    """`value` (JSON-able: dicts, lists, strings, numbers) with `redact` applied to every
    string in it, dictionary keys included."""
    if isinstance(value, str):
        return redact(value, allow=allow, deny=deny)
    if isinstance(value, list):
        return [redact_json(v, allow=allow, deny=deny) for v in value]
    if isinstance(value, dict):
        return {
            redact(str(k), allow=allow, deny=deny): redact_json(v, allow=allow, deny=deny)
            for k, v in value.items()
        }
    return value


PIECE = 8
"""A unit holding this many consecutive characters (one a digit) of a secret found in its
sources holds part of that secret."""
SOURCE_SCAN_CHARS = 200_000
"""How much of each cited source is scanned for secrets whose pieces a unit must not hold
(no engine derives a unit from further in: the offline engine keeps 400 characters, and
the anthropic engine skips entries larger than one batch)."""
_TOKEN_RUN = re.compile(rf"[!-~]{{{PIECE},}}")


def _pieces(text: str) -> set[str]:
    """The case-folded PIECE-character windows of `text` that hold a digit."""
    folded = text.casefold()
    return {
        folded[i : i + PIECE]
        for i in range(len(folded) - PIECE + 1)
        if any(c.isdigit() for c in folded[i : i + PIECE])
    }


def _echo(unit_text: str, pieces: dict[str, Finding]) -> Finding | None:
    """The source finding a piece of which `unit_text` holds (in any letter case), or None."""
    for run in _TOKEN_RUN.findall(unit_text):
        folded = run.casefold()
        for i in range(len(folded) - PIECE + 1):
            hit = pieces.get(folded[i : i + PIECE])
            if hit is not None:
                return hit
    return None


def screen_units(
    units: Iterable[Unit], cfg: Config, sources: Mapping[str, str] | None = None
) -> ScreenResult:
    """Run `scan_text` over each unit's title, body and topic with `screen.allow` and
    `screen.deny` from `cfg`.

    `sources` maps entry ids to their text: a unit that holds, in any letter case, a piece
    (`PIECE` characters with a digit) of a secret the scanner finds in a source it cites is
    rejected too — a secret cut short (a 400-character fact, a model's clipped title) or
    lower-cased (a topic slug) is no longer recognisable on its own.

    Returns a ScreenResult: units without findings in `kept`; the others in `rejected` as
    `Rejected(unit, "screen", reason, details={"findings": [{"rule", "field", "excerpt"}]})`,
    the reason naming the rules and masked excerpts (never the secret). No model calls.
    Raises ConfigError for an invalid allow/deny pattern.
    """
    from gitdream.units import Rejected

    allow = _compile_user(cfg.list("screen.allow"), "screen.allow")
    deny = _compile_user(cfg.list("screen.deny"), "screen.deny")
    result = ScreenResult()
    source_pieces: dict[str, dict[str, Finding]] = {}

    def pieces_of(entry_id: str) -> dict[str, Finding]:
        if entry_id not in source_pieces:
            found: dict[str, Finding] = {}
            text = (sources or {}).get(entry_id, "")[:SOURCE_SCAN_CHARS]
            for finding in scan_text(text, allow=allow, deny=deny):
                for piece in _pieces(finding.text):
                    found.setdefault(piece, finding)
            source_pieces[entry_id] = found
        return source_pieces[entry_id]

    for unit in units:
        findings: list[dict[str, str]] = []
        for field_name in ("title", "body", "topic"):
            for finding in scan_text(getattr(unit, field_name), allow=allow, deny=deny):
                findings.append({"rule": finding.rule, "field": field_name, "excerpt": finding.masked})
        if (
            not findings
            and sources
            and any(_TOKEN_RUN.search(getattr(unit, f)) for f in ("title", "body", "topic"))
        ):
            for entry_id in unit.sources:
                pieces = pieces_of(entry_id)
                for field_name in ("title", "body", "topic") if pieces else ():
                    hit = _echo(getattr(unit, field_name), pieces)
                    if hit is not None:
                        findings.append(
                            {
                                "rule": hit.rule,
                                "field": field_name,
                                "excerpt": f"part of {hit.masked} in {entry_id}",
                            }
                        )
                        break
        if not findings:
            result.kept.append(unit)
            continue
        parts = ", ".join(f"{f['rule']} in {f['field']} ({f['excerpt']})" for f in findings)
        result.rejected.append(
            Rejected(unit, "screen", f"secret scanner: {parts}", details={"findings": findings})
        )
    return result
