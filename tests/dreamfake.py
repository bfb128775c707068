"""A hand-built dream for review/undo tests that do not need an engine.

`fake_dream` writes what a dream writes, through gitdream's own writers: an experience
commit (topic files with a `facts` block, the `index` block of MEMORY.md) and a definition
commit (`learned` blocks), both through `commitbuilder.commit` with the pipeline's message
format and trailers, then moves the watermark by compare-and-swap and appends the receipt
note. The facts cite `<entry id>@<input commit>` as the pipeline does. Nothing is mocked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitdream import clock, config, ids
from gitdream.agents import list_agents, select
from gitdream.dream import facts as fact_format
from gitdream.dream import receipts
from gitdream.git import commitbuilder
from gitdream.git.refs import compare_and_swap
from gitdream.git.repo import Repo
from gitdream.text import blocks
from gitdream.units import source_ref


@dataclass
class Planned:
    """Facts to write: `{topic slug: [(text, [entry ids])]}` and `{definition file name:
    [(text, [entry ids])]}` (file names relative to the agent, e.g. "SKILL.md")."""

    topics: dict[str, list[tuple[str, list[str]]]] = field(default_factory=dict)
    learned: dict[str, list[tuple[str, list[str]]]] = field(default_factory=dict)


def _read(repo: Repo, commit: str, path: str) -> str | None:
    import pygit2

    tree = repo.raw[commit].peel(pygit2.Tree)
    try:
        return bytes(tree[path].data).decode("utf-8")
    except KeyError:
        return None


def _add_facts(text: str, block: str, new: list[fact_format.Fact], where: str) -> str:
    current = blocks.get(text, block, where) or ""
    existing = fact_format.parse(current) if current.strip() else []
    return blocks.replace(text, block, fact_format.render(existing + new), where)


def fake_dream(
    root: Path,
    planned: Planned,
    *,
    agent_id: str = "ops",
    status: str = "ok",
    trigger: str = "manual",
    write_receipt: bool = True,
    move_watermark: bool = True,
) -> dict[str, Any]:
    """Dream `planned` into the repository at `root` for `agent_id`; returns the receipt.

    With status "noop"/"failed" no commit is made (a receipt only; the watermark moves for
    noop, as the pipeline does).
    """
    repo = Repo.open(root)
    cfg = config.load(repo.workdir)
    agent = select(list_agents(repo.workdir, cfg), [agent_id])[0]
    ident = commitbuilder.identity(repo, cfg)
    run_id = ids.new_run_id()
    head = repo.require_writable()
    input_commit = head.oid
    assert input_commit is not None
    watermark_before = _watermark(repo, agent.watermark_ref)
    receipt: dict[str, Any] = {
        "type": "receipt",
        "version": receipts.SCHEMA_VERSION,
        "run": run_id,
        "agent": agent.id,
        "agent_dir": agent.dir,
        "trigger": trigger,
        "engine": "offline",
        "status": status,
        "started": clock.iso(clock.now()),
        "input_commit": input_commit,
        "branch": head.branch,
        "phases": {},
        "commits": {"experience": None, "definition": None},
        "counts": {},
        "units": [],
        "rejected": [],
        "pending": [],
        "tokens": {"input": 0, "output": 0, "cache_creation": 0, "cache_read": 0},
        "warnings": [],
        "error": None,
        "watermark_before": watermark_before,
        "duration_seconds": 0.5,
    }
    trailers = [
        ("Gitdream-Run", run_id),
        ("Gitdream-Agent", agent.id),
        ("Gitdream-Input", input_commit),
        ("Gitdream-Engine", "offline"),
    ]
    created = 0
    if status == "ok":
        changes: dict[str, str] = {}
        index_path = agent.path("memory/MEMORY.md")
        index = _read(repo, input_commit, index_path) or "# Memory index\n"
        index_lines = []
        for slug, items in planned.topics.items():
            path = agent.path(f"memory/{slug}.md")
            text = _read(repo, input_commit, path)
            if text is None:
                text = f"---\nname: {slug}\ndescription: {slug}\ntype: project\norigin: gitdream\n---\n\n# {slug}\n"
                index_lines.append(f"- [{slug}]({slug}.md) — {slug}\n")
            new = [fact_format.Fact(t, [source_ref(e, input_commit) for e in refs]) for t, refs in items]
            changes[path] = _add_facts(text, "facts", new, path)
            for fact in new:
                receipt["units"].append(
                    {"path": path, "text": fact.text, "sources": fact.sources, "action": "created", "seen": 1}
                )
                created += 1
        if index_lines:
            current = blocks.get(index, "index", index_path) or ""
            changes[index_path] = blocks.replace(index, "index", current + "".join(index_lines), index_path)
        if changes:
            message = commitbuilder.format_message(
                f"dream({agent.id}): experience — improved {created} memories",
                "",
                [trailers[0], ("Gitdream-Kind", "experience"), *trailers[1:]],
            )
            done = commitbuilder.commit(
                repo,
                agent,
                "experience",
                [commitbuilder.Change(p, t.encode()) for p, t in sorted(changes.items())],
                message,
                ident,
            )
            receipt["commits"]["experience"] = done.oid
        def_changes: dict[str, str] = {}
        for name, items in planned.learned.items():
            path = agent.path(name)
            text = _read(repo, input_commit, path) or ""
            new = [fact_format.Fact(t, [source_ref(e, input_commit) for e in refs]) for t, refs in items]
            def_changes[path] = _add_facts(text, "learned", new, path)
        if def_changes:
            names = ", ".join(p.rsplit("/", 1)[-1] for p in sorted(def_changes))
            message = commitbuilder.format_message(
                f"dream({agent.id}): definitions — {names}",
                "",
                [trailers[0], ("Gitdream-Kind", "definition"), *trailers[1:]],
            )
            done = commitbuilder.commit(
                repo,
                agent,
                "definition",
                [commitbuilder.Change(p, t.encode()) for p, t in sorted(def_changes.items())],
                message,
                ident,
            )
            receipt["commits"]["definition"] = done.oid
    receipt["counts"] = {
        "entries": created,
        "units": created,
        "created": created,
        "corroborated": 0,
        "rejected": 1 if status == "ok" else 0,
    }
    if status == "ok":
        receipt["rejected"] = [
            {"title": "a secret", "target": "experience", "stage": "screen", "reason": "api key"}
        ]
    if status in ("ok", "noop") and move_watermark:
        compare_and_swap(
            repo, agent.watermark_ref, watermark_before, input_commit, f"gitdream: dream {run_id}"
        )
        receipt["watermark_after"] = input_commit
    if status == "failed":
        receipt["error"] = {"type": "engine", "message": "the engine failed", "hint": None}
    receipt["finished"] = clock.iso(clock.now())
    if write_receipt:
        receipts.append(repo, input_commit, receipt, ident)
    return receipt


def _watermark(repo: Repo, ref: str) -> str | None:
    found = repo.raw.references.get(ref)
    return str(found.target) if found is not None else None
