"""The deterministic scanner: a corpus of secret formats that must be found, and ordinary
notes that must not be.

Secret-shaped values are generated at test time from a fixed seed, so this file holds no
string that looks like a credential (and no real key: every value is random)."""

from __future__ import annotations

import base64
import hashlib
import string

import pytest

from gitdream import config
from gitdream.dream.screen import RULES, entropy, mask, scan_text, screen_units
from gitdream.errors import ConfigError
from gitdream.units import Unit
from tests.helpers import deadline

ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"
HEX = "0123456789abcdef"
UPPER_NUM = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"


def rnd(n: int, alphabet: str = ALNUM, seed: str = "") -> str:
    """n pseudo-random characters of `alphabet`, fixed by `seed` (deterministic)."""
    out = []
    counter = 0
    while len(out) < n:
        digest = hashlib.sha256(f"{seed}:{n}:{counter}".encode()).digest()
        out.extend(alphabet[b % len(alphabet)] for b in digest)
        counter += 1
    return "".join(out[:n])


def secrets() -> list[tuple[str, str, str]]:
    """(expected rule, text containing the secret, the secret itself)."""
    cases = []

    def add(rule: str, template: str, secret: str) -> None:
        cases.append((rule, template.format(s=secret), secret))

    add("aws-access-key-id", "The deploy used {s} for the bucket.", "AKIA" + rnd(16, UPPER_NUM, "aws"))
    add("aws-access-key-id", "session key {s}", "ASIA" + rnd(16, UPPER_NUM, "aws2"))
    add("aws-secret-access-key", "aws_secret_access_key = {s}", rnd(40, B64, "awss"))
    add("gcp-api-key", "maps key {s} in the config", "AIza" + rnd(35, B64URL, "gcp"))
    add("google-oauth-token", "Authorization header had {s}", "ya29." + rnd(60, B64URL, "ya"))
    add("github-token", "push with {s}", "ghp_" + rnd(36, ALNUM, "gh"))
    add("github-token", "app token {s}", "ghs_" + rnd(36, ALNUM, "ghs"))
    add("github-token", "fine-grained {s}", "github_pat_" + rnd(22, ALNUM, "p1") + "_" + rnd(59, ALNUM, "p2"))
    add("gitlab-token", "CI used {s}", "glpat-" + rnd(20, B64URL, "gl"))
    add("slack-token", "bot {s}", "xoxb-" + rnd(12, string.digits, "s1") + "-" + rnd(24, ALNUM, "s2"))
    add(
        "slack-webhook",
        "alerts go to {s}",
        "https://hooks.slack.com/services/T"
        + rnd(8, UPPER_NUM, "w1")
        + "/B"
        + rnd(8, UPPER_NUM, "w2")
        + "/"
        + rnd(24, ALNUM, "w3"),
    )
    add(
        "discord-webhook",
        "posted to {s}",
        "https://discord.com/api/webhooks/" + rnd(18, string.digits, "d1") + "/" + rnd(68, B64URL, "d2"),
    )
    add(
        "discord-bot-token",
        "bot login {s}",
        "M" + rnd(23, ALNUM, "db1") + "." + rnd(6, B64URL, "db2") + "." + rnd(27, B64URL, "db3"),
    )
    add(
        "telegram-bot-token",
        "the bot {s} answered",
        rnd(10, string.digits, "tg") + ":AA" + rnd(33, B64URL, "tg2"),
    )
    add("stripe-key", "charge with {s}", "sk_live_" + rnd(24, ALNUM, "st"))
    add("stripe-key", "restricted {s}", "rk_live_" + rnd(24, ALNUM, "rk"))
    add("openai-key", "OPENAI key {s} worked", "sk-proj-" + rnd(80, B64URL, "oa"))
    add("openai-key", "legacy {s}", "sk-" + rnd(48, ALNUM, "oal"))
    add("anthropic-key", "used {s} for the call", "sk-ant-api03-" + rnd(93, B64URL, "an") + "AA")
    add("twilio-api-key", "twilio {s}", "SK" + rnd(32, HEX, "tw"))
    add("twilio-account-sid", "account {s}", "AC" + rnd(32, HEX, "tw2"))
    add("sendgrid-key", "mail via {s}", "SG." + rnd(22, B64URL, "sg1") + "." + rnd(43, B64URL, "sg2"))
    add("npm-token", "publish with {s}", "npm_" + rnd(36, ALNUM, "npm"))
    add("pypi-token", "upload with {s}", "pypi-AgEIcHlwaS5vcmc" + rnd(60, B64URL, "pypi"))
    add(
        "jwt",
        "session cookie {s}",
        "eyJhbGciOiJIUzI1NiJ9.eyJ" + rnd(40, B64URL, "j1") + "." + rnd(43, B64URL, "j2"),
    )
    # Regression: only the BEGIN line was the finding, so masking it left the key's body.
    add(
        "private-key",
        "key:\n{s}...\n",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END RSA PRIVATE KEY-----",
    )
    add("private-key", "{s}", "-----BEGIN OPENSSH PRIVATE KEY-----")
    add("private-key", "{s}", "-----BEGIN PGP PRIVATE KEY BLOCK-----")
    # Regression: the body and END line of an encrypted PEM key (a blank line after its
    # Proc-Type/DEK-Info headers splits it into two Markdown paragraphs) passed the scanner.
    add("private-key", "\n{s}", "-----END ENCRYPTED PRIVATE KEY-----")
    add("base64-block", "{s}\n", rnd(64, B64, "pem"))
    # Regression: Azure connection strings were not recognised at all.
    add(
        "azure-storage-key",
        "DefaultEndpointsProtocol=https;AccountName=opsprod;AccountKey={s};EndpointSuffix=core.windows.net",
        rnd(86, B64, "az") + "==",
    )
    add(
        "azure-storage-key",
        "Endpoint=sb://ops.servicebus.windows.net/;SharedAccessKeyName=send;SharedAccessKey={s}",
        rnd(43, B64, "sb") + "=",
    )
    add("url-credentials", "connect to postgres://deploy:{s}@db.internal:5432/app", rnd(16, ALNUM, "pw"))
    add("url-credentials", "clone https://bot:{s}@git.corp.local/x.git", rnd(20, ALNUM, "pw2"))
    add("secret-assignment", "in .env:\nDB_PASSWORD={s}\n", rnd(12, ALNUM, "env"))
    add("secret-assignment", "export API_KEY='{s}'", rnd(18, ALNUM, "env2"))
    add("secret-assignment", "SECRET={s}", "hunter2-but-longer")
    add("high-entropy-secret", '"signing_secret": "{s}"', rnd(64, HEX, "hex"))
    add("bearer-token", "curl -H 'Authorization: Bearer {s}'", rnd(40, B64URL, "bt"))
    # Regressions (issue 16): formats the scanner missed.
    add(
        "basic-auth",
        "the hook sends Authorization: Basic {s} to the API",
        base64.b64encode(("deploy:" + rnd(16, ALNUM, "ba")).encode()).decode(),
    )
    add(
        "command-line-credentials",
        "fetch it with curl -u deploy:{s} https://ci.corp.local/x",
        rnd(14, ALNUM, "cu"),
    )
    add("command-line-credentials", "wget --password={s} https://files.corp.local/a", rnd(12, ALNUM, "wg"))
    add(
        "azure-sas-token",
        "upload to https://ops.blob.core.windows.net/c/x?sv=2022-11-02&sig={s}&se=2026",
        rnd(43, B64, "sas") + "%3D",
    )
    add(
        "quoted-secret-assignment",
        'in .env: PASSWORD="{s}"',
        "correct horse " + rnd(6, ALNUM, "qp") + " staple",
    )
    add(
        "slack-token",
        "socket mode {s}",
        "xapp-1-A"
        + rnd(10, UPPER_NUM, "xa")
        + "-"
        + rnd(13, string.digits, "xa2")
        + "-"
        + rnd(40, HEX, "xa3"),
    )
    # Regressions: a password written in a sentence, in each language, passed the scanner.
    add("password-in-prose", "password: {s} rocks", "hunter2" + rnd(4, ALNUM, "pp1"))
    add("password-in-prose", "my password is {s} now", "h4x0r" + rnd(6, ALNUM, "pp2"))
    add(
        "password-in-prose",
        "The password for the staging db is {s} (ask ops)",
        "Tr0ub4dor&3" + rnd(3, ALNUM, "pp3"),
    )
    add("password-in-prose", "서버 비밀번호는 {s} 입니다", "hunter2" + rnd(4, ALNUM, "pp4"))
    add("password-in-prose", "비밀번호: {s}", "s3cret-" + rnd(6, ALNUM, "pp5"))
    add("password-in-prose", "数据库密码是{s}，别外传", "hunter2" + rnd(4, ALNUM, "pp6"))
    add("password-in-prose", "密码：{s}", "pw-" + rnd(8, ALNUM, "pp7") + "9")
    add("password-in-prose", "サーバーのパスワードは「{s}」です", "hunter2" + rnd(4, ALNUM, "pp8"))
    add("password-in-prose", "パスワード: {s}", "p4ss" + rnd(6, ALNUM, "pp9"))
    # Regressions (issue 16): a quoted value under a bare YAML key, a passphrase quoted in
    # prose (in each language of password-in-prose), password variables, mysql -p….
    phrase = "correct horse " + rnd(6, string.ascii_lowercase, "yq") + " staple"
    add("quoted-secret-assignment", 'db:\n  password: "{s}"\n', phrase)
    add("quoted-secret-assignment", "api_key: '{s}'", rnd(24, ALNUM, "yk"))
    add("password-in-prose", 'the password is "{s}" now', phrase)
    add("password-in-prose", "Das Passwort ist „{s}“.", phrase)
    add("password-in-prose", "le mot de passe est « {s} »", phrase)
    add("password-in-prose", 'la contraseña es "{s}"', phrase)
    add("password-in-prose", 'a senha é "{s}"', phrase)
    add("password-in-prose", "пароль: «{s}»", phrase)
    add("password-in-prose", '서버 비밀번호는 "{s}" 입니다', phrase)
    add("password-in-prose", "数据库密码是“{s}”，别外传", phrase)
    add("password-in-prose", "パスワードは「{s}」です", phrase)
    add("password-variable", "PGPASSWORD={s} psql -h db.internal app", rnd(14, ALNUM, "pg"))
    add("password-variable", "export REDISCLI_AUTH='{s}'", rnd(20, ALNUM, "rd"))
    add("password-variable", "SSHPASS={s} sshpass -e ssh deploy@host", rnd(12, ALNUM, "sp"))
    add("command-line-credentials", "mysql -h db -uroot -p{s} app < dump.sql", rnd(12, ALNUM, "my"))
    add("command-line-credentials", "mysqldump --password={s} app", rnd(12, ALNUM, "md"))
    add("email-address", "ask {s} about it", "jane.doe@acme-corp.com")
    add("email-address", "cc {s}", "ops+alerts@mail.bigco.io")
    add("home-path", "the file is in {s}/projects/x", "/home/alice")
    add("home-path", "see {s}/Library/Logs", "/Users/bob.smith")
    add("home-path", r"log at {s}\AppData\Local", r"C:\Users\carol")
    return cases


