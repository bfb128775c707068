"""What a new user found trying gitdream on a real agent repository (the lead's report of
their first session): records that disagreed with the exit code, counts that disagreed
with each other, and output that said something other than what was meant."""

from __future__ import annotations

import json
import re
from pathlib import Path

from gitdream.trigger import state as state_mod
from tests.helpers import cli, commit_all, git, write

LOG = "agents/ops/memory/logs/2026/03/2026-03-02.md"
SKILL_LINE = "- Always run the smoke tests on staging before promoting a build. #skill\n"


def _no_skill_file(agent_repo: Path) -> None:
    """Agent ops without SKILL.md (most real agents have only agent.md) and a log line
    tagged #skill: the definition phase refuses."""
    git(agent_repo, "rm", "-q", "agents/ops/SKILL.md")
    write(agent_repo, LOG, "# 2026-03-02\n\n- [deploy] Rollbacks need the previous image tag.\n" + SKILL_LINE)
    commit_all(agent_repo, "ops: log, no SKILL.md")


def test_a_refused_definition_phase_makes_the_run_partial_everywhere(agent_repo: Path) -> None:
    """The run exited 1 while its receipt, `--json`, `log` and `show` all said `ok`: now
    every record says `partial`, the receipt's warnings carry the refusal, and `show`
    prints it; the experience commit is kept and the #skill entry stays pending."""
    _no_skill_file(agent_repo)
    ran = cli(agent_repo, "run", "--json")
    assert ran.exit_code == 1, ran.stderr
    (receipt,) = json.loads(ran.stdout)["runs"]
    assert receipt["status"] == "partial" and receipt["error"] is None
    assert receipt["phases"]["definitions"]["status"] == "refused"
    assert receipt["commits"]["experience"] and receipt["commits"]["definition"] is None
    (warning,) = [w for w in receipt["warnings"] if w.startswith("definitions not written")]
    assert "agents/ops/SKILL.md does not exist" in warning and "create agents/ops/SKILL.md" in warning
    assert [p["reason"] for p in receipt["pending"]] == ["definition refused"]

    listed = cli(agent_repo, "log", "--json")
    assert [r["status"] for r in json.loads(listed.stdout)["runs"]] == ["partial"]
    table = cli(agent_repo, "log").stdout.splitlines()
    assert " partial " in table[1] and " ok " not in table[1]
    shown = cli(agent_repo, "show", "last")
    assert shown.stdout.startswith(f"run      {receipt['run']}  partial")
    warnings = shown.stdout.split("\nwarnings\n", 1)[1]
    assert "agents/ops/SKILL.md does not exist at the input commit" in " ".join(warnings.split())


def test_the_refused_run_says_partial_and_why_and_does_not_back_off(agent_repo: Path) -> None:
    """The summary names the cause, and a refusal that waiting cannot fix (a file to
    create) does not stretch the time gate the way a failed model call does."""
    _no_skill_file(agent_repo)
    ran = cli(agent_repo, "run")
    assert ran.exit_code == 1
    assert "; partial: the definitions were not written (see the warning)" in ran.stdout
    assert "ops: definitions not written: agents/ops/SKILL.md does not exist" in ran.stderr
    assert ran.stderr.count("definitions not written") == 1
    state = state_mod.load(agent_repo / ".git")
    entry = state.agent("ops")
    assert entry.last_status == "partial" and entry.failures == 0 and entry.last_dream

    # Creating the file fixes it: the pending #skill entry is written by the next run.
    write(agent_repo, "agents/ops/SKILL.md", "# ops — skills\n\n- Read logs.\n")
    commit_all(agent_repo, "ops: SKILL.md")
    again = cli(agent_repo, "run", "--json")
    assert again.exit_code == 0, again.stderr
    (receipt,) = json.loads(again.stdout)["runs"]
    assert receipt["status"] == "ok" and receipt["commits"]["definition"]


def test_show_says_how_many_entries_of_a_file_are_left_for_the_next_run(agent_repo: Path) -> None:
    """Entries over `max_units` were listed as "not processed by the engine", for files the
    run had just cited; `show` now says what the summary says: entries left for the next
    run, how many, and why."""
    write(agent_repo, "gitdream.toml", "max_units = 1\n")
    write(
        agent_repo,
        LOG,
        "# 2026-03-02\n\n"
        "- [deploy] Rollbacks need the previous image tag; the registry keeps only 10 tags.\n"
        "- [ci] The integration suite is flaky when the database container starts slowly.\n"
        "- [backup] Never restore a backup onto the primary without a snapshot first.\n",
    )
    commit_all(agent_repo, "ops: log")
    ran = cli(agent_repo, "run", "--json")
    assert ran.exit_code == 0, ran.stderr
    (receipt,) = json.loads(ran.stdout)["runs"]
    (pending,) = receipt["pending"]
    assert pending["reason"] == "over max_units (1); left for the next run" and pending["count"] == 2
    summary = cli(agent_repo, "log").stdout  # the run is recorded; show is what is read
    assert receipt["run"] in summary
    shown = cli(agent_repo, "show", "last").stdout
    section = " ".join(shown.split("pending (read again by the next dream)\n", 1)[1].split())
    assert f"{LOG}: 2 entries left for the next run (over max_units (1))" in section
    assert "not processed by the engine" not in shown


