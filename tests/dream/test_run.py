"""`gitdream run` end to end on real repositories (issue 4): commits, watermark, receipts,
safety, material rules, dry-run, and the real public data."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gitdream.config import defaults
from gitdream.dream import facts as factfmt
from gitdream.dream.decode import decode_lines
from gitdream.text import blocks
from gitdream.units import parse_entry_id, parse_source_ref
from tests.helpers import SHARED, cli, commit_all, git, gitdream_env, head, snapshot, write

LOGS = "agents/ops/memory/logs/2026/03"


def _run(root: Path, *args: str) -> dict:
    result = cli(root, "run", "--json", *args)
    assert result.exit_code in (0, 1), result.stderr
    return json.loads(result.stdout)


def _log(root: Path, day: int, *lines: str) -> None:
    path = root / LOGS / f"2026-03-{day:02d}.md"
    old = path.read_text() if path.exists() else f"# 2026-03-{day:02d}\n\n"
    write(root, f"{LOGS}/2026-03-{day:02d}.md", old + "".join(line + "\n" for line in lines))


def _facts(root: Path, rev: str = "HEAD") -> dict[str, list[factfmt.Fact]]:
    """Every facts/learned block at `rev`: {path: [facts]}."""
    found: dict[str, list[factfmt.Fact]] = {}
    for path in git(root, "ls-tree", "-r", "--name-only", rev).split("\n"):
        if not path.endswith(".md"):
            continue
        text = git(root, "show", f"{rev}:{path}")
        for block in blocks.parse(text):
            if block.name in ("facts", "learned"):
                found.setdefault(path, []).extend(factfmt.parse(text[block.inner_start : block.inner_end]))
    return found


def _resolves(root: Path, ref: str) -> bool:
    parsed = parse_source_ref(ref)
    assert parsed is not None, ref
    entry_id, commit = parsed
    path, start, end = parse_entry_id(entry_id)  # type: ignore[misc]
    data = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=root, capture_output=True).stdout
    lines = decode_lines(path, data).lines
    return 1 <= start <= end <= len(lines) and any(line.strip() for line in lines[start - 1 : end])


def test_first_dream_commits_experience_and_definitions(agent_repo: Path) -> None:
    _log(
        agent_repo,
        1,
        "- [2026-03-01] [deploy] Rollbacks need the previous image tag.",
        "- Always run the smoke test before promoting. #skill",
    )
    commit_all(agent_repo, "log")
    input_commit = head(agent_repo)
    doc = _run(agent_repo)
    (receipt,) = doc["runs"]
    assert receipt["status"] == "ok"
    assert receipt["counts"]["created"] >= 1 and receipt["counts"]["definition"] == 1
    exp, dfn = receipt["commits"]["experience"], receipt["commits"]["definition"]
    assert git(agent_repo, "rev-parse", "HEAD").strip() == dfn
    assert git(agent_repo, "rev-parse", f"{dfn}~1").strip() == exp
    exp_files = git(agent_repo, "show", "--name-only", "--format=", exp).split()
    dfn_files = git(agent_repo, "show", "--name-only", "--format=", dfn).split()
    assert exp_files and all(p.startswith("agents/ops/memory/") and "/logs/" not in p for p in exp_files)
    assert dfn_files == ["agents/ops/SKILL.md"]
    trailers = git(agent_repo, "log", "-1", "--format=%(trailers:only,unfold)", exp)
    for key in (
        "Gitdream-Run",
        "Gitdream-Kind: experience",
        "Gitdream-Agent: ops",
        f"Gitdream-Input: {input_commit}",
        "Gitdream-Engine: offline",
    ):
        assert key in trailers
    assert git(agent_repo, "log", "-1", "--format=%s", exp).startswith("dream(ops): experience — improved ")
    assert git(agent_repo, "log", "-1", "--format=%s", dfn) == "dream(ops): definitions — SKILL.md\n"
    assert git(agent_repo, "rev-parse", "refs/gitdream/watermark/ops").strip() == input_commit
    note = git(agent_repo, "notes", "--ref", "gitdream", "show", input_commit)
    assert json.loads(note.splitlines()[-1])["run"] == receipt["run"]
    assert git(agent_repo, "status", "--porcelain") == ""


def test_second_run_is_a_recorded_noop(agent_repo: Path) -> None:
    _log(agent_repo, 1, "- [deploy] one fact")
    commit_all(agent_repo, "log")
    _run(agent_repo)
    before = head(agent_repo)
    doc = _run(agent_repo)
    assert doc["runs"][0]["status"] == "noop"
    assert head(agent_repo) == before
    notes = git(agent_repo, "notes", "--ref", "gitdream", "show", before)
    assert json.loads(notes.splitlines()[-1])["status"] == "noop"
    assert git(agent_repo, "rev-parse", "refs/gitdream/watermark/ops").strip() == before


def test_appended_lines_only_and_duplicates_corroborate(agent_repo: Path) -> None:
    _log(agent_repo, 1, "- [deploy] Rollbacks need the previous image tag.")
    commit_all(agent_repo, "day 1")
    _run(agent_repo)
    _log(agent_repo, 1, "- [deploy] Rollbacks need the previous image tag!")
    commit_all(agent_repo, "day 1, later")
    doc = _run(agent_repo)
    receipt = doc["runs"][0]
    assert receipt["phases"]["gather"]["entries"] == 1, "only the appended line is new material"
    assert receipt["counts"]["corroborated"] == 1 and receipt["counts"]["created"] == 0
    facts = [f for fs in _facts(agent_repo).values() for f in fs if "Rollbacks" in f.text]
    assert len(facts) == 1 and facts[0].seen == 2 and len(facts[0].sources) == 2


def test_renamed_log_adds_nothing(agent_repo: Path) -> None:
    _log(agent_repo, 1, "- [deploy] a fact that is long enough for git's rename detection to be sure")
    commit_all(agent_repo, "log")
    _run(agent_repo)
    git(agent_repo, "mv", f"{LOGS}/2026-03-01.md", f"{LOGS}/2026-03-09.md")
    commit_all(agent_repo, "rename")
    assert _run(agent_repo)["runs"][0]["status"] == "noop"


def test_dry_run_changes_nothing(agent_repo: Path) -> None:
    _log(agent_repo, 1, "- [deploy] Rollbacks need the previous image tag.", "- Keep it short. #soul")
    commit_all(agent_repo, "log")
    before = snapshot(agent_repo)
    refs = git(agent_repo, "for-each-ref")
    result = cli(agent_repo, "run", "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert "+++ b/agents/ops/memory/deploy.md" in result.stdout
    assert "+++ b/agents/ops/soul.md" in result.stdout
    # The summary says what a run would do, not that memories were improved.
    assert "Would improve 2 memories for agent ops" in result.stdout + result.stderr
    assert "dry run, nothing written" in result.stdout + result.stderr
    assert snapshot(agent_repo) == before
    assert git(agent_repo, "for-each-ref") == refs
    assert not (agent_repo / ".git" / "gitdream").exists()


def test_dirty_memory_index_refuses_that_agent_only(agent_repo: Path) -> None:
    write(agent_repo, "agents/qa/agent.md", "# qa\n\nqa tests things.\n")
    write(agent_repo, "agents/qa/memory/logs/2026/03/2026-03-01.md", "- [tests] qa fact\n")
    _log(agent_repo, 1, "- [deploy] ops fact")
    commit_all(agent_repo, "two agents")
    write(agent_repo, "agents/ops/memory/MEMORY.md", "my uncommitted edit\n")
    write(agent_repo, "README.md", "unrelated unstaged change\n")
    write(agent_repo, "agents/ops/soul.md", "staged change\n")
    git(agent_repo, "add", "agents/ops/soul.md")
    before = snapshot(agent_repo)
    result = cli(agent_repo, "run", "--json")
    assert result.exit_code == 1
    runs = {r["agent"]: r for r in json.loads(result.stdout)["runs"]}
    assert runs["ops"]["status"] == "failed"
    assert "agents/ops/memory/MEMORY.md has uncommitted changes" in runs["ops"]["error"]["message"]
    assert "commit or stash your change" in runs["ops"]["error"]["hint"]
    assert runs["qa"]["status"] == "ok"
    assert (agent_repo / "agents/ops/memory/MEMORY.md").read_text() == "my uncommitted edit\n"
    after = snapshot(agent_repo)
    assert after["status"].replace("A  agents/qa/memory/", "") == before["status"] or all(  # type: ignore[union-attr]
        line in str(after["status"]) for line in str(before["status"]).splitlines()
    )
    for path in ("README.md", "agents/ops/soul.md", "agents/ops/memory/MEMORY.md"):
        assert after["files"][path] == before["files"][path]  # type: ignore[index]
    assert git(agent_repo, "diff", "--cached", "--name-only") == "agents/ops/soul.md\n"
    assert git(agent_repo, "rev-parse", "-q", "--verify", "refs/gitdream/watermark/ops", check=False) == ""
    assert "error: Dream for agent ops failed" in result.stderr


def test_every_agent_of_a_run_cites_its_sources_at_the_persons_commit(agent_repo: Path) -> None:
    """The second agent's input commit is the first agent's dream: its facts still cite
    the commit the material came from, not a commit of another agent's dream."""
    write(agent_repo, "agents/qa/agent.md", "# qa\n\nqa tests things.\n")
    write(
        agent_repo,
        "agents/qa/memory/logs/2026/03/2026-03-01.md",
        "## Lessons\n\n- Always run the flaky suite twice before filing a bug, because one failure proves nothing.\n",
    )
    _log(agent_repo, 1, "## Lessons", "", "- Never deploy on Fridays, because nobody watches the pager.")
    commit_all(agent_repo, "two agents")
    person = head(agent_repo)
    runs = {r["agent"]: r for r in _run(agent_repo)["runs"]}
    assert runs["ops"]["status"] == runs["qa"]["status"] == "ok"
    cited = {
        parse_source_ref(source)[1]  # type: ignore[index]
        for facts in _facts(agent_repo).values()
        for fact in facts
        for source in fact.sources
    }
    assert cited == {person[:12]}


