"""Git shapes (issue 8): every repository shape git allows either works or refuses with
exit 1 and a message naming the fix — never a traceback (exit 3), never a half-written
state.

Each test builds its shape for real with the git CLI and runs the commands a user would
(`gitdream run`, `run --auto`, `status`, `check`, `revert last`, `hooks install`) through
the CLI with a user's settings (an internal error is a crash log and exit 3) — in-process
for speed, and as real `python -m gitdream` processes where a process matters (hooks,
concurrent dreams, and one command per shape). "Works" means: the dream's commits are on the right
branch of the right worktree, index and working tree agree with them (`git status` shows
only the user's own changes) and `git fsck --strict` is clean. "Refuses" means: exit 1,
`error:` and `hint:` naming the fix, and nothing of the dream written.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import commit_all, git, gitdream_env, head, run_gitdream, snapshot, write

OPS = "agents/ops"
LOG = f"{OPS}/memory/logs/2026/03/2026-03-01.md"
FACTS = (
    "# 2026-03-01\n\n"
    "- [2026-03-01] [deploy] Rollbacks need the previous image tag.\n"
    "- Always run the smoke test before promoting. #skill\n"
)
MORE = "- [2026-03-02] [deploy] Canary deploys need a manual approval step.\n"
AGENT_MD = "# ops\n\nops keeps the deployment pipeline healthy.\n\n## Role\n\n- Watch the pipeline.\n"


# --- helpers ------------------------------------------------------------------------------


def make_agent(root: Path, agent_dir: str = OPS, log: str = "memory/logs/2026/03/2026-03-01.md") -> Path:
    """A repository (created unless `root` already is one) with an agent at `agent_dir`:
    definitions and memory in one commit, then a daily log with two facts (one `#skill`)
    in a second commit."""
    if not (root / ".git").exists():
        root.mkdir(parents=True, exist_ok=True)
        git(root, "init", "-q", "-b", "main")
    write(root, f"{agent_dir}/agent.md", AGENT_MD)
    write(root, f"{agent_dir}/soul.md", "# ops — persona\n\nCalm.\n")
    write(root, f"{agent_dir}/SKILL.md", "# ops — skills\n\n- Read logs.\n")
    write(root, f"{agent_dir}/memory/MEMORY.md", "# ops — memory index\n")
    commit_all(root, "agent")
    write(root, f"{agent_dir}/{log}", FACTS)
    commit_all(root, "log")
    return root


@dataclass
class Proc:
    """What a gitdream command did: exit status and its two output streams."""

    returncode: int
    stdout: str
    stderr: str


def gd(cwd: Path, *args: str, env: dict[str, str] | None = None, real: bool = False) -> Proc:
    """`gitdream ARGS` in `cwd` as a user runs it: an internal error writes a crash log and
    exits 3 (GITDREAM_RAISE_ERRORS is unset). In-process through click (fast), or with
    `real` as a `python -m gitdream` process. Never exit 3, never a traceback."""
    full = {"GITDREAM_RAISE_ERRORS": "", **(env or {})}
    if real:
        done = run_gitdream(cwd, *args, env=full)
        proc = Proc(done.returncode, done.stdout, done.stderr)
    else:
        from click.testing import CliRunner

        from gitdream.cli import cli as group

        result = CliRunner().invoke(group, ["-C", str(cwd), *args], env=full)
        proc = Proc(result.exit_code, result.stdout, result.stderr)
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert proc.returncode != 3, f"internal error:\n{proc.stdout}\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def ok(proc: Proc) -> dict[str, Any]:
    """Assert exit 0; the parsed `--json` output (or {} without it)."""
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout) if proc.stdout.lstrip().startswith("{") else {}


def refused(proc: Proc, *needles: str) -> str:
    """Assert a refusal: exit 1 with `error:` and `hint:` on stderr, holding every needle."""
    assert proc.returncode == 1, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    assert "error: " in proc.stderr and "hint: " in proc.stderr, proc.stderr
    for needle in needles:
        assert needle in proc.stderr, f"{needle!r} not in:\n{proc.stderr}"
    return proc.stderr


def dream(cwd: Path, *args: str, env: dict[str, str] | None = None, real: bool = False) -> dict[str, Any]:
    """`gitdream run --json ARGS`, asserted to exit 0; the first receipt."""
    doc = ok(gd(cwd, "run", "--json", *args, env=env, real=real))
    assert doc["runs"], doc
    return doc["runs"][0]


def consistent(root: Path, status: str = "") -> None:
    """Index and working tree agree with HEAD (apart from `status`, the user's own
    changes) and the object database is sound."""
    assert git(root, "status", "--porcelain=v1", "--untracked-files=all") == status
    fsck = subprocess.run(
        ["git", "fsck", "--strict", "--no-progress"], cwd=root, capture_output=True, text=True
    )
    assert fsck.returncode == 0 and "error" not in fsck.stdout + fsck.stderr, fsck.stdout + fsck.stderr


def dream_commits(root: Path, rev: str = "HEAD") -> tuple[str, str]:
    """The experience and definition commits at the tip of `rev` (asserted)."""
    definition = git(root, "rev-parse", rev).strip()
    experience = git(root, "rev-parse", f"{rev}~1").strip()
    kinds = [
        git(root, "log", "-1", "--format=%(trailers:key=Gitdream-Kind,valueonly)", c).strip()
        for c in (experience, definition)
    ]
    assert kinds == ["experience", "definition"]
    return experience, definition


def ls_tree(root: Path, rev: str, prefix: str = "") -> dict[str, str]:
    """`{path: blob id}` at `rev` (paths as raw bytes decoded with surrogateescape)."""
    out = subprocess.run(
        ["git", "ls-tree", "-r", "-z", rev, *([prefix] if prefix else [])], cwd=root, capture_output=True
    ).stdout
    found = {}
    for item in out.split(b"\0"):
        if item:
            meta, path = item.split(b"\t", 1)
            found[os.fsdecode(path)] = meta.split()[2].decode()
    return found


def unchanged(root: Path, before_head: str, before: dict[str, object]) -> None:
    """Nothing of a refused dream was written: branch, index and working tree as before."""
    assert head(root) == before_head
    assert snapshot(root) == before


# --- linked worktrees ---------------------------------------------------------------------


def test_linked_worktree_dreams_on_its_own_branch(tmp_path: Path) -> None:
    main = make_agent(tmp_path / "main")
    linked = tmp_path / "linked"
    git(main, "worktree", "add", "-q", "-b", "feature", str(linked))
    write(linked, LOG, FACTS + MORE)
    commit_all(linked, "more on feature")
    # The user's own work in progress in the linked worktree, staged and not.
    write(linked, f"{OPS}/agent.md", AGENT_MD + "\nA draft line.\n")
    write(linked, "notes.txt", "staged\n")
    git(linked, "add", "notes.txt")
    mine = " M agents/ops/agent.md\nA  notes.txt\n"
    main_before = snapshot(main)
    main_head = head(main)

    receipt = dream(linked, real=True)
    assert receipt["status"] == "ok" and receipt["branch"] == "refs/heads/feature"
    experience, definition = dream_commits(linked)
    assert receipt["commits"] == {"experience": experience, "definition": definition}
    assert git(main, "rev-parse", "feature").strip() == definition
    consistent(linked, mine)
    assert (linked / f"{OPS}/memory/MEMORY.md").read_bytes() == git(
        linked, "show", f"{definition}:{OPS}/memory/MEMORY.md"
    ).encode()
    # The main worktree: same branch tip, same index, same files.
    assert head(main) == main_head and snapshot(main) == main_before
    # State lives in the common dir, none in the linked worktree's own git dir.
    common = main / ".git"
    assert (common / "gitdream" / "stamp").is_file() and (common / "gitdream" / "state.json").is_file()
    assert not (common / "worktrees" / "linked" / "gitdream").exists()

    ok(gd(linked, "status"))
    ok(gd(linked, "check"))
    ok(gd(linked, "revert", "last"))
    assert ls_tree(linked, "HEAD") == ls_tree(linked, f"{experience}~1")
    consistent(linked, mine)
    assert snapshot(main) == main_before


def test_linked_worktree_dream_and_main_worktree_dream_are_serialised(tmp_path: Path) -> None:
    main = make_agent(tmp_path / "main")
    linked = tmp_path / "linked"
    git(main, "worktree", "add", "-q", "-b", "feature", str(linked))
    faults = tmp_path / "faults"
    faults.mkdir()
    env = {
        "GITDREAM_FAULT": "before-ref-move:pause",
        "GITDREAM_FAULT_DIR": str(faults),
        "GITDREAM_RAISE_ERRORS": "",
    }
    paused = subprocess.Popen(
        [sys.executable, "-m", "gitdream", "run", "--json"],
        cwd=linked,
        env=gitdream_env(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not (faults / "before-ref-move.reached").exists():
            assert paused.poll() is None, paused.communicate()
            assert time.monotonic() < deadline, "the linked worktree's dream never reached its commit"
            time.sleep(0.02)
        common = main / ".git" / "gitdream"
        assert (common / "lock").is_file()
        assert list((common / "journal").glob("*.json"))
        main_before = snapshot(main)
        blocked = gd(main, "run")
        assert blocked.returncode == 75, blocked.stderr
        assert "another dream" in blocked.stderr
        assert snapshot(main) == main_before
        auto = gd(main, "run", "--auto", "-v", env={"GITDREAM_MIN_SESSIONS": "1"})
        assert auto.returncode == 0 and "lock" in auto.stderr
    finally:
        (faults / "before-ref-move.continue").write_text("")
        out, err = paused.communicate(timeout=60)
    assert paused.returncode == 0, err
    assert json.loads(out)["runs"][0]["branch"] == "refs/heads/feature"
    dream_commits(linked)
    consistent(linked)
    consistent(main)
    assert not (main / ".git" / "gitdream" / "lock").exists()
    # Now the main worktree dreams too: its own branch, its own files.
    assert dream(main)["branch"] == "refs/heads/main"
    consistent(main)
    consistent(linked)


# --- submodules ---------------------------------------------------------------------------


def test_agent_inside_a_submodule_dreams_inside_it(tmp_path: Path) -> None:
    sub_origin = make_agent(tmp_path / "agent-origin")
    outer = tmp_path / "outer"
    outer.mkdir()
    git(outer, "init", "-q", "-b", "main")
    write(outer, "README.md", "outer\n")
    commit_all(outer, "outer")
    git(outer, "submodule", "add", "-q", str(sub_origin), "vendor/ops-agent")
    commit_all(outer, "add the agent as a submodule")
    inner = outer / "vendor" / "ops-agent"
    outer_head = head(outer)

    receipt = dream(inner)
    assert receipt["status"] == "ok"
    dream_commits(inner)
    consistent(inner)
    # The outer repository sees a moved submodule, as after any commit inside it.
    assert git(outer, "status", "--porcelain") == " M vendor/ops-agent\n"
    assert head(outer) == outer_head
    ok(gd(inner, "revert", "last"))
    consistent(inner)


@pytest.mark.parametrize("initialised", [True, False])
def test_outer_repository_skips_an_agent_that_is_a_submodule(tmp_path: Path, initialised: bool) -> None:
    """Regression test: run in the outer repository took a submodule's folder for an agent,
    found no material in the gitlink and recorded a no-op dream (watermark and receipt) for
    it. Now it is skipped with a warning naming `gitdream -C <dir> run`, and refused when
    named with --agent; nothing is written in either repository."""
    sub_origin = make_agent(tmp_path / "agent-origin")
    outer = tmp_path / "outer"
    outer.mkdir()
    git(outer, "init", "-q", "-b", "main")
    git(outer, "submodule", "add", "-q", str(sub_origin), OPS)
    commit_all(outer, "the agent is a submodule")
    if not initialised:
        clone = tmp_path / "clone"
        git(tmp_path, "clone", "-q", str(outer), str(clone))
        outer = clone
        assert (outer / OPS).is_dir() and not os.listdir(outer / OPS)
    before_head = head(outer)
    before = snapshot(outer)
    fix = f"gitdream -C {OPS} run"

    proc = gd(outer, "run")
    assert proc.returncode == 0 and "is a submodule" in proc.stderr and fix in proc.stderr
    assert ("git submodule update --init" in proc.stderr) is not initialised
    refused(gd(outer, "run", "--agent", "ops"), "is a submodule", fix)
    auto = gd(outer, "run", "--auto", "-v", env={"GITDREAM_MIN_SESSIONS": "0"})
    assert auto.returncode == 0 and "is a submodule" in auto.stderr
    unchanged(outer, before_head, before)
    assert git(outer, "for-each-ref", "refs/gitdream", "refs/notes") == ""
    if initialised:
        assert git(outer / OPS, "for-each-ref", "refs/gitdream", "refs/notes") == ""


@pytest.mark.parametrize("recurse", [False, True])
def test_repository_with_unrelated_submodules(tmp_path: Path, recurse: bool) -> None:
    lib = tmp_path / "lib-origin"
    lib.mkdir()
    git(lib, "init", "-q", "-b", "main")
    write(lib, "lib.txt", "lib\n")
    commit_all(lib, "lib")
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "submodule", "add", "-q", str(lib), "vendor/lib")
    commit_all(root, "submodule")
    make_agent(root)
    if recurse:
        git(root, "config", "submodule.recurse", "true")
    gitlink = ls_tree(root, "HEAD")["vendor/lib"]
    lib_head = head(root / "vendor" / "lib")

    dream(root)
    dream_commits(root)
    consistent(root)
    assert ls_tree(root, "HEAD")["vendor/lib"] == gitlink
    assert git(root, "ls-files", "-s", "vendor/lib").split()[:2] == ["160000", gitlink]
    assert head(root / "vendor" / "lib") == lib_head
    ok(gd(root, "revert", "last"))
    consistent(root)
    assert ls_tree(root, "HEAD")["vendor/lib"] == gitlink


# --- sparse checkout -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "patterns",
    [["--cone", f"{OPS}/memory/logs"], ["--no-cone", "/*", "!/big/", f"!/{OPS}/memory/logs/"]],
    ids=["cone", "no-cone-logs-out"],
)
def test_sparse_checkout_that_holds_the_targets_works(tmp_path: Path, patterns: list[str]) -> None:
    """The dream's targets are checked out; other folders — even the agent's own raw logs,
    which a dream reads from commits, never from disk — may be left out."""
    root = make_agent(tmp_path / "repo")
    write(root, "big/data.txt", "elsewhere\n")
    commit_all(root, "unrelated folder")
    git(root, "sparse-checkout", "set", *patterns)
    assert not (root / "big").exists()
    logs_out = not (root / LOG).exists()
    receipt = dream(root)
    assert receipt["status"] == "ok" and receipt["sessions"] == 1
    dream_commits(root)
    consistent(root)
    assert "S big/data.txt" in git(root, "ls-files", "-t")
    assert not (root / "big").exists() and (root / LOG).exists() is not logs_out


SPARSE_OUT = {
    "cone": ["--cone", f"{OPS}/sessions"],  # the agent's own files are in, memory/ is out
    "no-cone": ["--no-cone", "/*", f"!/{OPS}/memory/"],
}


@pytest.mark.parametrize("mode", ["cone", "no-cone"])
def test_sparse_checkout_target_outside_it_refuses_with_the_fix(tmp_path: Path, mode: str) -> None:
    """Regression test: a tracked target outside the sparse checkout (skip-worktree, not on
    disk) was refused as "deleted in the working tree" with `git restore` as the fix.
    Decision: gitdream refuses to write outside the sparse checkout and names `git
    sparse-checkout add`; it neither materialises the file nor commits it unseen (git's
    `update-index --index-info` would drop the skip-worktree bit)."""
    root = make_agent(tmp_path / "repo")
    git(root, "sparse-checkout", "set", *SPARSE_OUT[mode])
    memory = f"{OPS}/memory/MEMORY.md"
    assert not (root / memory).exists() and f"S {memory}" in git(root, "ls-files", "-t")
    before_head = head(root)
    before = snapshot(root)

    refused(
        gd(root, "run"),
        f"{memory} is kept out of the working tree by the sparse checkout",
        f"git sparse-checkout add {OPS}/memory",
    )
    unchanged(root, before_head, before)
    assert git(root, "for-each-ref", "refs/gitdream") == ""
    assert not (root / memory).exists() and f"S {memory}" in git(root, "ls-files", "-t")

    git(root, "sparse-checkout", "add", f"{OPS}/memory")
    dream(root)
    dream_commits(root)
    consistent(root)


@pytest.mark.parametrize("mode", ["cone", "no-cone"])
def test_sparse_checkout_new_files_outside_it_are_not_materialised(tmp_path: Path, mode: str) -> None:
    """Regression test: a new memory file in a folder the sparse checkout leaves out was
    written to disk and staged, checking it out behind git's back."""
    root = make_agent(tmp_path / "repo")
    git(root, "rm", "-q", f"{OPS}/memory/MEMORY.md")
    commit_all(root, "no index yet: the dream creates every memory file")
    git(root, "sparse-checkout", "set", *SPARSE_OUT[mode])
    assert not (root / OPS / "memory").exists()
    before_head = head(root)
    before = snapshot(root)

    refused(
        gd(root, "run"),
        f"{OPS}/memory/MEMORY.md would be created outside the sparse checkout",
        f"git sparse-checkout add {OPS}/memory",
    )
    unchanged(root, before_head, before)
    assert not (root / OPS / "memory").exists()


