"""Secrets past the scanner (issue 16, case 4): invisible characters, fullwidth letters,
encodings and formats the scanner missed, and findings printed in part.

Every secret rule — gitdream's own and each rule generated from gitleaks' rule set — is
tried as written and in Unicode variants (a zero-width space, a soft hyphen, a word joiner
or a BOM every few characters of the secret, the whole text in fullwidth letters): each is
found, and masking it leaves no piece of the secret. Then a real dream over a log and a
transcript holding the attacks the issue lists writes none of them anywhere, and prints
none of them. Secret-shaped values are generated at test time (seeded): this file holds
none.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
from pathlib import Path

import pytest

from gitdream.dream import screen
from gitdream.dream.screen import RULES, mask, normalize, redact, scan_text
from tests.dream.test_screen import SECRETS as BUILTIN_CASES
from tests.helpers import cli, commit_all, git, write
from tests.reliability.probes import EVERY_ENTRY, LOGS, SESSIONS, everything_written, raw_blob_ids
from tests.reliability.secretsamples import fullwidth, interleave, sample

INVISIBLE = {
    "zero-width-space": "\u200b",
    "soft-hyphen": "\u00ad",
    "word-joiner": "\u2060",
    "bom": "\ufeff",
}
PIECE = 8


def _normal(text: str) -> str:
    found = normalize(text)
    return found[0] if found is not None else text


def _pieces_left(redacted: str, secret: str) -> list[str]:
    """Windows of PIECE characters of `secret` (normalised) still in `redacted`
    (normalised), in any letter case; only windows holding a letter or digit count."""
    hay = re.sub(r"\[REDACTED [^\]]*\]", " ", _normal(redacted)).casefold()
    norm = _normal(secret).casefold()
    windows = {norm[i : i + PIECE] for i in range(max(1, len(norm) - PIECE + 1))}
    return sorted(w for w in windows if sum(ch.isalnum() for ch in w) >= 6 and w in hay)


def _variants(text: str, start: int, end: int) -> dict[str, str]:
    out = {"as-written": text, "fullwidth": fullwidth(text)}
    for name, char in INVISIBLE.items():
        out[name] = interleave(text, start, end, char)
    return out


def _gitleaks_sample(rule: screen._GitleaksRule) -> tuple[str, str]:
    """(text, secret): a sample of `rule` the rule itself finds, in a short note."""
    for attempt in range(40):
        value = sample(rule.pattern, f"{rule.name}:{attempt}", wander=attempt >= 5)
        keyword = (
            "" if not rule.keywords or any(k in value.lower() for k in rule.keywords) else rule.keywords[0]
        )
        text = f"note {keyword} {value} end"
        found = [f for f in screen._scan_gitleaks(text) if f.rule == rule.name]
        if found:
            return text, found[0].text
    raise AssertionError(f"no sample of {rule.name} is found by the rule itself")


def _cases() -> list[tuple[str, str, str]]:
    """(rule, text, secret) for every built-in rule (the scanner's corpus) and every
    gitleaks rule (a generated sample)."""
    cases = [(rule, text, secret) for rule, text, secret in BUILTIN_CASES]
    names = {r.name for r in RULES}
    assert names <= {rule for rule, _, _ in cases}, (
        f"rules without a corpus case: {names - {c[0] for c in cases}}"
    )
    for rule in screen._gitleaks().rules:
        text, secret = _gitleaks_sample(rule)
        cases.append((rule.name, text, secret))
    return cases


CASES = _cases()


def test_every_rule_of_both_tables_has_a_case() -> None:
    rules = {c[0] for c in CASES}
    assert {r.name for r in RULES} <= rules
    assert {r.name for r in screen._gitleaks().rules} <= rules
    assert len(screen._gitleaks().rules) >= 200, "the generated gitleaks table is in place"


@pytest.mark.parametrize(("rule", "text", "secret"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_every_rule_finds_its_secret_in_unicode_disguise(rule: str, text: str, secret: str) -> None:
    start = text.index(secret)
    for variant, disguised in _variants(text, start, start + len(secret)).items():
        findings = scan_text(disguised)
        assert findings, f"{rule}: {variant} variant not found"
        redacted = redact(disguised)
        left = _pieces_left(redacted, secret)
        assert not left, f"{rule}: {variant} variant leaves {len(left)} piece(s) after masking"
        for finding in findings:
            assert finding.masked == mask(disguised[finding.start : finding.end], finding.rule)


# --- the attacks of the issue, through a real dream ------------------------------------------

LOG = f"{LOGS}/2026/03/2026-03-04.md"
SESSION = f"{SESSIONS}/2026-03-04-chat.jsonl"
WELL_KNOWN = (
    "github-pat",
    "github-oauth",
    "github-app-token",
    "github-fine-grained-pat",
    "gitlab-pat",
    "slack-bot-token",
    "slack-app-token",
    "slack-webhook-url",
    "aws-access-token",
    "gcp-api-key",
    "stripe-access-token",
    "openai-api-key",
    "anthropic-api-key",
    "huggingface-access-token",
    "vault-service-token",
    "digitalocean-pat",
    "shopify-access-token",
    "grafana-cloud-api-token",
    "grafana-service-account-token",
    "databricks-api-token",
    "npm-access-token",
    "pypi-upload-token",
    "sendgrid-api-token",
    "twilio-api-key",
    "linear-api-key",
    "doppler-api-token",
    "postman-api-token",
    "pulumi-api-token",
    "sentry-user-token",
    "planetscale-api-token",
    "age-secret-key",
    "1password-secret-key",
    "flyio-access-token",
    "square-access-token",
)


def _attacks() -> tuple[str, str, list[str]]:
    """(daily log, transcript, needles): every needle is a secret that must not be written."""
    rng = random.Random(20260304)
    alnum = string.ascii_letters + string.digits

    def pick(n: int, alphabet: str = alnum) -> str:
        mixed = any(c.isdigit() for c in alphabet) and any(c.isalpha() for c in alphabet)
        while True:
            out = "".join(rng.choice(alphabet) for _ in range(n))
            if not mixed or (any(c.isdigit() for c in out) and any(c.isalpha() for c in out)):
                return out

    needles: list[str] = []
    lines = ["# 2026-03-04", ""]
    ghp = "ghp_" + pick(36)
    needles.append(ghp)
    lines += [f"- [deploy] push token {interleave(ghp, 0, len(ghp), INVISIBLE['zero-width-space'], 3)}", ""]
    ghp2 = "ghp_" + pick(36)
    needles.append(ghp2)
    lines += [f"- [deploy] backup token {interleave(ghp2, 0, len(ghp2), INVISIBLE['soft-hyphen'], 4)}", ""]
    ghp3 = "ghp_" + pick(36)
    needles.append(ghp3)
    lines += [f"## {fullwidth(ghp3)}", "", "- [ops] rotate the token under this heading", ""]
    body = [pick(64, alnum + "+/") for _ in range(6)]
    needles += body[1:4]
    pem = [
        "-----BEGIN ENCRYPTED PRIVATE KEY-----",
        "Proc-Type: 4,ENCRYPTED",
        "DEK-Info: AES-128-CBC,0A1B2C3D",
        "",
    ]
    for line in body:
        pem += [line, ""]
    pem += ["-----END ENCRYPTED PRIVATE KEY-----", ""]
    lines += pem
    words = [pick(7, string.ascii_lowercase) for _ in range(3)]
    phrase = f"{words[0]} {words[1]} X {words[2]}"
    needles.append(phrase)
    lines += [f'- [ops] in .env: PASSWORD="{phrase}"', ""]
    yaml_words = [pick(7, string.ascii_lowercase) for _ in range(3)]
    yaml_phrase = f"{yaml_words[0]} {yaml_words[1]} X {yaml_words[2]}"
    needles.append(yaml_phrase)
    lines += [f'- [ops] config.yaml has password: "{yaml_phrase}"', ""]
    prose_words = [pick(7, string.ascii_lowercase) for _ in range(3)]
    prose_phrase = f"{prose_words[0]} {prose_words[1]} X {prose_words[2]}"
    needles.append(prose_phrase)
    lines += [f'- [ops] the password is "{prose_phrase}" until Friday', ""]
    pg_pw, my_pw = pick(14), pick(14)
    needles += [pg_pw, my_pw]
    lines += [f"- [db] run PGPASSWORD={pg_pw} psql -h db.internal app", ""]
    lines += [f"- [db] restore with mysql -h db -uroot -p{my_pw} app < dump.sql", ""]
    key_b64 = base64.b64encode(
        ("-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(body) + "\n").encode()
    ).decode()
    needles.append(key_b64[40:100])
    lines += [f"- [ops] the key as a secret value: {key_b64}", ""]
    user_pw = pick(14)
    needles.append(user_pw)
    lines += [f"- [ci] curl -u deploy:{user_pw} https://ci.internal.corp/api", ""]
    basic_pw = pick(16)
    needles.append(basic_pw)
    basic = base64.b64encode(f"deploy:{basic_pw}".encode()).decode()
    needles.append(basic)
    lines += [f"- [ci] the webhook sends Authorization: Basic {basic}", ""]
    xapp = f"xapp-1-A{pick(10, string.ascii_uppercase + string.digits)}-{rng.randrange(10**12, 10**13)}-{pick(64, string.ascii_lowercase + string.digits)}"
    needles.append(xapp)
    lines += [f"- [chat] socket mode uses {xapp}", ""]
    sig = pick(43, alnum + "+/") + "%3D"
    needles.append(sig[:40])
    lines += [f"- [storage] upload to https://ops.blob.core.windows.net/c/x?sv=2022-11-02&sr=b&sig={sig}", ""]
    for name in WELL_KNOWN:
        (rule,) = [r for r in screen._gitleaks().rules if r.name == name]
        text, secret = _gitleaks_sample(rule)
        needles.append(secret)
        lines += [f"- [creds] {name}: {text}", ""]
    glued = "ghp_" + pick(36)
    needles.append(glued)
    rows = [
        {"role": "user", "text": f"the key isabc{glued}xyz, keep it", "ts": 1772618400},
        {"type": f"x{glued}", "text": "a record of a type gitdream does not read"},
    ]
    session = "".join(json.dumps(r) + "\n" for r in rows)
    return "\n".join(lines) + "\n", session, needles


def test_a_dream_writes_and_prints_none_of_the_attacks(agent_repo: Path) -> None:
    log, session, needles = _attacks()
    write(agent_repo, LOG, log)
    write(agent_repo, SESSION, session)
    commit_all(agent_repo, "raw material with disguised secrets")
    result = cli(agent_repo, "run", "--json", env=EVERY_ENTRY)  # every attack reaches the scanner
    assert result.exit_code == 0, result.stderr
    receipt = json.loads(result.stdout)["runs"][0]
    assert receipt["status"] == "ok" and receipt["commits"]["experience"]
    names = git(agent_repo, "-c", "core.quotePath=false", "ls-tree", "-r", "--name-only", "HEAD")
    written = everything_written(agent_repo, own=raw_blob_ids(agent_repo))
    printed = result.stdout + result.stderr
    for where, text in {"written": written + names, "printed": printed}.items():
        hay = _normal(text).casefold()
        for needle in needles:
            norm = _normal(needle).casefold()
            # the whole secret, and its last 12 characters (its first ones may be a fixed prefix)
            assert norm not in hay and norm[-12:] not in hay, (
                f"a secret of {len(needle)} characters is {where}"
            )
    rejected = [r for r in receipt["rejected"] if r["stage"] == "screen"]
    assert len(rejected) >= len(WELL_KNOWN), "each format met the scanner"
    assert all("[REDACTED " in r["reason"] for r in rejected)