SECRETS = secrets()


def test_the_corpus_covers_at_least_fifteen_formats() -> None:
    assert len({rule for rule, _, _ in SECRETS}) >= 15
    assert len({r.name for r in RULES}) == len(RULES)


@pytest.mark.parametrize(
    ("rule", "text", "secret"), SECRETS, ids=[f"{c[0]}-{i}" for i, c in enumerate(SECRETS)]
)
def test_secret_is_found_and_masked(rule: str, text: str, secret: str) -> None:
    findings = scan_text(text)
    assert [f.rule for f in findings] == [rule], findings
    assert findings[0].text == secret
    # Regression: the mask kept the first 4 characters (`ghp_… (40 chars)`); it names the
    # rule and the length only (of everything it covers: a finding of another rule that
    # overlaps it is merged into it).
    covered = text[findings[0].start : findings[0].end]
    assert secret in covered
    assert findings[0].masked == f"[REDACTED {rule}, {len(covered)} chars]"


CLEAN = [
    # Regression: a Co-Authored-By trailer's no-reply address rejected whole units.
    "Co-Authored-By: Claude <noreply@anthropic.com>",
    "Signed-off-by: bot <12345+octocat@users.noreply.github.com>",
    "Replies go to no-reply@service.io and do_not_reply is not an address.",
    "Rollbacks need the previous image tag; keep the last three tags in the registry.",
    "部署前先确认验收脚本,回滚需要上一版的镜像标签。",
    "デプロイの前にテストを実行すること。",
    "Fixed in commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 after the review.",
    "short sha 1a2b3c4 and tag v1.2.3",
    "request id 123e4567-e89b-12d3-a456-426614174000 failed twice",
    "On 2026-03-01 at 12:00:00Z the job ran; next on 2026-03-02.",
    "See https://docs.python.org/3/library/re.html#re.search and https://example.com/home/about/",
    "API base is https://api.anthropic.com/v1/messages (no key in the URL).",
    "def scan(text: str) -> list[str]:\n    return [m.group(0) for m in RE.finditer(text)]\n",
    "max_tokens=4096, timeout=120, retries=2",
    "const token = getToken();  // read from the keychain",
    "password = os.environ['DB_PASSWORD']",
    "export API_KEY=$API_KEY",
    "DB_PASSWORD=<password>",
    "SECRET=changeme",
    "TOKEN_COUNT=12",
    "postgres://user:password@localhost/db is the documented example",
    "postgres://localhost:5432/app has no credentials",
    "contact jane@example.com or ops@service.test",
    "git@github.com:org/repo.git is the remote",
    "the asset icon@2x.png is blurry",
    "Files live under ~/projects and /home/<USER>/projects and /Users/$USER/Library",
    "CI paths look like /home/runner/work/repo",
    r"Windows: C:\Users\%USERNAME%\AppData",
    "Use the @property decorator and @dataclass(frozen=True).",
    "npm install @scope/pkg@1.2.3",
    "sk-learn is not a key, nor is sk-2024-release-notes-for-the-whole-team-and-friends",
    "The token bucket refills at 10 tokens per second.",
    "SHA-256 of the file: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "base64 of the logo: iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
    "The word Bearer alone, or bearer of bad news.",
    "-----BEGIN PUBLIC KEY----- is fine to share",
    "Model claude-sonnet-4-5 answered in 3.2 s with stop_reason tool_use.",
    # prose about passwords, without one
    "Reset your password in settings, then sign in again.",
    "The password is required; passwords must be 12 characters or more.",
    "password: see the vault entry for the staging db",
    "Password: <password>, token: ***",
    "the password was reset at 10:30 by the on-call",
    "passwordless login via passkey is enabled",
    # YAML keys and commands without a password in them
    'password: ""',
    "password: <redacted>",
    'password: "<redacted>"',
    "api_key: ''",
    "password_min_length: 12",
    'password_policy: "strong"',
    'the password is "too short", try again',
    'the password is "required"',
    "PGPASSWORD=$DB_PASS psql -h db",
    'export PGPASSWORD="${PGPASSWORD}"',
    "mysql -h db -P3306 -u root -p app",
    "mysql -u root -p",
    "비밀번호를 재설정하려면 설정 페이지로 이동하세요.",
    "密码错误，请在设置中重置密码。",
    "パスワードを忘れた場合は設定から再設定してください。",
]