def test_sparse_checkout_that_leaves_the_agent_out_says_so(tmp_path: Path) -> None:
    """Regression test: an agent folder outside the sparse checkout gave "no agents found;
    create one with `gitdream init`" — which would create a second agent in its place."""
    root = make_agent(tmp_path / "repo")
    write(root, "docs/readme.md", "docs\n")
    commit_all(root, "docs")
    git(root, "sparse-checkout", "set", "--cone", "docs")
    before = snapshot(root)
    proc = gd(root, "run")
    assert proc.returncode == 0 and "git sparse-checkout add agents/<id>" in proc.stderr
    assert "gitdream init" not in proc.stderr
    refused(
        gd(root, "run", "--agent", "ops"), "no agent with id 'ops'", "git sparse-checkout add agents/<id>"
    )
    assert snapshot(root) == before


UNREADABLE_INDEX = {
    "sparse-index": (
        ["sparse-checkout", "set", "--cone", "--sparse-index", "agents"],
        "sparse index",
        ["sparse-checkout", "reapply", "--no-sparse-index"],
    ),
    "split-index": (
        ["update-index", "--split-index"],
        "split index",
        ["update-index", "--no-split-index"],
    ),
}


@pytest.mark.parametrize("shape", sorted(UNREADABLE_INDEX))
def test_an_index_libgit2_cannot_read_refuses_with_the_fix(tmp_path: Path, shape: str) -> None:
    """Regression test: a sparse index (`index.sparse`) or a split index made every command
    that reads the index an internal error (libgit2: "unsupported mandatory extension")."""
    make_cmd, what, fix_cmd = UNREADABLE_INDEX[shape]
    root = make_agent(tmp_path / "repo")
    write(root, "other/file.txt", "x\n")
    commit_all(root, "other")
    git(root, *make_cmd)
    before_head = head(root)
    before = snapshot(root)
    for args in (("run",), ("check", "--staged")):
        refused(gd(root, *args), what, "git " + " ".join(fix_cmd[:2]))
    # status still prints everything else, and names the problem and its fix
    shown = gd(root, "status")
    assert shown.returncode == 0 and what in shown.stdout and "git " + " ".join(fix_cmd[:2]) in shown.stdout
    repository = ok(gd(root, "status", "--json"))["repository"]
    assert what in repository["problem"] and "git " + " ".join(fix_cmd[:2]) in repository["hint"]
    unchanged(root, before_head, before)
    assert git(root, "for-each-ref", "refs/gitdream", "refs/notes") == ""
    git(root, *fix_cmd)
    dream(root)
    dream_commits(root)
    consistent(root)


