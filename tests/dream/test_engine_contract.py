"""The pipeline runs any engine of the `gitdream.contract.Engine` protocol (issue 12): the
caller builds the engine and hands it over; verify, screen and the receipt treat its
units, its screen and its calls alike, whoever made them."""

from __future__ import annotations

from pathlib import Path

from gitdream import config
from gitdream.agents import list_agents
from gitdream.contract import DistillContext
from gitdream.dream.options import RunOptions
from gitdream.dream.pipeline import run_agent
from gitdream.git import commitbuilder
from gitdream.git.chain import CommitChain
from gitdream.git.repo import Repo
from gitdream.units import Unit
from tests.fakeengine import FakeEngine
from tests.helpers import commit_all, git, write

LOG = "agents/ops/memory/logs/2026/03/2026-03-01.md"


def _unit(title: str, sources: list[str], topic: str = "deploy") -> Unit:
    return Unit(title, title, "experience", "create", topic, tuple(sources))


def _dream(root: Path, engine: FakeEngine, **opts: object):
    repo = Repo.open(root)
    cfg = config.load(repo.workdir)
    (agent,) = list_agents(repo.workdir, cfg, [])
    ident = commitbuilder.identity(repo, cfg)
    options = RunOptions(**opts)  # type: ignore[arg-type]
    return run_agent(repo, agent, cfg, options, "0000000000r1", ident, engine, CommitChain(options.branch))


def _propose(context: DistillContext) -> list[Unit]:
    real = [e.id for e in context.entries]
    return [
        _unit("Rollbacks need the previous image tag.", real[:1]),
        _unit("Invented from nothing.", [f"{LOG}#L90-L99"]),
        _unit("The screener says no to this.", real[:1]),
    ]


def test_pipeline_verifies_screens_and_records_whatever_engine_it_is_given(agent_repo: Path) -> None:
    write(agent_repo, LOG, "# 2026-03-01\n\n- [2026-03-01] Rollbacks need the previous image tag.\n")
    commit_all(agent_repo, "log")
    engine = FakeEngine(_propose, rejects=["The screener says no to this."], tokens=7)
    outcome = _dream(agent_repo, engine)
    receipt = outcome.receipt.to_json()
    assert receipt["status"] == "ok" and receipt["engine"] == "fake"
    assert [u["text"] for u in receipt["units"]] == ["Rollbacks need the previous image tag."]
    assert {(r["title"], r["stage"]) for r in receipt["rejected"]} == {
        ("Invented from nothing.", "verify"),
        ("The screener says no to this.", "screen"),
    }
    # The engine's calls are the receipt's, and its tokens are counted.
    assert [c["purpose"] for c in receipt["calls"]] == ["distill", "screen"]
    assert receipt["tokens"]["input"] == 14 and receipt["tokens"]["output"] == 2
    trailers = git(
        agent_repo, "log", "-1", "--format=%(trailers:only,unfold)", receipt["commits"]["experience"]
    )
    assert "Gitdream-Engine: fake" in trailers
    # Whoever built the engine closes it; the pipeline does not.
    assert not engine.closed


def test_estimate_asks_the_engine_and_distills_nothing(agent_repo: Path) -> None:
    write(agent_repo, LOG, "# 2026-03-01\n\n- One entry.\n- Another entry.\n")
    commit_all(agent_repo, "log")
    before = git(agent_repo, "rev-parse", "HEAD")

    def never(context: DistillContext) -> list[Unit]:
        raise AssertionError("an estimate must not distill")

    outcome = _dream(agent_repo, FakeEngine(never, tokens=5), estimate=True)
    assert outcome.estimate == {"engine": "fake", "calls": 1, "input_tokens": 5, "entries": 2}
    assert outcome.receipt.calls == [] and git(agent_repo, "rev-parse", "HEAD") == before
