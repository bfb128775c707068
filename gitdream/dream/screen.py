"""The deterministic secret and personal-data scanner (DESIGN §5, phase 5).

It runs on every unit of every engine, before any model screener, and sees only the
unit's text (title, body, topic). A unit with a finding is rejected with the rule's name
and the secret's length (`[REDACTED github-token, 40 chars]`), never a character of the
secret — the receipt must not become the leak it prevents.

Text is scanned as written and again after Unicode normalisation (each character NFKC,
format and other invisible characters removed), so a zero-width space or soft hyphen
inside a token, or a token in fullwidth letters, is found and masked where it stands;
base64 runs that decode to text are scanned decoded too. Two rule tables: gitdream's own
(`RULES`, tuned on ordinary notes) first, then the rules generated from gitleaks' rule set
(`screen_gitleaks`, applied as gitleaks applies them: keywords, secret group, entropy
floor, allowlists); overlapping findings merge, so a mask covers the union.

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
Patterns from the repository's gitdream.toml are matched with RE2 in linear time
(`gitdream.patterns`): a committed `(a+)+$` cannot hang a dream; the user's own keep
Python `re`.
"""

from __future__ import annotations

import base64
import binascii
import functools
import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from gitdream.config import Config, compile_pattern
from gitdream.contract import ScreenResult
from gitdream.dream import screen_gitleaks as table
from gitdream.patterns import Pattern
from gitdream.units import Rejected

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
    documented, and optional `keywords`."""

    name: str
    pattern: re.Pattern[str]
    source: str
    accept: Callable[[re.Match[str]], bool] | None = None
    keywords: tuple[str, ...] = ()
    """When given, the rule runs only on text whose lower-cased form holds one of them
    (a cheap prefilter, as gitleaks' keywords)."""


def mask(secret: str, rule: str = "secret") -> str:
    """What stands for `secret` wherever gitdream prints or records it: the rule's name and
    the length, never a character of the secret (a prefix narrows a guess and identifies
    the key), e.g. `[REDACTED github-token, 40 chars]`."""
    return f"[REDACTED {rule}, {len(secret)} chars]"


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


_CODE_VALUE = re.compile(r"[A-Za-z_]\(|\[['\"]")
"""A call or a subscript: code that reads a password (`os.getenv("PW")`), not one."""
_VALUE_END = "\"'`”’」』.,;:!?)]}"


def _prose_value(value: str) -> bool:
    """Accept the value of a password in prose: without the quotes and punctuation after
    it, at least 4 characters with a digit or a symbol, and none of what a sentence about a
    password names instead of one:

    - a placeholder (`<password>`, `$VAR`, `changeme`), a template or mask (`{…}`,
      `[REDACTED …]`), a YAML tag or alias (`!vault`, `*pw`), an aside (`(optional)`), a link;
    - code that reads the password (`os.getenv("PW")`, `process.env.DB_PASSWORD`,
      `ENV[DB_PASSWORD]`, `%(DB_PASSWORD)s`: a call, a subscript, or the name of an
      environment variable after `.`, `[`, `(` or `{`);
    - the name of a password manager, which says where the password is (`1Password`);
    - a length range (`8-16`, `8~16`: a password policy);
    - an English compound whose symbol is its hyphen (`e-mailed`, `case-sensitive`,
      `30-day`, `base64-encoded`): two parts, the second a lowercase word.

    (An assignment, `password=…`, is `secret-assignment`'s.)"""
    bare = value.rstrip(_VALUE_END)
    if len(bare) < 4 or bare[0] in "[<{(!&*" or _PLACEHOLDER_VALUE.match(bare) or "://" in bare:
        return False
    if _CODE_VALUE.search(bare) or _ENV_NAME.search(bare) or _MANAGER.match(bare):
        return False
    if _RANGE.fullmatch(bare) or _COMPOUND.fullmatch(bare):
        return False
    return any(not c.isalpha() for c in bare)


def _quoted_prose_value(value: str) -> bool:
    """Accept a quoted value in prose (`the password is "…"`): one word as `_prose_value`
    judges an unquoted one; several words when they are a passphrase — at least three
    words and 12 characters ("correct horse battery staple"), or any digit — not an aside
    in quotes ("too short")."""
    words = value.split()
    if len(words) <= 1:
        return _prose_value(value.strip())
    if value.strip()[0] in "[<{(" or _PLACEHOLDER_VALUE.match(value.strip()) or "://" in value:
        return False
    return (len(words) >= 3 and len(value.strip()) >= 12) or any(c.isdigit() for c in value)


def _prose_secret(match: re.Match[str]) -> bool:
    """`password-in-prose`'s filter: the value found, quoted (`_QUOTED_SECRETS`) or not."""
    for name in _SECRETS:
        value = match[name]
        if value is not None:
            return _quoted_prose_value(value) if name in _QUOTED_SECRETS else _prose_value(value)
    return False


_ENV_NAME = re.compile(r"[.\[({]['\"]?[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]")
"""An environment variable's name read by code: `process.env.DB_PASSWORD`, `ENV[DB_PASSWORD]`."""
_MANAGER = re.compile(
    r"(?i)(?:1password|keepass(?:xc)?|lastpass|bitwarden|dashlane|keeper|vaultwarden|proton[ -]?pass)(?![A-Za-z0-9])"
)
"""Password managers, by name: where a password is kept, not what it is."""
_RANGE = re.compile(r"[0-9]+[ \t]*[-~～–][ \t]*[0-9]+")
"""A length range (`8-16`, `8~16`), as a password policy gives it."""
_COMPOUND = re.compile(r"[A-Za-z0-9]+-[a-z]{2,}")
"""A hyphenated English compound (`e-mailed`, `30-day`, `base64-encoded`)."""


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


def _decoded(value: str) -> str | None:
    """`value` decoded from base64 (standard or URL-safe, padding optional) when it is
    UTF-8 text of printable characters, else None."""
    raw = value.strip().replace("\n", "").replace("\r", "")
    padded = raw + "=" * (-len(raw) % 4)
    try:
        data = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
        text = data.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    if not text or sum(c.isprintable() or c in "\n\r\t" for c in text) < len(text) * 0.95:
        return None
    return text


def _base64_line(value: str) -> bool:
    """A line of base64 that is key material, not a word, a hex digest or an identifier."""
    body = value.rstrip("=")
    if re.fullmatch(r"[0-9a-fA-F]+", body):
        return False
    kinds = sum(bool(re.search(p, body)) for p in ("[a-z]", "[A-Z]", "[0-9]"))
    return kinds == 3 and entropy(body) >= 4.0


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

# password-in-prose: the keywords, the separators between a keyword and its value, and
# the verbs that give a password its value, in each language the offline engine reads.
_PW = r"pass(?:word|wd|phrase|code)|pwd|pw"
_PW_SEP = (
    r"(?:[ \t]*(?:[:：]|→|=>|->)[ \t]*"
    r"|[ \t]+(?:is|was|is[ \t]+now|will[ \t]+be|becomes|[-–—])[ \t]*:?[ \t]+"
    r"|['’]s[ \t]+)"
)
_PW_VERB = (
    r"(?:set|sets|setting|changed?|changes|changing|reset|resets|resetting|updated?|updates|updating|"
    r"rotated?|rotates|rotating)"
)
_PW_EU = r"passwort|kennwort|mot[ \t]+de[ \t]+passe|contraseña|contrasena|senha|palavra-passe|пароль"
_PW_EU_SEP = (
    r"(?:[ \t]*(?:[:：]|→|=>|->)[ \t]*"
    r"|[ \t]+(?:ist|war|lautet|est|était|es|era|será|é|sera|—|–|-|это)[ \t]*:?[ \t]+)"
)
_PW_CJK = r"비밀번호|비번|패스워드|密码|密碼|口令|パスワード|暗証番号"
_OPEN_QUOTE = r"[\"'`“‘«„]?"
_QUOTED_SECRETS = ("secret6", "secret7", "secret8", "secret9", "secret10")
_SECRETS = ("secret", "secret2", "secret3", "secret4", "secret5", *_QUOTED_SECRETS)


def _quoted_or(group: str, bare: str) -> str:
    """A prose value: in quotes, spaces included, up to the closing quote (group `group`,
    a passphrase such as "correct horse battery staple"), or else `bare`."""
    return (
        rf"(?:[\"'`“‘«„「『][ \u00a0\u202f]?(?P<{group}>[^\n\"'`“”‘’«»„「」『』]{{4,200}}?)[ \u00a0\u202f]?"
        rf"[\"'`”’»“」』]"
        rf"|{bare})"
    )


# Environment variables that hold a password under a name `_SECRET_NAME` does not cover
# (no separator before PASSWORD, or another word for it): libpq's PGPASSWORD, redis-cli's
# REDISCLI_AUTH, sshpass -e's SSHPASS.
_PASSWORD_VARIABLES = r"PGPASSWORD|REDISCLI_AUTH|SSHPASS"

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
        "base64-block",
        # A PEM key's body without its BEGIN line: blank lines split an encrypted key's
        # headers, body and END line into paragraphs of their own (a Markdown log reads
        # each as one entry), and a key pasted with blank lines between its lines leaves
        # one body line per paragraph. A line of nothing but 40+ base64 characters, mixed
        # case and digits (not hex: a SHA-256 stays), is key material or an encoded secret.
        _r(r"(?m)^[ \t>]*(?P<secret>[A-Za-z0-9+/]{40,}={0,2})[ \t]*\r?$"),
        "RFC 7468 §2: PEM bodies are base64 lines of 64 characters",
        lambda m: _base64_line(m["secret"]),
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
        keywords=("aws",),
    ),
    Rule(
        "azure-storage-key",
        _r(
            r"(?i)(?<![A-Za-z0-9])(?:AccountKey|SharedAccessKey|AccessKey)\s*=\s*"
            r"(?P<secret>[A-Za-z0-9+/]{20,}={0,2})(?![A-Za-z0-9+/=])"
        ),
        "Azure storage and Service Bus/Event Hubs connection strings (AccountKey=…, SharedAccessKey=…)",
        keywords=("key",),
    ),
    Rule(
        "azure-sas-token",
        _r(r"(?i)(?<![A-Za-z0-9])sig=(?P<secret>[A-Za-z0-9%+/]{30,}(?:%3D|=){0,2})(?![A-Za-z0-9%+/=])"),
        "Azure shared access signatures: the base64 HMAC in the sig= query parameter",
        keywords=("sig=",),
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
        _r(rf"{_START}(?P<secret>(?:xox[abprse]|xapp)-[A-Za-z0-9\-]{{10,}}){_END}"),
        "Slack token types (xoxb, xoxp, xoxa, xoxr, xoxs, xoxe, app-level xapp)",
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
        keywords=("bearer",),
    ),
    Rule(
        "basic-auth",
        _r(r"(?i)\bbasic\s+(?P<secret>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])"),
        "HTTP Basic credentials (RFC 7617): base64 of user:password after 'Basic'",
        lambda m: ":" in (_decoded(m["secret"]) or ""),
        keywords=("basic",),
    ),
    Rule(
        "command-line-credentials",
        _r(
            r"(?i)(?:\b(?:curl|wget|http|https|xh)\b[^\n]*?\s(?:-u|--user|--proxy-user)(?:\s+|=)"
            r"(?P<q>['\"]?)(?P<user>[^\s:'\"]+):(?P<secret>[^\s'\"]{3,})(?P=q)"
            r"|(?:--(?:http-|proxy-|ftp-)?password|--passwd|\bsshpass\s+-p)(?:\s*=\s*|\s+)"
            r"(?P<q2>['\"]?)(?P<secret2>[^\s'\"]{4,})(?P=q2)"
            # mysql -p<password>: the password glued to -p (lower case: -P is the port;
            # `-p` alone asks for it)
            r"|\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mysqlsh|mariadb(?:-dump|-admin)?)"
            r"\b[^\n]*?\s(?-i:-p)(?P<q3>['\"]?)(?P<secret3>[^\s'\"]{3,})(?P=q3))"
        ),
        "credentials on a command line: curl/wget -u user:password, --password=…, sshpass -p, "
        "mysql -p<password> (MySQL manual, 'Specifying a password on the command line')",
        lambda m: not _PLACEHOLDER_VALUE.match(m["secret"] or m["secret2"] or m["secret3"]),
        keywords=("curl", "wget", "http", "xh", "passw", "sshpass", "mysql", "mariadb"),
    ),
    Rule(
        "url-credentials",
        _r(
            r"(?i)\b[a-z][a-z0-9+.\-]{1,20}://(?P<user>[^\s/:@'\"<>]+):(?P<secret>[^\s/@'\"<>]+)@"
            r"[A-Za-z0-9.\-\[\]]+"
        ),
        "userinfo in URIs (RFC 3986 §3.2.1: user:password@host is deprecated)",
        _not_placeholder("secret"),
        keywords=("://",),
    ),
    Rule(
        "secret-assignment",
        _r(
            rf"(?im)(?<![A-Za-z0-9_])(?:export\s+)?(?P<name>{_SECRET_NAME})\s*=\s*(?P<q>['\"]?)"
            r"(?P<secret>[A-Za-z0-9_\-+/=.:@!%^*~#]{4,}?)(?P=q)(?=\s|$|[;,&)\]}])"
        ),
        ".env files (dotenv): NAME=value with a secret-ish name (PASSWORD, SECRET, TOKEN, API_KEY…)",
        _secret_value,
        keywords=("pass", "pwd", "secret", "token", "key", "credential"),
    ),
    Rule(
        "password-variable",
        _r(
            rf"(?m)(?<![A-Za-z0-9_])(?:export\s+|set\s+|\$env:)?(?:{_PASSWORD_VARIABLES})\s*=\s*(?P<q>['\"]?)"
            r"(?P<secret>[^\s'\"]{4,200}?)(?P=q)(?=\s|$|[;,&)\]}])"
        ),
        "password environment variables: PGPASSWORD (libpq), REDISCLI_AUTH (redis-cli), SSHPASS (sshpass -e)",
        _secret_value,
        keywords=("pgpassword", "rediscli_auth", "sshpass"),
    ),
    Rule(
        "high-entropy-secret",
        _r(
            rf"(?i)(?<![A-Za-z0-9])[\"']?{_SECRET_NAME}[\"']?\s*(?::|=|\bis\b)\s*[\"']?"
            r"(?P<secret>[A-Za-z0-9+/_\-]{32,}={0,2})(?![A-Za-z0-9+/_\-])"
        ),
        "a long random value (>= 32 chars, >= 3.5 bits/char) right after a secret-ish name and ':' or '='",
        _mixed("secret", 3.5),
        keywords=("pass", "pwd", "secret", "token", "key", "credential"),
    ),
    Rule(
        "quoted-secret-assignment",
        # A quoted value may hold spaces (a passphrase): PASSWORD="correct horse X staple",
        # "password": "…" (JSON), password: "…" (YAML, a bare key).
        _r(
            rf"(?im)(?<![A-Za-z0-9_])(?:export\s+)?(?:(?P<name>{_SECRET_NAME})\s*=|[\"'](?P<key>{_SECRET_NAME})[\"']\s*:"
            rf"|(?P<ykey>{_SECRET_NAME})[ \t]*:)"
            r"\s*(?P<q>['\"])(?P<secret>[^'\"\n]{4,200}?)(?P=q)"
        ),
        ".env files and JSON/YAML: a quoted value, spaces included, assigned to a secret-ish name",
        _secret_value,
        keywords=("pass", "pwd", "secret", "token", "key", "credential"),
    ),
    Rule(
        "password-in-prose",
        # A password written in a sentence, not assigned (`=` is secret-assignment's):
        # "password: hunter2 rocks", "my password is hunter2", "the password for the
        # staging db is …", "I set the password to …", "use password …", "Das Passwort ist
        # …", "le mot de passe est …", "la contraseña es …", "a senha é …", "пароль: …",
        # "비밀번호는 …", "密码是…", "パスワードは「…」です". The value is the run of
        # non-space characters right after the keyword and its separator on the same line
        # (ASCII after an English or CJK keyword: in CJK text it ends at the next non-ASCII
        # character, as a particle or copula follows it); `_prose_value` decides whether
        # it is a password.
        _r(
            rf"(?i)(?<![A-Za-z])(?:{_PW})(?![A-Za-z])"
            r"(?:[ \t]+(?:for|of)[ \t]+[^\s:=：]{1,40}(?:[ \t]+[^\s:=：]{1,40}){0,3}?)?"
            rf"{_PW_SEP}"
            + _quoted_or("secret6", rf"{_OPEN_QUOTE}(?P<secret>[!-~]{{4,200}})")
            +
            # a verb that gives the password its value: "set the password to …"
            rf"|(?<![A-Za-z]){_PW_VERB}[ \t]+(?:[A-Za-z']+[ \t]+){{0,3}}?(?:{_PW})[ \t]+(?:to|as)[ \t]+(?:be[ \t]+)?"
            + _quoted_or("secret7", rf"{_OPEN_QUOTE}(?P<secret2>[!-~]{{4,200}})")
            +
            # the value right after the keyword, where a verb or a list leads to it:
            # "use password …", "log in with password …", "user admin, password …"
            rf"|(?:(?<![A-Za-z])(?:use|using|try|enter|type|with)[ \t]+(?:the[ \t]+)?|,[ \t]*)(?:{_PW})[ \t]+"
            + _quoted_or("secret8", rf"{_OPEN_QUOTE}(?P<secret3>[!-~]{{4,200}})")
            + rf"|(?<!\w)(?:{_PW_EU})(?!\w){_PW_EU_SEP}"
            + _quoted_or("secret9", rf"{_OPEN_QUOTE}(?P<secret4>[^\s\"'`“”‘’«»„]{{4,200}})")
            + rf"|(?:{_PW_CJK})"
            r"[ \t]*[는은가이是为為はが]?[ \t]*[:：]?[ \t]*"
            + _quoted_or("secret10", r"[\"'`“‘「『]?(?P<secret5>[!-~]{4,200})")
        ),
        "a password in prose: a credential keyword (English, German, French, Spanish, Portuguese, "
        "Russian, Korean, Chinese, Japanese), a separator (':', 'is', 'set … to', a particle) and "
        "a value with a digit or symbol on the same line, or a passphrase in quotes",
        _prose_secret,
        keywords=(
            "passw",
            "passphrase",
            "passcode",
            "pw",
            "kennwort",
            "mot de passe",
            "contraseña",
            "contrasena",
            "senha",
            "palavra-passe",
            "пароль",
            "비밀번호",
            "비번",
            "패스워드",
            "密码",
            "密碼",
            "口令",
            "パスワード",
            "暗証番号",
        ),
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
        keywords=("@",),
    ),
    Rule(
        "home-path",
        _r(
            r"(?<![\w.\-\\])(?P<secret>(?:/home|/Users|[A-Za-z]:[\\/]Users)[\\/]"
            r"(?P<user>[^\s/\\'\"<>()|]+?))(?=[\\/]|[\s'\"<>(),;:]|\.(?:\s|$)|$)"
        ),
        "home directories on Linux (/home/NAME), macOS (/Users/NAME), Windows (C:\\Users\\NAME)",
        _personal_home,
        keywords=("/home", "/users", "\\users"),
    ),
)


