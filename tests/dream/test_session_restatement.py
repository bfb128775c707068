"""An assistant turn that restates the user's instruction of the same session corroborates
it — one fact, both sources — instead of adding a second fact, and the acknowledgement
that opens it ("Noted:", "Got it,", "好的，", "알겠습니다.", "了解です。") is not kept
(audit of issue #14). Claude Code transcripts and Codex CLI rollouts alike; several
languages; re-reading the session (`run --full`) counts nothing twice."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from gitdream.agents import make_agent
from gitdream.config import defaults
from gitdream.contract import DistillContext, MemoryView
from gitdream.dream import facts as factfmt
from gitdream.engines.offline import OfflineEngine, without_acknowledgement
from gitdream.text import blocks
from gitdream.units import Entry, Unit
from tests.helpers import commit_all, dream_until_done, run_gitdream, write

AGENT = make_agent("agents/ops", defaults())
SESSION = "agents/ops/sessions/2026-03-02-chat.jsonl"
DAY = date(2026, 3, 2)
COMMIT = "1a2b3c4d5e6f" + "0" * 28


def distill(entries: list[Entry]) -> list[Unit]:
    cfg = defaults().with_overrides({"offline.salience_threshold": (0.0, "test")})
    result = OfflineEngine(cfg).distill(DistillContext(AGENT, entries, MemoryView({}), cfg, COMMIT, DAY))
    return result.units


def turn(line: int, role: str, text: str, path: str = SESSION) -> Entry:
    return Entry(path, line, line, text, DAY, kind="transcript", role=role)


PAIRS = [
    (
        "Never deploy on Fridays, the on-call team is off on weekends.",
        "Noted: deploys must never happen on Fridays because the on-call team is off on weekends.",
    ),
    (
        "Always run the migrations on staging before promoting a build.",
        "Got it, I'll always run migrations on staging first before any promotion.",
    ),
    ("周五不要部署，周末没有值班的人。", "好的，周五不部署，因为周末没有值班的人。"),
    (
        "금요일에는 절대 배포하지 마세요. 주말에 당직자가 없습니다.",
        "알겠습니다. 금요일에는 절대 배포하지 않겠습니다. 주말에 당직자가 없기 때문입니다.",
    ),
    (
        "金曜日にはデプロイしないでください。週末は当番がいません。",
        "了解です。金曜日はデプロイしません。週末は当番がいないためです。",
    ),
]


@pytest.mark.parametrize(("user", "assistant"), PAIRS)
def test_an_assistant_restating_the_users_instruction_corroborates_it(user: str, assistant: str) -> None:
    units = distill([turn(1, "user", user), turn(2, "assistant", assistant)])
    assert [(u.action, u.sources) for u in units] == [
        ("create", (f"{SESSION}#L1-L1",)),
        ("corroborate", (f"{SESSION}#L2-L2",)),
    ]
    assert units[0].body == user and units[1].corroborates == user


def test_a_restatement_in_another_session_or_of_another_thing_is_its_own_fact() -> None:
    user = PAIRS[0][0]
    other = turn(
        4, "assistant", "The staging cluster needs two replicas of the database to pass smoke tests."
    )
    units = distill([turn(1, "user", user), other])
    assert [u.action for u in units] == ["create", "create"]
    # the same words from another session are not this session's restatement
    elsewhere = "agents/ops/sessions/2026-03-03-chat.jsonl"
    units = distill(
        [
            turn(1, "user", "Always run the migrations on staging before promoting a build."),
            turn(2, "assistant", PAIRS[1][1], path=elsewhere),
        ]
    )
    assert [u.action for u in units] == ["create", "create"]


@pytest.mark.parametrize(
    ("text", "rest"),
    [
        ("Noted: deploys must never happen on Fridays.", "Deploys must never happen on Fridays."),
        ("Got it, I'll keep PRs small.", "I'll keep PRs small."),
        ("OK, got it — the cache is per user.", "The cache is per user."),
        ("好的，周五不部署。", "周五不部署。"),
        ("了解。周五不部署。", "周五不部署。"),
        ("알겠습니다. 금요일에는 배포하지 않겠습니다.", "금요일에는 배포하지 않겠습니다."),
        ("承知しました。金曜日はデプロイしません。", "金曜日はデプロイしません。"),
        ("Notes live in the wiki.", "Notes live in the wiki."),  # a word that only begins like one
        ("Sure enough, the cache was stale.", "Sure enough, the cache was stale."),
    ],
)
def test_an_acknowledgement_opening_a_turn_is_dropped(text: str, rest: str) -> None:
    assert without_acknowledgement(text) == rest


# --- on a real repository: Claude Code and Codex CLI ------------------------------------------


def _claude(user: str, assistant: str) -> str:
    rows = [
        {
            "type": "user",
            "uuid": "u1",
            "timestamp": "2026-03-02T10:00:00Z",
            "message": {"role": "user", "content": user},
        },
        {
            "type": "assistant",
            "uuid": "a1",
            "timestamp": "2026-03-02T10:00:05Z",
            "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": assistant}]},
        },
    ]
    return "".join(json.dumps(r) + "\n" for r in rows)


def _codex(user: str, assistant: str) -> str:
    def message(role: str, kind: str, text: str, second: int) -> dict:
        return {
            "timestamp": f"2026-03-02T11:00:0{second}Z",
            "type": "response_item",
            "payload": {"type": "message", "role": role, "content": [{"type": kind, "text": text}]},
        }

    rows = [
        {"timestamp": "2026-03-02T11:00:00Z", "type": "session_meta", "payload": {"id": "s", "cwd": "/w"}},
        message("user", "input_text", user, 1),
        {"timestamp": "2026-03-02T11:00:02Z", "type": "turn_context", "payload": {"cwd": "/w"}},
        message("assistant", "output_text", assistant, 3),
    ]
    return "".join(json.dumps(r) + "\n" for r in rows)


def _facts(repo: Path) -> list[factfmt.Fact]:
    out: list[factfmt.Fact] = []
    for path in sorted((repo / "agents/ops/memory").glob("*.md")):
        out += factfmt.parse(blocks.get(path.read_text(encoding="utf-8"), "facts") or "")
    return out


ENGLISH = (
    "Never deploy on Fridays: the on-call team is off on weekends, so nobody can roll back.",
    "Noted: deploys must never happen on Fridays, because the on-call team is off on weekends "
    "and nobody could roll back.",
    "Friday",
)
CHINESE = (
    "周五绝对不要部署，因为周末没有值班的人可以回滚。",
    "好的，周五不部署，因为周末没有值班的人能回滚。",
    "周五",
)


@pytest.mark.parametrize(
    ("path", "make", "said"),
    [
        ("agents/ops/sessions/2026-03-02-chat.jsonl", _claude, ENGLISH),
        ("agents/ops/sessions/2026/03/02/rollout-2026-03-02T11-00-00-abc.jsonl", _codex, ENGLISH),
        ("agents/ops/sessions/2026/03/02/rollout-2026-03-02T11-00-00-abd.jsonl", _codex, CHINESE),
    ],
)
def test_on_a_real_repository_a_session_gives_one_fact_with_both_sources(
    agent_repo: Path, path: str, make: object, said: tuple[str, str, str]
) -> None:
    user, assistant, subject = said
    write(agent_repo, path, make(user, assistant))  # type: ignore[operator]
    commit_all(agent_repo, "session", date="2026-03-02T12:00:00Z")
    dream_until_done(agent_repo)
    friday = [f for f in _facts(agent_repo) if subject in f.text]
    assert len(friday) == 1, friday
    (fact,) = friday
    assert not fact.text.startswith("Noted")
    lines = [n for n, row in enumerate(make(user, assistant).splitlines(), 1) if '"message"' in row]  # type: ignore[operator]
    assert fact.seen == 2 and all(factfmt.cites(fact.sources, path, n, n) for n in lines), fact
    before = {p: p.read_bytes() for p in (agent_repo / "agents/ops/memory").glob("*.md")}
    proc = run_gitdream(agent_repo, "run", "--engine", "offline", "--full", "--json")
    assert proc.returncode == 0, proc.stderr
    after = {p: p.read_bytes() for p in (agent_repo / "agents/ops/memory").glob("*.md")}
    assert after == before  # re-read: recognised, never counted twice
