"""A lone activity record opens no topic (issue #14: "a one-off activity record" is not
durable experience worth a topic of its own). A record of work done once joins the topic
of its subject — the file or tool its heading names, created by another fact or existing
— or the topic most like it; when it is the only entry of the run on its subject and like
no topic, it is read and not kept. Small real repositories in tmp dirs, dreamed by the
real CLI; `salience.is_activity_record` in several languages."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from gitdream.dream import salience
from gitdream.engines.offline import ACTIVITY_RECORD
from gitdream.units import Entry
from tests.helpers import commit_all, dream_until_done, git, write

LOG = "agents/ops/memory/logs/2026/03/2026-03-02.md"


@pytest.mark.parametrize(
    ("text", "heading", "record"),
    [
        ("Created `release-draft.md` in the docs repo — a deliverable for the partner", "Build", True),
        ("Added `rollback` command: restores the previous image tag", "Build: deploy-helper.py v2", True),
        ("创建了 `release-draft.md` 文档，交给合作方", "构建", True),
        ("`release-draft.md` 문서를 작성했다", "빌드", True),
        (
            "Rollbacks must use the previous image tag, because the registry drops older ones",
            "Deploys",
            False,
        ),
        ("回滚必须使用上一个镜像标签。", "部署", False),
        ("롤백은 반드시 이전 이미지 태그를 사용해야 한다.", "배포", False),
    ],
)
def test_an_activity_record_is_told_from_durable_knowledge(text: str, heading: str, record: bool) -> None:
    entry = Entry(LOG, 3, 3, f"- {text}", date(2026, 3, 2), (heading,))
    assert salience.is_activity_record(entry, text) is record


def _topics(repo: Path) -> dict[str, str]:
    memory = repo / "agents/ops/memory"
    return {p.name: p.read_text(encoding="utf-8") for p in memory.glob("*.md") if p.name != "MEMORY.md"}


def _not_kept(repo: Path) -> list[str]:
    """The reasons of every entry the dreams read and did not keep (their receipts)."""
    reasons: list[str] = []
    for note in git(repo, "notes", "--ref=refs/notes/gitdream", "list").split():
        text = git(repo, "notes", "--ref=refs/notes/gitdream", "show", note, check=False)
        for line in text.splitlines():
            if line.strip().startswith("{"):
                reasons += json.dumps(json.loads(line)).split('"')
    return reasons


DEPLOY_RULE = "- Rollbacks must use the previous image tag, because the registry drops older ones\n"
"""A durable rule the logs of these tests hold beside the records under test."""


def _dream_beside_a_rule(repo: Path, sections: str) -> dict[str, str]:
    """Commit a day's log of `DEPLOY_RULE` under "## Deploys" followed by `sections`, dream
    it to the end, and return the topics (`_topics`)."""
    write(repo, LOG, "# 2026-03-02\n\n## Deploys\n" + DEPLOY_RULE + "\n" + sections)
    commit_all(repo, "log", date="2026-03-02T12:00:00Z")
    dream_until_done(repo)
    return _topics(repo)


def test_a_lone_activity_record_opens_no_topic_and_is_read_and_not_kept(agent_repo: Path) -> None:
    topics = _dream_beside_a_rule(
        agent_repo,
        "## Build Action\n"
        "- Created `release-draft.md` in the partner repo — a deliverable for the Q2 review\n",
    )
    assert any("Rollbacks must use the previous image tag" in t for t in topics.values()), topics
    assert not any("release-draft" in t for t in topics.values()), topics  # no topic of its own, nowhere
    assert not any("release" in name for name in topics), list(topics)
    assert ACTIVITY_RECORD in _not_kept(agent_repo)


def test_an_activity_record_joins_the_topic_of_the_tool_its_heading_names(agent_repo: Path) -> None:
    write(
        agent_repo,
        LOG,
        "# 2026-03-02\n\n"
        "## Build: deploy-helper.py\n"
        "- `deploy-helper.py` must run before the smoke tests, because it writes their config\n\n"
        "## Build: deploy-helper.py v2\n"
        "- Added `rollback` command: restores the previous image tag\n",
    )
    commit_all(agent_repo, "log", date="2026-03-02T12:00:00Z")
    dream_until_done(agent_repo)
    topics = _topics(agent_repo)
    (home,) = [name for name, text in topics.items() if "Added `rollback` command" in text]
    assert "must run before the smoke tests" in topics[home], topics  # beside the tool's rule
    assert not any("rollback" in name for name in topics), list(topics)


@pytest.mark.parametrize(
    ("text", "record"),
    [
        ("Set up Python 3.13 virtual environment with required dependencies", True),
        ("配置了 Python 3.13 虚拟环境和需要的依赖", True),
        ("Always activate the virtual environment before running any commands", False),
        ("Never retry a post that returned an ID, because the API already stored it", False),
        ("반드시 가상 환경을 먼저 활성화한다", False),
    ],
)
def test_an_item_of_a_log_of_what_was_done_is_a_record_unless_it_states_more(text: str, record: bool) -> None:
    entry = Entry(LOG, 4, 4, f"- {text}", date(2026, 3, 2), ("Project Setup",))
    assert salience.is_listed_record(entry, text) is record


@pytest.mark.parametrize("max_units", [30, 1])
def test_an_item_among_past_tense_items_is_a_record_however_runs_split(
    agent_repo: Path, max_units: int
) -> None:
    # "Set up … with required dependencies" holds a rule word, but it is an item of a log of
    # what was done (its siblings are past-tense records): read as they are, a record, not a
    # fact of a topic of its own — also when the material takes several runs (max_units 1:
    # a run that reads only what an earlier one left pending).
    write(agent_repo, "gitdream.toml", f"max_units = {max_units}\n")
    topics = _dream_beside_a_rule(
        agent_repo,
        "## Project Setup\n"
        "- Created the basic project layout with a src folder\n"
        "- Set up Python 3.13 virtual environment with required dependencies\n"
        "- Created requirements.txt with minimal version constraints\n\n"
        "## Habits\n"
        "- Always activate the virtual environment before running any commands\n"
        "- Ran the smoke tests on staging\n",
    )
    assert any("Rollbacks must use the previous image tag" in t for t in topics.values()), topics
    assert not any("Set up Python 3.13" in t for t in topics.values()), topics
    assert not any("setup" in name for name in topics), list(topics)
    assert any("Always activate the virtual environment" in t for t in topics.values()), topics


def test_a_channel_named_with_a_hash_does_not_make_a_lone_record_durable(agent_repo: Path) -> None:
    # "#payments" inside the sentence names a channel; it is not the author filing the entry
    # under a tag, so the record stays a lone record: read and not kept. The same record
    # filed under a closing tag is the author's choice to keep it.
    topics = _dream_beside_a_rule(
        agent_repo,
        "## Incidents\n"
        "- Replied to the #payments thread with the rollback link.\n"
        "- Paged the #billing on-call with the incident summary. #billing\n",
    )
    assert not any("Replied to the" in t for t in topics.values()), topics
    assert not any("payments" in name for name in topics), list(topics)
    assert any("Paged the #billing on-call" in t for t in topics.values()), topics