def _compile_user(patterns: Iterable[str], key: str, source: str = "") -> list[Pattern]:
    """`patterns` of config key `key`, from layer `source`, compiled as the configuration
    compiles them (`config.compile_pattern`: RE2 in linear time when `source` is the
    repository's gitdream.toml, Python `re` for the user's own). Raises ConfigError naming
    the key, the pattern and what to do for one that does not compile."""
    compiled: list[Pattern] = [compile_pattern(key, pattern, source) for pattern in patterns]
    return compiled


def _configured(cfg: Config, key: str) -> list[Pattern]:
    """`_compile_user` of config key `key` of `cfg`, with the engine its layer calls for."""
    return _compile_user(cfg.list(key), key, cfg.source(key))


@dataclass(frozen=True)
class _GitleaksRule:
    """One rule of `screen_gitleaks.RULES`, compiled (see that module)."""

    name: str
    pattern: re.Pattern[str]
    group: int
    entropy: float
    keywords: tuple[str, ...]
    allow: tuple[tuple[str, tuple[re.Pattern[str], ...], tuple[str, ...], str], ...]


@dataclass(frozen=True)
class _GitleaksTable:
    rules: tuple[_GitleaksRule, ...]
    by_keyword: dict[str, tuple[int, ...]]  # keyword -> indexes of the rules it opens
    always: tuple[int, ...]  # rules without keywords
    allow: tuple[re.Pattern[str], ...]
    stopwords: tuple[str, ...]


