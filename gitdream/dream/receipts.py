"""Receipts: one JSON record per run, kept as a git note on the run's input commit.

Notes live under `refs/notes/gitdream` (DESIGN §4) and travel with push/fetch like any
ref. Several runs (of several agents, or a failed run and its retry) can share an input
commit, so a note holds JSON Lines: one object per line, appended, never rewritten. Each
object has a `type`: "receipt" (a run; shape documented in docs/json.md) or "annotation"
(a later fact about a run, e.g. `{"type": "annotation", "run": R, "reverted_by": S}`).

The notes ref moves by compare-and-swap: libgit2 builds the notes commit on the ref's
current tip and refuses if it moved meanwhile; the append is then retried.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gitdream import clock
from gitdream.errors import GitdreamError

if TYPE_CHECKING:
    from gitdream.git.commitbuilder import Identity
    from gitdream.git.repo import Repo

NOTES_REF = "refs/notes/gitdream"
SCHEMA_VERSION = 1


def read(repo: Repo, commit: str) -> list[dict[str, Any]]:
    """The records in the note on `commit` (empty when it has none). Lines that are not
    JSON objects are skipped (a hand-edited note must not break `gitdream log`)."""
    try:
        note = repo.raw.lookup_note(commit, NOTES_REF)
    except KeyError:
        return []
    return _parse(note.message)


def _parse(text: str) -> list[dict[str, Any]]:
    records = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            records.append(value)
    return records


def append(repo: Repo, commit: str, record: dict[str, Any], ident: Identity) -> None:
    """Append `record` (a JSON-serialisable dict) to the note on `commit`.

    Retries when another process moved the notes ref meanwhile; raises GitdreamError
    after repeated failures.
    """
    import pygit2

    from gitdream.git import lockfiles

    line = json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    last_error: Exception | None = None
    for attempt in range(20):
        try:
            existing = repo.raw.lookup_note(commit, NOTES_REF).message
        except KeyError:
            existing = ""
        text = existing.rstrip("\n") + ("\n" if existing.strip() else "") + line + "\n"
        when, offset = clock.git_time()
        author = pygit2.Signature(ident.author[0], ident.author[1], when, offset)
        committer = pygit2.Signature(ident.committer[0], ident.committer[1], when, offset)
        try:
            repo.raw.create_note(text, author, committer, commit, NOTES_REF, True)
            return
        except (pygit2.GitError, OSError) as exc:  # the notes ref moved or is locked, or a
            # fan-out folder vanished under `git gc` (see `write_object`): read again
            refusal = lockfiles.from_git_error(exc)
            if refusal is not None and attempt >= 10:  # a lock that stays: git left it behind
                raise refusal from exc
            last_error = exc
            time.sleep(0.01 * attempt)
    raise GitdreamError(
        f"could not write the receipt note on {commit[:12]}: {last_error}",
        hint="another process keeps updating refs/notes/gitdream; run again",
    )


def iter_records(repo: Repo) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every `(annotated commit id, record)` under the notes ref, in no particular order."""
    try:
        notes = list(repo.raw.notes(NOTES_REF))
    except KeyError:
        return
    except Exception:  # pygit2 raises GitError when the ref does not exist
        return
    for note in notes:
        for record in _parse(note.message):
            yield str(note.annotated_id), record


def receipts(repo: Repo) -> list[dict[str, Any]]:
    """All receipts (with annotations folded in as `annotations`), newest first by run id."""
    found: dict[str, dict[str, Any]] = {}
    notes: dict[str, list[dict[str, Any]]] = {}
    for _commit, record in iter_records(repo):
        kind = record.get("type")
        run = record.get("run")
        if not isinstance(run, str):
            continue
        if kind == "receipt":
            found[run] = dict(record)
        elif kind == "annotation":
            notes.setdefault(run, []).append(record)
    for run, items in notes.items():
        if run in found:
            found[run]["annotations"] = items
    return sorted(found.values(), key=lambda r: r["run"], reverse=True)


def latest(repo: Repo, agent_id: str, commit: str | None) -> dict[str, Any] | None:
    """The newest completed dream receipt of `agent_id` in the note on `commit` (its
    watermark), or None. "Completed" means status ok, partial or noop; receipts of reverts
    (`trigger: revert`) are not dreams and are skipped (their `pending` is always empty)."""
    if commit is None:
        return None
    best = None
    for record in read(repo, commit):
        if record.get("type") != "receipt" or record.get("agent") != agent_id:
            continue
        if record.get("trigger") == "revert":
            continue
        if record.get("status") not in ("ok", "partial", "noop"):
            continue
        if best is None or str(record.get("run", "")) > str(best.get("run", "")):
            best = record
    return best


def tokens_used_since(repo: Repo, since_iso: str) -> int:
    """Model tokens (input, output and cache tokens) of all receipts that finished at or
    after `since_iso` (an ISO 8601 UTC time): the repository's daily budget counter."""
    total = 0
    for _commit, record in iter_records(repo):
        if record.get("type") != "receipt":
            continue
        if str(record.get("finished", "")) < since_iso:
            continue
        tokens = record.get("tokens") or {}
        if isinstance(tokens, dict):
            total += sum(
                int(tokens.get(k, 0) or 0) for k in ("input", "output", "cache_creation", "cache_read")
            )
    return total


def tokens_used_today(repo: Repo) -> int:
    """`tokens_used_since` the start of today's UTC day (`clock.now()`): what counts
    against `anthropic.max_tokens_per_day`."""
    midnight = clock.now().replace(hour=0, minute=0, second=0, microsecond=0)
    return tokens_used_since(repo, clock.iso(midnight))
