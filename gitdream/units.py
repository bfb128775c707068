"""The dream's ground-floor data: raw entries (input) and units (output of an engine).

Both engines and the pipeline stand on these types without pointing at each other.

- A **raw entry** is one list item or paragraph of a Markdown log, or one user/assistant
  message of a transcript (DESIGN §4). Its id is `path#Lstart-Lend`: the repository-
  relative path and 1-based inclusive line range at the input commit.
- A **unit** is what an engine proposes: a title and body, a target (`experience`,
  `skill`, `soul`, `agent`), an action (`create`, `corroborate`, `refine`, `correct`), a
  topic slug and the ids of the entries (or existing facts) it rests on (DESIGN §5,
  phase 3).
- A **source reference** written into memory is `<entry id>@<input commit, 12 hex>`, so
  `gitdream audit` can resolve it at the commit it was read from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

TARGETS = ("experience", "skill", "soul", "agent")
DEFINITION_TARGETS = ("skill", "soul", "agent")
ACTIONS = ("create", "corroborate", "refine", "correct")

ENTRY_ID_RE = re.compile(r"^(?P<path>.+)#L(?P<start>[0-9]+)-L(?P<end>[0-9]+)$")
SOURCE_REF_RE = re.compile(r"^(?P<id>.+#L[0-9]+-L[0-9]+)@(?P<commit>[0-9a-f]{7,40})$")


def entry_id(path: str, start: int, end: int) -> str:
    """`path#Lstart-Lend` (1-based, inclusive)."""
    return f"{path}#L{start}-L{end}"


def parse_entry_id(text: str) -> tuple[str, int, int] | None:
    """`(path, start, end)` of an entry id, or None when `text` is not one."""
    match = ENTRY_ID_RE.match(text)
    if match is None:
        return None
    return match["path"], int(match["start"]), int(match["end"])


def source_ref(entry: str, commit: str) -> str:
    """`<entry id>@<first 12 hex of the input commit>`."""
    return f"{entry}@{commit[:12]}"


def parse_source_ref(text: str) -> tuple[str, str] | None:
    """`(entry id, commit prefix)` of a source reference, or None."""
    match = SOURCE_REF_RE.match(text.strip())
    if match is None:
        return None
    return match["id"], match["commit"]


@dataclass(frozen=True)
class Entry:
    """One raw entry.

    `path` is repository-relative; `start`/`end` are 1-based inclusive line numbers in
    the file at the input commit; `text` is the entry's text (list marker and date prefix
    kept as written); `date` comes from the entry (`- [YYYY-MM-DD]`, a transcript's
    timestamp), else the file name, else the commit; `context` is the heading path above
    it (outermost first); `kind` is "log" or "transcript"; `role` is "user"/"assistant"
    for transcript messages, else None; `tags` are explicit tags found in the text
    (`#tag` or a leading `[tag]`), lower-cased, in order; `lead_in` is, for an item of a
    list that a sentence introduces ("The decisions we made:"), that sentence, else "".
    """

    path: str
    start: int
    end: int
    text: str
    date: date | None
    context: tuple[str, ...] = ()
    kind: str = "log"
    role: str | None = None
    tags: tuple[str, ...] = ()
    lead_in: str = ""

    @property
    def id(self) -> str:
        return entry_id(self.path, self.start, self.end)


@dataclass(frozen=True)
class Unit:
    """One proposed change to memory or definitions (see module docstring).

    `sources` are entry ids of this run's material (or, for refine/correct, fact ids of
    existing memory); `date` is the newest source date (used for "last seen");
    `corroborates` names the existing fact a `corroborate` unit confirms (its text).
    """

    title: str
    body: str
    target: str
    action: str
    topic: str
    sources: tuple[str, ...]
    date: date | None = None
    corroborates: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "title": self.title,
            "body": self.body,
            "target": self.target,
            "action": self.action,
            "topic": self.topic,
            "sources": list(self.sources),
            "date": self.date.isoformat() if self.date else None,
        }


@dataclass(frozen=True)
class TopicProposal:
    """What an engine proposes for a topic of its units: the topic's `slug`, its `name`
    (a few words naming the subject — never a unit's title, a date or a tally) and a
    one-line `description` of what it holds. For a new topic it becomes the topic file's
    front matter and index line; for an existing topic gitdream wrote, a better
    description of it. A human-written topic's own front matter is never changed."""

    slug: str
    name: str
    description: str

    def to_json(self) -> dict[str, str]:
        return {"slug": self.slug, "name": self.name, "description": self.description}


@dataclass(frozen=True)
class Rejected:
    """A unit that was not written, and why (`stage`: verify, screen, gate, limit...)."""

    unit: Unit
    stage: str
    reason: str
    details: dict[str, object] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {
            "title": self.unit.title,
            "target": self.unit.target,
            "topic": self.unit.topic,
            "stage": self.stage,
            "reason": self.reason,
            **({"details": self.details} if self.details else {}),
        }
