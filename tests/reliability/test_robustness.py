"""Robustness (issue 16, cases 8 to 12): one bad ref or file stops only itself, notes from
other people are bounded, the lock is the kernel's, a rerun after a kill ends where an
uninterrupted run would, and the environment's problems name the environment.

Every case is replayed as the issue describes it, with real processes and real git; the
disk-full and read-only cases run gitdream inside a private mount namespace (`unshare -rm`,
a small tmpfs, a read-only bind mount) and are skipped where the kernel does not allow one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import commit_all, git, gitdream_env, resume, run_gitdream, start_paused, write
from tests.reliability.support import LOGS, agent_repo, fsck, leftovers, material, memory_tree, prepared

LATIN1 = "caf\udce9"  # b"caf\xe9" read with surrogateescape: not UTF-8


def _two_agents(root: Path) -> dict[str, object]:
    agent_repo(root)
    material(root)
    write(root, "agents/two/agent.md", "# two\n\nThe second agent.\n\n## Role\n\n- Help.\n")
    write(root, "agents/two/memory/logs/2026-03-01.md", "- [notes] The second agent's fact.\n")
    commit_all(root, "agent two")
    return {}


def _json(proc: subprocess.CompletedProcess[str]) -> dict[str, object]:
    assert "Traceback" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout)


# --- case 8: one corrupt ref, one file name that is not UTF-8 --------------------------------


def test_a_corrupt_watermark_stops_only_its_agent(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    root, _ = prepared(tmp_path_factory, "two-agents", _two_agents, tmp_path / "repo")
    folder = root / ".git" / "refs" / "gitdream" / "watermark"
    folder.mkdir(parents=True)
    (folder / "ops").write_text("garbage\n")
    (folder / "OTHER").write_text("garbage\n")  # a ref of no agent: concerns nobody
    done = run_gitdream(root, "run", "--json")
    assert done.returncode == 1, done.stderr
    runs = {r["agent"]: r for r in _json(done)["runs"]}
    assert runs["two"]["status"] == "ok" and runs["two"]["commits"]["experience"]
    assert runs["ops"]["status"] == "failed"
    assert "the ref refs/gitdream/watermark/ops is corrupt" in done.stderr
    assert f"rm {folder / 'ops'}" in done.stderr
    status = run_gitdream(root, "status", "--json")
    assert status.returncode == 0, status.stderr
    rows = {a["id"]: a for a in _json(status)["agents"]}
    assert rows["ops"]["sessions"]["error"] and rows["two"]["sessions"]["error"] is None
    auto = run_gitdream(
        root, "run", "--auto", "--json", env={"GITDREAM_MIN_HOURS": "0", "GITDREAM_MIN_SESSIONS": "0"}
    )
    assert auto.returncode == 0, auto.stderr
    gate = _json(auto)["gate"]["agents"]
    assert gate["ops"]["gate"] == "repository" and "corrupt" in gate["ops"]["reason"]


@pytest.mark.parametrize("names", ["blob", "tree", "tag", "symbolic"])
def test_a_watermark_that_names_no_commit_stops_only_its_agent(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, names: str
) -> None:
    """Regression test: a watermark (a ref anyone can push, fetched with the hint's
    refspec) naming a blob, a tree or an annotated tag made `run` and `status` exit 3 ("this
    is a bug") for every agent; a symbolic one (`git symbolic-ref`) crashed too, and was
    never to be moved through onto the branch it names."""
    root, _ = prepared(tmp_path_factory, "two-agents", _two_agents, tmp_path / "repo")
    ref = "refs/gitdream/watermark/ops"
    branch = git(root, "rev-parse", "HEAD").strip()
    if names == "symbolic":
        git(root, "branch", "side")
        git(root, "symbolic-ref", ref, "refs/heads/side")
    else:
        if names == "tag":
            git(root, "tag", "-a", "-m", "a tag", "v1", "HEAD~1")
        oid = {"blob": "HEAD:README.md", "tree": "HEAD^{tree}", "tag": "v1"}[names]
        git(root, "update-ref", ref, git(root, "rev-parse", oid).strip())
    done = run_gitdream(root, "run", "--json")
    assert done.returncode == 1, done.stderr
    runs = {r["agent"]: r for r in _json(done)["runs"]}
    assert runs["two"]["status"] == "ok" and runs["two"]["commits"]["experience"]
    assert runs["ops"]["status"] == "failed"
    if names == "symbolic":
        assert f"the ref {ref} is a symbolic ref (to refs/heads/side)" in done.stderr, done.stderr
        assert f"git update-ref --no-deref -d {ref}" in done.stderr
        assert git(root, "rev-parse", "side").strip() == branch, "the branch it names never moves"
        assert git(root, "symbolic-ref", ref).strip() == "refs/heads/side"
    else:
        assert f"the ref {ref} names a {names} (" in done.stderr and "not a commit" in done.stderr, (
            done.stderr
        )
        assert f"git update-ref -d {ref}" in done.stderr
    status = run_gitdream(root, "status", "--json")
    assert status.returncode == 0, status.stderr
    rows = {a["id"]: a for a in _json(status)["agents"]}
    assert rows["ops"]["sessions"]["error"] and rows["two"]["sessions"]["error"] is None


@pytest.mark.parametrize("names", ["blob", "symbolic"])
def test_a_notes_ref_that_names_no_commit_refuses_before_any_dream(tmp_path: Path, names: str) -> None:
    """Regression test: `refs/notes/gitdream` naming a blob, or a symbolic ref to a branch:
    every agent's dream committed, then its receipt failed ("the ref … is corrupt", exit 1)
    — a dream without a receipt. Now the run refuses before any agent, naming the ref; the
    branch a symbolic ref names is never moved."""
    root = agent_repo(tmp_path / "repo")
    material(root)
    head = git(root, "rev-parse", "HEAD").strip()
    if names == "symbolic":
        git(root, "branch", "side")
        git(root, "symbolic-ref", "refs/notes/gitdream", "refs/heads/side")
    else:
        git(root, "update-ref", "refs/notes/gitdream", git(root, "rev-parse", "HEAD:README.md").strip())
    done = run_gitdream(root, "run")
    assert done.returncode == 1, done.stderr
    assert "the ref refs/notes/gitdream " in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert ("a symbolic ref" if names == "symbolic" else "names a blob") in done.stderr, done.stderr
    assert git(root, "rev-parse", "HEAD").strip() == head, "no dream commit without its receipt"
    if names == "symbolic":
        assert git(root, "rev-parse", "side").strip() == head


def test_file_and_folder_names_that_are_not_utf8_stop_only_themselves(tmp_path: Path) -> None:
    root = agent_repo(tmp_path / "repo")
    material(root)
    latin = os.fsencode(LATIN1)
    (root / os.fsdecode(os.fsencode(LOGS) + b"/" + latin + b".md")).write_bytes(b"- [x] a fact in caf\xe9\n")
    folder = root / os.fsdecode(b"agents/" + latin)
    (folder / "memory" / "logs").mkdir(parents=True)
    (folder / "memory" / "logs" / "2026-03-01.md").write_text("- [y] a fact\n")
    commit_all(root, "names that are not UTF-8")
    done = run_gitdream(root, "run", "--json")
    assert done.returncode == 0, done.stderr
    (receipt,) = _json(done)["runs"]
    assert receipt["status"] == "ok" and receipt["commits"]["experience"]
    assert "caf\\xe9.md: the file name is not UTF-8" in done.stderr and "git mv" in done.stderr
    assert "skipped agent folder agents/caf\\xe9" in done.stderr
    assert (
        json.loads(git(root, "notes", "--ref", "gitdream", "show", "HEAD~2").splitlines()[-1])["run"]
        == receipt["run"]
    )
    assert fsck(root) == ""


# --- case 9: notes from other people ----------------------------------------------------------


def test_a_hostile_receipt_note_breaks_no_command(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    root, _ = prepared(tmp_path_factory, "two-agents", _two_agents, tmp_path / "repo")
    assert run_gitdream(root, "run").returncode == 0
    nested = tmp_path / "nested.txt"
    nested.write_text("[" * 100_000 + "\n" + '{"type": "receipt", "run": 7}\n')
    git(root, "notes", "--ref", "gitdream", "add", "-f", "-F", str(nested), "HEAD~3")
    huge = tmp_path / "huge.txt"
    with huge.open("w") as handle:
        handle.write(('{"type":"annotation","run":"x","pad":"' + "a" * 1_000_000 + '"}\n') * 40)
    git(root, "notes", "--ref", "gitdream", "add", "-f", "-F", str(huge), "HEAD~4")
    for args in (("log",), ("log", "--json"), ("show", "last"), ("revert", "last", "--dry-run"), ("status",)):
        done = run_gitdream(root, *args)
        assert done.returncode == 0, (args, done.stderr)
        assert "Traceback" not in done.stderr and "failed unexpectedly" not in done.stderr


def test_the_receipt_of_a_run_over_a_long_log_is_bounded(tmp_path: Path) -> None:
    """A run that leaves most of a long log for later: the receipt names the pending lines
    as ranges, not one id per entry, and the next run still reads exactly those."""
    root = agent_repo(tmp_path / "repo")
    write(root, "gitdream.toml", "max_units = 5\n")
    write(
        root,
        f"{LOGS}/2026-03-01.md",
        "".join(f"- [deploy] Step {n} of the long rollout.\n" for n in range(3000)),
    )
    commit_all(root, "a long log")
    first = _json(run_gitdream(root, "run", "--json"))["runs"][0]
    note = git(root, "notes", "--ref", "gitdream", "show", first["input_commit"])
    assert len(note.encode()) < 30_000, len(note.encode())
    (pending,) = first["pending"]
    assert pending["count"] == 2995 and pending["entries"] == [] and pending["lines"] == [[6, 3000]]
    second = _json(run_gitdream(root, "run", "--json"))["runs"][0]
    assert second["counts"]["units"] == 5 and second["pending"][0]["count"] == 2990


# --- case 10: the kernel lock ---------------------------------------------------------------


def test_a_live_lock_whose_file_is_still_empty_is_not_broken(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """Regression test: an empty lock file counted as stale (pid 0), so a second run broke
    a live lock whose holder had not written it yet, and dreamed concurrently."""
    root, _ = prepared(tmp_path_factory, "two-agents", _two_agents, tmp_path / "repo")
    folder = tmp_path / "faults"
    first = start_paused(root, folder, "lock-taken", "run", "--json")
    assert (root / ".git" / "gitdream" / "lock").read_text() == ""
    second = run_gitdream(root, "run")
    assert second.returncode == 75, second.stderr
    assert "another dream is starting" in second.stderr
    _out, err = resume(first, folder, "lock-taken")
    assert first.returncode == 0, err
    assert len(git(root, "log", "--format=%H", "--author=gitdream").split()) == 3  # one dream only
    assert fsck(root) == "" and not (root / ".git" / "gitdream" / "lock").exists()


def test_status_names_an_empty_lock_file_for_what_it_is(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """`gitdream status` showed an empty lock file as "run unknown, pid 0 … since an unknown
    time": it now says that no holder is recorded yet, while one is writing it (held) and
    once it is left by a crash (then also that no process holds it); `--json` gives null
    rather than a pid 0."""
    root, _ = prepared(tmp_path_factory, "two-agents", _two_agents, tmp_path / "repo")
    folder = tmp_path / "faults"
    first = start_paused(root, folder, "lock-taken", "run", "--json")
    try:
        shown = run_gitdream(root, "status")
        assert shown.returncode == 0, shown.stderr
        line = next(x for x in shown.stdout.splitlines() if x.startswith("lock:"))
        assert line == "lock: a lock file with no holder recorded yet (being written, or left by a crash)", (
            line
        )
        lock = _json(run_gitdream(root, "status", "--json"))["lock"]
        assert lock == {"run": None, "pid": None, "host": None, "since": None, "stale": None}, lock
    finally:
        resume(first, folder, "lock-taken")
    (root / ".git" / "gitdream" / "lock").write_text("")  # as a crash right after creating it leaves it
    shown = run_gitdream(root, "status")
    line = next(x for x in shown.stdout.splitlines() if x.startswith("lock:"))
    assert line.startswith("lock: a lock file with no holder recorded yet") and "no process holds it" in line
    assert "pid 0" not in shown.stdout and "unknown time" not in shown.stdout


# --- case 11: a rerun after a kill ------------------------------------------------------------


def _limited(root: Path) -> dict[str, object]:
    agent_repo(root)
    material(root)
    write(root, "gitdream.toml", "max_units = 2\n")
    commit_all(root, "two units per run")
    return {}


def test_a_rerun_after_a_kill_ends_where_an_uninterrupted_run_would(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    plain, _ = prepared(tmp_path_factory, "limited", _limited, tmp_path / "plain")
    reference = _json(run_gitdream(plain, "run", "--json"))["runs"][0]
    root, _ = prepared(tmp_path_factory, "limited", _limited, tmp_path / "killed")
    killed = run_gitdream(root, "run", env={"GITDREAM_FAULT": "before-watermark:kill"})
    assert killed.returncode == -signal.SIGKILL
    rerun = _json(run_gitdream(root, "run", "--json"))["runs"][0]
    assert "finishing run" in " ".join(rerun["warnings"])
    assert [(p["path"], p["count"]) for p in rerun["pending"]] == [
        (p["path"], p["count"]) for p in reference["pending"]
    ]
    assert git(root, "ls-tree", "-r", "HEAD", "agents") == git(plain, "ls-tree", "-r", "HEAD", "agents")
    log = run_gitdream(root, "log")
    assert f"finished by run {rerun['run']}" in log.stdout, log.stdout
    assert not list((root / ".git" / "gitdream" / "runs").glob("*.json"))


def test_log_and_show_say_a_run_killed_before_its_receipt_is_finished_by_the_next(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """A run killed after its commits and before its receipt, whose plan is kept here
    (`<git-common-dir>/gitdream/runs/`), showed as `unknown` with "no receipt here (fetch
    refs/notes/gitdream)", a hint that fetches nothing: `log` and `show` now say it was
    interrupted and that the next run finishes it (`log --json`: `unfinished`). And it
    does: killed after its watermark moved, the run's receipt — where the next run reads
    the material it left for later (over `max_units`) — was never written, so that
    material was never dreamed; the next run now reads it from the killed run's plan and
    ends where a second uninterrupted run does."""
    plain, _ = prepared(tmp_path_factory, "limited", _limited, tmp_path / "plain")
    for _time in range(2):
        assert run_gitdream(plain, "run").returncode == 0
    root, _ = prepared(tmp_path_factory, "limited", _limited, tmp_path / "repo")
    killed = run_gitdream(root, "run", env={"GITDREAM_FAULT": "before-receipt:kill"})
    assert killed.returncode == -signal.SIGKILL
    for args in (("log",), ("show", "last")):
        shown = run_gitdream(root, *args)
        assert shown.returncode == 0, shown.stderr
        assert "interrupted; the next run of agent ops finishes it" in shown.stdout, shown.stdout
        assert "no receipt here" not in shown.stdout
    (listed,) = _json(run_gitdream(root, "log", "--json"))["runs"]
    assert listed["unfinished"] == "interrupted" and listed["receipt"] is False, listed
    rerun = _json(run_gitdream(root, "run", "--json"))["runs"][0]
    assert rerun["status"] == "ok" and rerun["counts"]["units"] > 0, rerun
    log = run_gitdream(root, "log").stdout
    assert f"finished by run {rerun['run']}" in log and "the next run" not in log, log
    assert memory_tree(root) == memory_tree(plain)
    assert not list((root / ".git" / "gitdream" / "runs").glob("*.json"))


# --- case 12: the environment's problems ---------------------------------------------------------


def _partial_clone(tmp_path: Path) -> tuple[Path, Path]:
    """A source that has dreamed (watermark, receipt) and then committed more, and its
    `--filter=blob:none` clone, which fetched gitdream's refs and receipts as gitdream's
    hint for a clone says — through the clone's filter, so without their blobs."""
    source = agent_repo(tmp_path / "source")
    material(source)
    assert run_gitdream(source, "run").returncode == 0
    write(
        source, f"{LOGS}/2026-03-02.md", (source / LOGS / "2026-03-02.md").read_text() + "- [deploy] More.\n"
    )
    commit_all(source, "more")
    git(source, "config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--filter=blob:none", f"file://{source}", str(clone))
    git(
        clone,
        "fetch",
        "-q",
        "origin",
        "refs/gitdream/*:refs/gitdream/*",
        "+refs/notes/gitdream:refs/notes/gitdream",
    )
    return source, clone