@pytest.mark.parametrize("text", CLEAN)
def test_ordinary_text_is_not_flagged(text: str) -> None:
    assert scan_text(text) == []


def test_allow_drops_a_finding_and_deny_adds_one() -> None:
    text = "ask jane.doe@acme-corp.com about PROJECT-FALCON"
    assert [f.rule for f in scan_text(text)] == ["email-address"]
    assert scan_text(text, allow=[r"@acme-corp\.com$"]) == []
    found = scan_text(text, deny=[r"PROJECT-[A-Z]+"])
    assert [f.rule for f in found] == ["email-address", "deny[0]"]


def test_bad_pattern_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"screen\.deny"):
        scan_text("x", deny=["("])


def unit(title: str, body: str) -> Unit:
    return Unit(title, body, "experience", "create", "deploy", ("a.md#L1-L1",))


def test_screen_units_rejects_with_masked_reason() -> None:
    token = "ghp_" + rnd(36, ALNUM, "unit")
    units = [unit("Rollback", "Keep the previous tag."), unit("Token", f"push with {token}")]
    result = screen_units(units, config.defaults())
    assert result.kept == [units[0]]
    [rejected] = result.rejected
    assert rejected.stage == "screen"
    assert rejected.reason == "secret scanner: github-token in body ([REDACTED github-token, 40 chars])"
    assert token not in rejected.reason
    assert token not in str(rejected.to_json())
    assert result.calls == []


