"""The fact line's short form on a real repository: consecutive lines cited as one range,
the metadata tail as short as what it says, and topic files written by earlier versions
read and integrated cleanly (docs/memory.md, "Facts")."""

from __future__ import annotations

import json
import re
from pathlib import Path

from gitdream.dream import facts
from tests.helpers import commit_all, dream_until_done, run_gitdream, write

MEM = "agents/ops/memory"
LOG = f"{MEM}/logs/2026/03/2026-03-02.md"
DEPLOYS = """# 2026-03-02

## Deploys

The deploy rules we settled on:
- Rollbacks always need the previous image tag, because the registry keeps only 20 tags.
- Blue/green switches must wait for the health check before moving traffic.
- Never deploy on Fridays after 15:00, because nobody is on call over the weekend.
"""


def _blocks(repo: Path) -> dict[str, str]:
    out = {}
    for path in (repo / MEM).glob("*.md"):
        text = path.read_text(encoding="utf-8")
        found = re.search(r"<!-- gitdream:begin facts -->\n(.*?)<!-- gitdream:end facts -->", text, re.S)
        if found:
            out[path.name] = found.group(1)
    return out


def _audit(repo: Path) -> list[dict[str, object]]:
    proc = run_gitdream(repo, "audit", "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["facts"]


def test_a_list_is_cited_as_one_range_and_reading_it_again_counts_nothing(agent_repo: Path) -> None:
    write(agent_repo, LOG, DEPLOYS)
    commit_all(agent_repo, "log")
    dream_until_done(agent_repo)
    blocks = _blocks(agent_repo)
    meta = [line for block in blocks.values() for line in block.splitlines() if line.startswith("  Sources:")]
    assert meta, blocks
    for line in meta:
        assert "seen 1 time" not in line and ", first " not in line, line  # the short tail
        assert line.endswith("— 2026-03-02"), line
    cited = [ref for block in blocks.values() for fact in facts.parse(block) for ref in fact.sources]
    lines = [tuple(map(int, re.search(r"#L(\d+)-L(\d+)@", ref).groups())) for ref in cited]
    assert (5, 8) in lines, cited  # the lead-in and its three items: one range, not four
    before = _blocks(agent_repo)

    proc = run_gitdream(agent_repo, "run", "--engine", "offline", "--full", "--json")
    assert proc.returncode == 0, proc.stderr
    assert _blocks(agent_repo) == before  # recognised inside the range: no copy, no "seen 2"
    for fact in _audit(agent_repo):
        assert fact["sources"] and all(s["status"] == "resolved" for s in fact["sources"]), fact


def test_a_topic_file_of_an_earlier_version_integrates_cleanly(agent_repo: Path) -> None:
    """A repository dreamed by an earlier version: facts citing one line at a time with the
    long tail. Read again with new material, its facts are neither copied nor counted
    twice, its lines take the short form, and every source still resolves."""
    write(agent_repo, LOG, DEPLOYS)
    commit = commit_all(agent_repo, "log")[:12]
    old = "".join(
        f"- {text}\n  Sources: `{LOG}#L{n}-L{n}@{commit}` — seen 1 time, first 2026-03-02, last 2026-03-02\n"
        for n, text in (
            (6, "Rollbacks always need the previous image tag, because the registry keeps only 20 tags."),
            (7, "Blue/green switches must wait for the health check before moving traffic."),
        )
    )
    write(
        agent_repo,
        f"{MEM}/deploys.md",
        "---\nname: Deploys\ndescription: Rollbacks always need the previous image tag.\ntype: project\n"
        f"origin: gitdream\n---\n\n# Deploys\n\n<!-- gitdream:begin facts -->\n{old}<!-- gitdream:end facts -->\n",
    )
    commit_all(agent_repo, "dreamed by an earlier version")
    write(
        agent_repo,
        LOG,
        DEPLOYS + "- Deploys must be tagged with the release number, because rollbacks look them up.\n",
    )
    commit_all(agent_repo, "more log")
    dream_until_done(agent_repo)
    parsed = [fact for block in _blocks(agent_repo).values() for fact in facts.parse(block)]
    assert all(fact.raw is None for fact in parsed), parsed
    texts = [fact.text for fact in parsed]
    for text in ("Rollbacks always need the previous image tag", "Blue/green switches must wait"):
        assert sum(text in t for t in texts) == 1, texts  # not copied beside itself
    assert all(fact.seen == 1 for fact in parsed), parsed  # read again is not seen again
    deploys = (agent_repo / MEM / "deploys.md").read_text(encoding="utf-8")
    if "Deploys must be tagged" in deploys:  # the block was written again: in the short form
        assert "seen 1 time" not in deploys and ", first " not in deploys, deploys
    for fact in _audit(agent_repo):
        assert fact["sources"] and all(s["status"] == "resolved" for s in fact["sources"]), fact


def test_an_item_a_fact_of_an_earlier_version_states_is_already_consolidated() -> None:
    """An earlier version joined sub-items with ".;" and chose other ones: the entry read
    again (a lost watermark, `--full`) is that fact, not a new fact beside it or another
    source on it."""
    from datetime import date

    from gitdream.agents import make_agent
    from gitdream.config import defaults
    from gitdream.contract import DistillContext, MemoryView
    from gitdream.engines.offline import OfflineEngine
    from gitdream.units import Entry
    from tests.standins import simple_absolutize, simple_slugify

    commit = "1a2b3c4d5e6f" + "0" * 28
    item = (
        "- **`scripts/fork.py`** — Fork detector based on quorum intersection theory of observers.\n"
        "  - Chain class: causal hash chains with parent pointers\n"
        "  - Detector: multi-observer fork detection via quorum analysis"
    )
    entry = Entry(LOG, 3, 5, item, date(2026, 3, 2), ("Build",))
    for old_text in (
        "`scripts/fork.py` — Fork detector based on quorum intersection theory of observers.; "
        "Chain class: causal hash chains with parent pointers; Detector: multi-observer fork detection via quorum analysis",
        "`scripts/fork.py` — Fork detector based on quorum intersection theory of observers. Results: 83% accuracy",
    ):
        topic = (
            "---\nname: Scripts\ndescription: d\ntype: project\norigin: gitdream\n---\n\n# Scripts\n\n"
            f"<!-- gitdream:begin facts -->\n- {old_text}\n  Sources: `{LOG}#L3-L5@{commit[:12]}` — seen 1 time, "
            "first 2026-03-02, last 2026-03-02\n<!-- gitdream:end facts -->\n"
        )
        cfg = defaults()
        engine = OfflineEngine(cfg, slugify=simple_slugify, absolutize=simple_absolutize)
        agent = make_agent("agents/ops", cfg)
        memory = MemoryView({f"{MEM}/scripts.md": topic})
        result = engine.distill(DistillContext(agent, [entry], memory, cfg, commit, date(2026, 3, 2)))
        assert result.units == [], old_text
        assert result.skipped and "already consolidated" in result.skipped[0][1], result.skipped