def test_missing_blobs_of_a_partial_clone_are_named_with_the_fix(tmp_path: Path) -> None:
    _source, clone = _partial_clone(tmp_path)
    git(clone, "config", "remote.origin.url", str(tmp_path / "gone"))  # the promisor cannot serve
    done = run_gitdream(clone, "run")
    assert done.returncode == 1, done.stderr
    assert "not in this partial clone" in done.stderr and "git cat-file --batch-check" in done.stderr


def test_every_command_names_a_partial_clone_and_its_fix_works(tmp_path: Path) -> None:
    """`log`, `show` and `status` said a blob the partial clone lacks was "missing from the
    repository" and to run `git fsck`; `run` said it was a partial clone's, but its fix,
    `git fetch --refetch origin`, fetches again through the clone's filter and brought no
    blob. Every command now names the partial clone, and the command its hint gives, run
    as written, lets the dream and the reading commands work."""
    _source, clone = _partial_clone(tmp_path)
    for args in (("run",), ("log",), ("show", "last"), ("status",)):
        done = run_gitdream(clone, *args)
        assert done.returncode == 1, (args, done.stdout, done.stderr)
        assert "not in this partial clone" in done.stderr, (args, done.stderr)
        assert "git fsck" not in done.stderr, (args, done.stderr)
    fix = re.search(r"hint: [^`]*`([^`]+)`", done.stderr)
    assert fix is not None, done.stderr
    subprocess.run(["sh", "-c", fix[1]], cwd=clone, env=gitdream_env(), check=True, capture_output=True)
    dreamed = run_gitdream(clone, "run")
    assert dreamed.returncode == 0, dreamed.stderr
    for args in (("log",), ("show", "last"), ("status",)):
        assert run_gitdream(clone, *args).returncode == 0, args