@functools.cache
def _gitleaks() -> _GitleaksTable:
    """The generated gitleaks rules, compiled once (ASCII classes, as RE2's `\\w`, `\\b`)."""

    rules = tuple(
        _GitleaksRule(
            name,
            re.compile(regex, re.ASCII),
            group,
            floor,
            keywords,
            tuple(
                (target, tuple(re.compile(a, re.ASCII) for a in regexes), stopwords, condition)
                for target, regexes, stopwords, condition in allow
            ),
        )
        for name, regex, group, floor, keywords, allow in table.RULES
    )
    by_keyword: dict[str, list[int]] = {}
    for index, rule in enumerate(rules):
        for keyword in rule.keywords:
            by_keyword.setdefault(keyword, []).append(index)
    return _GitleaksTable(
        rules,
        {k: tuple(v) for k, v in by_keyword.items()},
        tuple(i for i, r in enumerate(rules) if not r.keywords),
        tuple(re.compile(a, re.ASCII) for a in table.ALLOW_REGEXES),
        table.STOPWORDS,
    )


def _gitleaks_allowed(rule: _GitleaksRule, secret: str, match: re.Match[str], line: str) -> bool:
    """gitleaks' allowlists (detect.go): a rule's own — regexes on the secret, the match or
    the line, stopwords in the secret, all or any of them — then the global one."""
    lowered = secret.lower()
    for target, regexes, stopwords, condition in rule.allow:
        where = {"secret": secret, "match": match[0], "line": line}[target]
        checks = []
        if regexes:
            checks.append(any(r.search(where) for r in regexes))
        if stopwords:
            checks.append(any(s in lowered for s in stopwords))
        if checks and (all(checks) if condition == "AND" else any(checks)):
            return True
    table = _gitleaks()
    return any(r.search(secret) for r in table.allow) or any(s in lowered for s in table.stopwords)