def test_a_file_pending_for_two_reasons_is_read_again_for_both(agent_repo: Path) -> None:
    """A log can be left pending twice over (entries over max_units, and a #skill entry
    whose SKILL.md is missing): the next run read only the first record's entries, and the
    others were lost until `--full`."""
    git(agent_repo, "rm", "-q", "agents/ops/SKILL.md")
    write(agent_repo, "gitdream.toml", "max_units = 2\n")
    write(
        agent_repo,
        LOG,
        "# 2026-03-02\n\n"
        "- [deploy] Rollbacks need the previous image tag; the registry keeps only 10 tags.\n"
        "- [ci] The integration suite is flaky when the database container starts slowly.\n"
        "- [backup] Never restore a backup onto the primary without a snapshot first.\n"
        "- [dns] The internal resolver caches negative answers for 30 minutes.\n" + SKILL_LINE,
    )
    commit_all(agent_repo, "ops: log, no SKILL.md")
    first = cli(agent_repo, "run", "--json")
    (receipt,) = json.loads(first.stdout)["runs"]
    records = [p for p in receipt["pending"] if p["path"] == LOG]
    assert len({p["reason"] for p in records}) == 2, receipt["pending"]
    left = {e for p in records for e in p["entries"]}
    write(agent_repo, "agents/ops/SKILL.md", "# ops — skills\n\n- Read logs.\n")
    commit_all(agent_repo, "ops: SKILL.md")
    second = cli(agent_repo, "run", "--json")
    (again,) = json.loads(second.stdout)["runs"]
    cited = {
        s.split("@")[0] for u in [*again["units"], *again.get("definition_units", [])] for s in u["sources"]
    }
    still = {e for p in again["pending"] for e in p["entries"]}
    assert left <= cited | still, (left, cited, still)


def _counts_agree(agent_repo: Path) -> int:
    """Run once; assert the summary's number is `log`'s IMPR and the experience commit's
    title is its experience part, with the parts named. Returns the number."""
    ran = cli(agent_repo, "run")
    assert ran.exit_code == 0, ran.stderr
    match = re.match(r"Improved (\d+) memor(?:y|ies) for agent ops \(([^)]*)\)", ran.stdout)
    assert match, ran.stdout
    total = int(match[1])
    parts = {w: int(n) for n, w in re.findall(r"(\d+) (new|corroborated|refined|superseded)", match[2])}
    to_definitions = int((re.search(r"(\d+) to definitions", match[2]) or [0, 0])[1])
    assert sum(parts.values()) + to_definitions == total
    (row,) = json.loads(cli(agent_repo, "log", "--json", "-n", "1").stdout)["runs"]
    assert row["counts"]["improved"] == total
    table = cli(agent_repo, "log", "-n", "1").stdout.splitlines()
    assert table[1].split()[table[0].split().index("IMPR")] == str(
        total
    )  # "TIME (UTC)" is two words, as the time
    title = git(agent_repo, "log", "-1", "--format=%s", row["commits"]["experience"]).strip()
    experience = total - to_definitions
    named = ", ".join(f"{n} {w}" for w, n in parts.items() if n)
    noun = "memory" if experience == 1 else "memories"
    assert title == f"dream(ops): experience — improved {experience} {noun} ({named})"
    return total


def test_the_summary_log_and_commit_title_count_the_same_memories(agent_repo: Path) -> None:
    """One run, three counts: the summary said 14, the commit 12 and `log` NEW 9 CORR 2.
    Now `log`'s IMPR is the summary's number, and the experience commit's title is the
    experience part of it, with its parts named (the rest went to definitions)."""
    write(
        agent_repo,
        LOG,
        "# 2026-03-02\n\n"
        "- [deploy] Rollbacks need the previous image tag; the registry keeps only 10 tags.\n"
        "- [ci] The integration suite is flaky when the database container starts slowly.\n" + SKILL_LINE,
    )
    commit_all(agent_repo, "ops: day 1")
    assert _counts_agree(agent_repo) == 3
    write(
        agent_repo,
        "agents/ops/memory/logs/2026/03/2026-03-03.md",
        "# 2026-03-03\n\n- [deploy] Rollbacks need the previous image tag; the registry keeps only 10 tags.\n",
    )
    commit_all(agent_repo, "ops: day 2")
    assert _counts_agree(agent_repo) == 1  # corroborated