def test_failed_run_leaves_the_watermark_and_reads_again(agent_repo: Path) -> None:
    _log(agent_repo, 1, "- [deploy] fact one")
    commit_all(agent_repo, "log")
    write(agent_repo, "agents/ops/memory/MEMORY.md", "dirty\n")
    assert _run(agent_repo)["runs"][0]["status"] == "failed"
    git(agent_repo, "checkout", "--", "agents/ops/memory/MEMORY.md")
    again = _run(agent_repo)["runs"][0]
    assert again["status"] == "ok" and again["phases"]["gather"]["entries"] == 1


def test_watermark_not_an_ancestor_uses_the_merge_base(agent_repo: Path) -> None:
    fork = head(agent_repo)
    _log(agent_repo, 1, "- [deploy] before the rewrite")
    commit_all(agent_repo, "log")
    _run(agent_repo)
    git(agent_repo, "reset", "-q", "--hard", fork)
    _log(agent_repo, 1, "- [deploy] after the rewrite")
    commit_all(agent_repo, "rewritten log")
    receipt = _run(agent_repo)["runs"][0]
    assert receipt["status"] == "ok"
    assert any("not an ancestor of HEAD" in w for w in receipt["warnings"])
    assert receipt["base"] == fork


def test_review_branch_leaves_the_current_branch(agent_repo: Path) -> None:
    _log(agent_repo, 1, "- [deploy] a fact to review", "- Be brief. #soul")
    commit_all(agent_repo, "log")
    before = snapshot(agent_repo)
    main = head(agent_repo)
    receipt = _run(agent_repo, "--branch", "dream/review")["runs"][0]
    assert receipt["status"] == "ok" and receipt["branch"] == "refs/heads/dream/review"
    assert head(agent_repo) == main and snapshot(agent_repo) == before
    log = git(agent_repo, "log", "--format=%s", "main..dream/review").splitlines()
    assert log == ["dream(ops): definitions — soul.md", log[1]] and log[1].startswith(
        "dream(ops): experience"
    )