def _scan_gitleaks(text: str) -> list[Finding]:
    """Findings of the gitleaks rules; a rule runs only when one of its keywords occurs
    in the lower-cased text (gitleaks' prefilter)."""
    table = _gitleaks()
    lowered = text.lower()
    wanted = set(table.always)
    for keyword, indexes in table.by_keyword.items():
        if keyword in lowered:
            wanted.update(indexes)
    found = []
    for rule in (table.rules[i] for i in sorted(wanted)):
        for match in rule.pattern.finditer(text):
            group = rule.group
            if not group:  # gitleaks: the first capture group that matched, else the match
                group = next((i for i in range(1, (match.re.groups or 0) + 1) if match[i]), 0)
            start, end = match.span(group)
            secret = match[group]
            if not secret or (rule.entropy and entropy(secret) <= rule.entropy):
                continue
            line_start = text.rfind("\n", 0, start) + 1
            line_end = text.find("\n", end)
            line = text[line_start : line_end if line_end >= 0 else len(text)]
            if _gitleaks_allowed(rule, secret, match, line):
                continue
            found.append(Finding(rule.name, start, end, secret, mask(secret, rule.name)))
    return found


def _secret_span(rule: Rule, match: re.Match[str]) -> tuple[int, int]:
    for name in _SECRETS:
        if name in rule.pattern.groupindex and match.start(name) >= 0:
            return match.span(name)
    return match.span(0)