def test_screen_units_uses_config_allow_and_deny() -> None:
    cfg = config.defaults().with_overrides(
        {"screen.allow": ([r"@acme\.io$"], "test"), "screen.deny": ([r"(?i)falcon"], "test")}
    )
    kept = unit("Mail", "write to ops@acme.io")
    denied = unit("Codename", "Project Falcon ships Friday")
    result = screen_units([kept, denied], cfg)
    assert result.kept == [kept]
    assert "deny[0]" in result.rejected[0].reason


def test_mask_and_entropy() -> None:
    assert mask("abcdefghijklmnopqrstuvwxyz") == "[REDACTED secret, 26 chars]"
    assert mask("abc", "github-token") == "[REDACTED github-token, 3 chars]"
    assert entropy("") == 0
    assert entropy("aaaa") == 0
    assert entropy("abcd") == 2


@pytest.mark.parametrize("run", ["a-", "a_", "a.", "ab-1-"])
def test_scanner_is_linear_in_runs_of_name_parts(run: str) -> None:
    """Regression test: the secret-name prefix `(?:[A-Za-z0-9]+[_\\-.])*` rescanned an
    "a-a-a-…" run from each of its letters: 4 kB took seconds, a model's 40 kB unit body
    minutes."""
    text = run * (40_000 // len(run))
    with deadline(10, "scan_text on a 40 kB run of name parts"):
        assert scan_text(text) == []
    # names with several parts are still secret names
    assert [f.rule for f in scan_text("MY_APP_PROD_DB_PASSWORD=Zq8#mX2v!pL")] == ["secret-assignment"]


def test_a_unit_holding_part_of_a_secret_from_its_source_is_rejected() -> None:
    """Regression test: a secret cut short (a model's clipped copy, a 400-character fact)
    or lower-cased (a topic slug) is no longer recognisable on its own, so such a unit
    passed the scanner and part of the secret was committed."""
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI0MjQyNDIiLCJyb2xlIjoiZGVwbG95In0.c2lnbmF0dXJlMTIzNDU2"
    key = "AKIA" + "Q3EGRTXW7LZ5N2VB"
    sources = {"log.md#L1-L1": f"use {jwt} for the deploy", "log.md#L2-L2": f"key {key} rotated"}

    def unit(body: str, topic: str = "deploy", source: str = "log.md#L1-L1") -> Unit:
        return Unit("Deploys", body, "experience", "create", topic, (source,))

    units = [
        unit(f"Use {jwt[:40]} for the deploy."),  # cut short: one dot, not a JWT any more
        unit("Rotated the key.", topic=key.lower(), source="log.md#L2-L2"),  # lower-cased slug
        unit("Use the deploy token from the vault."),  # prose about it: kept
        unit("Build 20260302 passed."),  # digits, but no piece of the secret
    ]
    result = screen_units(units, config.defaults(), sources=sources)
    assert [u.body for u in result.kept] == ["Use the deploy token from the vault.", "Build 20260302 passed."]
    reasons = [r.reason for r in result.rejected]
    assert "jwt" in reasons[0] and "part of [REDACTED jwt, " in reasons[0] and jwt[4:] not in reasons[0]
    assert "aws-access-key-id" in reasons[1] and key not in reasons[1]
    # without the sources, nothing tells the cut-short copy from prose
    assert len(screen_units(units, config.defaults()).kept) == 4


# Regression (issue 16): RE2 reads \d, \w and \s as ASCII, so a repository's deny pattern
# silently stopped matching Korean, Arabic-Indic or ideographic-space text that the same
# pattern matches from the user config (Python `re`). A repository pattern now means what
# it means under Python `re`: each case is judged by Python `re` itself.
UNICODE_CASES = [
    (r"\d{4}", "코드 ١٢٣٤"),
    (r"\d{4}", "abcd"),
    (r"\D", "١٢٣"),
    (r"\D", "١x"),
    (r"고객\w+", "고객데이터는"),
    (r"\w+콘", "팔콘"),
    (r"\W팔콘", "프로팔콘"),
    (r"\W팔콘", "프로 팔콘"),
    (r"팔콘\s프로젝트", "팔콘\u3000프로젝트"),
    (r"팔콘\s프로젝트", "팔콘\xa0프로젝트"),
    (r"\S+", "\u3000\u2003"),
    (r"[\d\s]+번", "١٢\u3000번"),
    (r"[^\d]", "١٢٣"),
    (r"[\w-]+@corp", "김-철수@corp"),
    (r"\\d", "\\d"),
    (r"\\d", "5"),
    (r"[]\d]", "]"),
    (r"(?i)\bfalcon\b", "the Falcon data"),
]


@pytest.mark.parametrize(("pattern", "text"), UNICODE_CASES)
def test_a_repository_pattern_matches_as_python_re_does(pattern: str, text: str) -> None:
    import re

    compiled = config.compile_pattern("screen.deny", pattern, config.REPO_FILE)
    assert (compiled.search(text) is not None) == (re.search(pattern, text) is not None)


@pytest.mark.parametrize(
    ("pattern", "text", "found"),
    [
        (r"\Q\d\E", "\\d", True),
        (r"\Q\d\E", "5", False),
        (r"[[:alpha:]]\d", "a١", True),
        (r"[[:alpha:]]\d", "a", False),
    ],
)
def test_re2_only_syntax_keeps_its_meaning(pattern: str, text: str, found: bool) -> None:
    # RE2's literal text \Q…\E and POSIX classes, which Python `re` has not: kept as written
    compiled = config.compile_pattern("screen.deny", pattern, config.REPO_FILE)
    assert (compiled.search(text) is not None) is found


@pytest.mark.parametrize("pattern", [r"\b팔콘\b", r"\B프로젝트", r"\b\w+\b", r"(?i)\bfalcon\W"])
def test_a_repository_word_boundary_re2_cannot_keep_is_refused(pattern: str) -> None:
    # RE2's \b is ASCII-only: `\b팔콘\b` never matched Korean text, and nothing said so
    with pytest.raises(ConfigError) as raised:
        config.compile_pattern("screen.deny", pattern, config.REPO_FILE)
    assert "gitdream.toml: key 'screen.deny'" in raised.value.message
    assert r"(?:^|[^\p{L}\p{N}_])" in raised.value.message  # how to write it


@pytest.mark.parametrize("pattern", [r"[\W]", r"[a\S]"])
def test_a_repository_class_re2_cannot_write_is_refused(pattern: str) -> None:
    with pytest.raises(ConfigError, match=r"inside a character class"):
        config.compile_pattern("screen.deny", pattern, config.REPO_FILE)


def test_the_written_boundary_the_message_suggests_matches_korean_text() -> None:
    boundary = r"(?:^|[^\p{L}\p{N}_])팔콘(?:[^\p{L}\p{N}_]|$)"
    compiled = config.compile_pattern("screen.deny", boundary, config.REPO_FILE)
    found = scan_text("결정: 팔콘 프로젝트 고객 데이터는 서울 리전에만 저장한다.", deny=[compiled])
    assert [f.rule for f in found] == ["deny[0]"]
    assert scan_text("팔콘스 팀", deny=[compiled]) == []


# Regressions (issue 16): password-in-prose missed passwords in the other languages the
# offline engine reads and in English verb forms (so they were committed to memory), and
# rejected good facts: a password manager's name, a hyphenated word whose `-` counted as
# the required symbol, a length range, code that reads the password from the environment.
PROSE_PASSWORDS = [
    ("Das Passwort ist {s}", "Sommer2024!"),
    ("Passwort: {s}", "Sommer2024!"),
    ("das Kennwort lautet {s}", "Winter2025#"),
    ("le mot de passe est {s}", "Soleil2024!"),
    ("mot de passe : {s}", "Soleil2024!"),
    ("la contraseña es {s}", "Verano2024!"),
    ("contraseña: {s}", "Verano2024!"),
    ("a senha é {s}", "Verao2024!"),
    ("пароль: {s}", "Лето2024!"),
    ("Пароль — {s}", "Лето2024!"),
    ("비번은 {s}", "qwer1234!"),
    ("I set the password to {s}", "Summer2024!"),
    ("changed password to {s} yesterday", "Summer2024!"),
    ("we reset the staging password to {s}", "Summer2024!"),
    ("the new password will be {s}", "Summer2024!"),
    ("Use password {s} to log in.", "Summer2024!"),
    ("log in with password {s}", "Summer2024!"),
    ("user admin, password {s}", "Summer2024!"),
    ("password → {s}", "Summer2024!"),
    ("password - {s}", "Summer2024!"),
    ("The password's {s}", "Summer2024!"),
    ("pw: {s}", "Tr0ub4dor&3"),
    ("pwd is {s}", "Tr0ub4dor&3"),
]


@pytest.mark.parametrize(("template", "secret"), PROSE_PASSWORDS)
def test_a_password_in_prose_is_found(template: str, secret: str) -> None:
    text = template.format(s=secret)
    findings = scan_text(text)
    assert [f.rule for f in findings] == ["password-in-prose"], findings
    assert findings[0].text == secret


PROSE_WITHOUT_PASSWORD = [
    # a password manager's name says where the password is
    "Password: 1Password holds the current one, ask ops.",
    "비밀번호는 1Password에 저장되어 있습니다.",
    "パスワードは1Passwordに保存されています。",
    "パスワード：1Passwordの「Staging」を参照",
    "비밀번호: 1Password의 Staging 항목 참고",
    # a hyphenated word: the hyphen is not the symbol of a password
    "the password is e-mailed to new hires",
    "the password is case-sensitive, so type it carefully",
    "the password is sha256-hashed before storage",
    "the password is base64-encoded in the header",
    "the password is URL-encoded, then sent",
    "the password is v2-hashed now",
    "password: 30-day expiry for every account",
    # a length range is a policy
    "비밀번호는 8~16자, 특수문자 1개 이상",
    "密码是8-16位",
    "パスワードは8～16文字です",
    "password: 8-16 characters",
    # code that reads the password
    "password: process.env.DB_PASSWORD",
    "password: ENV[DB_PASSWORD]",
    "password: %(DB_PASSWORD)s",
    "password: {DB_PASSWORD}",
    # prose about passwords in the other languages and verb forms
    "Das Passwort ist zu kurz.",
    "le mot de passe est obligatoire",
    "la contraseña es incorrecta",
    "a senha é obrigatória",
    "пароль: см. хранилище",
    "비번은 관리자에게 문의하세요.",
    "I set the password to expire after 90 days",
    "reset the password to the default in settings",
    "use password managers, never sticky notes",
    "log in with password (optional) or passkey",
    "user admin, password reset required",
    "the password's length is checked",
]


@pytest.mark.parametrize("text", PROSE_WITHOUT_PASSWORD)
def test_prose_about_a_password_is_not_a_finding(text: str) -> None:
    assert scan_text(text) == []