def test_tag_routing_and_relative_dates(agent_repo: Path) -> None:
    _log(
        agent_repo,
        2,
        "- [2026-03-02] [deploy] Yesterday the deploy failed.",
        "- Answer in three lines. #agent",
    )
    commit_all(agent_repo, "log")
    _run(agent_repo)
    deploy = (agent_repo / "agents/ops/memory/deploy.md").read_text()
    assert "2026-03-01" in deploy
    agent_md = (agent_repo / "agents/ops/agent.md").read_text()
    assert blocks.get(agent_md, "learned") and "Answer in three lines." in agent_md
    assert cli(agent_repo, "check").exit_code == 0


def test_hostile_topic_names_stay_inside_memory(agent_repo: Path) -> None:
    _log(
        agent_repo,
        1,
        "- [../../.git/hooks/post-merge] injected",
        "- [CON] reserved",
        "- [.git] dot",
        "- [🚀] emoji",
    )
    commit_all(agent_repo, "hostile")
    receipt = _run(agent_repo)["runs"][0]
    assert receipt["status"] == "ok"
    changed = git(agent_repo, "show", "--name-only", "--format=", receipt["commits"]["experience"]).split()
    assert all(p.startswith("agents/ops/memory/") for p in changed)
    assert not (agent_repo / ".git" / "hooks" / "post-merge").exists()
    assert not any(Path(p).name.lower().startswith((".", "con.")) for p in changed)


