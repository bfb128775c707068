"""`gitdream status`: raw files not committed yet (`uncommitted_raw`), found with one
status pass over the repository."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.conftest import AGENT_MD
from tests.helpers import cli, commit_all, git, run_gitdream, write

LOGS = "agents/ops/memory/logs/2026/03"


def _uncommitted(root: Path) -> dict[str, list[str]]:
    result = cli(root, "status", "--json")
    assert result.exit_code == 0, result.stderr
    return {a["id"]: a["uncommitted_raw"] for a in json.loads(result.stdout)["agents"]}


def test_uncommitted_raw_lists_untracked_modified_and_staged_sources(agent_repo: Path) -> None:
    write(agent_repo, f"{LOGS}/2026-03-01.md", "- committed\n")
    write(agent_repo, f"{LOGS}/2026-03-02.md", "- committed, then edited\n")
    write(agent_repo, f"{LOGS}/2026-03-03.md", "- committed, then deleted\n")
    write(agent_repo, "agents/ops/sessions/2026-03-01.jsonl", '{"role": "user", "text": "hi"}\n')
    write(agent_repo, "agents/dev/agent.md", "# dev\n")
    write(agent_repo, ".gitignore", "*.tmp.md\n")
    commit_all(agent_repo, "logs")

    write(agent_repo, f"{LOGS}/2026-03-02.md", "- committed, then edited\n- more\n")  # modified
    (agent_repo / f"{LOGS}/2026-03-03.md").unlink()  # deleted: nothing to read
    write(agent_repo, f"{LOGS}/2026-03-04.md", "- new\n")  # untracked
    write(agent_repo, f"{LOGS}/2026-03-05.md", "- new, staged\n")
    git(agent_repo, "add", f"{LOGS}/2026-03-05.md")
    write(agent_repo, "agents/ops/memory/logs/new/deep/2026-03-06.md", "- in an untracked folder\n")
    write(agent_repo, f"{LOGS}/scratch.tmp.md", "- ignored\n")
    write(agent_repo, "agents/ops/sessions/2026-03-02.jsonl", '{"role": "user", "text": "new"}\n')
    write(agent_repo, "agents/ops/memory/MEMORY.md", "edited index, not a raw source\n")
    write(agent_repo, "agents/ops/notes.txt", "not a source\n")
    write(agent_repo, "agents/dev/memory/logs/2026/03/2026-03-01.md", "- dev's own\n")

    found = _uncommitted(agent_repo)
    assert found["ops"] == [
        f"{LOGS}/2026-03-02.md",
        f"{LOGS}/2026-03-04.md",
        f"{LOGS}/2026-03-05.md",
        "agents/ops/memory/logs/new/deep/2026-03-06.md",
        "agents/ops/sessions/2026-03-02.jsonl",
    ]
    assert found["dev"] == ["agents/dev/memory/logs/2026/03/2026-03-01.md"]


def test_uncommitted_raw_is_empty_when_everything_is_committed(agent_repo: Path) -> None:
    write(agent_repo, f"{LOGS}/2026-03-01.md", "- committed\n")
    commit_all(agent_repo, "log")
    assert _uncommitted(agent_repo) == {"ops": []}


def test_a_file_unstaged_from_the_index_but_present_counts(agent_repo: Path) -> None:
    write(agent_repo, f"{LOGS}/2026-03-01.md", "- committed\n")
    commit_all(agent_repo, "log")
    git(agent_repo, "rm", "-q", "--cached", f"{LOGS}/2026-03-01.md")
    assert _uncommitted(agent_repo) == {"ops": [f"{LOGS}/2026-03-01.md"]}


def test_paths_with_spaces_quotes_and_non_ascii_are_listed_as_written(agent_repo: Path) -> None:
    names = [f'{LOGS}/2026-03-01 "quoted" notes.md', f"{LOGS}/2026-03-02 日志.md", f"{LOGS}/tab\there.md"]
    for name in names:
        write(agent_repo, name, "- new\n")
    assert _uncommitted(agent_repo) == {"ops": sorted(names)}


def test_status_never_rewrites_the_index(agent_repo: Path) -> None:
    """A background reader must not take `index.lock` or rewrite the index (git's
    --no-optional-locks): a user's `git add` at the same moment would fail."""
    write(agent_repo, f"{LOGS}/2026-03-01.md", "- committed\n")
    commit_all(agent_repo, "log")
    index = agent_repo / ".git" / "index"
    log = agent_repo / LOGS / "2026-03-01.md"
    os.utime(log, (log.stat().st_atime + 100, log.stat().st_mtime + 100))  # stat data stale
    before = (index.read_bytes(), index.stat().st_mtime_ns)
    assert _uncommitted(agent_repo) == {"ops": []}
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before


