"""Run references (`last`, `last~N`, unique prefixes) and merging receipts with trailers."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from freezegun import freeze_time

from gitdream import ids
from gitdream.dream.runs import AmbiguousRun, Run, UnknownRun, list_runs, resolve
from gitdream.git.repo import Repo
from tests.dreamfake import Planned, fake_dream
from tests.helpers import commit_all, git, write

RUNS = [
    Run("1m8nd70ws8m5", agent="qa", time="2026-03-03T00:00:00Z", status="ok"),
    Run("1m8nd70ws8a1", agent="ops", time="2026-03-02T00:00:00Z", status="noop"),
    Run("1m8nc00000zz", agent="ops", time="2026-03-01T00:00:00Z", status="failed"),
]


def test_last_and_last_tilde_follow_the_log_order() -> None:
    assert resolve(RUNS, "last").run == "1m8nd70ws8m5"
    assert resolve(RUNS, "last~1").run == "1m8nd70ws8a1"
    assert resolve(RUNS, "last~2").run == "1m8nc00000zz"
    assert resolve(RUNS, "last", agent="ops").run == "1m8nd70ws8a1"
    assert resolve(RUNS, "last~1", agent="ops").run == "1m8nc00000zz"


def test_last_past_the_oldest_run_is_an_error() -> None:
    with pytest.raises(UnknownRun, match="only 2 runs of agent ops"):
        resolve(RUNS, "last~2", agent="ops")
    with pytest.raises(UnknownRun, match="there are no runs yet"):
        resolve([], "last")
    with pytest.raises(UnknownRun, match="there are no runs of agent qa yet"):
        resolve(RUNS[1:], "last", agent="qa")


def test_unique_prefix_whole_id_and_case() -> None:
    assert resolve(RUNS, "1m8nc").run == "1m8nc00000zz"
    assert resolve(RUNS, "1M8ND70WS8M").run == "1m8nd70ws8m5"
    assert resolve(RUNS, "1m8nd70ws8a1").run == "1m8nd70ws8a1"


def test_ambiguous_prefix_names_every_candidate_with_agent_and_time() -> None:
    with pytest.raises(AmbiguousRun) as caught:
        resolve(RUNS, "1m8nd")
    message = caught.value.message
    assert "1m8nd70ws8m5 (agent qa, 2026-03-03T00:00:00Z, ok)" in message
    assert "1m8nd70ws8a1 (agent ops, 2026-03-02T00:00:00Z, noop)" in message
    assert "1m8nc" not in message
    assert caught.value.candidates == ["1m8nd70ws8m5", "1m8nd70ws8a1"]
    assert caught.value.hint == "give more characters of the run id"
    # The agent scope removes the ambiguity.
    assert resolve(RUNS, "1m8nd", agent="ops").run == "1m8nd70ws8a1"


def test_unknown_and_malformed_references() -> None:
    with pytest.raises(UnknownRun, match="no run with an id starting with '1m8nx'") as caught:
        resolve(RUNS, "1m8nx")
    assert "gitdream log" in (caught.value.hint or "")
    with pytest.raises(UnknownRun, match=r"is not a run reference: give .*unique prefix"):
        resolve(RUNS, "HEAD~1")
    with pytest.raises(UnknownRun, match=r"is not a run reference: give .*unique prefix"):
        resolve(RUNS, "1m8nd70ws8m5x")


def test_run_time_decodes_the_id() -> None:
    with freeze_time("2026-03-01T12:34:56.789Z"):
        run_id = ids.new_run_id()
    assert ids.run_time(run_id) == datetime(2026, 3, 1, 12, 34, 56, 789000, tzinfo=UTC)
    assert ids.run_time("short") is None
    assert ids.run_time("iiiiiiiiiiii") is None


LOG = "agents/ops/memory/logs/2026/03/2026-03-01.md"


def test_runs_from_receipts_and_trailers(agent_repo: Path) -> None:
    write(agent_repo, LOG, "# 2026-03-01\n\n- Rollback failed. #deploys\n")
    commit_all(agent_repo, "log")
    noop = fake_dream(agent_repo, Planned(), status="noop")
    ok = fake_dream(agent_repo, Planned(topics={"deploys": [("Rollbacks need a tag.", [f"{LOG}#L3-L3"])]}))
    runs = list_runs(Repo.open(agent_repo))
    assert [r.run for r in runs] == [ok["run"], noop["run"]]
    assert runs[0].commits == ok["commits"] and runs[0].receipt is not None
    assert runs[0].trailer_commits == {"experience": ok["commits"]["experience"]}
    assert runs[1].commits == {"experience": None, "definition": None} and runs[1].status == "noop"

    # Receipts not fetched: the committed run is still known from its trailers.
    git(agent_repo, "update-ref", "-d", "refs/notes/gitdream")
    runs = list_runs(Repo.open(agent_repo))
    assert [r.run for r in runs] == [ok["run"]]
    assert runs[0].status == "unknown" and runs[0].receipt is None
    assert runs[0].agent == "ops" and runs[0].engine == "offline"
    assert runs[0].input_commit == ok["input_commit"]
    assert runs[0].commits["experience"] == ok["commits"]["experience"]
    assert runs[0].time is not None and runs[0].time.startswith("20")


def test_the_trailer_walk_is_bounded(agent_repo: Path) -> None:
    write(agent_repo, LOG, "# 2026-03-01\n\n- Rollback failed. #deploys\n")
    commit_all(agent_repo, "log")
    # Distinct commit times: the walk goes newest first by commit time (libgit2 orders
    # commits of the same second arbitrarily, parents included).
    with freeze_time("2098-01-01T00:00:00Z"):
        ok = fake_dream(
            agent_repo, Planned(topics={"deploys": [("Rollbacks need a tag.", [f"{LOG}#L3-L3"])]})
        )
    git(agent_repo, "update-ref", "-d", "refs/notes/gitdream")
    for n in range(3):
        commit_all(agent_repo, f"later {n}", date=f"2099-01-01T00:00:0{n}Z")
    repo = Repo.open(agent_repo)
    assert [r.run for r in list_runs(repo, walk_limit=4)] == [ok["run"]]
    assert list_runs(repo, walk_limit=3) == []
