"""The receipt notes as JSON Lines, read without building a `Receipt`.

A note under `refs/notes/gitdream` holds one JSON object per line (see
`gitdream.dream.receipts`). The idle path reads them here, as plain records: the sessions
gate of `run --auto` asks how much the last completed dream left pending, and building
the typed receipt (a large dataclass) would cost that closed gate milliseconds for one
number. Everything else reads receipts through `gitdream.dream.receipts`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gitdream.git import notes

if TYPE_CHECKING:
    from gitdream.git.repo import Repo

NOTES_REF = "refs/notes/gitdream"
COMPLETED = ("ok", "partial", "noop")
"""Statuses of a completed dream: its watermark moved."""


MAX_LINE_BYTES = 4_000_000
"""A note line (one record) longer than this is not read: notes come from other people."""


def parse(text: str) -> list[dict[str, Any]]:
    """The JSON objects of a note's lines; a line that is not one is skipped (a
    hand-edited note must not break `gitdream log`), and so is a line longer than
    MAX_LINE_BYTES or nested too deeply to parse (issue 16: a fetched note of 100 000 `[`
    crashed `log`, `show` and `revert` with RecursionError)."""
    records = []
    for line in text.splitlines():
        line = line.strip()
        if not line or len(line) > MAX_LINE_BYTES:
            continue
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            records.append(value)
    return records


def read(repo: Repo, commit: str) -> list[dict[str, Any]]:
    """The records in the note on `commit` (empty when it has none)."""
    return parse(notes.read(repo, NOTES_REF, commit) or "")


def iter_records(repo: Repo) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every `(annotated commit id, record)` under the notes ref, in no particular order."""
    for commit, text in notes.iter_notes(repo, NOTES_REF):
        for record in parse(text):
            yield commit, record


_LATEST: dict[tuple[str, str | None, str], dict[str, dict[str, Any]]] = {}
"""`latest_dreams` of a note, by (common dir, notes ref tip, annotated commit): one run of
many agents writes all their receipts into one note, and every agent's gate asks it."""
_LATEST_MAX = 64


def latest_dreams(repo: Repo, commit: str) -> dict[str, dict[str, Any]]:
    """The record of the newest completed dream of each agent in the note on `commit`,
    by agent id (empty without a note). Receipts of reverts (`trigger: revert`) are not
    dreams. The note is parsed once per process for a given notes ref tip — the tip
    changes whenever any note does — so asking it for each of 10 000 agents whose receipts
    share the note costs one parse, not 10 000 (a new user's report: `status` took 86 s
    at 2 000 agents after one run)."""
    key = (str(repo.common_dir), notes.tip(repo, NOTES_REF), commit)
    found = _LATEST.get(key)
    if found is None:
        found = {}
        for record in read(repo, commit):
            run, agent = record.get("run"), record.get("agent")
            if record.get("type") != "receipt" or not isinstance(run, str) or not isinstance(agent, str):
                continue
            if record.get("trigger") == "revert" or record.get("status") not in COMPLETED:
                continue
            if agent not in found or run > found[agent]["run"]:
                found[agent] = record
        if len(_LATEST) >= _LATEST_MAX:
            _LATEST.clear()
        _LATEST[key] = found
    return found


def latest_dream(repo: Repo, agent_id: str, commit: str | None) -> dict[str, Any] | None:
    """The record of the newest completed dream of `agent_id` in the note on `commit`
    (its watermark), or None (`latest_dreams`)."""
    if commit is None:
        return None
    return latest_dreams(repo, commit).get(agent_id)
