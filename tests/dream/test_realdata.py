"""The offline engine and integration over real agent repositories (../shared/realdata).

The repository is built with `../shared/tools/make-real-repo`; its memory directories are
real Claude Code / OpenClaw memory written by people. Entries come from the real daily logs
through a plain line splitter (a stand-in for gitdream.dream.readers): every non-empty line
that is not a heading is one entry, dated by the log's file name, with the headings above it
as context and `#tags` as tags. Agents without logs of their own get a slice of another
agent's log, plus entries tagged with the names of their own topic files, so that facts land
in human-written topic files.
"""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from gitdream.agents import Agent, make_agent
from gitdream.config import defaults
from gitdream.contract import DistillContext, MemoryView
from gitdream.dream import facts as factfmt
from gitdream.dream import memoryfiles
from gitdream.dream.integrate import apply_changes, integrate_definitions, integrate_experience
from gitdream.engines.offline import OfflineEngine
from gitdream.text import blocks
from gitdream.units import Entry, parse_source_ref
from tests.helpers import PACKAGE_ROOT, SHARED
from tests.standins import simple_absolutize, simple_slugify

# tests.helpers.SHARED is `<checkout>/../shared`; from a linked worktree (`/work/wt/<name>`)
# the shared folder is one level further up.
SHARED_DIR = next((p for p in (SHARED, PACKAGE_ROOT.parent.parent / "shared") if p.is_dir()), SHARED)
MAKE_REPO = SHARED_DIR / "tools" / "make-real-repo"
pytestmark = pytest.mark.skipif(
    not MAKE_REPO.is_file(), reason=f"needs the shared real-data corpus ({MAKE_REPO} is absent)"
)
COMMIT = "0123456789abcdef0123456789abcdef01234567"
TODAY = date(2026, 3, 1)
HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
TAG = re.compile(r"(?<!\S)#([A-Za-z][\w-]*)")


def split_log(root: Path, rel: str) -> list[Entry]:
    day = date.fromisoformat(Path(rel).stem)
    context: list[str] = []
    entries = []
    for number, line in enumerate((root / rel).read_text(encoding="utf-8").splitlines(), start=1):
        heading = HEADING.match(line)
        if heading:
            context = [*context[: len(heading.group(1)) - 1], heading.group(2)]
            continue
        if line.strip():
            tags = tuple(t.lower() for t in TAG.findall(line))
            entries.append(Entry(rel, number, number, line, day, tuple(context), tags=tags))
    return entries