def _scan_rules(text: str, deny: Sequence[Pattern]) -> list[Finding]:
    """Findings of gitdream's rules, then gitleaks', then `deny`, in that order."""
    found: list[Finding] = []
    lowered = text.lower()
    for rule in RULES:
        if rule.keywords and not any(k in lowered for k in rule.keywords):
            continue
        for match in rule.pattern.finditer(text):
            if rule.accept is not None and not rule.accept(match):
                continue
            start, end = _secret_span(rule, match)
            found.append(Finding(rule.name, start, end, text[start:end], mask(text[start:end], rule.name)))
    found += _scan_gitleaks(text)
    for index, pattern in enumerate(deny):
        for hit in pattern.finditer(text):
            if hit.end() > hit.start():
                name = f"deny[{index}]"
                found.append(Finding(name, hit.start(), hit.end(), hit[0], mask(hit[0], name)))
    return found


# Invisible characters a token can hold without changing how it looks: format characters
# (Cf: zero-width space, joiners, soft hyphen, bidi controls, BOM), variation selectors,
# the combining grapheme joiner, Hangul fillers, and control characters other than
# whitespace.
_INVISIBLE_EXTRA = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0")


@functools.lru_cache(maxsize=1 << 16)  # per character: called for every non-ASCII one scanned
def _invisible(char: str) -> bool:
    if char in "\n\r\t":
        return False
    category = unicodedata.category(char)
    return (
        category in ("Cf", "Cc")
        or char in _INVISIBLE_EXTRA
        or "\ufe00" <= char <= "\ufe0f"
        or "\U000e0100" <= char <= "\U000e01ef"
    )