def test_demo_works_offline(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "gitdream", "demo", str(tmp_path / "demo")],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert proc.returncode == 0, proc.stderr
    assert "Improved" in proc.stdout and "gitdream revert last" in proc.stdout
    assert "dream(ops): experience" in git(tmp_path / "demo", "log", "--format=%s")


_CLOCK_NAME = re.compile(
    # English: a clock time, a date, a heartbeat, a turn or round, a tally of actions
    r"\d{1,2}-\d{2}-utc|\b\d{4}-\d{2}-\d{2}\b|heartbeat-\d|\bturn-\d|\bround-\d|\d+-(?:writes?|likes?|replies|reply)\b"
    # Chinese, Korean, Japanese: an hour (3시, 3点, 3時) or a moment of the day before a number
    r"|\d+(?:시|時|时|点|點)(?!간|間|间)|(?:오전|오후|上午|下午|午前|午後)-?\d"
    # an ordinal of a turn or a round (第3次, 第二轮, 第5回, 3회차, 3번째, 3回目)
    r"|第[\d〇一二三四五六七八九十两]+(?:次|回|轮|輪)|\d+(?:회차|번째|回目)"
    # a heartbeat; a date (2026年2月10日, 2월-10일); a tally of two counted actions
    r"|心跳|하트비트|ハートビート|\d+(?:年|년|月|월)-?\d+(?:月|월|日|일)"
    r"|\d+(?:次|回|条|件|个|회|개|번)\D{0,16}\d+(?:次|回|条|件|个|회|개|번)"
)