# --- shallow clones -----------------------------------------------------------------------


def _upstream_with_a_dream(tmp_path: Path) -> tuple[Path, str]:
    """An upstream that dreamed once (watermark W), then got three more daily logs."""
    upstream = make_agent(tmp_path / "upstream")
    dream(upstream)
    watermark = git(upstream, "rev-parse", "refs/gitdream/watermark/ops").strip()
    for day in (2, 3, 4):
        write(
            upstream,
            f"{OPS}/memory/logs/2026/03/2026-03-0{day}.md",
            f"- Deploy note number {day} for canaries.\n",
        )
        commit_all(upstream, f"day {day}")
    return upstream, watermark


FETCH_REFS = ("+refs/gitdream/*:refs/gitdream/*", "+refs/notes/gitdream:refs/notes/gitdream")


def test_shallow_clone_with_the_watermark_reachable_works(tmp_path: Path) -> None:
    upstream, watermark = _upstream_with_a_dream(tmp_path)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "6", f"file://{upstream}", str(clone))
    git(clone, "fetch", "-q", "origin", *FETCH_REFS)
    assert git(clone, "rev-parse", "--is-shallow-repository").strip() == "true"

    receipt = dream(clone)
    assert receipt["status"] == "ok" and receipt["base"] == watermark
    assert receipt["sessions"] == 3  # the three new logs, not the one dreamed upstream
    assert not receipt["warnings"]
    consistent(clone)