def normalize(text: str) -> tuple[str, list[int]] | None:
    """`text` as the scanner reads it a second time — each character NFKC-normalised
    (fullwidth `ｇｈｐ＿` is `ghp_`, ligatures are their letters), invisible characters
    removed — and, for each character of the result, the offset of the character of
    `text` it came from. None when that changes nothing (ASCII text always)."""
    if text.isascii() or (
        unicodedata.is_normalized("NFKC", text)
        and not any(_invisible(c) for c in set(text) if not c.isascii())
    ):
        return None
    out: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        if not char.isascii():
            char = _normalized(char)
        out.append(char)
        origin.extend([index] * len(char))
    return "".join(out), origin


@functools.lru_cache(maxsize=1 << 16)
def _normalized(char: str) -> str:
    """One non-ASCII character as `normalize` reads it: "" when invisible, else its NFKC
    form without invisible characters."""
    if _invisible(char):
        return ""
    return "".join(c for c in unicodedata.normalize("NFKC", char) if not _invisible(c))


# Runs of base64 (standard or URL-safe alphabet) long enough to hide a key, possibly
# wrapped over several lines.
_BASE64_RUN = re.compile(
    r"(?<![A-Za-z0-9+/_=-])[A-Za-z0-9+/_-]{24,}={0,2}(?:\r?\n[A-Za-z0-9+/_-]{16,}={0,2})*"
)
_DECODE_DEPTH = 2