def test_a_corrupt_index_is_a_warning_not_a_failed_status(agent_repo: Path) -> None:
    (agent_repo / ".git" / "index").write_bytes(b"DIRC garbage")
    result = cli(agent_repo, "status", "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["agents"][0]["uncommitted_raw"] is None
    assert any("uncommitted raw files not listed" in w for w in document["warnings"])
    human = cli(agent_repo, "status")
    assert human.exit_code == 0 and "?" in human.stdout


def test_a_leftover_git_lock_file_is_a_warning(agent_repo: Path) -> None:
    """A git command killed mid-write leaves `index.lock` behind and every dream refuses to
    write until it is removed: status says so, with the file and the command."""
    lock = agent_repo / ".git" / "index.lock"
    branch_lock = agent_repo / ".git" / "refs" / "heads" / "main.lock"
    lock.write_bytes(b"")
    branch_lock.write_bytes(b"")
    warnings = json.loads(cli(agent_repo, "status", "--json").stdout)["warnings"]
    assert [w.split(" exists ")[0] for w in warnings] == [str(lock), str(branch_lock)]
    assert f"rm {lock}" in warnings[0]
    human = cli(agent_repo, "status")
    assert str(lock) in human.stdout + human.stderr
    lock.unlink()
    branch_lock.unlink()
    assert json.loads(cli(agent_repo, "status", "--json").stdout)["warnings"] == []


def _row(root: Path, env: dict[str, str] | None = None) -> str:
    result = cli(root, "status", env=env)
    assert result.exit_code == 0, result.stderr
    return next(line for line in result.stdout.splitlines() if line.startswith("ops "))


def test_next_says_when_auto_mode_would_dream(agent_repo: Path) -> None:
    """NEXT: "at 5 sessions" while too few sessions are new (the time gate alone being open
    is not "now"); "now" with material a run left pending; "in N h" after a dream."""
    for day in (1, 2):
        write(
            agent_repo,
            f"{LOGS}/2026-03-0{day}.md",
            f"- [ops] Fact {day}: deploys need the tag.\n- [db] Other {day}.\n",
        )
    commit_all(agent_repo, "two logs")
    assert "at 5 sessions" in _row(agent_repo) and " 2/5 " in _row(agent_repo) + " "

    capped = cli(agent_repo, "run", env={"GITDREAM_MAX_UNITS": "1"})
    assert capped.exit_code == 0, capped.stderr
    sessions = json.loads(cli(agent_repo, "status", "--json").stdout)["agents"][0]["sessions"]
    assert sessions["pending"] >= 1 and sessions["new"] == 0
    row = _row(agent_repo, env={"GITDREAM_MIN_HOURS": "0"})
    assert " now " in row + " " and f"0/5 +{sessions['pending']} pending" in row

    assert "in 24.0 h" in _row(agent_repo)  # the run just now closed the time gate


def test_status_says_when_memory_md_alone_is_over_its_limits_and_where_the_topics_are(
    agent_repo: Path,
) -> None:
    # issue 14: a person's MEMORY.md over its limits keeps gitdream's lines out; status says
    # so and names the file that indexes gitdream's topics instead
    index = "agents/ops/memory/MEMORY.md"
    write(agent_repo, index, "".join(f"- line {n}\n" for n in range(250)))
    commit_all(agent_repo, "a long index")
    warnings = json.loads(cli(agent_repo, "status", "--json").stdout)["warnings"]
    over = [w for w in warnings if index in w]
    assert over and "250 lines" in over[0] and "agents/ops/memory/gitdream-topics.md" in over[0]
    assert "topics will be indexed (by the next dream that writes one) in" in over[0]  # not there yet
    write(agent_repo, "agents/ops/memory/gitdream-topics.md", "# Topics gitdream keeps\n")
    over = [w for w in json.loads(cli(agent_repo, "status", "--json").stdout)["warnings"] if index in w]
    assert "topics are indexed in agents/ops/memory/gitdream-topics.md" in over[0]
    # gitdream's own block does not count against the person's part
    write(
        agent_repo,
        index,
        "# Index\n<!-- gitdream:begin index -->\n"
        + "".join(f"- t{n}\n" for n in range(250))
        + "<!-- gitdream:end index -->\n",
    )
    warnings = json.loads(cli(agent_repo, "status", "--json").stdout)["warnings"]
    assert not [w for w in warnings if index in w]


def test_in_a_clone_status_shows_the_last_dream_the_repository_records(tmp_path: Path) -> None:
    """The new user's item 3: in a clone that fetched gitdream's refs and notes, `status`
    said `never` for agents `gitdream log` shows as dreamed (LAST RUN came only from this
    machine's state file). Now it shows the dream from the repository, marked so; the
    time gate still counts this machine's runs only (docs/troubleshooting.md)."""
    upstream = tmp_path / "upstream"
    git(tmp_path, "init", "-q", "-b", "main", str(upstream))
    write(upstream, "agents/kit/agent.md", AGENT_MD)
    write(upstream, "agents/kit/memory/MEMORY.md", "# kit — memory index\n")
    write(
        upstream,
        "agents/kit/memory/logs/2026/03/2026-03-01.md",
        "- Lesson: the deploy needs the cache warmed first, because cold starts time out.\n",
    )
    commit_all(upstream, "kit")
    dreamed = json.loads(run_gitdream(upstream, "run", "--json").stdout)["runs"][0]
    assert dreamed["status"] == "ok"
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(upstream), str(clone))
    git(clone, "fetch", "-q", "origin", "refs/gitdream/*:refs/gitdream/*")

    (agent,) = json.loads(cli(clone, "status", "--json").stdout)["agents"]
    assert agent["last_run"] == {"run": None, "time": None, "status": None, "source": "repository"}
    watermark = agent["watermark"]
    assert f"watermark {watermark[:7]} (repository)" in cli(clone, "status").stdout

    git(clone, "fetch", "-q", "origin", "+refs/notes/gitdream:refs/notes/gitdream-fetched")
    git(
        clone,
        "notes",
        "--ref",
        "gitdream",
        "merge",
        "-q",
        "-s",
        "cat_sort_uniq",
        "refs/notes/gitdream-fetched",
    )
    (agent,) = json.loads(cli(clone, "status", "--json").stdout)["agents"]
    assert agent["last_run"] == {
        "run": dreamed["run"],
        "time": dreamed["started"],
        "status": "ok",
        "source": "repository",
    }
    assert agent["last_dream"] == dreamed["started"]
    assert agent["time_gate"]["open"] is True  # counted per machine: this one never ran kit
    (row,) = [line for line in cli(clone, "status").stdout.splitlines() if line.startswith("kit ")]
    assert f"{dreamed['started']} ok (repository)" in row and "never" not in row, row

    # This machine's own run is what status shows from then on.
    mine = json.loads(run_gitdream(clone, "run", "--json").stdout)["runs"][0]
    (agent,) = json.loads(cli(clone, "status", "--json").stdout)["agents"]
    assert agent["last_run"]["run"] == mine["run"] and agent["last_run"]["source"] == "machine"