@pytest.mark.skipif(
    not (SHARED / "tools" / "make-real-repo").exists(), reason="../shared (real data) is absent"
)
def test_real_repository_converges_with_memory_worth_reading(tmp_path: Path) -> None:
    """Dream the real repository to convergence with the default configuration and check
    the structural promises (issue #14): it converges in a handful of runs, each run's
    commit is small, no topic is named after a clock time, a date, a heartbeat, a turn or a
    tally, every fact's source resolves, human bytes are unchanged, MEMORY.md keeps its
    limits (or gitdream's topics are indexed in the overflow file), the second pass adds
    nothing. No figure of quality is asserted here: `python -m bench --only quality`
    reports it."""
    root = tmp_path / "real"
    subprocess.run(
        [sys.executable, str(SHARED / "tools" / "make-real-repo"), str(root)], check=True, capture_output=True
    )
    before = head(root)
    cfg_max_units = defaults().int("max_units")
    runs_needed = 0
    seen_agents: set[str] = set()
    for _ in range(12):
        result = cli(root, "run", "--json")
        assert result.exit_code == 0, result.stderr
        runs = json.loads(result.stdout)["runs"]
        assert runs and all(r["status"] in ("ok", "noop") for r in runs)
        dreamed = [r for r in runs if r["status"] == "ok"]
        seen_agents |= {r["agent"] for r in dreamed}
        for receipt in dreamed:
            agent_dir = receipt["agent_dir"]
            counts = receipt["counts"]
            assert counts["units"] <= cfg_max_units  # one run's commit is small enough to read
            if receipt["commits"]["experience"]:
                files = git(
                    root, "show", "--name-only", "--format=", receipt["commits"]["experience"]
                ).split()
                assert all(f.startswith(f"{agent_dir}/memory/") for f in files)
                assert cli(root, "audit", "--run", receipt["run"], "--json", "--strict").exit_code == 0
        pending = [r for r in runs if r.get("pending")]
        runs_needed += 1
        if not dreamed and not pending:
            break
    else:
        pytest.fail("the real repository did not converge in 12 runs")
    assert runs_needed <= 10
    assert {"kit", "bookminder"} <= seen_agents
    # The topics gitdream created say what they are about, never when.
    existed = set(git(root, "ls-tree", "-r", "--name-only", before).split())
    for path in set(git(root, "ls-tree", "-r", "--name-only", "HEAD").split()) - existed:
        name = path.rsplit("/", 1)[-1]
        if "/memory/" in path and "/logs/" not in path and name.endswith(".md"):
            assert not _CLOCK_NAME.search(name.casefold()), path
    # Every fact cites at least one source that resolves to real text at its input commit.
    all_facts = _facts(root)
    assert all_facts
    for path, facts in all_facts.items():
        for fact in facts:
            assert fact.sources, (path, fact.text)
            assert any(_resolves(root, ref) for ref in fact.sources), (path, fact.text, fact.sources)
    # Human bytes outside gitdream's blocks are unchanged.
    for path in git(root, "diff", "--name-only", before, "HEAD").split():
        old = subprocess.run(["git", "show", f"{before}:{path}"], cwd=root, capture_output=True)
        if old.returncode != 0:
            continue
        new_text = git(root, "show", f"HEAD:{path}")
        old_text = old.stdout.decode()
        assert blocks.outside(new_text).startswith(blocks.outside(old_text).rstrip("\n")), path
    # MEMORY.md within limits, or over them by a person's own text with gitdream's topics
    # indexed in the overflow file.
    for agent in seen_agents:
        index = root / "agents" / agent / "memory" / "MEMORY.md"
        if index.exists():
            text = index.read_text()
            within = len(text.splitlines()) <= 200 and len(text.encode()) <= 25_000
            owned = [
                p
                for p in (root / "agents" / agent / "memory").glob("*.md")
                if "origin: gitdream" in p.read_text()[:400] and p.name != "gitdream-topics.md"
            ]
            overflow = root / "agents" / agent / "memory" / "gitdream-topics.md"
            assert within or not owned or overflow.exists(), agent
    assert cli(root, "check", "--json").exit_code in (0, 1)
    second = json.loads(cli(root, "run", "--json", "--full").stdout)["runs"]
    assert all(r["commits"] == {"experience": None, "definition": None} for r in second), [
        (r["agent"], r["counts"]) for r in second if r["commits"]["experience"]
    ]


def test_user_commit_to_a_dream_path_during_the_run_is_never_undone(agent_repo: Path, tmp_path: Path) -> None:
    """The dream computed MEMORY.md at the input commit; a commit the user makes to it while
    the dream runs must not be overwritten (the commit builder is told the base)."""
    from tests.helpers import resume, start_paused

    _log(agent_repo, 1, "- [deploy] a fact")
    commit_all(agent_repo, "log")
    faults = tmp_path / "faults"
    proc = start_paused(agent_repo, faults, "before-experience-commit", "run", "--json")
    write(agent_repo, "agents/ops/memory/MEMORY.md", "# ops — memory index\n\n- the user's own line\n")
    user = commit_all(agent_repo, "user edits the index meanwhile")
    out, _err = resume(proc, faults, "before-experience-commit")
    receipt = json.loads(out)["runs"][0]
    assert receipt["status"] == "failed" and receipt["error"]["type"] == "head_moved"
    assert head(agent_repo) == user
    assert "the user's own line" in (agent_repo / "agents/ops/memory/MEMORY.md").read_text()


def test_material_left_pending_twice_is_still_read_the_third_time(agent_repo: Path) -> None:
    """Regression test: an entry left pending by a run that had itself read it as pending
    was recorded with that run's base (the watermark) instead of the base it was new
    since; the next run diffed from the watermark, found nothing, and the entry was lost."""
    _log(
        agent_repo,
        1,
        "- [a] First lesson about alpha.",
        "- [b] Second lesson about beta.",
        "- [c] Third about gamma.",
    )
    commit_all(agent_repo, "three entries")
    env = {"GITDREAM_MAX_UNITS": "1"}
    texts = []
    for _ in range(3):
        receipt = json.loads(cli(agent_repo, "run", "--json", env=env).stdout)["runs"][0]
        assert receipt["status"] == "ok"
        texts += [u["text"] for u in receipt["units"]]
    assert texts == ["First lesson about alpha.", "Second lesson about beta.", "Third about gamma."]
    assert receipt["pending"] == []


