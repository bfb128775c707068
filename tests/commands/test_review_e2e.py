"""Review and undo end to end: real `gitdream run` (offline engine) on real repositories —
the demo repository (templates/demo) and one built by ../shared/tools/make-real-repo —
then `log`, `show`, `audit` and `revert` through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gitdream.commands.demo import build
from tests.helpers import SHARED, cli, commit_all, git, snapshot, write

OPS = "agents/ops"
DEFINITIONS = (f"{OPS}/SKILL.md", f"{OPS}/soul.md", f"{OPS}/agent.md")
MAKE_REPO = SHARED / "tools" / "make-real-repo"


def dream(root: Path, *args: str) -> dict[str, Any]:
    """`gitdream run --json ARGS`; returns the first run's receipt."""
    result = cli(root, "run", "--json", *args)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)["runs"][0]


def files(root: Path, rev: str, prefix: str = "agents") -> dict[str, str]:
    """`{path: blob id}` under `prefix` at `rev`."""
    out = {}
    for line in git(root, "ls-tree", "-r", rev, "--", prefix).splitlines():
        meta, path = line.split("\t", 1)
        out[path] = meta.split()[2]
    return out


def facts(root: Path, *args: str) -> set[tuple[str, str, int | None, tuple[str, ...]]]:
    """Every fact in memory (audit), with its sources' entry ids but not their commits."""
    result = cli(root, "audit", *args, "--json")
    assert result.exit_code == 0, result.stderr
    return {
        (f["path"], f["text"], f["seen"], tuple(sorted(s["ref"].rsplit("@", 1)[0] for s in f["sources"])))
        for f in json.loads(result.stdout)["facts"]
    }


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """The demo repository (agent ops, a week of logs and a transcript), not dreamed yet."""
    return build(tmp_path / "demo")


def test_only_experience_only_definition_and_both(demo: Path) -> None:
    before = files(demo, "HEAD")
    receipt = dream(demo)
    assert receipt["commits"]["experience"] and receipt["commits"]["definition"]
    dreamed = files(demo, "HEAD")
    definition_bytes = {p: (demo / p).read_bytes() for p in DEFINITIONS}
    changed_definitions = [p for p in DEFINITIONS if dreamed[p] != before[p]]
    assert changed_definitions  # the demo's #skill/#soul entries reach the definitions

    assert cli(demo, "revert", "last", "--only", "experience").exit_code == 0
    now = files(demo, "HEAD")
    assert {p: (demo / p).read_bytes() for p in DEFINITIONS} == definition_bytes
    assert {p: now.get(p) for p in DEFINITIONS} == {p: dreamed[p] for p in DEFINITIONS}
    assert {p: b for p, b in now.items() if p not in DEFINITIONS} == {
        p: b for p, b in before.items() if p not in DEFINITIONS
    }

    # The definitions of the same run, reverted on their own afterwards.
    assert cli(demo, "revert", receipt["run"], "--only", "definition").exit_code == 0
    assert files(demo, "HEAD") == before
    assert git(demo, "status", "--porcelain", "--untracked-files=all") == ""


def test_only_definition_keeps_the_experience(demo: Path) -> None:
    before = files(demo, "HEAD")
    dream(demo)
    dreamed = files(demo, "HEAD")
    memory = {p: (demo / p).read_bytes() for p in dreamed if p not in DEFINITIONS and (demo / p).exists()}
    assert cli(demo, "revert", "last", "--only", "definition").exit_code == 0
    now = files(demo, "HEAD")
    assert {p: now[p] for p in DEFINITIONS} == {p: before[p] for p in DEFINITIONS}
    assert {p: b for p, b in now.items() if p not in DEFINITIONS} == {
        p: b for p, b in dreamed.items() if p not in DEFINITIONS
    }
    assert {p: (demo / p).read_bytes() for p in memory} == memory