def _scan_decoded(text: str, deny: Sequence[Pattern], depth: int) -> list[Finding]:
    """Findings inside base64 runs of `text` that decode to text: each covers the whole
    run, named after the rule that fired on the decoded text plus " (base64)"."""
    found = []
    for match in _BASE64_RUN.finditer(text):
        decoded = _decoded(match[0])
        if decoded is None:
            continue
        inner = _scan_all(decoded, deny, depth + 1)
        if inner:
            name = inner[0].rule if inner[0].rule.endswith("(base64)") else inner[0].rule + " (base64)"
            found.append(Finding(name, match.start(), match.end(), match[0], mask(match[0], name)))
    return found


def _scan_all(text: str, deny: Sequence[Pattern], depth: int = 0) -> list[Finding]:
    """Raw findings (overlaps included) of `text` as written, normalised (mapped back to
    offsets in `text`) and base64-decoded."""
    found = _scan_rules(text, deny)
    normalized = normalize(text)
    if normalized is not None:
        norm, origin = normalized
        for finding in _scan_rules(norm, deny):
            start = origin[finding.start]
            end = origin[finding.end - 1] + 1
            found.append(replace(finding, start=start, end=end, masked=mask(text[start:end], finding.rule)))
    if depth < _DECODE_DEPTH:
        found += _scan_decoded(text, deny, depth)
    return found


def scan_text(
    text: str, *, allow: Sequence[str | Pattern] = (), deny: Sequence[str | Pattern] = ()
) -> list[Finding]:
    """All findings in `text`, sorted by position. Findings that overlap are merged into
    one that covers them all and keeps the name of the earliest rule (gitdream's rules in
    `RULES` order, then gitleaks', then `deny`), so masking the result masks every part.
    `text` is scanned as written, after `normalize` and inside base64 (see the module
    docstring); a finding's `start`/`end` are offsets in `text` as written, its `text` the
    secret as the rule matched it.

    `deny` are extra regular expressions (each match is a finding named `deny[i]`);
    `allow` are regular expressions searched in each finding's matched text — a match
    drops the finding. Raises ConfigError for an invalid pattern.
    """
    allow_re = [_compile_user([p], "screen.allow")[0] if isinstance(p, str) else p for p in allow]
    deny_re = [_compile_user([p], "screen.deny")[0] if isinstance(p, str) else p for p in deny]
    found = [f for f in _scan_all(text, deny_re) if not any(a.search(f.text) for a in allow_re)]
    # Overlaps go to the earlier rule (RULES is ordered from specific to generic), so the
    # password of `postgres://u:pw@host` is url-credentials, not an e-mail address; the
    # span grows to cover the later finding too.
    kept: list[Finding] = []
    for finding in found:
        overlapping = [k for k in kept if finding.start < k.end and k.start < finding.end]
        if not overlapping:
            kept.append(finding)
            continue
        first = overlapping[0]
        start = min(finding.start, *(k.start for k in overlapping))
        end = max(finding.end, *(k.end for k in overlapping))
        if (start, end) != (first.start, first.end):
            merged = replace(first, start=start, end=end, masked=mask(text[start:end], first.rule))
            kept = [merged if k is first else k for k in kept if k is first or k not in overlapping]
        else:
            kept = [k for k in kept if k is first or k not in overlapping]
    kept.sort(key=lambda f: f.start)
    return kept


