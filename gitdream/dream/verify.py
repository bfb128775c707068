"""Verify: a unit may rest only on what this run really read (DESIGN §5 phase 4; seed
decision D — a fabricated source is the most dangerous kind of unverifiable claim,
because a reviewer who cannot follow the pointer tends to assume it is true).

Pure functions, used for every engine:

- `verify(units, entry_ids, fact_ids)` keeps a unit only if at least one of its sources
  is an entry id of this run's material — or, for `refine`/`correct`, the id of an
  existing fact. Other ids are dropped (and reported); a unit left with no support is
  rejected as unverifiable, with the ids it made up. It also refuses units whose target,
  action or topic could not be written safely (e.g. a topic `../../.git/hooks/x`), as a
  second line behind the write gate.
- `existing_facts(memory, agent)` lists the facts in the agent's topic files with their
  **fact ids** (`fact:` + 10 hex digits of SHA-256 over the topic path and the fact's
  text), the ids the anthropic engine shows the model and the pipeline passes back here.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from gitdream.dream import facts as fact_format
from gitdream.dream.memoryfiles import safe_slug
from gitdream.errors import BlockError
from gitdream.text import blocks
from gitdream.units import ACTIONS, TARGETS, Rejected, Unit

if TYPE_CHECKING:
    from gitdream.agents import Agent
    from gitdream.contract import MemoryView


FACT_ID_RE = re.compile(r"^fact:[0-9a-f]{10}$")
SUPPORTING_FACT_ACTIONS = ("refine", "correct")
"""Actions for which an existing fact alone is enough support (DESIGN §5 phase 4)."""
FACT_REFERENCE_ACTIONS = ("corroborate", "refine", "correct")
"""Actions that may name an existing fact among their sources."""


@dataclass(frozen=True)
class ExistingFact:
    """A fact of the agent's memory: `id` (`fact:<10 hex>`), `path` (repository-relative
    topic file), `topic` (its slug) and `text` (one line)."""

    id: str
    path: str
    topic: str
    text: str


def fact_id(path: str, text: str) -> str:
    """The id of the fact `text` in topic file `path`: `fact:` + 10 hex digits of SHA-256
    over `path`, a newline and the text with whitespace collapsed. Stable while the fact
    is unchanged; a refined fact gets a new id."""
    normal = " ".join(text.split())
    return "fact:" + hashlib.sha256(f"{path}\n{normal}".encode()).hexdigest()[:10]


def existing_facts(memory: MemoryView, agent: Agent) -> list[ExistingFact]:
    """The facts inside the `facts` managed blocks of the agent's topic files (directly
    in its memory directory; `MEMORY.md`, `archive/` and files without a block are not
    topic facts), in path order. A file whose markers are malformed is skipped here —
    the integrator reports it."""

    prefix = agent.memory_dir + "/" if agent.memory_dir else ""
    found: list[ExistingFact] = []
    for path in sorted(memory.files):
        rest = path[len(prefix) :] if path.startswith(prefix) else None
        if rest is None or "/" in rest or not rest.endswith(".md") or rest == "MEMORY.md":
            continue
        try:
            content = blocks.get(memory.files[path], "facts", path)
        except BlockError:
            continue
        if content is None:
            continue
        topic = rest[: -len(".md")]
        for fact in fact_format.parse(content):
            text = " ".join(fact.text.split())
            if text:
                found.append(ExistingFact(fact_id(path, text), path, topic, text))
    return found


def unsafe_reason(unit: Unit) -> str | None:
    """Why `unit` cannot be written whatever its sources, or None: an unknown target or
    action, or a topic that is not a slug (a path such as `../../.git/hooks/post-merge`)."""
    if unit.target not in TARGETS:
        return f"target {unit.target!r} is not one of {', '.join(TARGETS)}"
    if unit.action not in ACTIONS:
        return f"action {unit.action!r} is not one of {', '.join(ACTIONS)}"
    if unit.target == "experience" and not safe_slug(unit.topic):
        return f"topic {unit.topic!r} cannot name a topic file (see gitdream.dream.memoryfiles.safe_slug)"
    return None


def verify(
    units: Iterable[Unit],
    entry_ids: Iterable[str],
    fact_ids: Iterable[str] = (),
    *,
    notes: list[dict[str, Any]] | None = None,
) -> tuple[list[Unit], list[Rejected]]:
    """Split `units` into (kept, rejected).

    `entry_ids`: ids of this run's material (`path#Lstart-Lend`); `fact_ids`: ids of the
    agent's existing facts (`existing_facts`). A source is *valid* when it is one of the
    entry ids, or one of the fact ids on a corroborate/refine/correct unit. A unit is
    kept when a valid source *supports* it: an entry id, or for refine/correct also a
    fact id. Kept units lose their invalid sources (deduplicated, order kept); when
    `notes` is a list, one `{"title", "dropped"}` dict per such unit is appended to it.
    Rejected units have stage "verify" and, for missing support, details
    `{"fabricated": [...ids that are neither...], "not_allowed": [...fact ids on a
    create unit...]}`.
    """
    entries = set(entry_ids)
    known_facts = set(fact_ids)
    kept: list[Unit] = []
    rejected: list[Rejected] = []
    for unit in units:
        problem = unsafe_reason(unit)
        if problem is not None:
            rejected.append(Rejected(unit, "verify", f"unsafe unit: {problem}"))
            continue
        valid: list[str] = []
        fabricated: list[str] = []
        not_allowed: list[str] = []
        for source in dict.fromkeys(unit.sources):
            if source in entries:
                valid.append(source)
            elif source in known_facts:
                (valid if unit.action in FACT_REFERENCE_ACTIONS else not_allowed).append(source)
            else:
                fabricated.append(source)
        supported = any(
            s in entries or (unit.action in SUPPORTING_FACT_ACTIONS and s in known_facts) for s in valid
        )
        if not supported:
            details: dict[str, object] = {"fabricated": fabricated}
            if not_allowed:
                details["not_allowed"] = not_allowed
            what = "none of its sources is" if unit.sources else "it cites no source that is"
            rejected.append(
                Rejected(
                    unit,
                    "verify",
                    f"unverifiable: {what} in this run's material"
                    + (" or an existing fact" if unit.action in SUPPORTING_FACT_ACTIONS else ""),
                    details=details,
                )
            )
            continue
        if len(valid) != len(unit.sources):
            unit = replace(unit, sources=tuple(valid))
            if notes is not None and (fabricated or not_allowed):
                notes.append({"title": unit.title, "dropped": fabricated + not_allowed})
        kept.append(unit)
    return kept, rejected