def test_plain_revert_keeps_later_human_edits_and_other_agents_dreams(demo: Path) -> None:
    write(demo, "agents/qa/agent.md", "# qa\n\nqa keeps the test suite honest.\n")
    write(demo, "agents/qa/memory/MEMORY.md", "# qa — memory\n")
    commit_all(demo, "add agent qa")
    before = files(demo, "HEAD")
    receipt = dream(demo, "--agent", "ops")
    # A person edits the human part of a topic the dream also wrote to, far from its block,
    # and another file; then the other agent gets material and dreams.
    oncall = demo / OPS / "memory/oncall.md"
    oncall.write_text(oncall.read_text().replace("Who to page for what", "Who to page, and when"))
    write(demo, "README.md", "# ops repository\n")
    commit_all(demo, "human edits")
    write(
        demo,
        "agents/qa/memory/logs/2026/03/2026-03-09.md",
        "# 2026-03-09\n\n- [tests] The e2e suite needs a seeded DB.\n",
    )
    commit_all(demo, "qa: log")
    other = dream(demo, "--agent", "qa")
    assert other["commits"]["experience"]
    later = files(demo, "HEAD")

    result = cli(demo, "revert", receipt["run"], "--json")
    assert result.exit_code == 0, result.stderr
    now = files(demo, "HEAD")
    ops_paths = {p for p in set(before) | set(later) if p.startswith(f"{OPS}/")}
    for path in set(now) | set(later):
        if path == f"{OPS}/memory/oncall.md":
            continue
        expected = before.get(path) if path in ops_paths else later.get(path)
        assert now.get(path) == expected, path
    text = oncall.read_text()
    assert "Who to page, and when" in text and "gitdream:begin facts" not in text
    assert (demo / "README.md").read_text() == "# ops repository\n"
    assert git(demo, "log", "-1", "--format=%s", other["commits"]["experience"]).startswith("dream(qa)")


def test_a_later_dream_on_the_same_topic_block_refuses_the_revert(demo: Path) -> None:
    first = dream(demo)
    log = demo / OPS / "memory/logs/2026/03/2026-03-08.md"
    log.write_text(log.read_text() + "- [2026-03-08] [deploy] Canary deploys need a 10 minute soak.\n")
    commit_all(demo, "ops: more log")
    second = dream(demo)
    assert second["commits"]["experience"]
    state = snapshot(demo)
    refs = git(demo, "for-each-ref")
    result = cli(demo, "revert", first["run"])
    assert result.exit_code == 1
    assert "later changes conflict with it; nothing was changed" in result.stderr
    assert f"{OPS}/memory/deploy.md: " in result.stderr
    assert f"{second['commits']['experience'][:7]} 'dream(ops): experience" in result.stderr
    assert snapshot(demo) == state and git(demo, "for-each-ref") == refs


def test_a_dirty_target_refuses_with_the_file_untouched(demo: Path) -> None:
    dream(demo)
    target = demo / OPS / "memory/deploy.md"
    target.write_bytes(target.read_bytes() + b"- my own line, not committed\n")
    state = snapshot(demo)
    result = cli(demo, "revert", "last")
    assert result.exit_code == 1
    assert f"refusing to write: {OPS}/memory/deploy.md has uncommitted changes" in result.stderr
    assert f"hint: commit or stash your change to {OPS}/memory/deploy.md, then run again" in result.stderr
    assert snapshot(demo) == state


def test_without_replay_the_material_stays_consumed(demo: Path) -> None:
    dream(demo)
    assert cli(demo, "revert", "last").exit_code == 0
    assert facts(demo, "ops") == set()
    assert dream(demo)["status"] == "noop"
    assert facts(demo, "ops") == set()


def test_replay_then_run_reads_the_same_material_and_writes_the_same_facts(demo: Path) -> None:
    first = dream(demo)
    written = facts(demo, "ops")
    definitions = {p: (demo / p).read_bytes() for p in DEFINITIONS}
    assert len(written) >= 10
    result = cli(demo, "revert", "last", "--replay")
    assert result.exit_code == 0, result.stderr
    assert "the next dream reads that material again" in result.stdout
    assert facts(demo, "ops") == set()
    assert git(demo, "rev-parse", "--verify", "-q", "refs/gitdream/watermark/ops", check=False) == ""
    again = dream(demo)
    assert again["status"] == "ok" and again["watermark_before"] is None
    assert facts(demo, "ops") == written
    assert {p: (demo / p).read_bytes() for p in DEFINITIONS} == {
        p: b.replace(first["input_commit"][:12].encode(), again["input_commit"][:12].encode())
        for p, b in definitions.items()
    }
    assert {k: again["counts"][k] for k in ("created", "corroborated", "definition")} == {
        k: first["counts"][k] for k in ("created", "corroborated", "definition")
    }


