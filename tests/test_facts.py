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