def test_the_run_summary_says_what_was_left_for_the_next_run(agent_repo: Path) -> None:
    """Regression test: a run stopped by max_units printed "(1 new, 0 corroborated)" and
    nothing about the entries it left pending; so did its dry run."""
    _log(agent_repo, 1, "- [a] First lesson about alpha.", "- [b] Second lesson about beta.")
    commit_all(agent_repo, "two entries")
    env = {"GITDREAM_MAX_UNITS": "1"}
    for args in (("run", "--dry-run"), ("run",)):
        result = cli(agent_repo, *args, env=env)
        assert result.exit_code == 0, result.stderr
        assert "1 entry left for the next run" in result.stdout, (args, result.stdout[-300:])


def test_a_missing_receipt_of_the_last_dream_is_named_with_the_way_to_its_pending_material(
    agent_repo: Path,
) -> None:
    """The material a dream leaves for the next run is carried by its receipt: in a clone
    that has the watermark but not the notes, the run says so (and how to get it back)
    instead of silently never reading that material; `--full` then reads it."""
    _log(agent_repo, 1, "- [a] First lesson about alpha.", "- [b] Second lesson about beta.")
    commit_all(agent_repo, "two entries")
    env = {"GITDREAM_MAX_UNITS": "1"}
    first = json.loads(cli(agent_repo, "run", "--json", env=env).stdout)["runs"][0]
    assert first["pending"]
    git(agent_repo, "update-ref", "-d", "refs/notes/gitdream")
    second = json.loads(cli(agent_repo, "run", "--json", env=env).stdout)["runs"][0]
    (warning,) = [w for w in second["warnings"] if "is not in this repository" in w]
    assert "refs/notes/gitdream" in warning and "gitdream run --agent ops --full" in warning
    full = json.loads(cli(agent_repo, "run", "--full", "--json", env=env).stdout)["runs"][0]
    assert [u["text"] for u in full["units"]] == ["Second lesson about beta."]
    assert not any("is not in this repository" in w for w in full["warnings"])


def test_facts_for_a_topic_with_unreadable_front_matter_wait_until_it_is_fixed(agent_repo: Path) -> None:
    """Regression test: facts routed to a topic whose front matter cannot be read were
    rejected once and, with the watermark moved past them, never written: now they are
    pending until the file is fixed."""
    topic = "agents/ops/memory/deploys.md"
    write(agent_repo, topic, "---\nname: deploys\na: &a [1]\nb: *a\n---\n\n# Deploys\n\nHand-written.\n")
    _log(agent_repo, 1, "- [deploys] Rollbacks need the previous image tag.")
    commit_all(agent_repo, "log and a topic with a YAML alias")
    before = (agent_repo / topic).read_bytes()
    receipt = _run(agent_repo)["runs"][0]
    assert receipt["status"] == "ok" and receipt["commits"]["experience"] is None
    assert (agent_repo / topic).read_bytes() == before
    assert any(w.startswith(f"{topic}:4: ") for w in receipt["warnings"])
    assert [p["path"] for p in receipt["pending"]] == [f"{LOGS}/2026-03-01.md"]
    assert _run(agent_repo)["runs"][0]["pending"], "still waiting while the file is broken"
    write(agent_repo, topic, "---\nname: deploys\n---\n\n# Deploys\n\nHand-written.\n")
    commit_all(agent_repo, "fix the front matter")
    receipt = _run(agent_repo)["runs"][0]
    assert receipt["pending"] == [] and receipt["commits"]["experience"]
    assert "Rollbacks need the previous image tag." in (agent_repo / topic).read_text()


