"""Receipts as git notes: append-only JSON lines, concurrent appends, token totals."""

from __future__ import annotations

import threading
from pathlib import Path

from gitdream.dream import receiptlog, receipts
from gitdream.git.commitbuilder import Identity
from gitdream.git.repo import Repo
from tests.helpers import git, head

IDENT = Identity(("gitdream", "g@gitdream.invalid"), ("gitdream", "g@gitdream.invalid"))


def test_append_and_read(agent_repo: Path) -> None:
    repo = Repo.open(agent_repo)
    commit = head(agent_repo)
    receipts.append(repo, commit, {"type": "receipt", "run": "a", "agent": "ops", "status": "ok"}, IDENT)
    receipts.append(repo, commit, {"type": "receipt", "run": "b", "agent": "qa", "status": "failed"}, IDENT)
    receipts.append(repo, commit, {"type": "annotation", "run": "a", "reverted_by": "c"}, IDENT)
    assert [r["run"] for r in receipts.read(repo, commit)] == ["a", "b", "a"]
    listed = receipts.receipts(repo)
    assert [r.run for r in listed] == ["b", "a"]
    assert listed[1].annotations == [{"type": "annotation", "run": "a", "reverted_by": "c"}]
    # The note is visible to git itself.
    assert '"run":"a"' in git(agent_repo, "notes", "--ref", "gitdream", "show", commit)


def test_latest_ignores_failed_runs_and_other_agents(agent_repo: Path) -> None:
    repo = Repo.open(agent_repo)
    commit = head(agent_repo)
    for run, agent, status in [
        ("1", "ops", "ok"),
        ("2", "ops", "failed"),
        ("3", "qa", "ok"),
        ("0", "ops", "noop"),
    ]:
        receipts.append(
            repo, commit, {"type": "receipt", "run": run, "agent": agent, "status": status}, IDENT
        )
    latest = receipts.latest(repo, "ops", commit)
    assert latest is not None and latest.run == "1"
    assert receipts.latest(repo, "ops", None) is None


def test_latest_of_many_agents_sharing_one_note_follows_every_new_receipt(agent_repo: Path) -> None:
    # One run of many agents writes all their receipts into one note, and each agent's gate
    # asks it: the note is read once per notes ref tip, and an appended receipt — here or
    # by another gitdream process, `git notes append` — is seen at once.
    repo = Repo.open(agent_repo)
    commit = head(agent_repo)
    for n in range(50):
        receipts.append(
            repo, commit, {"type": "receipt", "run": "1", "agent": f"a{n}", "status": "noop"}, IDENT
        )
    assert [receiptlog.latest_dream(repo, f"a{n}", commit)["run"] for n in range(50)] == ["1"] * 50
    receipts.append(repo, commit, {"type": "receipt", "run": "2", "agent": "a7", "status": "ok"}, IDENT)
    assert receiptlog.latest_dream(repo, "a7", commit)["run"] == "2"
    line = '{"type": "receipt", "run": "3", "agent": "a8", "status": "ok"}'
    git(agent_repo, "notes", "--ref", "gitdream", "append", "-m", line, commit)
    again = Repo.open(agent_repo)
    assert receiptlog.latest_dream(repo, "a8", commit)["run"] == "3"
    assert receiptlog.latest_dream(again, "a8", commit)["run"] == "3"
    assert receiptlog.latest_dream(repo, "a9", commit)["run"] == "1"


def test_garbage_lines_in_a_note_are_skipped(agent_repo: Path) -> None:
    commit = head(agent_repo)
    git(
        agent_repo,
        "notes",
        "--ref",
        "gitdream",
        "add",
        "-m",
        'not json\n{"type":"receipt","run":"x"}\n[1,2]',
        commit,
    )
    assert receipts.read(Repo.open(agent_repo), commit) == [{"type": "receipt", "run": "x"}]


def test_concurrent_appends_lose_nothing(agent_repo: Path) -> None:
    commit = head(agent_repo)
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            repo = Repo.open(agent_repo)
            for i in range(5):
                receipts.append(repo, commit, {"type": "receipt", "run": f"{n}-{i}", "agent": "ops"}, IDENT)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(receipts.read(Repo.open(agent_repo), commit)) == 20


def test_tokens_used_since(agent_repo: Path) -> None:
    repo = Repo.open(agent_repo)
    commit = head(agent_repo)
    receipts.append(
        repo,
        commit,
        {
            "type": "receipt",
            "run": "a",
            "finished": "2026-03-01T10:00:00Z",
            "tokens": {"input": 100, "output": 20},
        },
        IDENT,
    )
    receipts.append(
        repo,
        commit,
        {
            "type": "receipt",
            "run": "b",
            "finished": "2026-03-02T01:00:00Z",
            "tokens": {"input": 5, "output": 1},
        },
        IDENT,
    )
    assert receipts.tokens_used_since(repo, "2026-03-02T00:00:00Z") == 6
    assert receipts.tokens_used_since(repo, "2026-03-01T00:00:00Z") == 126


def test_a_receipt_reads_back_as_it_was_written_and_a_hand_edited_one_reads_as_defaults() -> None:
    """Regression test for #12: the note, `run --json` and `show` read one type."""
    receipt = receipts.Receipt(run="r1", agent="ops", status="ok", input_commit="a" * 40)
    receipt.phase("gather", files=2)
    receipt.finish(
        calls=[{"input_tokens": 5, "output_tokens": 2}],
        pending=[],
        warnings=["w", "w"],
        rejected=[],
        duration_seconds=1.23456,
        cfg=None,
    )
    document = receipt.to_json()
    assert document["tokens"] == {"input": 5, "output": 2, "cache_creation": 0, "cache_read": 0}
    assert document["warnings"] == ["w"] and document["duration_seconds"] == 1.235
    assert "definition_units" not in document and "reverts" not in document
    again = receipts.Receipt.from_json(document)
    assert again is not None and again.to_json() == document
    edited = receipts.Receipt.from_json(
        {"type": "receipt", "run": "r2", "counts": "many", "tokens": [1], "future_key": 1}
    )
    assert edited is not None
    assert (edited.status, edited.counts, edited.total_tokens) == ("unknown", {}, 0)
    assert edited.to_json()["future_key"] == 1
    assert receipts.Receipt.from_json({"type": "annotation", "run": "r1"}) is None


def test_completes_is_a_field_written_only_when_a_run_finished_a_killed_one() -> None:
    """`completes` (docs/json.md) is the receipt's own field, not a key it does not know."""
    plain = receipts.Receipt(run="r1", status="ok")
    assert "completes" not in plain.to_json()
    finishing = receipts.Receipt(run="r2", status="ok", completes="r1")
    document = finishing.to_json()
    assert document["completes"] == "r1"
    again = receipts.Receipt.from_json(document)
    assert again is not None and again.completes == "r1" and again.extra == {}
    forged = receipts.Receipt.from_json({"type": "receipt", "run": "r3", "completes": ["r1"]})
    assert forged is not None and forged.completes is None