def memory_files(root: Path, agent: Agent) -> dict[str, str]:
    out = {}
    for path in sorted((root / agent.memory_dir).rglob("*.md")) if (root / agent.memory_dir).is_dir() else []:
        rel = path.relative_to(root).as_posix()
        if not agent.is_source(rel):
            out[rel] = path.read_text(encoding="utf-8")
    for rel in agent.definition_files:
        if (root / rel).is_file():
            out[rel] = (root / rel).read_text(encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def real_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("real") / "repo"
    subprocess.run([sys.executable, str(MAKE_REPO), str(dest)], check=True, capture_output=True)
    return dest


def material(root: Path, agent: Agent, files: dict[str, str]) -> list[Entry]:
    logs = sorted(p.relative_to(root).as_posix() for p in (root / agent.memory_dir).rglob("logs/**/*.md"))
    entries = [e for rel in logs for e in split_log(root, rel)]
    if not entries:  # borrow real lines from another agent's log
        donor = sorted(
            p.relative_to(root).as_posix() for p in root.glob("agents/bookminder/memory/logs/**/*.md")
        )
        entries = split_log(root, donor[0])[:60]
    memory = memoryfiles.read_memory(agent, files)
    for number, (slug, topic) in enumerate(sorted(memory.topics.items()), start=1):
        line = (topic.description or topic.title or slug) + " — confirmed again"
        entries.append(
            Entry(f"{agent.memory_dir}/logs/extra.md", number, number, line, TODAY, tags=(slug.lower(),))
        )
    for number, target in enumerate(("skill", "soul", "agent"), start=1):
        text = f"- #{target} keep answers short and cite the log line"
        entries.append(Entry(f"{agent.dir}/sessions/s.md", number, number, text, TODAY, tags=(target,)))
    return entries


AGENTS = [
    "kit",
    "critic",
    "bookminder",
    "docstring-author",
    "spec-planner",
    "code-quality-reviewer",
    "claude-dev",
]


@pytest.mark.parametrize("agent_id", AGENTS)
def test_real_memory_dirs_keep_human_bytes_limits_and_sources(real_repo: Path, agent_id: str) -> None:
    cfg = defaults()
    agent = make_agent(f"agents/{agent_id}", cfg)
    files = memory_files(real_repo, agent)
    entries = material(real_repo, agent, files)
    engine = OfflineEngine(cfg, slugify=simple_slugify, absolutize=simple_absolutize)
    distilled = engine.distill(DistillContext(agent, entries, MemoryView(files), cfg, COMMIT, TODAY))
    assert distilled.units, "real material must give units"
    assert len(distilled.units) <= cfg.int("max_units")
    experience = [u for u in distilled.units if u.target == "experience"]
    definitions = [u for u in distilled.units if u.target != "experience"]

    result = integrate_experience(agent, files, experience, input_commit=COMMIT, today=TODAY, cfg=cfg)
    defs = integrate_definitions(agent, files, definitions, input_commit=COMMIT, check=lambda p, t: [])
    after = apply_changes(apply_changes(files, result.changes), dict(defs.changes))

    for path, old in files.items():
        new = after.get(path)
        if new is None:  # only a dream-owned topic may go, and only into the archive
            assert memoryfiles.read_topic("x", path, old).owned and result.demoted
        elif new != old:
            assert_human_bytes_kept(path, old, new)

    index = after.get(memoryfiles.index_path(agent))
    if index is not None:
        human = files.get(memoryfiles.index_path(agent), "")
        if len(human.splitlines()) > cfg.int("memory_max_lines") or len(human.encode()) > cfg.int(
            "memory_max_bytes"
        ):
            assert index == human  # over the limits already: block not grown
            if result.topics_created:  # warned, and the new topics indexed elsewhere
                assert any("already over its limits" in w for w in result.warnings)
                assert memoryfiles.overflow_index_path(agent) in result.changes
        else:
            assert len(index.splitlines()) <= cfg.int("memory_max_lines")
            assert len(index.encode("utf-8")) <= cfg.int("memory_max_bytes")

    written = 0
    for path, text in after.items():
        for name in ("facts", "learned", "superseded"):
            content = blocks.get(text, name, path)
            for fact in factfmt.parse(content or ""):
                assert fact.raw is None, (path, fact.raw)
                assert fact.sources and all(parse_source_ref(s) for s in fact.sources), (path, fact.text)
                written += 1
    assert written == result.loss.facts_after + sum(
        len(factfmt.parse(blocks.get(t, "learned") or ""))
        for p, t in after.items()
        if p in agent.definition_files
    )
    assert all(f.sources for f in result.facts_written + defs.facts_written)
    assert result.loss.facts_after >= result.loss.facts_before
    for refusal in defs.refused:
        assert "does not exist at the input commit" in refusal.reason

    # The same material again: everything integrated is recognised as already consolidated.
    again = engine.distill(DistillContext(agent, entries, MemoryView(after), cfg, COMMIT, TODAY))
    integrated = {ref.split("@")[0] for f in result.facts_written + defs.facts_written for ref in f.sources}
    assert not {u.sources[0] for u in again.units} & integrated
    assert integrated <= {i for i, reason in again.skipped if reason.startswith("already consolidated")}
    topics = memoryfiles.read_memory(agent, after).topics.values()
    oldest = min((t.last for t in topics if t.owned and t.last), default=TODAY)
    assert integrate_experience(agent, after, [], input_commit=COMMIT, today=oldest, cfg=cfg).changes == {}
    # Much later, with nothing new, the topics this run created are demoted: moved, not lost.
    later = integrate_experience(agent, after, [], input_commit=COMMIT, today=date(2027, 1, 1), cfg=cfg)
    assert later.loss.facts_after == later.loss.facts_before
    assert all(text is not None or path in result.topics_created for path, text in later.changes.items())


def assert_human_bytes_kept(path: str, old: str, new: str) -> None:
    """Outside gitdream's blocks, `new` is `old` byte for byte, plus newly appended blocks."""
    old_names = {b.name for b in blocks.parse(old, path)}
    rest = new
    for block in reversed(blocks.parse(new, path)):
        if block.name not in old_names:
            rest = rest[: block.start] + rest[block.end :]
    before = blocks.outside(old, path).encode("utf-8")
    after = blocks.outside(rest, path).encode("utf-8")
    assert after[: len(before)] == before, path
    assert after[len(before) :].strip(b"\r\n") == b"", path