def user_patterns(cfg: Config) -> tuple[list[Pattern], list[Pattern]]:
    """`(allow, deny)` compiled from `screen.allow` and `screen.deny`: with RE2 in linear
    time for a list that came from the repository's gitdream.toml, with Python `re` for
    the user's own (`_compile_user`). Raises ConfigError for a pattern that does not
    compile."""
    return _configured(cfg, "screen.allow"), _configured(cfg, "screen.deny")


def redact(text: str, *, allow: Sequence[str | Pattern] = (), deny: Sequence[str | Pattern] = ()) -> str:
    """`text` with every finding replaced by its mask (`[REDACTED github-token, 40
    chars]`): for text that is recorded or shown (receipts, warnings, errors, material
    sent to a model), never written as memory."""
    for finding in reversed(scan_text(text, allow=allow, deny=deny)):
        text = text[: finding.start] + finding.masked + text[finding.end :]
    return text


PERSONAL_RULES = frozenset({"email-address", "home-path"})
"""Rules that find personal data rather than secrets: kept out of memory and receipts,
but not masked on the user's own terminal (`redact_terminal`)."""


def redact_terminal(text: str) -> str:
    """`text` with every secret masked, for a line gitdream prints on stderr (a warning, an
    error, its hint): a message that quotes repository content — a configuration value, a
    key name, a YAML error's excerpt — must never print a token, and stderr ends up in CI
    and hook logs (issue 16). Personal data (`PERSONAL_RULES`) is kept: the paths and
    addresses in a message are the user's own and name what to fix (`rm /home/…/lock`)."""
    for finding in reversed(scan_text(text)):
        if finding.rule not in PERSONAL_RULES:
            text = text[: finding.start] + finding.masked + text[finding.end :]
    return text


_LONG_TOKEN = re.compile(r"[!-~]{20,}")


def elide_tokens(text: str) -> str:
    """`text` with every long run of ASCII without spaces (20 characters or more, letters
    and digits mixed) masked like a finding: for titles and topic names an engine made up
    and nothing vouched for, which may hold a secret the scanner cannot recognise (cut
    short, lower-cased). The text is normalised first (`normalize`), so fullwidth letters
    or a zero-width space cannot keep a run apart."""

    def mask_run(match: re.Match[str]) -> str:
        run = match[0]
        mixed = any(c.isdigit() for c in run) and any(c.isalpha() for c in run)
        return mask(run, "token") if mixed else run

    normalized = normalize(text)
    return _LONG_TOKEN.sub(mask_run, normalized[0] if normalized is not None else text)


def redact_json(
    value: Any, *, allow: Sequence[str | Pattern] = (), deny: Sequence[str | Pattern] = ()
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

    allow, deny = user_patterns(cfg)
    result = ScreenResult()
    source_pieces: dict[str, dict[str, Finding]] = {}
    scanned: dict[str, list[Finding]] = {}

    def findings_in(text: str) -> list[Finding]:
        """`scan_text(text)`, once per distinct text (titles and topics repeat, and so do
        sources)."""
        if text not in scanned:
            scanned[text] = scan_text(text, allow=allow, deny=deny)
        return scanned[text]

    def pieces_of(entry_id: str) -> dict[str, Finding]:
        if entry_id not in source_pieces:
            found: dict[str, Finding] = {}
            text = (sources or {}).get(entry_id, "")[:SOURCE_SCAN_CHARS]
            for finding in findings_in(text):
                for piece in _pieces(finding.text):
                    found.setdefault(piece, finding)
            source_pieces[entry_id] = found
        return source_pieces[entry_id]

    for unit in units:
        findings: list[dict[str, str]] = []
        for field_name in ("title", "body", "topic"):
            for finding in findings_in(getattr(unit, field_name)):
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