def test_shallow_clone_with_the_watermark_cut_off_refuses_with_the_fetch_fix(tmp_path: Path) -> None:
    """Regression test: in a `--depth 1` clone that fetched gitdream's refs, the watermark's
    commit is there but the history linking it to HEAD is not; the run warned "shares no
    history with HEAD; reading all material again" and dreamed over everything. Now it
    refuses with `git fetch --unshallow …`, and works once that is done."""
    upstream, watermark = _upstream_with_a_dream(tmp_path)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{upstream}", str(clone))
    git(clone, "fetch", "-q", "origin", *FETCH_REFS)
    assert git(clone, "rev-parse", "refs/gitdream/watermark/ops").strip() == watermark
    before_head = head(clone)
    before = snapshot(clone)

    refused(
        gd(clone, "run", real=True),
        "not in the history this shallow clone has",
        "git fetch --unshallow origin",
    )
    unchanged(clone, before_head, before)
    assert git(clone, "rev-parse", "refs/gitdream/watermark/ops").strip() == watermark

    git(clone, "fetch", "-q", "--unshallow", "origin", *FETCH_REFS)
    receipt = dream(clone)
    assert receipt["base"] == watermark and receipt["sessions"] == 3
    consistent(clone)


@pytest.mark.parametrize("depth", [1, None])
def test_clone_without_gitdreams_refs_refuses_with_the_fetch_fix(tmp_path: Path, depth: int | None) -> None:
    """Regression test: a clone (a CI checkout: `--depth 1`, or a full one) does not fetch
    `refs/gitdream/*`; with no watermark the run took the agent for never dreamed and read
    all material again, though its MEMORY.md holds the dream's index block. Now it refuses
    with the fetch (`--unshallow` in a shallow clone); `--full` still reads everything."""
    upstream, watermark = _upstream_with_a_dream(tmp_path)
    clone = tmp_path / "clone"
    git(
        tmp_path, "clone", "-q", *(["--depth", str(depth)] if depth else []), f"file://{upstream}", str(clone)
    )
    assert git(clone, "for-each-ref", "refs/gitdream") == ""
    before_head = head(clone)
    before = snapshot(clone)
    fetch = "git fetch --unshallow origin" if depth else "git fetch origin 'refs/gitdream/*"

    refused(gd(clone, "run"), "has dreamed before", f"{OPS}/memory/MEMORY.md", fetch)
    unchanged(clone, before_head, before)
    assert git(clone, "for-each-ref", "refs/gitdream") == ""

    git(clone, "fetch", "-q", *(["--unshallow"] if depth else []), "origin", *FETCH_REFS)
    receipt = dream(clone)
    assert receipt["base"] == watermark and receipt["sessions"] == 3
    consistent(clone)