def _namespace_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs tmpfs /mnt"], capture_output=True)
    return probe.returncode == 0


needs_namespace = pytest.mark.skipif(
    not _namespace_works(), reason="a private mount namespace (unshare -rm) is not allowed here"
)


def _in_namespace(script: str, root: Path) -> subprocess.CompletedProcess[str]:
    env = gitdream_env({"GITDREAM_RAISE_ERRORS": ""})
    return subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, "sh", str(root), sys.executable],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@needs_namespace
@pytest.mark.parametrize("room_kb", [8, 60])
def test_a_full_disk_is_named_and_leaves_nothing_half_written(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, room_kb: int
) -> None:
    root, _ = prepared(tmp_path_factory, "two-agents", _two_agents, tmp_path / "repo")
    mount = tmp_path / "mnt"
    mount.mkdir()
    script = (
        f'mount -t tmpfs -o size=4m tmpfs {mount} && cp -a "$1" {mount}/repo && '
        f"dd if=/dev/zero of={mount}/fill bs=1k count=$(( $(df -k --output=avail {mount} | tail -1) - {room_kb} )) "
        f'2>/dev/null; cd {mount}/repo && "$2" -m gitdream run; echo "exit=$?"; '
        f"git fsck --strict --no-dangling 2>&1; git status --porcelain --untracked-files=all"
    )
    done = _in_namespace(script, root)
    assert "Traceback" not in done.stderr and "failed unexpectedly" not in done.stderr, done.stderr
    assert "exit=1" in done.stdout and "the disk is full" in done.stderr, (done.stdout, done.stderr)
    assert "error" not in done.stdout.split("exit=1", 1)[1], done.stdout  # fsck clean, nothing left