def test_a_log_over_max_file_bytes_is_read_once_the_limit_is_raised(agent_repo: Path) -> None:
    """Regression test: a source file over max_file_bytes was skipped and, with the
    watermark moved past it, never read, even after the limit was raised."""
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
    _log(agent_repo, 1, *[f"- [big] {a} {b} {a}{b}" for a in words for b in words[:6]])
    commit_all(agent_repo, "a big log")
    first = json.loads(cli(agent_repo, "run", "--json", env={"GITDREAM_MAX_FILE_BYTES": "1000"}).stdout)
    receipt = first["runs"][0]
    path = f"{LOGS}/2026-03-01.md"
    assert receipt["phases"]["gather"]["skipped_files"][0]["path"] == path
    assert (
        f"{path}: skipped: " in receipt["warnings"][0]
        and "over max_file_bytes (1000)" in receipt["warnings"][0]
    )
    assert [(p["path"], p["reason"]) for p in receipt["pending"]] == [(path, "over max_file_bytes")]
    assert receipt["commits"]["experience"] is None
    receipt = json.loads(cli(agent_repo, "run", "--json", env={"GITDREAM_MAX_UNITS": "100"}).stdout)["runs"][
        0
    ]
    assert receipt["counts"]["created"] == 60 and receipt["pending"] == []


def test_receipts_mask_what_the_scanner_finds_in_rejected_units(agent_repo: Path) -> None:
    """Regression test: the receipt (a git note, pushed with the repository) recorded a
    rejected unit's title and topic verbatim — for a definition proposal the title is the
    text itself, so the secret the scanner had just rejected was written into the note."""
    key = "AKIA" + "Q3EGRTXW7LZ5N2VB"
    _log(
        agent_repo, 1, f"- Keep {key} out of the logs next time. #skill", "- [deploy] Rollbacks need the tag."
    )
    commit_all(agent_repo, "log with a key")
    receipt = _run(agent_repo)["runs"][0]
    note = git(agent_repo, "notes", "--ref", "gitdream", "show", receipt["input_commit"])
    assert key not in note and key not in json.dumps(receipt)
    (rejected,) = receipt["rejected"]
    assert (
        rejected["stage"] == "screen"
        and rejected["title"] == "Keep [REDACTED aws-access-key-id, 20 chars] out of the logs next time."
    )
    assert rejected["topic"].startswith("(withheld") and rejected["sources"] == [
        f"{LOGS}/2026-03-01.md#L3-L3"
    ]


def test_writing_into_a_definition_with_unreadable_front_matter_warns_with_its_line(agent_repo: Path) -> None:
    """Regression test: gitdream wrote its learned block into an agent.md whose front
    matter was a YAML bomb without a word, although `gitdream check` warns about it."""
    agent_md = agent_repo / "agents/ops/agent.md"
    agent_md.write_text("---\nname: ops\na: &a [1, 2]\nb: [*a, *a]\n---\n" + agent_md.read_text())
    _log(agent_repo, 1, "- Always run the smoke test first. #agent")
    commit_all(agent_repo, "agent.md with an alias in its front matter")
    receipt = _run(agent_repo)["runs"][0]
    assert receipt["commits"]["definition"]
    assert any(w.startswith("agents/ops/agent.md:4: front-matter: ") for w in receipt["warnings"]), receipt[
        "warnings"
    ]


def test_bad_since_is_refused_before_any_agent_runs(agent_repo: Path) -> None:
    """Regression test: `--since nonexistent` recorded a failed run per agent and counted
    them for back-off."""
    result = cli(agent_repo, "run", "--since", "nonexistent")
    assert result.exit_code == 1
    assert "--since nonexistent: no such revision" in result.stderr
    assert git(agent_repo, "for-each-ref", "refs/gitdream", "refs/notes") == ""
    assert not (agent_repo / ".git" / "gitdream" / "state.json").exists()


