"""Verify: units rest only on this run's material (or existing facts for refine/correct)."""

from __future__ import annotations

from datetime import date

import pytest

from gitdream import config
from gitdream.agents import make_agent
from gitdream.contract import MemoryView
from gitdream.dream.verify import existing_facts, fact_id, unsafe_reason, verify
from gitdream.units import Unit

E1 = "agents/ops/memory/logs/2026/03/2026-03-01.md#L3-L3"
E2 = "agents/ops/memory/logs/2026/03/2026-03-01.md#L4-L5"
FACT = fact_id("agents/ops/memory/deployment.md", "Keep the last three tags.")


def unit(
    *sources: str, action: str = "create", topic: str = "deployment", target: str = "experience"
) -> Unit:
    return Unit("title", "body", target, action, topic, tuple(sources), date(2026, 3, 1))


def test_units_citing_material_are_kept() -> None:
    units = [unit(E1), unit(E1, E2, E1)]
    kept, rejected = verify(units, [E1, E2])
    assert rejected == []
    assert [u.sources for u in kept] == [(E1,), (E1, E2)]


def test_fabricated_ids_are_dropped_and_a_unit_left_with_none_is_rejected() -> None:
    notes: list[dict[str, object]] = []
    kept, rejected = verify(
        [unit(E1, "made/up.md#L1-L2"), unit("made/up.md#L9-L9", "nonsense")], [E1, E2], notes=notes
    )
    assert [u.sources for u in kept] == [(E1,)]
    assert notes == [{"title": "title", "dropped": ["made/up.md#L1-L2"]}]
    [refused] = rejected
    assert refused.stage == "verify"
    assert refused.reason == "unverifiable: none of its sources is in this run's material"
    assert refused.details == {"fabricated": ["made/up.md#L9-L9", "nonsense"]}
    assert refused.to_json()["details"] == {"fabricated": ["made/up.md#L9-L9", "nonsense"]}


def test_a_unit_without_sources_is_unverifiable() -> None:
    kept, rejected = verify([unit()], [E1])
    assert kept == [] and "cites no source" in rejected[0].reason


@pytest.mark.parametrize("action", ["refine", "correct"])
def test_an_existing_fact_supports_refine_and_correct(action: str) -> None:
    kept, rejected = verify([unit(FACT, action=action)], [E1], [FACT])
    assert rejected == [] and kept[0].sources == (FACT,)


def test_a_fact_alone_does_not_support_create_or_corroborate() -> None:
    kept, rejected = verify([unit(FACT), unit(FACT, action="corroborate")], [E1], [FACT])
    assert kept == []
    assert rejected[0].details == {"fabricated": [], "not_allowed": [FACT]}
    assert rejected[1].details == {"fabricated": []}
    kept, _ = verify([unit(FACT, E1, action="corroborate")], [E1], [FACT])
    assert kept[0].sources == (FACT, E1)


def test_an_unknown_fact_id_is_fabricated() -> None:
    kept, rejected = verify([unit("fact:0123456789", action="refine")], [E1], [FACT])
    assert kept == [] and rejected[0].details == {"fabricated": ["fact:0123456789"]}
    assert "or an existing fact" in rejected[0].reason


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("topic", "../../.git/hooks/post-merge"),
        ("topic", "Deployment Notes"),
        ("topic", "a" * 65),
        ("target", ".git/hooks/post-merge"),
        ("action", "delete"),
    ],
)
def test_unsafe_units_are_refused_whatever_their_sources(field: str, value: str) -> None:
    bad = unit(E1, **{field: value})
    kept, rejected = verify([bad], [E1])
    assert kept == []
    assert rejected[0].reason.startswith("unsafe unit: ")
    assert repr(value) in rejected[0].reason
    assert unsafe_reason(unit(E1)) is None


def test_existing_facts_reads_fact_blocks_of_topic_files_only() -> None:
    cfg = config.defaults()
    agent = make_agent("agents/ops", cfg)
    block = (
        "<!-- gitdream:begin facts -->\n"
        "- Keep the last three tags.\n"
        "  Sources: `agents/ops/memory/logs/2026/02/2026-02-01.md#L2-L2@0123456789ab` — seen 2 times\n"
        "<!-- gitdream:end facts -->\n"
    )
    files = {
        "agents/ops/memory/deployment.md": "# Deployment\n\n" + block,
        "agents/ops/memory/MEMORY.md": block,
        "agents/ops/memory/archive/2026-01.md": block,
        "agents/ops/memory/human.md": "- A human note, outside any block.\n",
        "agents/ops/memory/broken.md": "<!-- gitdream:begin facts -->\n- x\n",
        "agents/ops/agent.md": block,
    }
    facts = existing_facts(MemoryView(files), agent)
    assert [(f.id, f.topic, f.text) for f in facts] == [(FACT, "deployment", "Keep the last three tags.")]
    assert FACT.startswith("fact:") and len(FACT) == 15
    assert fact_id("agents/ops/memory/deployment.md", "Keep  the last\nthree tags.") == FACT
    assert fact_id("agents/ops/memory/other.md", "Keep the last three tags.") != FACT