def test_full_reads_everything_again_without_the_watermark(tmp_path: Path) -> None:
    upstream, _watermark = _upstream_with_a_dream(tmp_path)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{upstream}", str(clone))
    receipt = dream(clone, "--full")
    assert receipt["base"] is None and receipt["sessions"] == 4
    consistent(clone)


# --- detached and unborn HEAD -------------------------------------------------------------


def test_detached_head_refuses_and_review_branch_works(tmp_path: Path) -> None:
    root = make_agent(tmp_path / "repo")
    git(root, "switch", "-q", "--detach")
    detached = head(root)
    before = snapshot(root)

    refused(gd(root, "run", real=True), "HEAD is detached", "git switch")
    auto = gd(root, "run", "--auto", "-v")
    assert auto.returncode == 0 and "gate 'repository' is closed" in auto.stderr
    ok(gd(root, "status"))
    ok(gd(root, "check"))
    unchanged(root, detached, before)

    # Review mode writes a branch and leaves the detached HEAD, index and files alone.
    receipt = dream(root, "--branch", "review")
    assert receipt["branch"] == "refs/heads/review"
    dream_commits(root, "review")
    assert git(root, "rev-parse", "review~2").strip() == detached
    unchanged(root, detached, before)
    assert git(root, "symbolic-ref", "-q", "HEAD", check=False) == ""
    refused(gd(root, "revert", "last"), "HEAD is detached", "git switch")
    unchanged(root, detached, before)