def test_dry_run_works_on_a_detached_head(agent_repo: Path) -> None:
    _log(agent_repo, 1, "- [deploy] a fact")
    commit_all(agent_repo, "log")
    git(agent_repo, "checkout", "-q", "--detach")
    result = cli(agent_repo, "run", "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert "+++ b/agents/ops/memory/deploy.md" in result.stdout
    assert cli(agent_repo, "run").exit_code == 1


def test_discarded_review_branch_hands_its_material_back(agent_repo: Path) -> None:
    """Regression test: `run --branch` consumed the material for good, so deleting an
    unmerged review branch lost it."""
    _log(agent_repo, 1, "- [deploy] a fact to review")
    commit_all(agent_repo, "log")
    receipt = _run(agent_repo, "--branch", "dream/review")["runs"][0]
    assert _run(agent_repo)["runs"][0]["status"] == "noop"
    result = cli(agent_repo, "revert", receipt["run"], "--replay")
    assert result.exit_code == 0, result.stderr
    assert "git branch -D dream/review" in result.stdout + result.stderr
    git(agent_repo, "branch", "-D", "dream/review")
    again = _run(agent_repo)["runs"][0]
    assert again["status"] == "ok" and again["commits"]["experience"]


def test_a_noop_run_does_not_load_the_scanner(agent_repo: Path) -> None:
    """Regression test: masking receipts loaded the secret scanner (and compiled its rules)
    in every run, a no-op included, which held the repository lock longer on the idle path."""
    _log(agent_repo, 1, "- [deploy] one fact")
    commit_all(agent_repo, "log")
    _run(agent_repo)
    code = (
        "import sys\nfrom gitdream.cli import cli\n"
        "try:\n    cli(['run'], prog_name='gitdream')\nexcept SystemExit:\n    pass\n"
        "print('gitdream.dream.screen' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=agent_repo, capture_output=True, text=True, env=gitdream_env()
    )
    assert done.stderr.strip().splitlines()[-1] == "False", done.stderr
    assert "Nothing new for agent ops" in done.stdout


def test_idle_agents_share_one_line_and_json_keeps_every_run(agent_repo: Path) -> None:
    """A 33-agent trial printed "Nothing new for agent X since the beginning" 30 times."""
    idle = [f"idle-{n:02d}" for n in range(12)]
    for name in idle:
        write(agent_repo, f"agents/{name}/agent.md", f"# {name}\n\n{name}.\n")
        write(agent_repo, f"agents/{name}/memory/MEMORY.md", f"# {name}\n")
    _log(agent_repo, 1, "- [deploy] Rollbacks need the previous image tag.")
    commit_all(agent_repo, "agents and a log")
    result = cli(agent_repo, "run")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert not any(line.startswith("Nothing new for agent ") for line in lines), lines
    assert lines[-1] == (
        "Nothing new for 12 agents: " + ", ".join(idle[:10]) + ", … and 2 more (`--json` lists every run)"
    )
    assert any("ops" in line for line in lines[:-1])  # the agent that dreamed keeps its summary
    write(agent_repo, f"agents/{idle[0]}/memory/logs/2026/03/2026-03-02.md", "# 2026-03-02\n\n- [x] One.\n")
    commit_all(agent_repo, "one more log")
    runs = _run(agent_repo)["runs"]
    assert sorted(r["agent"] for r in runs if r["status"] == "noop") == sorted(["ops", *idle[1:]])
    single = cli(agent_repo, "run", "--agent", "ops").stdout
    assert single.startswith("Nothing new for agent ops since ")


def test_the_run_summary_accounts_for_every_entry_read_once(agent_repo: Path) -> None:
    """Regression test (issue 14): a list folded into one fact made the summary's figures
    miss entries — 489 read, but kept, read and not kept and pending summed to 469. Each
    entry read is now counted once: the list's other entries as "folded into them"."""
    _log(
        agent_repo,
        1,
        "## Deploys",
        "Deploy rules we follow:",
        "- never deploy on Fridays because nobody is around to roll back",
        "- always keep the previous image tag so that a rollback takes one command",
        "- run the smoke test before you switch traffic to the new version",
        "",
        "- Let me check the logs now",
    )
    commit_all(agent_repo, "a list and a line of narration")
    summary = cli(agent_repo, "run", "--dry-run").stdout
    assert "folded into them" in summary, summary
    receipt = _run(agent_repo)["runs"][0]
    counts = receipt["counts"]
    not_kept = sum(n for why, n in receipt["skipped"].items() if why.startswith("not kept: "))
    pending = sum(len(p["entries"]) for p in receipt["pending"])
    improved = sum(counts[k] for k in ("created", "corroborated", "refined", "superseded", "definition"))
    assert counts["folded"] >= 1
    assert (
        improved + counts["rejected"] + counts["folded"] + counts["skipped"] + not_kept + pending
        == (counts["entries"])
    )
    numbers = [
        int(n.replace(",", ""))
        for n in re.findall(r"(\d[\d,]*) (?:new|corroborated|more|read|already|entr)", summary)
    ]
    assert sum(numbers) == counts["entries"], (summary, counts)