@needs_namespace
@pytest.mark.parametrize("read_only", ["repository", ".git/refs"])
def test_a_read_only_repository_is_named_and_no_lock_is_suggested(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, read_only: str
) -> None:
    root, _ = prepared(tmp_path_factory, "two-agents", _two_agents, tmp_path / "repo")
    target = root if read_only == "repository" else root / ".git" / "refs"
    script = (
        f"mount --bind {target} {target} && mount -o remount,ro,bind {target} && "
        f'cd "$1" && "$2" -m gitdream run; echo "run=$?"; "$2" -m gitdream status >/dev/null; echo "status=$?"'
    )
    done = _in_namespace(script, root)
    assert "Traceback" not in done.stderr and "failed unexpectedly" not in done.stderr, done.stderr
    assert "run=1" in done.stdout and "status=0" in done.stdout, (done.stdout, done.stderr)
    assert "the file system is read-only" in done.stderr
    if read_only == ".git/refs":  # libgit2's message names the file: the folder is shown
        assert f"(in {target}/heads)" in done.stderr, done.stderr
    assert ".lock" not in done.stderr, "a lock that does not exist was named"
    assert leftovers(root) == []


@needs_namespace
def test_after_a_run_on_read_only_refs_the_next_run_says_its_receipt_was_not_written(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """Regression test (issue 16): after a run failed on a read-only `.git/refs`, the next
    run said it was finishing a run "interrupted before its receipt" — that run was not
    interrupted: its receipt could not be written, and the next run says so."""
    root, _ = prepared(tmp_path_factory, "two-agents", _two_agents, tmp_path / "repo")
    target = root / ".git" / "refs"
    script = (
        f"mount --bind {target} {target} && mount -o remount,ro,bind {target} && "
        f'cd "$1" && "$2" -m gitdream run; echo "run=$?"; umount {target} && echo "---" >&2 && '
        f'"$2" -m gitdream run; echo "again=$?"'
    )
    done = _in_namespace(script, root)
    assert "run=1" in done.stdout and "again=0" in done.stdout, (done.stdout, done.stderr)
    second = done.stderr.split("---", 1)[1]
    assert "finishing run" in second and "whose receipt could not be written" in second, second
    assert "interrupted" not in second, second


# --- case 13: a clone without gitdream's refs ---------------------------------------------------


def _dreamed_over_limit(root: Path) -> dict[str, object]:
    """ops has dreamed, but its human MEMORY.md is over its limits: it has no index block
    (Kit's index is over its 200 lines)."""
    agent_repo(root)
    write(root, "gitdream.toml", "memory_max_lines = 2\n")
    write(root, "agents/ops/memory/MEMORY.md", "# ops\n\n- [Human topic](human.md)\n- more\n- more\n")
    material(root)
    done = run_gitdream(root, "run")
    assert done.returncode == 0 and "over its limits" in done.stderr, done.stderr
    assert "gitdream:begin index" not in (root / "agents/ops/memory/MEMORY.md").read_text()
    return {}


def test_an_agent_that_has_dreamed_is_not_read_again_from_scratch_in_a_clone(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    origin, _ = prepared(tmp_path_factory, "dreamed-over-limit", _dreamed_over_limit, tmp_path / "origin")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    before = git(clone, "rev-parse", "HEAD")
    done = run_gitdream(clone, "run")
    assert done.returncode == 1, done.stderr
    assert "agent ops has dreamed before (commit " in done.stderr and "is its dream commit" in done.stderr
    assert "git notes --ref gitdream merge -s cat_sort_uniq" in done.stderr
    assert git(clone, "rev-parse", "HEAD") == before, "nothing was dreamed again"


def test_the_fetch_hint_merges_receipts_and_keeps_local_ones(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """The hint fetched `+refs/notes/gitdream:refs/notes/gitdream`, which replaced the
    local receipts that were never pushed; the commands it gives now merge them."""
    from gitdream.git.notes import fetch_command, fetch_refs_command

    origin, _ = prepared(tmp_path_factory, "two-agents", _two_agents, tmp_path / "origin")
    assert run_gitdream(origin, "run", "--agent", "two").returncode == 0
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    subprocess.run(["sh", "-c", fetch_refs_command()], cwd=clone, check=True, capture_output=True)
    subprocess.run(["sh", "-c", fetch_command()], cwd=clone, check=True, capture_output=True)
    assert run_gitdream(clone, "run", "--agent", "ops").returncode == 0  # a receipt never pushed
    assert run_gitdream(origin, "run", "--agent", "ops", "--full").returncode == 0  # another one there
    subprocess.run(["sh", "-c", fetch_command()], cwd=clone, check=True, capture_output=True)
    log = json.loads(run_gitdream(clone, "log", "--json", "--all").stdout)["runs"]
    with_receipts = [r for r in log if r["receipt"]]
    assert len(with_receipts) == 3, log  # two's, the local ops run, origin's ops run
