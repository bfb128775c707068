"""A user's message is durable when it states what holds beyond the session — a rule, a
preference, a fact about the project or about themselves — and session talk when it is
about the session itself (issue #14): a request aimed at the work at hand ("review it"),
a guess at what happened in it, a statement followed in the same sentence by a request
(the statement stays, the request goes). An exclaimed message is judged like any other
(an exclamation often carries a rule), and the summary a tool writes of a session it
compacts is read like the rest of the log (its items state the project's stable facts as
often as the session's work: the hand-made labels keep them). Recognised by structure —
who speaks, what the sentence points at, tense and hedge — in English, Chinese, Korean and
Japanese; small real repositories in tmp dirs (a diary copied from a terminal, a JSONL
transcript), dreamed by the real CLI."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from gitdream.dream import salience
from gitdream.dream.salience import Cues, judge
from gitdream.engines.offline import clean_text
from gitdream.units import Entry
from tests.helpers import commit_all, dream_until_done, write

LOG = "agents/ops/memory/logs/2026/03/2026-03-02.md"
SESSION = "agents/ops/sessions/2026-03-02-chat.jsonl"
DAY = date(2026, 3, 2)


def judged(text: str, *, role: str | None = "user") -> salience.Judgement:
    item = Entry(LOG, 1, 1, text, DAY, (), "transcript" if role else "log", role)
    return judge(item, clean_text(item, None), Cues(), salience.DEFAULT_THRESHOLD)


@pytest.mark.parametrize(
    "text",
    [
        "my change to the style guide wasn't a typo! review it and describe it properly in the commit message",
        "Fix this before you push, the linter complains about the new module and the import order.",
    ],
)
def test_an_imperative_aimed_at_the_work_at_hand_is_a_request_for_the_session(text: str) -> None:
    said = judged(text)
    assert "session-request" in said.cues and not said.kept, said
    # the same verb with a standing word is an instruction
    standing = judged("Always review the commit message before you push, and describe every change in it.")
    assert "session-request" not in standing.cues and standing.kept, standing


@pytest.mark.parametrize(
    "text",
    [
        "I suspect that the failures we saw were caused by the flags I gave you at the end of our previous session.",
        "我怀疑上次的失败可能是我给你的那些参数导致了。",
        "아마 지난번 세션에서 제가 준 옵션 때문에 테스트가 실패했다.",
        "前回のセッションで私が渡したオプションのせいでテストが失敗したかもしれない。",
    ],
)
def test_a_guess_at_what_happened_is_not_kept(text: str) -> None:
    said = judged(text)
    assert "speculation" in said.cues and not said.kept, said
    assert said.reason is not None
    # a hedge about what holds now is not a guess at what happened
    assert "speculation" not in judged("Maybe the cache should expire after an hour, because tokens do.").cues


@pytest.mark.parametrize(
    "text",
    [
        "I want every commit signed!",
        "I hate force-pushes! Never rewrite the shared history.",
        "I prefer small pull requests! Keep each one under 300 lines.",
        "我讨厌强制推送！不要改写共享的历史。",
    ],
)
def test_an_exclaimed_rule_is_judged_like_any_other_and_kept(text: str) -> None:
    # An exclamation is emphasis, not a mood: "!" carries rules as often as venting.
    said = judged(text)
    assert said.kept, said


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (
            "There is no core team. My name is Ana Lima, my e-mail is <EMAIL> update the credits and your "
            "own entry in the license files",
            "There is no core team. My name is Ana Lima, my e-mail is <EMAIL>.",
        ),
        ("项目只有一个维护者是我，请把你的名字也加到许可证文件里。", "项目只有一个维护者是我。"),
        (
            "이 프로젝트의 관리자는 저 한 명입니다, 라이선스 파일에 당신 이름도 추가해 주세요.",
            "이 프로젝트의 관리자는 저 한 명입니다.",
        ),
        (
            "このプロジェクトの管理者は私一人です、あなたの名前もライセンスに追加してください。",
            "このプロジェクトの管理者は私一人です。",
        ),
    ],
)
def test_a_statement_followed_by_a_request_keeps_the_statement(text: str, kept: str) -> None:
    assert salience.standing_sentences(text, user=True) == kept
    assert salience.standing_sentences(text) == text  # an agent's own log: no request to a listener
    # a request that says it stands is kept with its statement
    standing = "The tests are slow, please always run them with the parallel flag."
    assert salience.standing_sentences(standing, user=True) == standing


DIARY = """# Session 3

> The release checklist lives in docs/RELEASE.md and must be followed for every tag, because
  the changelog is generated from it.

> This session is being continued from a previous conversation that ran out of context. The
  conversation is summarized below:
  <analysis>
  Let me go through the conversation step by step:

  1. The user asked to review the packaging and to modernise it.
  </analysis>

  <summary>
  1. Primary Request and Intent:
     The user's main request was to analyse the packaging of the project and modernise it.

  2. Files and Code Sections:
     - `pyproject.toml` (created)
       - Holds the package metadata and the tool settings

  3. Decisions:
     - Never pin the build backend's version, because the lock file already does it.

  4. Optional Next Step:
     Implement the export to Markdown once the user confirms.
  </summary>.

> /compact
"""


def _memory(repo: Path) -> str:
    memory = repo / "agents/ops/memory"
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(memory.glob("*.md")))


def test_a_compaction_summary_is_read_like_the_rest_of_the_log(agent_repo: Path) -> None:
    write(agent_repo, LOG, DIARY)
    commit_all(agent_repo, "diary", date="2026-03-02T12:00:00Z")
    dream_until_done(agent_repo)
    memory = _memory(agent_repo)
    assert "release checklist lives in docs/RELEASE.md" in memory, memory  # the user's own rule
    assert "Never pin the build backend's version" in memory, memory  # a decision the summary states


def _message(role: str, text: str, minute: int, **extra: object) -> str:
    record = {"type": role, "message": {"role": role, "content": text}}
    return json.dumps({**record, "timestamp": f"2026-03-02T10:{minute:02d}:00Z", **extra}) + "\n"


def test_session_talk_in_a_transcript_is_read_and_not_kept(agent_repo: Path) -> None:
    turns = [
        _message(
            "user", "I am the master of procrastination! I've burnt another evening on the CI setup.", 1
        ),
        _message("assistant", "Getting the tooling right takes time.", 2),
        _message(
            "user",
            "my edit to the style guide wasn't a typo! review it and describe it in the commit message",
            3,
        ),
        _message(
            "user",
            "I suspect the failures we saw were caused by the flags I gave you in our previous session.",
            4,
        ),
        _message(
            "user",
            "There is no core team. My name is Ana Lima, my e-mail is <EMAIL> update the credits and your own "
            "entry in the license files",
            5,
        ),
        _message(
            "user",
            "Please always run the formatter before you commit, because the CI rejects unformatted code.",
            6,
        ),
        _message(
            "user",
            "This session is being continued from a previous conversation that ran out of context.\n"
            "<summary>\n1. Primary Request and Intent:\n   The user's main request was to modernise the packaging.\n"
            "</summary>",
            7,
        ),
    ]
    write(agent_repo, SESSION, "".join(turns))
    commit_all(agent_repo, "session", date="2026-03-02T12:00:00Z")
    dream_until_done(agent_repo)
    memory = _memory(agent_repo)
    assert "always run the formatter before you commit" in memory, memory
    assert "There is no core team. My name is Ana Lima, my e-mail is <EMAIL>." in memory, memory
    for talk in ("wasn't a typo", "I suspect", "update the credits"):
        assert talk not in memory, (talk, memory)