def test_log_and_show_list_noop_and_failed_runs(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ok = dream(demo)
    noop = dream(demo)
    log = demo / OPS / "memory/logs/2026/03/2026-03-08.md"
    log.write_text(
        log.read_text() + "- [2026-03-08] [backups] Never restore a backup before checking its checksum.\n"
    )
    commit_all(demo, "ops: more log")
    index = demo / OPS / "memory/MEMORY.md"
    index.write_text(index.read_text() + "an uncommitted edit\n")
    failed_result = cli(demo, "run", "--json")
    assert failed_result.exit_code == 1
    failed = json.loads(failed_result.stdout)["runs"][0]
    assert failed["status"] == "failed"
    runs = json.loads(cli(demo, "log", "--json", "--all").stdout)["runs"]
    assert [(r["run"], r["status"]) for r in runs] == [
        (failed["run"], "failed"),
        (noop["run"], "noop"),
        (ok["run"], "ok"),
    ]
    assert runs[0]["commits"] == {"experience": None, "definition": None}
    human = cli(demo, "show", failed["run"]).stdout
    assert human.startswith(f"run      {failed['run']}  failed\n")
    assert "MEMORY.md has uncommitted changes" in human
    shown = json.loads(cli(demo, "show", "last", "--json").stdout)  # neither the failed run nor the no-op
    assert shown["run"]["run"] == ok["run"]
    counts = ok["counts"]  # created/corroborated/refined: experience; definition: definition facts
    assert (
        len(shown["units"])
        == counts["created"]
        + counts["corroborated"]
        + counts["refined"]
        + counts["superseded"]
        + counts["definition"]
    )
    assert {u["path"] for u in shown["units"]} >= {f"{OPS}/memory/deploy.md", f"{OPS}/SKILL.md"}
    text = cli(demo, "log", "--all").stdout.splitlines()
    assert [line.split()[4] for line in text[1:]] == ["failed", "noop", "ok"]
    # the failed run wrote nothing: no NEW/CORR counts in its row (the JSON keeps them)
    assert text[1].split()[6:10] == ["-", "-", "-", "0"] and runs[0]["counts"]["created"] >= 1


# --- audit on a repository built from real agent files ---------------------------------------

REAL_AGENTS = ("bookminder", "kit")


@pytest.fixture
def real_repo(tmp_path: Path) -> Path:
    if not MAKE_REPO.is_file():
        pytest.skip(f"needs the shared real-data corpus ({MAKE_REPO} is absent)")
    dest = tmp_path / "real"
    subprocess.run([sys.executable, str(MAKE_REPO), str(dest)], check=True, capture_output=True)
    return dest


def test_audit_of_a_real_repository(real_repo: Path, tmp_path: Path) -> None:
    args = [a for agent in REAL_AGENTS for a in ("--agent", agent)]
    person = git(real_repo, "rev-parse", "HEAD").strip()
    result = cli(real_repo, "run", "--json", *args)
    assert result.exit_code == 0, result.stderr
    receipts = {r["agent"]: r for r in json.loads(result.stdout)["runs"]}
    for agent in REAL_AGENTS:
        receipt = receipts[agent]
        assert receipt["status"] == "ok" and receipt["counts"]["created"] > 0
        code = cli(real_repo, "audit", "--run", receipt["run"], "--json", "--strict")
        assert code.exit_code == 0, code.stderr
        document = json.loads(code.stdout)
        summary = document["summary"]
        assert summary["missing"] == 0 and summary["resolved"] == summary["sources"] > 0
        # The facts of the run are exactly the facts its receipt says it wrote.
        units = {(u["path"], u["text"]) for u in receipt["units"] + receipt.get("definition_units", [])}
        assert {(f["path"], f["text"]) for f in document["facts"]} == units
        # Every cited text is the raw entry's text at the commit the material came from —
        # the person's, also for an agent whose input commit is the dream of the one before.
        blobs: dict[str, list[str]] = {}
        for fact in document["facts"]:
            for source in fact["sources"]:
                assert source["commit"] == person
                if source["path"] not in blobs:
                    blob = git(real_repo, "show", f"{person}:{source['path']}")
                    blobs[source["path"]] = [line.removesuffix("\r") for line in blob.split("\n")]
                assert source["text"] == blobs[source["path"]][source["start"] - 1 : source["end"]]

    # Logs deleted later: the sources still resolve at the input commit.
    logs = [p for p in git(real_repo, "ls-files", "agents/bookminder/memory/logs").splitlines()]
    assert logs
    git(real_repo, "rm", "-q", "-r", "agents/bookminder/memory/logs")
    commit_all(real_repo, "rotate the logs away")
    code = cli(real_repo, "audit", "bookminder", "--strict", "--json")
    assert code.exit_code == 0
    before = json.loads(code.stdout)["summary"]
    assert before["missing"] == 0 and before["facts"] > 0

    # History rewritten and cloned: the input commits are gone; the sources are missing.
    git(
        real_repo,
        "rebase",
        "-q",
        "--force-rebase",
        "--root",
        env={"GIT_COMMITTER_DATE": "2031-01-01T00:00:00Z"},
    )
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--no-local", str(real_repo), str(clone))
    code = cli(clone, "audit", "bookminder", "--strict", "--json")
    assert code.exit_code == 1
    after = json.loads(code.stdout)["summary"]
    assert after["facts"] == before["facts"] and after["missing"] == after["sources"] == before["sources"]
    assert "do not resolve" in code.stderr
    assert cli(clone, "audit", "bookminder").exit_code == 0
