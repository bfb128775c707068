"""`gitdream log`, `show` and `audit` against real repositories (dreams built by
tests.dreamfake through gitdream's own writers)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from freezegun import freeze_time

from gitdream import config
from gitdream.commands.review import audit
from gitdream.git.repo import Repo
from tests.dreamfake import Planned, fake_dream
from tests.helpers import cli, commit_all, git, write

LOG = "agents/ops/memory/logs/2026/03/2026-03-01.md"
LOG_TEXT = (
    "# 2026-03-01\n\n"
    "- Rollback failed: it needed the previous image tag. #deploys\n"
    "- The CI cache must be cleared after a runner upgrade. #ci\n"
    "  It took an hour to find.\n"
    "- Always pin the node version. #skill\n"
)
PLANNED = Planned(
    topics={
        "deploys": [("Rollbacks need the previous image tag.", [f"{LOG}#L3-L3"])],
        "ci": [("Clear the CI cache after a runner upgrade.", [f"{LOG}#L4-L5"])],
    },
    learned={"SKILL.md": [("Pin the node version.", [f"{LOG}#L6-L6"])]},
)


@pytest.fixture
def history(agent_repo: Path) -> tuple[Path, dict[str, dict[str, Any]]]:
    """Four runs of ops, oldest first: failed (no commit), ok, noop; and one of qa."""
    write(agent_repo, LOG, LOG_TEXT)
    write(agent_repo, "agents/qa/agent.md", "# qa\n\nqa.\n")
    write(agent_repo, "agents/qa/memory/MEMORY.md", "# qa\n")
    commit_all(agent_repo, "logs")
    runs = {}
    with freeze_time("2026-03-02T08:00:00Z"):
        runs["failed"] = fake_dream(agent_repo, Planned(), status="failed")
    with freeze_time("2026-03-02T09:00:00Z"):
        runs["ok"] = fake_dream(agent_repo, PLANNED)
    with freeze_time("2026-03-03T09:00:00Z"):
        runs["noop"] = fake_dream(agent_repo, Planned(), status="noop")
    with freeze_time("2026-03-03T10:00:00Z"):
        runs["qa"] = fake_dream(agent_repo, Planned(), agent_id="qa", status="noop")
    return agent_repo, runs


# --- log ----------------------------------------------------------------------------------


def test_log_lists_every_run_newest_first_including_noop_and_failed(
    history: tuple[Path, dict[str, dict[str, Any]]],
) -> None:
    root, runs = history
    result = cli(root, "log", "--json", "--all")
    assert result.exit_code == 0
    document = json.loads(result.stdout)
    assert [r["run"] for r in document["runs"]] == [runs[k]["run"] for k in ("qa", "noop", "ok", "failed")]
    assert document["total"] == 4 and document["walk"] == {"limit": 2000, "truncated": False}
    assert document["hidden"] == 0
    ok = document["runs"][2]
    assert ok == {
        "run": runs["ok"]["run"],
        "agent": "ops",
        "time": "2026-03-02T09:00:00Z",
        "trigger": "manual",
        "engine": "offline",
        "status": "ok",
        "counts": {"improved": 2, "created": 2, "corroborated": 0, "rejected": 1},
        "commits": runs["ok"]["commits"],
        "input_commit": runs["ok"]["input_commit"],
        "branch": "refs/heads/main",
        "reverts": None,
        "only": None,
        "reverted_by": [],
        "receipt": True,
    }
    failed = document["runs"][3]
    assert failed["status"] == "failed" and failed["commits"] == {"experience": None, "definition": None}


def test_log_filters(history: tuple[Path, dict[str, dict[str, Any]]]) -> None:
    root, runs = history

    def listed(*args: str) -> list[str]:
        return [r["run"] for r in json.loads(cli(root, "log", "--json", *args).stdout)["runs"]]

    assert listed("--agent", "ops") == [runs[k]["run"] for k in ("ok", "failed")]
    assert listed("--agent", "ops", "--all") == [runs[k]["run"] for k in ("noop", "ok", "failed")]
    assert listed("--status", "failed") == [runs["failed"]["run"]]
    assert listed("--status", "noop", "--agent", "ops") == [runs["noop"]["run"]]
    assert listed("--limit", "2", "--all") == [runs["qa"]["run"], runs["noop"]["run"]]
    assert listed("--limit", "1") == [runs["ok"]["run"]]
    unknown = cli(root, "log", "--json", "--agent", "nobody")
    assert unknown.exit_code == 1
    assert "no agent with id 'nobody'" in json.loads(unknown.stdout)["error"]["message"]
    limited = cli(root, "log", "--limit", "0")
    assert limited.exit_code == 0 and "runs match; --limit 0 shows none of them" in limited.stdout


def test_log_human_output_fits_a_terminal(history: tuple[Path, dict[str, dict[str, Any]]]) -> None:
    root, runs = history
    result = cli(root, "log", "--agent", "ops", "--all")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == [
        "RUN",
        "TIME",
        "(UTC)",
        "AGENT",
        "STATUS",
        "TRIGGER",
        "IMPR",
        "NEW",
        "CORR",
        "REJ",
        "COMMITS",
    ]
    ok = runs["ok"]["commits"]
    assert lines[2].split() == [
        runs["ok"]["run"],
        "2026-03-02",
        "09:00",
        "ops",
        "ok",
        "manual",
        "2",
        "2",
        "0",
        "1",
        f"e:{ok['experience'][:7]}",
        f"d:{ok['definition'][:7]}",
    ]
    assert lines[3].split()[4:6] == ["failed", "manual"] and lines[3].endswith("-")
    assert all(len(line) <= 100 for line in lines)
    limited = cli(root, "log", "-n", "1", "--all").stdout.splitlines()
    assert limited[-1] == "… 3 older runs (raise --limit to see them)"
    assert cli(root, "log", "--status", "aborted").stdout == "No runs match.\n"


def test_log_hides_noop_runs_and_says_how_many(history: tuple[Path, dict[str, dict[str, Any]]]) -> None:
    root, runs = history
    lines = cli(root, "log").stdout.splitlines()
    assert [line.split()[0] for line in lines[1:3]] == [runs["ok"]["run"], runs["failed"]["run"]]
    assert lines[3:] == ["(2 no-op runs hidden: agents with nothing new; --all lists them)"]
    assert json.loads(cli(root, "log", "--json").stdout)["hidden"] == 2
    only = cli(root, "log", "--agent", "qa").stdout.splitlines()
    assert only == [
        "No runs changed anything that match.",
        "(1 no-op run hidden: agents with nothing new; --all lists them)",
    ]
    assert "hidden" not in cli(root, "log", "--all").stdout
    assert [r["run"] for r in json.loads(cli(root, "log", "--status", "noop", "--json").stdout)["runs"]] == [
        runs["qa"]["run"],
        runs["noop"]["run"],
    ]


def test_log_keeps_agent_names_that_share_a_prefix_apart(agent_repo: Path) -> None:
    names = ["playwright-checkout-flow", "playwright-login-flow"]
    for name in names:
        write(agent_repo, f"agents/{name}/agent.md", f"# {name}\n\n{name}.\n")
        write(agent_repo, f"agents/{name}/memory/MEMORY.md", f"# {name}\n")
    commit_all(agent_repo, "agents")
    for name in names:
        fake_dream(agent_repo, Planned(), agent_id=name, status="failed")
    lines = cli(agent_repo, "log", env={"COLUMNS": "80"}).stdout.splitlines()
    agents = [line.split()[3] for line in lines[1:]]
    assert len(set(agents)) == 2, lines
    assert all(a.startswith("playwright-") and len(a) > 12 for a in agents), agents


def test_log_without_receipts_shows_the_trailers(history: tuple[Path, dict[str, dict[str, Any]]]) -> None:
    root, runs = history
    git(root, "update-ref", "-d", "refs/notes/gitdream")
    document = json.loads(cli(root, "log", "--json").stdout)
    assert [r["run"] for r in document["runs"]] == [runs["ok"]["run"]]
    run = document["runs"][0]
    assert run["status"] == "unknown" and run["receipt"] is False
    assert run["commits"] == runs["ok"]["commits"] and run["agent"] == "ops"
    assert run["time"] == "2026-03-02T09:00:00Z"  # from the run id
    human = cli(root, "log").stdout
    assert "no receipt here (fetch refs/notes/gitdream); from commit trailers" in human
    assert cli(root, "log", "--status", "unknown", "--json").exit_code == 0


def test_log_in_a_repository_without_dreams(agent_repo: Path) -> None:
    result = cli(agent_repo, "log")
    assert result.exit_code == 0 and result.stdout == "No dreams yet; dream with `gitdream run`.\n"
    assert json.loads(cli(agent_repo, "log", "--json").stdout)["runs"] == []


# --- show and run references ----------------------------------------------------------------


def test_show_json(history: tuple[Path, dict[str, dict[str, Any]]]) -> None:
    root, runs = history
    result = cli(root, "show", runs["ok"]["run"][:10], "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["run"]["run"] == runs["ok"]["run"]
    assert document["receipt"]["input_commit"] == runs["ok"]["input_commit"]
    assert [c["kind"] for c in document["commits"]] == ["experience", "definition"]
    experience = document["commits"][0]
    assert experience["oid"] == runs["ok"]["commits"]["experience"] and experience["in_head"] is True
    assert experience["subject"] == "dream(ops): experience — improved 2 memories"
    assert {f["path"]: f["status"] for f in experience["files"]} == {
        "agents/ops/memory/MEMORY.md": "M",
        "agents/ops/memory/ci.md": "A",
        "agents/ops/memory/deploys.md": "A",
    }
    assert experience["insertions"] == sum(f["insertions"] for f in experience["files"]) > 0
    assert "3 files changed" in experience["stat"] and "patch" not in experience
    assert document["units"][0]["sources"] == [f"{LOG}#L3-L3@{runs['ok']['input_commit'][:12]}"]
    assert document["rejected"] == [
        {"title": "a secret", "target": "experience", "stage": "screen", "reason": "api key"}
    ]
    assert document["tokens"] == {"input": 0, "output": 0, "cache_creation": 0, "cache_read": 0}
    assert document["duration_seconds"] == 0.5
    patched = json.loads(cli(root, "show", runs["ok"]["run"], "--patch", "--json").stdout)
    assert patched["commits"][1]["patch"].startswith("diff --git a/agents/ops/SKILL.md b/agents/ops/SKILL.md")
    assert "+- Pin the node version.\n" in patched["commits"][1]["patch"]


def test_show_human(history: tuple[Path, dict[str, dict[str, Any]]]) -> None:
    root, runs = history
    result = cli(root, "show", "last", "--agent", "ops", "--patch")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert out.startswith(f"run      {runs['ok']['run']}  ok\nagent    ops\n")
    assert "trigger  manual, engine offline\n" in out
    assert (
        f"input    {runs['ok']['input_commit'][:12]}, watermark none → {runs['ok']['input_commit'][:12]}\n"
        in out
    )
    assert "counts   2 entries, 2 units, 2 created, 0 corroborated, 1 rejected\n" in out
    assert " agents/ops/memory/deploys.md | " in out and "3 files changed, " in out
    assert "+- Pin the node version.\n" in out  # --patch
    assert f"      source: {LOG}#L3-L3@{runs['ok']['input_commit'][:12]}\n" in out
    assert "rejected (1)\n  screen: 'a secret'\n      api key\n" in out
    failed = cli(root, "show", runs["failed"]["run"]).stdout
    assert "error    the engine failed\n" in failed and "commit" not in failed.split("error")[1]


def test_show_last_is_the_run_revert_last_undoes(history: tuple[Path, dict[str, dict[str, Any]]]) -> None:
    """The newest runs are no-ops (ops, then qa): `last` skips them, for show and revert alike."""
    root, runs = history

    def shown(*args: str) -> str:
        result = cli(root, "show", *args, "--json")
        assert result.exit_code == 0, result.stderr
        return str(json.loads(result.stdout)["run"]["run"])

    reverted = json.loads(cli(root, "revert", "last", "--dry-run", "--json").stdout)["reverts"]
    assert shown("last") == shown() == runs["ok"]["run"] == reverted
    assert shown("last", "--agent", "ops") == runs["ok"]["run"]
    assert shown(runs["noop"]["run"]) == runs["noop"]["run"]  # a no-op is still shown by its id
    assert "there are no runs of agent qa that made a commit yet" in cli(root, "show", "--agent", "qa").stderr
    code, audited = _audit_json(root, "--run", "last")
    assert code == 0 and audited["run"] == runs["ok"]["run"]


def test_last_prefix_and_ambiguity(agent_repo: Path) -> None:
    with freeze_time("2026-03-02T09:00:00.123Z"):  # same millisecond: ids share 9 characters
        one = fake_dream(agent_repo, Planned(), status="noop")
        two = fake_dream(agent_repo, Planned(), status="noop")
    assert one["run"][:9] == two["run"][:9] and one["run"] != two["run"]
    result = cli(agent_repo, "show", one["run"][:9])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: run id prefix '{one['run'][:9]}' is ambiguous; it matches:\n")
    for run in (one, two):
        assert f"  {run['run']} (agent ops, 2026-03-02T09:00:00Z, noop)\n" in result.stderr
    assert result.stderr.endswith("hint: give more characters of the run id\n")
    error = json.loads(cli(agent_repo, "show", one["run"][:9], "--json").stdout)["error"]
    assert error["type"] == "ambiguous_run"
    assert (
        json.loads(cli(agent_repo, "show", one["run"][:10].upper() + one["run"][10:], "--json").stdout)[
            "run"
        ]["run"]
        == one["run"]
    )
    unknown = cli(agent_repo, "show", "zzzz")
    assert unknown.exit_code == 1 and "no run with an id starting with 'zzzz'" in unknown.stderr
    assert "hint: list runs with `gitdream log`" in unknown.stderr
    assert "no runs that made a commit yet" in cli(agent_repo, "show", "last").stderr


# --- audit --------------------------------------------------------------------------------


def _audit_json(root: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = cli(root, "audit", *args, "--json")
    return result.exit_code, json.loads(result.stdout)


def test_audit_resolves_every_source_at_its_input_commit(
    history: tuple[Path, dict[str, dict[str, Any]]],
) -> None:
    root, runs = history
    code, document = _audit_json(root, "ops")
    assert code == 0
    lines = LOG_TEXT.split("\n")
    by_text = {f["text"]: f for f in document["facts"]}
    assert set(by_text) == {
        "Rollbacks need the previous image tag.",
        "Clear the CI cache after a runner upgrade.",
        "Pin the node version.",
    }
    ci = by_text["Clear the CI cache after a runner upgrade."]
    assert ci["path"] == "agents/ops/memory/ci.md" and ci["block"] == "facts" and ci["kind"] == "experience"
    assert ci["sources"] == [
        {
            "ref": f"{LOG}#L4-L5@{runs['ok']['input_commit'][:12]}",
            "status": "resolved",
            "path": LOG,
            "start": 4,
            "end": 5,
            "commit": runs["ok"]["input_commit"],
            "text": lines[3:5],
            "reason": None,
            "fact": None,
            "message": None,
        }
    ]
    assert by_text["Pin the node version."]["kind"] == "definition"
    assert by_text["Pin the node version."]["block"] == "learned"
    assert document["summary"] == {
        "facts": 3,
        "experience": 2,
        "definition": 1,
        "unsourced": 0,
        "sources": 3,
        "resolved": 3,
        "missing": 0,
        "references": 0,
    }
    human = cli(root, "audit", "ops", "--strict")
    assert human.exit_code == 0
    assert f"      {LOG}#L4-L5 @ {runs['ok']['input_commit'][:12]}\n" in human.stdout
    assert "        │ - The CI cache must be cleared after a runner upgrade. #ci\n" in human.stdout
    assert "        │   It took an hour to find.\n" in human.stdout
    assert human.stdout.endswith(
        f"audit of ops at {git(root, 'rev-parse', '--short=7', 'HEAD').strip()}: "
        "3 facts, 3 sources: 3 resolved, 0 missing\n"
    )


def test_audit_after_the_log_is_deleted_still_resolves(
    history: tuple[Path, dict[str, dict[str, Any]]],
) -> None:
    root, _runs = history
    git(root, "rm", "-q", LOG)
    commit_all(root, "logs are rotated away")
    code, document = _audit_json(root, "ops", "--strict")
    assert code == 0
    assert document["summary"]["missing"] == 0 and document["summary"]["resolved"] == 3


def test_audit_of_a_rewritten_history_shows_missing_sources(
    history: tuple[Path, dict[str, dict[str, Any]]], tmp_path: Path
) -> None:
    root, runs = history
    # Rewrite every commit (new ids), then clone: the input commit the facts cite is gone.
    git(root, "rebase", "-q", "--force-rebase", "--root", env={"GIT_COMMITTER_DATE": "2030-01-01T00:00:00Z"})
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--no-local", str(root), str(clone))
    short = runs["ok"]["input_commit"][:12]
    assert git(clone, "cat-file", "-t", runs["ok"]["input_commit"], check=False) == ""
    result = cli(clone, "audit", "ops", "--strict", "--json")
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["summary"]["missing"] == 3 and document["summary"]["facts"] == 3
    source = document["facts"][0]["sources"][0]
    assert source["status"] == "missing" and source["reason"] == f"commit {short} is not in this repository"
    assert "error: 3 sources cited by gitdream's facts do not resolve" in result.stderr
    human = cli(clone, "audit", "ops")
    assert human.exit_code == 0  # only --strict fails
    assert (
        f"      MISSING {LOG}#L3-L3@{short}\n        commit {short} is not in this repository\n"
        in human.stdout
    )
    assert human.stdout.splitlines()[-1].endswith("3 facts, 3 sources: 0 resolved, 3 missing")


def test_audit_run_filter_matches_the_receipt(history: tuple[Path, dict[str, dict[str, Any]]]) -> None:
    root, runs = history
    write(root, LOG, LOG_TEXT + "- Deploy on Tuesdays. #deploys\n")
    commit_all(root, "another day")
    later = fake_dream(root, Planned(topics={"tuesday": [("Deploy on Tuesdays.", [f"{LOG}#L7-L7"])]}))
    code, everything = _audit_json(root, "ops")
    assert everything["summary"]["facts"] == 4
    code, first = _audit_json(root, "--run", runs["ok"]["run"])
    assert code == 0 and first["agents"] == ["ops"] and first["run"] == runs["ok"]["run"]
    experience = {(f["path"], f["text"]) for f in first["facts"] if f["kind"] == "experience"}
    assert experience == {(u["path"], u["text"]) for u in runs["ok"]["units"]}
    assert first["summary"]["definition"] == 1
    code, second = _audit_json(root, "ops", "--run", "last")
    assert [(f["path"], f["text"]) for f in second["facts"]] == [
        (u["path"], u["text"]) for u in later["units"]
    ]


def test_audit_uses_git_line_numbers_and_flags_bad_references(agent_repo: Path) -> None:
    # A vertical tab and a lone CR are not line breaks for git; str.splitlines() would
    # count three more lines and cite the wrong text.
    log = "agents/ops/memory/logs/2026/03/2026-03-02.md"
    write(agent_repo, log, "# day\x0bone\n\n- a\rb\n- cited line\n")
    commit_all(agent_repo, "odd log")
    input_commit = git(agent_repo, "rev-parse", "HEAD").strip()
    topic = "agents/ops/memory/odd.md"
    fact_ref = "fact:0123456789"
    block = (
        "---\nname: odd\n---\n\n<!-- gitdream:begin facts -->\n"
        f"- Cited.\n  Sources: `{log}#L4-L4@{input_commit[:12]}` — seen 1 time\n"
        f"- Past the end.\n  Sources: `{log}#L9-L12@{input_commit[:12]}` — seen 1 time\n"
        f"- Missing file.\n  Sources: `agents/ops/nope.md#L1-L1@{input_commit[:12]}` — seen 1 time\n"
        f"- Refines.\n  Sources: `{fact_ref}`, `not a reference` — seen 2 times\n"
        "- a line a person wrote in the block\n"
        "<!-- gitdream:end facts -->\n"
    )
    write(agent_repo, topic, block)
    commit_all(agent_repo, "memory")
    repo = Repo.open(agent_repo)
    result = audit(repo, config.load(repo.workdir), "ops")
    facts = {f.text: f for f in result.facts}
    assert facts["Cited."].sources[0].text == ["- cited line"]
    assert facts["Past the end."].sources[0].reason == (
        f"lines 9-12 are past the end of {log} (4 lines) at {input_commit[:12]}"
    )
    assert facts["Missing file."].sources[0].reason == (
        f"agents/ops/nope.md does not exist at commit {input_commit[:12]}"
    )
    refines = facts["Refines."].sources
    assert (refines[0].status, refines[0].fact) == ("reference", None)
    assert refines[1].status == "missing" and "not a source reference" in str(refines[1].reason)
    assert facts["a line a person wrote in the block"].sources == []
    assert result.summary == {
        "facts": 5,
        "experience": 5,
        "definition": 0,
        "unsourced": 1,
        "sources": 5,
        "resolved": 1,
        "missing": 3,
        "references": 1,
    }
    human = cli(agent_repo, "audit", "ops").stdout
    assert "      refers to fact:0123456789 (no longer in memory)\n" in human
    assert "      (no sources: not in gitdream's fact form)\n" in human
    assert human.splitlines()[-1].endswith("5 sources: 1 resolved, 3 missing, 1 references to facts")


def test_audit_reads_archived_blocks_and_reports_malformed_files(agent_repo: Path) -> None:
    log = "agents/ops/memory/logs/2026/03/2026-03-01.md"
    write(agent_repo, log, "- old fact\n")
    commit_all(agent_repo, "log")
    commit = git(agent_repo, "rev-parse", "HEAD").strip()
    write(
        agent_repo,
        "agents/ops/memory/archive/2026-03.md",
        "# archive\n\n<!-- gitdream:begin archived-1 -->\n"
        f"- Old.\n  Sources: `{log}#L1-L1@{commit[:12]}` — seen 1 time\n<!-- gitdream:end archived-1 -->\n",
    )
    write(agent_repo, "agents/ops/memory/broken.md", "<!-- gitdream:begin facts -->\n- never closed\n")
    commit_all(agent_repo, "archive")
    result = cli(agent_repo, "audit", "ops", "--json")
    document = json.loads(result.stdout)
    assert [(f["block"], f["text"]) for f in document["facts"]] == [("archived-1", "Old.")]
    assert document["facts"][0]["sources"][0]["text"] == ["- old fact"]
    assert len(document["warnings"]) == 1 and "broken.md" in document["warnings"][0]
    assert "warning: agents/ops/memory/broken.md" in result.stderr


def test_audit_fact_references_resolve_to_facts_in_memory(agent_repo: Path) -> None:
    from gitdream.dream.verify import fact_id

    topic = "agents/ops/memory/ref.md"
    ref = fact_id(topic, "The original.")
    write(
        agent_repo,
        topic,
        "<!-- gitdream:begin facts -->\n- The original.\n  Sources: `"
        + "agents/ops/agent.md#L1-L1@"
        + git(agent_repo, "rev-parse", "HEAD").strip()[:12]
        + "` — seen 1 time\n"
        + f"- The refinement.\n  Sources: `{ref}` — seen 1 time\n<!-- gitdream:end facts -->\n",
    )
    commit_all(agent_repo, "memory")
    document = json.loads(cli(agent_repo, "audit", "ops", "--json").stdout)
    refinement = next(f for f in document["facts"] if f["text"] == "The refinement.")
    assert refinement["sources"][0]["status"] == "reference"
    assert refinement["sources"][0]["fact"] == {"path": topic, "text": "The original."}
    assert document["summary"]["missing"] == 0


def test_audit_unknown_agent(agent_repo: Path) -> None:
    result = cli(agent_repo, "audit", "nobody")
    assert result.exit_code == 1 and "no agent with id 'nobody'" in result.stderr


def test_entries_read_and_not_kept_are_counted_per_reason_by_run_and_show(agent_repo: Path) -> None:
    """Issue 14: an entry below the salience bar is counted per reason in the run's
    output and in `show`, not only in the receipt's JSON."""
    write(
        agent_repo,
        "agents/ops/memory/logs/2026/03/2026-03-02.md",
        "# 2026-03-02\n\n"
        "- Rollbacks need the previous image tag because the registry keeps only the last 10 tags.\n"
        "- Dashboards at 09:00: 3 alerts, 0 pages, no new tickets.\n"
        "- Inbox: 11 unread, 0 flagged, 180 archived.\n"
        "- Let me check the dashboards again.\n",
    )
    commit_all(agent_repo, "log")
    ran = cli(agent_repo, "run", "--engine", "offline")
    assert ran.exit_code == 0, ran.stderr
    summary, reasons = ran.stdout.splitlines()[:2]
    total = int(summary.split(" read and not kept")[0].rsplit(", ", 1)[1])
    assert total >= 2
    assert reasons.startswith("  read and not kept: ")
    counted = [part.split(" ", 1) for part in reasons.removeprefix("  read and not kept: ").split(", ")]
    assert sum(int(n) for n, _ in counted) == total
    receipt = json.loads(cli(agent_repo, "show", "last", "--json").stdout)["receipt"]
    by_reason = {
        k.removeprefix("not kept: "): v for k, v in receipt["skipped"].items() if k.startswith("not kept")
    }
    assert {reason: int(n) for n, reason in counted} == by_reason
    shown = cli(agent_repo, "show", "last").stdout
    assert f"read and not kept ({total} entries, below the salience bar)\n" in shown
    assert f", {total} not kept, " in shown.split("counts   ", 1)[1].splitlines()[0]
    for reason, n in by_reason.items():
        assert f"  {n:>6}  {reason}\n" in shown