def test_a_sha256_repository_refuses_naming_the_object_format(tmp_path: Path) -> None:
    """Regression test: in a SHA-256 repository every command said "cannot open the
    repository … check that the folder is a readable git repository", sending the user to
    look for damage: it names the object format libgit2 cannot read."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main", "--object-format=sha256")
    write(root, f"{OPS}/agent.md", AGENT_MD)
    commit_all(root, "an agent")
    before = snapshot(root)
    refused(gd(root, "run"), "unknown object format", "SHA-256")
    refused(gd(root, "status"), "unknown object format", "SHA-256")
    assert snapshot(root) == before


def test_unborn_head_refuses_with_init_commit(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, f"{OPS}/agent.md", AGENT_MD)
    before = snapshot(root)

    refused(gd(root, "run", real=True), "no commits yet", "gitdream init --commit")
    refused(gd(root, "run", "--branch", "review"), "no commits yet", "gitdream init --commit")
    auto = gd(root, "run", "--auto", "-v")
    assert auto.returncode == 0 and "gate 'repository' is closed" in auto.stderr
    ok(gd(root, "status"))
    ok(gd(root, "check"))
    refused(gd(root, "revert", "last"), "no runs that made a commit yet")
    assert snapshot(root) == before
    assert git(root, "for-each-ref") == ""


# --- paths: non-ASCII, NFC and NFD, long --------------------------------------------------

CAFE_NFC = unicodedata.normalize("NFC", "café")
CAFE_NFD = unicodedata.normalize("NFD", "café")


def test_non_ascii_and_nfd_paths_round_trip_with_their_exact_bytes(tmp_path: Path) -> None:
    """Japanese, Cyrillic and emoji paths, and two agents whose names differ only by
    Unicode normalisation (NFC `café` and NFD `café`: two folders on Linux). Every path
    the dream writes keeps the exact bytes of the tree it read."""
    root = tmp_path / "repo"
    for name in ("エージェント", "агент", CAFE_NFC, CAFE_NFD):
        make_agent(root, f"agents/{name}", log="memory/logs/日本語/🚀/2026-03-01.md")
    folders = sorted(os.listdir(root / "agents"))
    assert len(folders) == 4

    doc = ok(gd(root, "run", "--json"))
    assert sorted(r["agent"] for r in doc["runs"]) == sorted(["エージェント", "агент", CAFE_NFC, CAFE_NFD])
    assert all(r["status"] == "ok" and r["commits"]["definition"] for r in doc["runs"])
    consistent(root)
    refs = {
        os.fsdecode(line.split(b"\t")[0]) for line in _raw(root, "for-each-ref", "--format=%(refname)%09")
    }
    for name in ("エージェント", "агент", CAFE_NFC, CAFE_NFD):
        assert f"refs/gitdream/watermark/{name}" in refs
    for receipt in doc["runs"]:
        prefix = f"agents/{receipt['agent']}/"
        (source,) = {u["sources"][0].split("#")[0] for u in receipt["units"]}
        assert source == f"{prefix}memory/logs/日本語/🚀/2026-03-01.md"
        for kind in ("experience", "definition"):
            out = git(
                root, "diff-tree", "-r", "-z", "--no-commit-id", "--name-only", receipt["commits"][kind]
            )
            written = [p for p in out.split("\0") if p]
            assert written and all(p.startswith(prefix) for p in written), written
    tree = ls_tree(root, "HEAD")
    for name in (CAFE_NFC, CAFE_NFD):
        assert f"agents/{name}/memory/deploy.md" in tree
        assert (root / f"agents/{name}/memory/MEMORY.md").read_bytes().count(b"gitdream:begin index") == 1
    assert sorted(os.listdir(root / "agents")) == folders
    ok(gd(root, "status"))
    ok(gd(root, "check"))
    ok(gd(root, "revert", "last"))
    consistent(root)


def _raw(root: Path, *args: str) -> list[bytes]:
    out = subprocess.run(["git", *args], cwd=root, capture_output=True, check=True).stdout
    return [line for line in out.split(b"\n") if line]


def test_long_names_and_paths_within_the_limits_work(tmp_path: Path) -> None:
    """An agent folder name of 250 bytes (the longest a ref lock file allows: 250 +
    ".lock" = 255) and a daily log at a path of about 3700 bytes (PATH_MAX is 4096 with the
    temporary folder in front)."""
    agent = "é" * 125  # 250 bytes of UTF-8
    deep = "/".join(["d" * 200] * 16)
    log = f"memory/logs/{deep}/2026-03-01-{'n' * 230}.md"
    root = make_agent(tmp_path / "repo", f"agents/{agent}", log=log)
    assert len(f"agents/{agent}/{log}".encode()) > 3700

    receipt = dream(root)
    assert receipt["status"] == "ok" and receipt["sessions"] == 1
    dream_commits(root)
    consistent(root)
    ok(gd(root, "status"))
    ok(gd(root, "revert", "last"))
    consistent(root)


def test_an_agent_folder_name_too_long_for_a_ref_lock_is_refused(tmp_path: Path) -> None:
    """Regression test: an agent folder name of 251+ bytes gave a watermark ref whose lock
    file name passes 255 bytes: the dream committed, then crashed moving the watermark
    (exit 3). Now the folder is refused up front, naming the limit: `run` skips it with a
    warning (as any folder that cannot name a ref), `check` refuses."""
    agent = "é" * 125 + "x"  # 251 bytes
    root = make_agent(tmp_path / "repo", f"agents/{agent}")
    before_head = head(root)
    before = snapshot(root)
    for args in (("run",), ("run", "--branch", "review")):
        proc = gd(root, *args)
        assert proc.returncode == 0, proc.stderr
        assert "gives an id of 251 bytes" in proc.stderr and "at most 250 bytes" in proc.stderr
    checked = gd(root, "check")  # a problem of the folder (exit 1), every other file still judged
    assert checked.returncode == 1 and "agent-id: " in checked.stdout
    assert "gives an id of 251 bytes" in checked.stdout and "at most 250 bytes" in checked.stdout
    ok(gd(root, "status"))
    unchanged(root, before_head, before)
    assert git(root, "for-each-ref") == git(root, "for-each-ref", "refs/heads/main")


# --- line endings ---------------------------------------------------------------------------

ATTRIBUTES = {"plain": None, "auto": "text=auto", "crlf": "eol=crlf", "binary": "-text"}


@pytest.mark.parametrize("autocrlf", ["true", "input", "false"])
def test_line_ending_settings_round_trip(tmp_path: Path, autocrlf: str) -> None:
    """`core.autocrlf` × `.gitattributes` (`text=auto`, `eol=crlf`, `-text`, none), one
    agent per attribute: the checkout is what git's own checkout writes, the blob is what
    `git add` stores (`git hash-object --path`), and `git status` is clean."""
    root = tmp_path / "repo"
    for name, attr in ATTRIBUTES.items():
        if attr:
            write(root, f"agents/{name}/.gitattributes", f"*.md {attr}\n")
        make_agent(root, f"agents/{name}")
    git(root, "config", "core.autocrlf", autocrlf)
    git(root, "rm", "-q", "-r", "--cached", ".")
    git(root, "reset", "-q", "--hard")
    consistent(root)

    doc = ok(gd(root, "run", "--json"))
    assert [r["status"] for r in doc["runs"]] == ["ok"] * len(ATTRIBUTES)
    consistent(root)
    for name in ATTRIBUTES:
        for path in git(root, "ls-files", f"agents/{name}/memory/*.md", f"agents/{name}/SKILL.md").split():
            stored = git(root, "rev-parse", f"HEAD:{path}").strip()
            assert git(root, "hash-object", f"--path={path}", path).strip() == stored, path
            checkout = subprocess.run(
                ["git", "cat-file", "--filters", f"--path={path}", stored], cwd=root, capture_output=True
            ).stdout
            assert (root / path).read_bytes() == checkout, path
    crlf_topic = root / "agents/crlf/memory/deploy.md"
    assert b"\r\n" in crlf_topic.read_bytes()
    assert b"\r\n" not in (root / "agents/binary/memory/deploy.md").read_bytes()
    ok(gd(root, "revert", "last"))
    consistent(root)


# --- commit.gpgsign -------------------------------------------------------------------------


def _ssh_signing(root: Path, tmp_path: Path) -> Path:
    key = tmp_path / "signing_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    git(root, "config", "gpg.format", "ssh")
    git(root, "config", "user.signingkey", str(key))
    git(root, "config", "commit.gpgsign", "true")
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"test@example.invalid {(tmp_path / 'signing_key.pub').read_text()}")
    git(root, "config", "gpg.ssh.allowedSignersFile", str(allowed))
    return key


def _verifies(root: Path, commit: str) -> bool:
    proc = subprocess.run(["git", "verify-commit", commit], cwd=root, capture_output=True, text=True)
    return proc.returncode == 0 and 'Good "git" signature' in proc.stderr


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is not installed")
def test_gpgsign_with_ssh_signs_both_dream_commits_but_not_the_receipt_note(tmp_path: Path) -> None:
    """Decision: receipts' notes commits are not signed — `git notes` never signs either,
    and the receipt is bookkeeping on gitdream's own ref, not history of the branch."""
    root = make_agent(tmp_path / "repo")
    _ssh_signing(root, tmp_path)
    receipt = dream(root)
    assert _verifies(root, receipt["commits"]["experience"])
    assert _verifies(root, receipt["commits"]["definition"])
    assert "gpgsig" not in git(root, "cat-file", "commit", "refs/notes/gitdream")
    consistent(root)
    ok(gd(root, "revert", "last"))
    assert _verifies(root, "HEAD")
    consistent(root)


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is not installed")
def test_gpgsign_with_a_missing_key_refuses_with_nothing_written(tmp_path: Path) -> None:
    root = make_agent(tmp_path / "repo")
    key = _ssh_signing(root, tmp_path)
    key.unlink()
    before_head = head(root)
    before = snapshot(root)
    refused(gd(root, "run"), "commit.gpgsign is true", "git config commit.gpgsign false")
    unchanged(root, before_head, before)
    assert git(root, "for-each-ref", "refs/gitdream", "refs/heads") == git(
        root, "for-each-ref", "refs/heads"
    )  # no watermark
    refused(gd(root, "run", "--branch", "review"), "commit.gpgsign is true")
    assert git(root, "branch", "--list", "review") == ""
    unchanged(root, before_head, before)


