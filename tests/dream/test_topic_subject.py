"""A topic is about its subject (issue #14, items 3 and 6): a fact joins a topic whose facts
mention its names often, not one of whose many facts names one of them in passing, and a
topic's description is a fact that names the topic's subject, never one that landed there
about something else. Small real repositories in tmp dirs, dreamed by the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import commit_all, dream_until_done, run_gitdream, write

MEM = "agents/ops/memory"


def _topics(repo: Path) -> dict[str, str]:
    memory = repo / MEM
    return {
        p.name: p.read_text(encoding="utf-8") for p in memory.glob("*.md") if p.name not in ("MEMORY.md",)
    }


SCRIPTS_DAY = (
    "# 2026-03-02\n\n"
    "## Scripts\n"
    "- `scripts/deploy-check.py` must run before every deploy, because it verifies the release manifest\n"
    "- `scripts/log-ship.py` must send to the Raft leader, because followers reject writes\n"
    "- `scripts/vote-sim.py` must run with at least three nodes, because Paxos needs a majority\n"
    "- `scripts/backup.py` must run nightly, because the volume keeps no snapshots\n"
    "- `scripts/rotate-keys.py` must run monthly, because the tokens expire after 35 days\n"
    "- `scripts/prune.py` must never run during a deploy, because it locks the registry\n"
)
SURVEY_DAY = (
    "# 2026-03-03\n\n"
    "## Research\n"
    "- **Consensus survey** (Lamport 1998): both Paxos and Raft need a majority quorum, because "
    "two majorities always overlap in at least one node.\n"
)


def test_a_note_naming_what_one_fact_of_a_topic_mentions_in_passing_does_not_join_it(
    agent_repo: Path,
) -> None:
    write(agent_repo, f"{MEM}/logs/2026/03/2026-03-02.md", SCRIPTS_DAY)
    commit_all(agent_repo, "day 1", date="2026-03-02T12:00:00Z")
    dream_until_done(agent_repo)
    write(agent_repo, f"{MEM}/logs/2026/03/2026-03-03.md", SURVEY_DAY)
    commit_all(agent_repo, "day 2", date="2026-03-03T12:00:00Z")
    dream_until_done(agent_repo)
    topics = _topics(agent_repo)
    assert "scripts.md" in topics, list(topics)
    assert "Consensus survey" not in topics["scripts.md"], topics["scripts.md"]
    assert any("Consensus survey" in text for text in topics.values()), list(topics)


def test_a_topic_is_described_by_a_fact_that_names_its_subject(agent_repo: Path) -> None:
    # The survey note is the most salient fact of the day and written under the same
    # heading, so it lands in `scripts.md`; it still does not describe that topic.
    write(
        agent_repo,
        f"{MEM}/logs/2026/03/2026-03-02.md",
        "# 2026-03-02\n\n"
        "## Scripts\n"
        "- `scripts/deploy-check.py` — verifies the release manifest before a deploy\n"
        "- `scripts/backup.py` — copies the volume to the bucket every night\n"
        "- Quorum rule (after Lamport): a leader must always hold a majority, because two majorities never "
        "miss each other\n",
    )
    commit_all(agent_repo, "day 1", date="2026-03-02T12:00:00Z")
    dream_until_done(agent_repo)
    topics = _topics(agent_repo)
    index = "\n".join(topics.get("gitdream-topics.md", "").splitlines())
    index += (agent_repo / MEM / "MEMORY.md").read_text(encoding="utf-8")
    text = topics["scripts.md"]
    assert "Quorum rule (after Lamport)" in text, text
    (description,) = [line for line in text.splitlines() if line.startswith("description:")]
    assert "scripts/" in description, text
    (line,) = [line for line in index.splitlines() if "(scripts.md)" in line]
    assert "scripts/" in line and "majority" not in line, index


def test_one_instruction_said_in_other_words_is_one_fact_in_one_topic(agent_repo: Path) -> None:
    # The same standing instruction, paraphrased under two subjects' headings, on two days:
    # one fact (seen twice), not a copy in each topic.
    write(
        agent_repo,
        f"{MEM}/logs/2026/03/2026-03-02.md",
        "# 2026-03-02\n\n"
        "## Terraform\n"
        "- IMPORTANT: You must export the staging credentials in each new shell before running any "
        "terraform plan for this project. If `terraform plan` fails with an auth error, they are not exported.\n"
        "- Terraform state lives in the shared bucket, because two laptops once diverged\n",
    )
    commit_all(agent_repo, "day 1", date="2026-03-02T12:00:00Z")
    dream_until_done(agent_repo)
    write(
        agent_repo,
        f"{MEM}/logs/2026/03/2026-03-03.md",
        "# 2026-03-03\n\n"
        "## Grafana dashboards\n"
        "- Remember: Always export the staging credentials first with `source env/staging.sh` before "
        "running any terraform plan.\n"
        "- Grafana dashboards must be edited in the repo, because the UI edits are overwritten\n",
    )
    commit_all(agent_repo, "day 2", date="2026-03-03T12:00:00Z")
    dream_until_done(agent_repo)
    holding = [name for name, text in _topics(agent_repo).items() if "export the staging credentials" in text]
    assert len(holding) == 1, holding
    assert "seen 2 times" in _topics(agent_repo)[holding[0]], _topics(agent_repo)[holding[0]]
    # Read again in full, the paraphrase is known as consolidated: no commit, no third count.
    proc = run_gitdream(agent_repo, "run", "--engine", "offline", "--json", "--full")
    assert proc.returncode == 0, proc.stderr
    assert all(r["commits"]["experience"] is None for r in json.loads(proc.stdout)["runs"]), proc.stdout
    assert "seen 2 times" in _topics(agent_repo)[holding[0]]
