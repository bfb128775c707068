"""The commit builder against real repositories: every rule has a test that fails without it."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from freezegun import freeze_time

from gitdream import config, faults
from gitdream.agents import Agent, list_agents
from gitdream.errors import HeadMoved, SigningError, WriteRefused
from gitdream.git import commitbuilder
from gitdream.git.commitbuilder import Change, Destination, publish
from gitdream.git.refs import RefMoved
from gitdream.git.repo import Repo
from tests.helpers import commit_all, git, head, snapshot, write

MEM = "agents/ops/memory"
IDENT = commitbuilder.Identity(
    ("gitdream", "gitdream@gitdream.invalid"), ("Test User", "test@example.invalid")
)
MESSAGE = commitbuilder.format_message(
    "dream(ops): experience — improved 2 memories",
    "- fact one\n- fact two",
    [("Gitdream-Run", "0abc"), ("Gitdream-Kind", "experience"), ("Gitdream-Agent", "ops")],
)


def _open(root: Path) -> tuple[Repo, Agent]:
    return Repo.open(root), list_agents(root, config.load(root, env={}))[0]


def _commit(root: Path, changes: list[Change], kind: str = "experience", dest: Destination | None = None):
    repo, agent = _open(root)
    return commitbuilder.commit(repo, agent, kind, changes, MESSAGE, IDENT, dest)


def _in_thread(func: Any) -> tuple[threading.Thread, dict[str, Any]]:
    box: dict[str, Any] = {}

    def runner() -> None:
        try:
            box["result"] = func()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=runner)
    thread.start()
    return thread, box


def _pause_at(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str) -> Path:
    folder = tmp_path / "faults"
    folder.mkdir(exist_ok=True)
    monkeypatch.setenv("GITDREAM_FAULT", f"{name}:pause")
    monkeypatch.setenv("GITDREAM_FAULT_DIR", str(folder))
    return folder


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + 30
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.01)


def test_commit_writes_tree_index_and_files(agent_repo: Path) -> None:
    before = head(agent_repo)
    result = _commit(
        agent_repo, [Change(f"{MEM}/MEMORY.md", b"# new index\n"), Change(f"{MEM}/deploy.md", b"facts\n")]
    )
    assert result.parent == before and head(agent_repo) == result.oid
    assert git(agent_repo, "show", "--name-only", "--format=", "HEAD").split() == [
        f"{MEM}/MEMORY.md",
        f"{MEM}/deploy.md",
    ]
    assert (agent_repo / MEM / "deploy.md").read_bytes() == b"facts\n"
    assert git(agent_repo, "status", "--porcelain", "--untracked-files=all") == ""
    assert "Gitdream-Kind: experience" in git(agent_repo, "log", "-1", "--format=%B")
    assert git(agent_repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>") == (
        "gitdream <gitdream@gitdream.invalid>|Test User <test@example.invalid>\n"
    )
    assert git(agent_repo, "fsck", "--strict", "--no-progress") == ""


def test_user_staged_and_unstaged_changes_survive(agent_repo: Path) -> None:
    write(agent_repo, "README.md", "staged by the user\n")
    git(agent_repo, "add", "README.md")
    write(agent_repo, "agents/ops/agent.md", "# ops\n\nunstaged edit\n")
    write(agent_repo, "notes.txt", "untracked\n")
    before = snapshot(agent_repo)
    _commit(agent_repo, [Change(f"{MEM}/c.md", b"C\n"), Change(f"{MEM}/d.md", b"D\n")])
    after = snapshot(agent_repo)
    assert after["status"] == before["status"], "git status shows exactly what it showed before"
    theirs = {k: v for k, v in after["files"].items() if not k.endswith(("/c.md", "/d.md"))}  # type: ignore[union-attr]
    assert theirs == before["files"]
    staged_readme = [line for line in str(after["index"]).splitlines() if line.endswith("\tREADME.md")]
    assert staged_readme == [
        line for line in str(before["index"]).splitlines() if line.endswith("\tREADME.md")
    ]
    assert git(agent_repo, "diff", "--cached", "--name-only") == "README.md\n"


def test_tree_levels_not_on_the_path_are_reused(agent_repo: Path) -> None:
    write(agent_repo, "other/deep/file.txt", "x\n")
    commit_all(agent_repo, "other")
    old_other = git(agent_repo, "rev-parse", "HEAD:other").strip()
    _commit(agent_repo, [Change(f"{MEM}/t.md", b"t\n")])
    assert git(agent_repo, "rev-parse", "HEAD:other").strip() == old_other


def test_delete_change(agent_repo: Path) -> None:
    _commit(agent_repo, [Change(f"{MEM}/human.md", None)])
    assert not (agent_repo / MEM / "human.md").exists()
    assert git(agent_repo, "status", "--porcelain") == ""
    assert f"{MEM}/human.md" not in git(agent_repo, "ls-files")


def test_non_ascii_paths_and_contents(agent_repo: Path) -> None:
    changes = [
        Change(f"{MEM}/日本語のメモ.md", "東京のデプロイは金曜日に行わない。\n".encode()),
        Change(f"{MEM}/заметки.md", "Откат требует тег образа.\n".encode()),
        Change(f"{MEM}/🚀.md", "ship it 🚀\n".encode()),
    ]
    _commit(agent_repo, changes)
    for change in changes:
        assert (agent_repo / change.path).read_bytes() == change.data
        assert git(agent_repo, "show", f"HEAD:{change.path}").encode() == change.data
    assert git(agent_repo, "status", "--porcelain") == ""


@freeze_time("2026-03-01T12:00:00Z")
def test_signatures_use_python_clock(agent_repo: Path) -> None:
    _commit(agent_repo, [Change(f"{MEM}/t.md", b"t\n")])
    stamp = int(datetime(2026, 3, 1, 12, tzinfo=UTC).timestamp())
    assert git(agent_repo, "log", "-1", "--format=%at %ct") == f"{stamp} {stamp}\n"


def test_head_moved_on_other_paths_lands_on_top(
    agent_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _pause_at(monkeypatch, tmp_path, "after-commit-object")
    thread, box = _in_thread(lambda: _commit(agent_repo, [Change(f"{MEM}/t.md", b"t\n")]))
    _wait_for(folder / "after-commit-object.reached")
    write(agent_repo, "README.md", "concurrent human commit\n")
    user = commit_all(agent_repo, "human")
    (folder / "after-commit-object.continue").write_text("")
    thread.join(30)
    result = box["result"]
    assert result.rebuilt and result.parent == user
    assert git(agent_repo, "log", "--format=%s", "-2").splitlines()[1] == "human"
    assert (agent_repo / "README.md").read_text() == "concurrent human commit\n"
    assert git(agent_repo, "status", "--porcelain") == ""


def test_head_moved_on_own_path_aborts_with_nothing_changed(
    agent_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _pause_at(monkeypatch, tmp_path, "after-commit-object")
    thread, box = _in_thread(lambda: _commit(agent_repo, [Change(f"{MEM}/MEMORY.md", b"dream\n")]))
    _wait_for(folder / "after-commit-object.reached")
    write(agent_repo, f"{MEM}/MEMORY.md", "human wins\n")
    user = commit_all(agent_repo, "human edit of MEMORY.md")
    before = snapshot(agent_repo)
    (folder / "after-commit-object.continue").write_text("")
    thread.join(30)
    assert isinstance(box.get("error"), WriteRefused)
    assert head(agent_repo) == user
    assert snapshot(agent_repo) == before
    assert not commitbuilder.journal_path(Repo.open(agent_repo)).exists()


def test_target_edited_before_the_ref_move_refuses(
    agent_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _pause_at(monkeypatch, tmp_path, "after-commit-object")
    before_head = head(agent_repo)
    thread, box = _in_thread(lambda: _commit(agent_repo, [Change(f"{MEM}/MEMORY.md", b"dream\n")]))
    _wait_for(folder / "after-commit-object.reached")
    write(agent_repo, f"{MEM}/MEMORY.md", "typed while the dream ran\n")
    (folder / "after-commit-object.continue").write_text("")
    thread.join(30)
    assert isinstance(box.get("error"), WriteRefused)
    assert head(agent_repo) == before_head
    assert (agent_repo / MEM / "MEMORY.md").read_text() == "typed while the dream ran\n"


def test_checkout_of_another_branch_during_the_run_aborts(
    agent_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git(agent_repo, "branch", "other")
    folder = _pause_at(monkeypatch, tmp_path, "after-commit-object")
    thread, box = _in_thread(lambda: _commit(agent_repo, [Change(f"{MEM}/t.md", b"t\n")]))
    _wait_for(folder / "after-commit-object.reached")
    git(agent_repo, "checkout", "-q", "other")
    (folder / "after-commit-object.continue").write_text("")
    thread.join(30)
    assert isinstance(box.get("error"), HeadMoved)
    assert git(agent_repo, "rev-parse", "main") == git(agent_repo, "rev-parse", "other")
    assert not (agent_repo / MEM / "t.md").exists()


def test_git_add_while_the_dream_holds_index_lock_fails_cleanly_and_loses_nothing(
    agent_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between the branch move and the index update the dream holds index.lock, as git's
    own commands do: a `git add` then fails (the user tries again), and neither side's
    work is lost."""
    folder = _pause_at(monkeypatch, tmp_path, "before-index-update")
    thread, box = _in_thread(lambda: _commit(agent_repo, [Change(f"{MEM}/t.md", b"t\n")]))
    _wait_for(folder / "before-index-update.reached")
    write(agent_repo, "README.md", "staged while the dream ran\n")
    refused = subprocess.run(["git", "add", "README.md"], cwd=agent_repo, capture_output=True, text=True)
    assert refused.returncode != 0 and "index.lock" in refused.stderr
    (folder / "before-index-update.continue").write_text("")
    thread.join(30)
    assert "error" not in box, box
    assert git(agent_repo, "status", "--porcelain") == " M README.md\n"
    git(agent_repo, "add", "README.md")
    assert git(agent_repo, "diff", "--cached", "--name-only") == "README.md\n"
    assert git(agent_repo, "cat-file", "-p", f"HEAD:{MEM}/t.md") == "t\n"