@pytest.fixture
def gnupg(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A throw-away GNUPGHOME with an ed25519 signing key (no passphrase); yields its
    fingerprint. A short path: gpg-agent's socket path has a length limit."""
    if shutil.which("gpg") is None or shutil.which("gpgconf") is None:
        pytest.skip("gpg is not installed")
    home = Path(tempfile.mkdtemp(prefix="gdgpg", dir="/tmp"))
    monkeypatch.setenv("GNUPGHOME", str(home))
    try:
        subprocess.run(
            [
                "gpg",
                "--batch",
                "--passphrase",
                "",
                "--quick-gen-key",
                "Test User <test@example.invalid>",
                "ed25519",
                "sign",
                "never",
            ],
            check=True,
            capture_output=True,
        )
        out = subprocess.run(
            ["gpg", "--list-keys", "--with-colons"], check=True, capture_output=True, text=True
        ).stdout
        yield next(line.split(":")[9] for line in out.splitlines() if line.startswith("fpr:"))
    finally:
        subprocess.run(["gpgconf", "--kill", "gpg-agent"], capture_output=True)
        shutil.rmtree(home, ignore_errors=True)


def test_gpgsign_with_openpgp_signs_and_a_missing_key_refuses(tmp_path: Path, gnupg: str) -> None:
    root = make_agent(tmp_path / "repo")
    git(root, "config", "commit.gpgsign", "true")
    git(root, "config", "user.signingkey", "0123456789ABCDEF0123456789ABCDEF01234567")
    before_head = head(root)
    before = snapshot(root)
    refused(gd(root, "run"), "commit.gpgsign is true", "git config commit.gpgsign false")
    unchanged(root, before_head, before)

    git(root, "config", "user.signingkey", gnupg)
    receipt = dream(root)
    for kind in ("experience", "definition"):
        verify = subprocess.run(
            ["git", "verify-commit", receipt["commits"][kind]], cwd=root, capture_output=True, text=True
        )
        assert verify.returncode == 0 and gnupg in verify.stderr, verify.stderr
    consistent(root)


# --- core.hooksPath and the post-merge hook --------------------------------------------------


@pytest.mark.parametrize("hooks_path", ["relative", "absolute"])
def test_hooks_path_install_and_a_real_merge_dreams(tmp_path: Path, hooks_path: str) -> None:
    """`gitdream hooks install` honours `core.hooksPath`; a real fast-forward `git merge`
    runs the installed post-merge hook, which runs the real `gitdream run --auto`."""
    root = make_agent(tmp_path / "repo")
    write(root, ".gitignore", ".githooks/\n")
    write(root, "gitdream.toml", "min_hours = 0\nmin_sessions = 1\n")
    commit_all(root, "ignore the hooks folder; dream after every merge")
    folder = ".githooks" if hooks_path == "relative" else str(root / ".githooks")
    git(root, "config", "core.hooksPath", folder)
    ok(gd(root, "run"))  # the first dream; the merge brings new material
    installed = ok(gd(root, "hooks", "install", "--python", sys.executable, "--json"))
    assert installed["hooks_dir"]["path"] == str(root / ".githooks")
    assert (root / ".githooks" / "post-merge").is_file()
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""

    git(root, "switch", "-q", "-c", "feature")
    write(root, f"{OPS}/memory/logs/2026/03/2026-03-02.md", MORE)
    commit_all(root, "a new log on feature")
    merged = head(root)
    git(root, "switch", "-q", "main")
    env = gitdream_env({"_GITDREAM_HOOK_FOREGROUND": "1"})
    subprocess.run(["git", "merge", "-q", "--ff-only", "feature"], cwd=root, env=env, check=True)
    log = Path(os.environ["GITDREAM_HOME"]) / "logs" / "hooks.log"
    assert f"\tpost-merge\t{os.path.realpath(root)}\tdreamed: ops ok (run " in log.read_text()
    assert git(root, "rev-parse", "refs/gitdream/watermark/ops").strip() == merged, log.read_text()
    assert git(root, "rev-parse", "HEAD~1").strip() == merged
    assert git(root, "log", "-1", "--format=%(trailers:key=Gitdream-Kind,valueonly)").strip() == "experience"
    consistent(root)


# --- a repository owned by another user (safe.directory) ------------------------------------


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another uid needs root")
def test_repository_owned_by_another_user_names_safe_directory(tmp_path: Path) -> None:
    """Regression test: libgit2 says "is not owned by current user", which the hint did not
    recognise, and the hint named the current folder instead of the repository's. Now every
    command refuses with `git config --global --add safe.directory <repository>`, from any
    sub-folder; with that exception added, the dream works."""
    root = make_agent(tmp_path / "repo")
    subprocess.run(["chown", "-R", "54321:54321", str(root)], check=True)
    assert (
        "dubious ownership"
        in subprocess.run(["git", "status"], cwd=root, capture_output=True, text=True).stderr
    )
    fix = f"git config --global --add safe.directory {root}`"
    refused(gd(root / OPS, "run", real=True), "not owned by current user", fix)
    for cwd in (root, root / OPS / "memory"):
        for args in (
            ("run",),
            ("run", "--auto"),
            ("status",),
            ("check",),
            ("hooks", "install"),
            ("revert", "last"),
        ):
            refused(gd(cwd, *args), "not owned by current user", fix)
    git(tmp_path, "config", "--global", "--add", "safe.directory", str(root))
    dream(root)
    dream_commits(root)
    consistent(root)


# --- lock files git left behind ---------------------------------------------------------------

LOCK_FILES = [
    "index.lock",
    "HEAD.lock",
    "refs/heads/main.lock",
    "refs/gitdream/watermark/ops.lock",
    "refs/notes/gitdream.lock",
]


@pytest.mark.parametrize("lock_file", LOCK_FILES)
def test_a_leftover_lock_file_refuses_with_nothing_written(tmp_path: Path, lock_file: str) -> None:
    """Regression test: a leftover `index.lock` made the dream wait 10 s, move the branch,
    write the working tree and then fail with the index not updated; a leftover `HEAD.lock`
    or ref lock was an internal error (exit 3), after the commits for the watermark's. Now
    the run refuses before writing anything, naming the lock file and how to remove it, and
    never removes it itself."""
    root = make_agent(tmp_path / "repo")
    lock = root / ".git" / lock_file
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")
    before_head = head(root)
    before = snapshot(root)

    start = time.monotonic()
    refused(gd(root, "run", real=True), f"{lock} exists", f"rm {lock}", "never removes")
    assert time.monotonic() - start < 8
    if lock_file == "index.lock":
        refused(gd(root, "run", "--auto", env={"GITDREAM_MIN_SESSIONS": "1"}), f"{lock} exists")
    unchanged(root, before_head, before)
    assert git(root, "for-each-ref", "refs/gitdream", "refs/notes") == ""
    assert lock.exists()

    lock.unlink()
    receipt = dream(root)
    dream_commits(root)
    consistent(root)
    if lock_file in ("index.lock", "refs/notes/gitdream.lock"):  # what a revert writes, first and last
        lock.write_text("")
        dreamed_head = head(root)
        dreamed = snapshot(root)
        refused(gd(root, "revert", receipt["run"]), f"{lock} exists")
        unchanged(root, dreamed_head, dreamed)
        assert lock.exists()


def test_lock_files_appearing_after_the_checks_are_refusals_too(tmp_path: Path) -> None:
    """Regression test: libgit2's "failed to lock file" (a GitError, or an OSError for the
    notes ref) escaped as an internal error, and the receipt writer retried it 20 times as
    if the notes ref had moved. Each writer now turns it into the lock file's refusal."""
    from gitdream import config
    from gitdream.agents import list_agents
    from gitdream.dream import receipts
    from gitdream.errors import RepoStateError
    from gitdream.git import commitbuilder, refs
    from gitdream.git.commitbuilder import Change, Destination
    from gitdream.git.repo import Repo

    root = make_agent(tmp_path / "repo")
    repo = Repo.open(root)
    (agent,) = list_agents(root, config.load(root, env={}))
    ident = commitbuilder.Identity(("gitdream", "gitdream@gitdream.invalid"), ("T", "t@example.invalid"))
    tip = head(root)
    for name, write_it in (
        (
            "refs/gitdream/watermark/ops",
            lambda: refs.compare_and_swap(repo, agent.watermark_ref, None, tip, "m"),
        ),
        ("refs/notes/gitdream", lambda: receipts.append(repo, tip, {"type": "receipt"}, ident)),
        (
            "refs/heads/review",
            lambda: commitbuilder._move_ref(repo, "refs/heads/review", None, tip, "m", lock_head=False),
        ),
    ):
        lock = root / ".git" / f"{name}.lock"
        lock.parent.mkdir(parents=True, exist_ok=True)
        lock.write_text("")
        with pytest.raises(RepoStateError, match="exists") as info:
            write_it()
        assert f"rm {lock}" in (info.value.hint or "")
        lock.unlink()
    # Review mode checks its branch's lock before writing the commit.
    lock = root / ".git" / "refs/heads/review.lock"
    lock.write_text("")
    with pytest.raises(RepoStateError, match=r"review\.lock exists"):
        commitbuilder.commit(
            repo,
            agent,
            "experience",
            [Change(f"{OPS}/memory/t.md", b"x\n")],
            "m\n",
            ident,
            Destination.review("review", tip, True),
        )
    assert git(root, "for-each-ref") == git(root, "for-each-ref", "refs/heads/main")


RECORDER = """#!/bin/sh
# Stands in for the hook's interpreter: records whether a merge was still in progress.
if [ -f .git/MERGE_HEAD ]; then echo merging; else echo done; fi >"$RECORD"
"""


def test_post_merge_dream_waits_until_git_has_finished_the_merge(tmp_path: Path) -> None:
    """Regression test: git runs post-merge of a merge commit before it removes MERGE_HEAD,
    so the detached dream could see "a merge is in progress" and not run (a race it mostly
    won). Started by hand with MERGE_HEAD held in place, the dream now waits for it."""
    root = make_agent(tmp_path / "repo")
    recorder = tmp_path / "bin" / "python"
    recorder.parent.mkdir()
    recorder.write_text(RECORDER)
    recorder.chmod(0o755)
    ok(gd(root, "hooks", "install", "--hook", "post-merge", "--python", str(recorder)))
    merge_head = root / ".git" / "MERGE_HEAD"
    merge_head.write_text(head(root) + "\n")
    record = tmp_path / "record"
    env = {**os.environ, "RECORD": str(record), "_GITDREAM_HOOK_FOREGROUND": "0"}
    proc = subprocess.run([str(root / ".git/hooks/post-merge"), "0"], cwd=root, env=env, capture_output=True)
    assert proc.returncode == 0
    time.sleep(0.6)
    assert not record.exists(), "the dream started while the merge was still in progress"
    merge_head.unlink()
    deadline = time.monotonic() + 30
    while not record.exists():
        assert time.monotonic() < deadline, "the dream never started"
        time.sleep(0.05)
    time.sleep(0.05)
    assert record.read_text() == "done\n"


def test_a_real_merge_commit_dreams_through_the_detached_hook(tmp_path: Path) -> None:
    """A real `git merge` that makes a merge commit, with the hook detached as in use: the
    dream runs once git has finished, on the merged branch."""
    root = make_agent(tmp_path / "repo")
    write(root, "gitdream.toml", "min_hours = 0\nmin_sessions = 1\n")
    commit_all(root, "dream after every merge")
    ok(gd(root, "run"))
    ok(gd(root, "hooks", "install", "--python", sys.executable))
    git(root, "switch", "-q", "-c", "feature")
    write(root, f"{OPS}/memory/logs/2026/03/2026-03-02.md", MORE)
    commit_all(root, "a new log on feature")
    git(root, "switch", "-q", "main")
    write(root, "notes.txt", "main moved on\n")
    commit_all(root, "main moves on")
    subprocess.run(
        ["git", "merge", "-q", "--no-ff", "--no-edit", "feature"], cwd=root, env=gitdream_env(), check=True
    )
    merge = head(root)
    deadline = time.monotonic() + 60
    while (
        git(root, "rev-parse", "-q", "--verify", "refs/gitdream/watermark/ops", check=False).strip() != merge
    ):
        assert time.monotonic() < deadline, (
            Path(os.environ["GITDREAM_HOME"]) / "logs" / "hooks.log"
        ).read_text()
        time.sleep(0.1)
    assert git(root, "rev-parse", "HEAD~1").strip() == merge
    while (root / ".git" / "gitdream" / "lock").exists():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    consistent(root)
