from datetime import date

from gitdream.dream import facts


def test_facts_round_trip() -> None:
    items = [
        facts.Fact(
            "Rollbacks need the previous image tag.",
            ["a.md#L1-L2@1a2b3c4d5e6f"],
            3,
            date(2026, 3, 1),
            date(2026, 3, 2),
        ),
        facts.Fact(
            "東京のサーバーは遅い",
            ["b b.md#L4-L4@abcdefabcdef", "c.md#L9-L9@abcdefabcdef"],
            1,
            date(2026, 3, 5),
            date(2026, 3, 5),
        ),
    ]
    text = facts.render(items)
    parsed = facts.parse(text)
    assert [(f.text, f.sources, f.seen, f.first, f.last) for f in parsed] == [
        (f.text, f.sources, f.seen, f.first, f.last) for f in items
    ]
    assert facts.render(parsed) == text


def test_facts_unparseable_lines_are_kept_verbatim() -> None:
    content = "a human wrote this\n- and this item\n"
    parsed = facts.parse(content)
    assert [f.raw for f in parsed] == ["a human wrote this", "- and this item"]
    assert facts.render(parsed) == content


def test_consecutive_lines_of_one_file_are_cited_as_one_range() -> None:
    """Regression test: a fact cited `L28-L28`, `L29-L29`, `L30-L32`, `L33-L33`, … one by
    one, half of a topic file was provenance (review §0.6)."""
    refs = [f"m.md#L{n}-L{n}@1a2b3c4d5e6f" for n in (28, 29)] + [
        "m.md#L30-L32@1a2b3c4d5e6f",
        "n.md#L5-L5@1a2b3c4d5e6f",
        "m.md#L34-L35@1a2b3c4d5e6f",
        "m.md#L33-L33@1a2b3c4d5e6f",  # fills the gap: one range
        "m.md#L33-L33@abcdefabcdef",  # another commit: other line numbers
        "m.md#L40-L41@1a2b3c4d5e6f",  # not consecutive
    ]
    assert facts.merge_sources(refs) == [
        "m.md#L28-L35@1a2b3c4d5e6f",
        "n.md#L5-L5@1a2b3c4d5e6f",
        "m.md#L33-L33@abcdefabcdef",
        "m.md#L40-L41@1a2b3c4d5e6f",
    ]
    text = facts.render([facts.Fact("A fact.", refs, 1, date(2026, 3, 1), date(2026, 3, 1))])
    assert "`m.md#L28-L35@1a2b3c4d5e6f`" in text and "L29-L29" not in text
    assert facts.cites(facts.parse(text)[0].sources, "m.md", 29, 29)
    assert not facts.cites(facts.parse(text)[0].sources, "m.md", 36, 39)


def test_the_metadata_tail_is_as_short_as_what_it_says() -> None:
    """Regression test: "seen 1 time, first 2026-03-01, last 2026-03-01" on every fact."""
    ref = "m.md#L4-L4@1a2b3c4d5e6f"
    day, later = date(2026, 3, 1), date(2026, 3, 2)
    cases = [
        (facts.Fact("A.", [ref], 1, day, day), f"  Sources: `{ref}` — 2026-03-01\n"),
        (facts.Fact("A.", [ref], 2, day, day), f"  Sources: `{ref}` — seen 2 times, 2026-03-01\n"),
        (
            facts.Fact("A.", [ref], 3, day, later),
            f"  Sources: `{ref}` — seen 3 times, 2026-03-01 to 2026-03-02\n",
        ),
        (facts.Fact("A.", [ref], 1, day, later), f"  Sources: `{ref}` — 2026-03-01 to 2026-03-02\n"),
        (facts.Fact("A.", [ref], 1), f"  Sources: `{ref}`\n"),
        (facts.Fact("A.", [ref], 4), f"  Sources: `{ref}` — seen 4 times\n"),
    ]
    for fact, meta in cases:
        text = facts.render([fact])
        assert text == "- A.\n" + meta
        back = facts.parse(text)[0]
        assert (back.raw, back.sources, back.seen, back.first, back.last) == (
            None,
            fact.sources,
            fact.seen,
            fact.first,
            fact.last,
        )


def test_fact_lines_of_earlier_versions_are_read() -> None:
    """Topic files written before the short form still parse, to the same facts."""
    ref = "m.md#L4-L4@1a2b3c4d5e6f"
    old = (
        f"- Once.\n  Sources: `{ref}` — seen 1 time, first 2026-03-01, last 2026-03-01\n"
        f"- Often.\n  Sources: `{ref}`, `m.md#L9-L9@1a2b3c4d5e6f` — seen 3 times, first 2026-03-01, last 2026-03-04\n"
        f"- Undated.\n  Sources: `{ref}` — seen 2 times\n"
    )
    parsed = facts.parse(old)
    assert [(f.raw, f.text, f.seen, f.first, f.last, len(f.sources)) for f in parsed] == [
        (None, "Once.", 1, date(2026, 3, 1), date(2026, 3, 1), 1),
        (None, "Often.", 3, date(2026, 3, 1), date(2026, 3, 4), 2),
        (None, "Undated.", 2, None, None, 1),
    ]
    assert facts.render(parsed) == (
        f"- Once.\n  Sources: `{ref}` — 2026-03-01\n"
        f"- Often.\n  Sources: `{ref}`, `m.md#L9-L9@1a2b3c4d5e6f` — seen 3 times, 2026-03-01 to 2026-03-04\n"
        f"- Undated.\n  Sources: `{ref}` — seen 2 times\n"
    )