def test_crash_after_ref_move_is_repaired_on_next_start(
    agent_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(agent_repo, "README.md", "user staged\n")
    git(agent_repo, "add", "README.md")
    write(agent_repo, "agents/ops/soul.md", "user unstaged\n")
    monkeypatch.setenv("GITDREAM_FAULT", "after-ref-move:raise")
    with pytest.raises(faults.FaultInjected):
        _commit(agent_repo, [Change(f"{MEM}/MEMORY.md", b"dream index\n"), Change(f"{MEM}/t.md", b"t\n")])
    monkeypatch.delenv("GITDREAM_FAULT")
    # The branch moved but the working tree and index still hold the old state.
    assert (agent_repo / MEM / "MEMORY.md").read_bytes() != b"dream index\n"
    repo = Repo.open(agent_repo)
    assert commitbuilder.journal_path(repo).exists()
    warnings = commitbuilder.repair(repo)
    assert warnings and "finished updating" in warnings[0]
    assert (agent_repo / MEM / "MEMORY.md").read_bytes() == b"dream index\n"
    assert (agent_repo / MEM / "t.md").read_bytes() == b"t\n"
    status = git(agent_repo, "status", "--porcelain")
    assert sorted(status.splitlines()) == [" M agents/ops/soul.md", "M  README.md"]
    assert not commitbuilder.journal_path(repo).exists()
    assert commitbuilder.repair(repo) == []


def test_crash_mid_worktree_update_is_repaired(agent_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITDREAM_FAULT", "mid-worktree-update:raise")
    with pytest.raises(faults.FaultInjected):
        _commit(agent_repo, [Change(f"{MEM}/a.md", b"a\n"), Change(f"{MEM}/b.md", b"b\n")])
    monkeypatch.delenv("GITDREAM_FAULT")
    assert (agent_repo / MEM / "a.md").exists() and not (agent_repo / MEM / "b.md").exists()
    commitbuilder.repair(Repo.open(agent_repo))
    assert git(agent_repo, "status", "--porcelain", "--untracked-files=all") == ""


def test_repair_leaves_user_edits_made_after_the_crash(
    agent_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITDREAM_FAULT", "after-ref-move:raise")
    with pytest.raises(faults.FaultInjected):
        _commit(agent_repo, [Change(f"{MEM}/MEMORY.md", b"dream index\n")])
    monkeypatch.delenv("GITDREAM_FAULT")
    write(agent_repo, f"{MEM}/MEMORY.md", "the user typed this after the crash\n")
    warnings = commitbuilder.repair(Repo.open(agent_repo))
    assert any("your bytes were kept" in w for w in warnings)
    assert (agent_repo / MEM / "MEMORY.md").read_text() == "the user typed this after the crash\n"


def test_next_commit_repairs_first(agent_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITDREAM_FAULT", "after-ref-move:raise")
    with pytest.raises(faults.FaultInjected):
        _commit(agent_repo, [Change(f"{MEM}/a.md", b"a\n")])
    monkeypatch.delenv("GITDREAM_FAULT")
    result = _commit(agent_repo, [Change(f"{MEM}/b.md", b"b\n")])
    assert any("finished updating" in w for w in result.warnings)
    assert git(agent_repo, "status", "--porcelain", "--untracked-files=all") == ""


def test_autocrlf_and_eol_attributes_store_what_git_add_would(agent_repo: Path) -> None:
    git(agent_repo, "config", "core.autocrlf", "true")
    write(agent_repo, ".gitattributes", "agents/ops/memory/crlf/*.md text eol=crlf\n")
    commit_all(agent_repo, "attributes")
    _commit(
        agent_repo, [Change(f"{MEM}/crlf/t.md", b"line one\nline two\n"), Change(f"{MEM}/auto.md", b"a\nb\n")]
    )
    for rel in (f"{MEM}/crlf/t.md", f"{MEM}/auto.md"):
        on_disk = (agent_repo / rel).read_bytes()
        assert b"\r\n" in on_disk
        expected = git(agent_repo, "hash-object", f"--path={rel}", "--stdin", input=on_disk).strip()
        assert git(agent_repo, "rev-parse", f"HEAD:{rel}").strip() == expected
        assert b"\r" not in git(agent_repo, "cat-file", "blob", f"HEAD:{rel}").encode()
    assert git(agent_repo, "status", "--porcelain") == ""


def test_review_branch_touches_nothing_else(agent_repo: Path) -> None:
    write(agent_repo, "README.md", "staged\n")
    git(agent_repo, "add", "README.md")
    write(agent_repo, f"{MEM}/MEMORY.md", "dirty but irrelevant to a review branch\n")
    before = snapshot(agent_repo)
    main_before = head(agent_repo)
    start = main_before
    first = _commit(
        agent_repo,
        [Change(f"{MEM}/MEMORY.md", b"dream\n")],
        dest=Destination.review("dream/review", start, True),
    )
    second = _commit(
        agent_repo,
        [Change("agents/ops/SKILL.md", b"# skills\n")],
        "definition",
        Destination.review("dream/review", first.oid, True),
    )
    # The commits are only built: the branch appears when it is published.
    assert git(agent_repo, "rev-parse", "-q", "--verify", "dream/review", check=False) == ""
    publish(Repo.open(agent_repo), "dream/review", None, second.oid, "test")
    assert snapshot(agent_repo) == before
    assert head(agent_repo) == main_before
    assert git(agent_repo, "rev-parse", "dream/review").strip() == second.oid
    assert second.parent == first.oid and first.parent == start
    assert git(agent_repo, "show", "dream/review~1:agents/ops/memory/MEMORY.md") == "dream\n"
    with pytest.raises(WriteRefused, match="already exists"):
        _commit(
            agent_repo, [Change(f"{MEM}/x.md", b"x")], dest=Destination.review("dream/review", start, True)
        )
    with pytest.raises(WriteRefused, match="already exists"):
        publish(Repo.open(agent_repo), "dream/review", None, first.oid, "test")
    # Continuing the branch from its tip.
    third = _commit(
        agent_repo, [Change(f"{MEM}/x.md", b"x")], dest=Destination.review("dream/review", None, False)
    )
    assert third.parent == second.oid


def test_publish_moves_the_branch_and_the_watermark_together_or_neither(agent_repo: Path) -> None:
    start = head(agent_repo)
    built = _commit(
        agent_repo, [Change(f"{MEM}/MEMORY.md", b"dream\n")], dest=Destination.review("rv", start, True)
    )
    repo = Repo.open(agent_repo)
    watermark = "refs/gitdream/watermark/ops"
    git(agent_repo, "update-ref", watermark, start)
    with pytest.raises(RefMoved):  # the watermark is not where the caller expects it
        publish(repo, "rv", None, built.oid, "test", also=[(watermark, None, start)])
    assert git(agent_repo, "rev-parse", "-q", "--verify", "rv", check=False) == ""
    publish(repo, "rv", None, built.oid, "test", also=[(watermark, start, built.oid)])
    assert git(agent_repo, "rev-parse", "rv", watermark).split() == [built.oid, built.oid]


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


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is not installed")
def test_ssh_signed_commit_verifies(agent_repo: Path, tmp_path: Path) -> None:
    _ssh_signing(agent_repo, tmp_path)
    result = _commit(agent_repo, [Change(f"{MEM}/t.md", b"signed\n")])
    verify = subprocess.run(
        ["git", "verify-commit", result.oid], cwd=agent_repo, capture_output=True, text=True
    )
    assert verify.returncode == 0, verify.stderr
    assert 'Good "git" signature' in verify.stderr


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="ssh-keygen is not installed")
def test_signing_unavailable_refuses_without_commit(agent_repo: Path, tmp_path: Path) -> None:
    key = _ssh_signing(agent_repo, tmp_path)
    key.unlink()
    (tmp_path / "signing_key.pub").unlink()
    before = snapshot(agent_repo)
    before_head = head(agent_repo)
    with pytest.raises(SigningError) as info:
        _commit(agent_repo, [Change(f"{MEM}/t.md", b"x\n")])
    assert "commit.gpgsign is true" in info.value.message
    assert "git config commit.gpgsign false" in (info.value.hint or "")
    assert head(agent_repo) == before_head
    assert snapshot(agent_repo) == before


def test_signing_with_missing_program_refuses(agent_repo: Path) -> None:
    git(agent_repo, "config", "commit.gpgsign", "true")
    git(agent_repo, "config", "gpg.program", "/nonexistent/gpg")
    before_head = head(agent_repo)
    with pytest.raises(SigningError, match="was not found"):
        _commit(agent_repo, [Change(f"{MEM}/t.md", b"x\n")])
    assert head(agent_repo) == before_head


def test_unborn_branch_first_commit(tmp_path: Path) -> None:
    from tests.helpers import init_repo

    root = init_repo(tmp_path / "fresh")
    repo = Repo.open(root)
    result = commitbuilder.commit(repo, None, "new", [Change("a.txt", b"a\n")], "first\n", IDENT)
    assert result.parent is None
    assert git(root, "log", "--format=%s") == "first\n"
    assert git(root, "status", "--porcelain") == ""


def test_format_message_trailers_parse_with_git(agent_repo: Path) -> None:
    _commit(agent_repo, [Change(f"{MEM}/t.md", b"t\n")])
    trailers = git(agent_repo, "log", "-1", "--format=%(trailers:only,unfold)")
    assert trailers.splitlines()[:3] == [
        "Gitdream-Run: 0abc",
        "Gitdream-Kind: experience",
        "Gitdream-Agent: ops",
    ]


def test_repair_removes_temp_files_of_a_killed_atomic_write(
    agent_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITDREAM_FAULT", "after-ref-move:raise")
    with pytest.raises(faults.FaultInjected):
        _commit(agent_repo, [Change(f"{MEM}/MEMORY.md", b"dream index\n")])
    monkeypatch.delenv("GITDREAM_FAULT")
    leftover = agent_repo / MEM / ".MEMORY.md.gitdream-12345.tmp"
    leftover.write_bytes(b"half")
    commitbuilder.repair(Repo.open(agent_repo))
    assert not leftover.exists()
    assert (agent_repo / MEM / "MEMORY.md").read_bytes() == b"dream index\n"


def test_changes_computed_from_an_older_base_never_undo_later_commits(agent_repo: Path) -> None:
    # Destination.head(base): the content was computed at `base`; HEAD has moved since.
    base = head(agent_repo)
    write(agent_repo, f"{MEM}/MEMORY.md", "a human commit after the base\n")
    user = commit_all(agent_repo, "human edit of MEMORY.md")
    before = snapshot(agent_repo)
    with pytest.raises(HeadMoved, match=r"MEMORY\.md"):
        _commit(agent_repo, [Change(f"{MEM}/MEMORY.md", b"computed at base\n")], dest=Destination.head(base))
    assert head(agent_repo) == user and snapshot(agent_repo) == before
    # Paths the later commits did not touch: rebuilt on top of them.
    result = _commit(agent_repo, [Change(f"{MEM}/t.md", b"t\n")], dest=Destination.head(base))
    assert result.rebuilt and result.parent == user
    assert (agent_repo / MEM / "MEMORY.md").read_text() == "a human commit after the base\n"


# --- the re-check under index.lock reads the index again only when it changed ----------


@pytest.mark.parametrize(
    "change",
    [
        ["update-index", "--skip-worktree", f"{MEM}/MEMORY.md"],
        ["update-index", "--assume-unchanged", f"{MEM}/MEMORY.md"],
        ["rm", "-q", "--cached", f"{MEM}/MEMORY.md"],
    ],
    ids=["skip-worktree", "assume-unchanged", "rm-cached"],
)
def test_an_index_only_change_after_the_gate_refuses(
    agent_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: list[str]
) -> None:
    """The working tree and HEAD stay as the gate saw them; only the index changes (a bit
    set, an entry removed) between the gate and index.lock. The re-check must see it:
    the index is no longer the file the gate read (`indexmodel.identity`)."""
    folder = _pause_at(monkeypatch, tmp_path, "after-commit-object")
    before_head = head(agent_repo)
    thread, box = _in_thread(lambda: _commit(agent_repo, [Change(f"{MEM}/MEMORY.md", b"dream\n")]))
    _wait_for(folder / "after-commit-object.reached")
    git(agent_repo, *change)
    staged = git(agent_repo, "ls-files", "-s", "-v", "--", f"{MEM}/MEMORY.md")
    worktree_bytes = (agent_repo / MEM / "MEMORY.md").read_bytes()
    (folder / "after-commit-object.continue").write_text("")
    thread.join(30)
    assert isinstance(box.get("error"), WriteRefused), box
    assert head(agent_repo) == before_head
    assert git(agent_repo, "ls-files", "-s", "-v", "--", f"{MEM}/MEMORY.md") == staged
    assert (agent_repo / MEM / "MEMORY.md").read_bytes() == worktree_bytes


def test_index_identity_follows_every_write_of_the_index(agent_repo: Path) -> None:
    from gitdream.git import indexmodel

    repo = Repo.open(agent_repo)
    first = indexmodel.identity(repo)
    assert first is not None and first == indexmodel.identity(repo)
    git(agent_repo, "update-index", "--skip-worktree", f"{MEM}/MEMORY.md")  # a flag only
    second = indexmodel.identity(repo)
    assert second not in (None, first)
    git(agent_repo, "update-index", "--no-skip-worktree", f"{MEM}/MEMORY.md")  # same content again
    assert indexmodel.identity(repo) not in (None, first, second)
    # git >= 2.40 with index.skipHash writes zeros where the checksum goes: no identity,
    # the index is always read again
    index = agent_repo / ".git" / "index"
    index.write_bytes(index.read_bytes()[:-20] + bytes(20))
    assert indexmodel.identity(repo) is None
    (agent_repo / ".git" / "index").unlink()
    assert indexmodel.identity(repo) == ("absent",)
