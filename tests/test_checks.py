"""Per-file rules of `gitdream check` (gitdream.text.checks), and the definition writer's
entry point `check_definition`."""

from __future__ import annotations

import pytest

from gitdream import config
from gitdream.commands.check import check_definition
from gitdream.errors import ConfigError
from gitdream.text.checks import Limits, check_bytes, check_text, kind_by_name

LIMITS = Limits()


def test_kind_by_name() -> None:
    assert kind_by_name("agents/ops/agent.md") == "agent"
    assert kind_by_name("AGENT.MD") == "agent"
    assert kind_by_name("agents/ops/memory/MEMORY.md") == "index"
    assert kind_by_name("agents/ops/SKILL.md") == "definition"


def test_definition_file_gets_block_syntax_only() -> None:
    long_soul = "# soul\n\n" + "s" * 5000
    assert check_text("soul.md", long_soul, LIMITS, "definition").ok
    bad = check_text("soul.md", "# s\n<!-- gitdream:begin learned -->\n", LIMITS, "definition")
    (problem,) = bad.problems
    assert problem.rule == "managed-block"
    assert bad.lines() == [
        "soul.md:2: managed-block: line 2: block 'learned' begins but never ends: "
        "add `<!-- gitdream:end learned -->` after its content"
    ]


def test_memory_index_limits_in_lines_and_bytes() -> None:
    ok = "# index\n" + "- [t](t.md)\n" * 199
    assert check_text("MEMORY.md", ok, LIMITS, "index").ok
    (lines,) = check_text("MEMORY.md", ok + "- one more\n", LIMITS, "index").problems
    assert lines.rule == "memory-lines"
    assert lines.message == "MEMORY.md has 201 lines, over the limit of 200"
    assert lines.line == 201
    wide = "# index\n" + ("x" * 999 + "\n") * 26
    (size,) = check_text("MEMORY.md", wide, LIMITS, "index").problems
    assert size.rule == "memory-bytes"
    assert size.message == "MEMORY.md is 26008 bytes, over the limit of 25000"
    assert size.line == 26


def test_memory_limits_are_configurable() -> None:
    limits = Limits(memory_max_lines=2, memory_max_bytes=10)
    rules = [p.rule for p in check_text("MEMORY.md", "a\nb\nc\n", limits, "index").problems]
    assert rules == ["memory-lines"]
    rules = [p.rule for p in check_text("MEMORY.md", "0123456789x", limits, "index").problems]
    assert rules == ["memory-bytes"]


def test_memory_bytes_count_utf8() -> None:
    limits = Limits(memory_max_bytes=10)
    assert check_text("MEMORY.md", "ééééé", limits, "index").ok  # 10 bytes
    assert not check_text("MEMORY.md", "éééééé", limits, "index").ok


def test_a_topic_gitdream_created_must_have_a_yaml_mapping() -> None:
    assert check_text("t.md", "---\nname: t\ntype: note\n---\nbody\n", LIMITS, "topic").ok
    assert check_text("t.md", "no front matter\n", LIMITS, "topic").ok
    (bad,) = check_text("t.md", "---\norigin: gitdream\nname: a: b\n---\n", LIMITS, "topic").problems
    assert (bad.rule, bad.line) == ("front-matter", 3)
    unterminated = check_text("t.md", "---\norigin: 'gitdream'\nname: t\n\nbody\n", LIMITS, "topic")
    assert [p.rule for p in unterminated.problems] == ["front-matter"]


def test_front_matter_gitdream_does_not_own_is_a_warning() -> None:
    """Regression test for #17: invalid YAML front matter that Claude Code wrote in a topic
    file gitdream does not own blocked the commit."""
    for text in (
        "---\nname: a: b\ndescription: it broke: badly\n---\nbody\n",
        "---\n- a\n- b\n---\n",
        "---\nname: t\n\nnever closed\n",
    ):
        result = check_text("t.md", text, LIMITS, "topic")
        assert result.ok, text
        (warning,) = result.warnings
        assert warning.rule == "front-matter"
        assert warning.hint.endswith(
            "gitdream leaves this topic alone (not created by gitdream, so the commit is not blocked)"
        )


def test_metadata_nested_fields_are_read() -> None:
    from gitdream.dream import memoryfiles
    from gitdream.text import frontmatter

    text = "---\nmetadata:\n  name: Deploys\n  description: how we ship\n  type: project\n---\n# Deploys\n"
    topic = memoryfiles.read_topic("deploys", "m/deploys.md", text)
    assert (topic.name, topic.description) == ("Deploys", "how we ship")
    assert frontmatter.field({"type": "user", "metadata": {"type": "project"}}, "type") == "user"
    assert frontmatter.field({"metadata": {"type": "project"}}, "type") == "project"
    assert frontmatter.field({"metadata": "x"}, "type") is None
    assert check_text("t.md", text, LIMITS, "topic").ok


def test_definition_front_matter_yaml_error_is_only_a_warning() -> None:
    text = "---\nname: x\ndescription: Use it: now\n---\nYou are x.\n"
    result = check_text("agents/x/agent.md", text, LIMITS, "agent")
    assert result.ok
    assert [w.rule for w in result.warnings] == ["front-matter"]


def test_unterminated_front_matter_in_agent_md_is_one_problem() -> None:
    result = check_text("agent.md", "---\nname: x\n# x\nbody\n", LIMITS, "agent")
    assert [p.rule for p in result.problems] == ["front-matter"]
    assert result.warnings == []


def test_not_utf8_is_an_encoding_problem() -> None:
    result = check_bytes("agent.md", b"# ops\nline\n\xff\xfe bad\n", LIMITS, "agent")
    (problem,) = result.problems
    assert (problem.rule, problem.line) == ("encoding", 3)
    assert "byte 11" in problem.message


def test_to_json_shape() -> None:
    result = check_text("agents/ops/agent.md", "# ops\n\nSummary.\n", LIMITS, "agent", agent="ops")
    assert result.to_json() == {
        "path": "agents/ops/agent.md",
        "agent": "ops",
        "kind": "agent",
        "ok": True,
        "problems": [],
        "warnings": [],
        "prefix": {
            "length": 16,
            "sections": [{"name": "# ops", "start": 0, "end": 15, "line": 1, "requirement": "default"}],
        },
    }


def test_check_definition_reads_the_config() -> None:
    cfg = config.defaults().with_overrides(
        {"prefix_chars": (20, "test"), "required_sections": (["## Role"], "test")}
    )
    text = "# ops\n\n## Role\n\nWatch the pipeline.\n"
    result = check_definition("agents/ops/agent.md", text, cfg)
    assert [p.text() for p in result.problems] == [
        "section '## Role' ends at character 35, past 20: move it up or shorten what comes before it"
    ]
    assert check_definition("agents/ops/soul.md", text, cfg).ok


def test_check_definition_counts_in_the_configured_unit() -> None:
    cfg = config.defaults().with_overrides({"prefix_unit": ("utf16", "test"), "prefix_chars": (10, "test")})
    assert not check_definition("agent.md", "# 😀😀😀😀😀\n", cfg).ok  # ends at UTF-16 unit 12
    assert check_definition("agent.md", "# 😀😀😀😀\n", cfg).ok  # 6 characters, 10 units


def test_bad_required_sections_entry_is_a_config_error() -> None:
    cfg = config.defaults().with_overrides({"required_sections": (["Purpose"], "flag --x")})
    with pytest.raises(ConfigError, match="flag --x"):
        check_definition("agent.md", "# x\n", cfg)