def test_a_revert_conflict_with_a_persons_commit_names_that_commit(agent_repo: Path) -> None:
    """The hint said "revert the later runs first" when the later change was a person's
    commit, not a run; it now names the commit, and the run's other commit that can be
    reverted alone."""
    write(agent_repo, LOG, "# 2026-03-02\n\n- [deploy] Rollbacks need the previous image tag.\n" + SKILL_LINE)
    commit_all(agent_repo, "ops: log")
    assert cli(agent_repo, "run").exit_code == 0
    topic = agent_repo / "agents/ops/memory/deploy.md"
    topic.write_text(topic.read_text().replace("Rollbacks need", "Rollbacks always need"))
    edit = commit_all(agent_repo, "edit fact")
    result = cli(agent_repo, "revert", "last")
    assert result.exit_code == 1
    assert f"(by {edit[:7]} 'edit fact')" in result.stderr
    hint = result.stderr.split("hint: ", 1)[1]
    assert (
        f"undo or rework the later commit {edit[:7]}, which is not a dream (`git revert {edit[:7]}`)" in hint
    )
    assert "revert the later run" not in hint
    assert "--only definition` reverts the definition commit alone" in hint


def test_run_says_in_one_line_that_uncommitted_raw_logs_are_not_read(agent_repo: Path) -> None:
    """`status` listed an untracked log under UNCOMMITTED RAW; `run` said nothing, so the
    user could not tell why its lines were not dreamed."""
    write(agent_repo, LOG, "# 2026-03-02\n\n- [deploy] Rollbacks need the previous image tag.\n")
    commit_all(agent_repo, "ops: log")
    write(agent_repo, "agents/ops/memory/logs/2026/03/2026-03-03.md", "- [ci] Not committed yet.\n")
    write(agent_repo, "agents/ops/notes.txt", "not raw material\n")
    ran = cli(agent_repo, "run", "--json")
    assert ran.exit_code == 0, ran.stderr
    (line,) = [w for w in json.loads(ran.stdout)["warnings"] if "not committed" in w]
    assert line == (
        "1 raw file is not committed, so this dream does not read it: "
        "agents/ops/memory/logs/2026/03/2026-03-03.md (commit it and run again; `gitdream status` lists them)"
    )
    assert ran.stderr.count("not committed") == 1


def test_with_json_a_usage_error_is_a_json_error_on_stdout_too(agent_repo: Path) -> None:
    """docs/cli.md promised `{"error": …}` on stdout for every error with --json; click's
    usage errors printed nothing there."""
    for args, fragment in [
        (["log", "--status", "weird", "--json"], "Invalid value for '--status'"),
        (["revert", "last", "--only", "bogus", "--json"], "Invalid value for '--only'"),
        (
            ["revert", "last", "--replay", "--branch", "x", "--json"],
            "--replay cannot be combined with --branch",
        ),
        (["log", "--bogus", "--json"], "No such option '--bogus'"),
    ]:
        result = cli(agent_repo, *args)
        assert result.exit_code == 2, args
        error = json.loads(result.stdout)["error"]
        assert error["type"] == "usage" and fragment in error["message"], (args, error)
        assert error["hint"].startswith("see `") and error["hint"].endswith(f" {args[0]} --help`")
        assert "Usage: " in result.stderr
    plain = cli(agent_repo, "log", "--status", "weird")
    assert plain.exit_code == 2 and plain.stdout == ""


def test_a_run_that_consolidated_nothing_does_not_restart_the_time_gate(agent_repo: Path) -> None:
    """Found by a new user: with SKILL.md still missing, the next run has only the pending
    #skill entry, writes nothing and is `partial` again — it took no material in, so it is
    not the last dream the time gate counts `min_hours` from (docs/dreaming.md)."""
    from freezegun import freeze_time

    _no_skill_file(agent_repo)
    with freeze_time("2026-03-02T10:00:00Z"):
        assert cli(agent_repo, "run").exit_code == 1
    first = state_mod.load(agent_repo / ".git").agent("ops")
    assert first.last_dream == "2026-03-02T10:00:00Z"  # it wrote the deploy fact

    with freeze_time("2026-03-02T16:00:00Z"):
        again = cli(agent_repo, "run", "--json")
    assert again.exit_code == 1
    (receipt,) = json.loads(again.stdout)["runs"]
    assert receipt["status"] == "partial" and not receipt["commits"]["experience"]
    entry = state_mod.load(agent_repo / ".git").agent("ops")
    assert entry.last_attempt == "2026-03-02T16:00:00Z" and entry.last_status == "partial"
    assert entry.last_dream == "2026-03-02T10:00:00Z"


def test_a_run_refused_for_a_change_of_yours_does_not_back_off(agent_repo: Path) -> None:
    """A dream refused by the write gate because you changed a file it writes and did not
    commit it is yours to fix (commit or stash); it is not a failed dream, so it does not
    stretch the hooks' time gate (new user's finding)."""
    write(agent_repo, LOG, "# 2026-03-01\n\n- [deploys] Rollbacks need the previous image tag.\n")
    commit_all(agent_repo, "log")
    write(agent_repo, "agents/ops/memory/MEMORY.md", "# ops — memory index\n\n- my own edit\n")
    ran = cli(agent_repo, "run")
    assert ran.exit_code == 1 and "commit or stash" in ran.stderr
    entry = state_mod.load(agent_repo / ".git").agent("ops")
    assert entry.last_status == "failed" and entry.failures == 0
