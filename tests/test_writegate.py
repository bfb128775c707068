"""The write gate: one test per rule, each failing without the rule (DESIGN §6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitdream import config
from gitdream.agents import list_agents
from gitdream.errors import WriteRefused
from gitdream.git import commitbuilder, writegate
from gitdream.git.repo import Repo
from tests.helpers import commit_all, git, snapshot, write

MEM = "agents/ops/memory"


def _setup(root: Path) -> tuple[Repo, object]:
    repo = Repo.open(root)
    agent = list_agents(root, config.load(root, env={}))[0]
    return repo, agent


def _verdict(root: Path, path: str, kind: str = "experience") -> writegate.Verdict:
    repo, agent = _setup(root)
    return writegate.check(repo, agent, [path], kind)[0]  # type: ignore[arg-type]


def test_clean_tracked_file_is_allowed(agent_repo: Path) -> None:
    verdict = _verdict(agent_repo, f"{MEM}/MEMORY.md")
    assert verdict.allowed and verdict.seen and verdict.seen.status == "clean"


def test_absent_file_is_allowed(agent_repo: Path) -> None:
    verdict = _verdict(agent_repo, f"{MEM}/new-topic.md")
    assert verdict.allowed and verdict.seen and verdict.seen.status == "absent"


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("", "empty"),
        ("/etc/passwd", "absolute"),
        ("agents/ops/memory/../../../x.md", "'..'"),
        ("agents/ops/./memory/x.md", "'.' component"),
        ("agents\\ops\\memory\\x.md", "backslash"),
        ("agents/ops/.git/hooks/post-merge", "inside .git"),
        (".git/hooks/post-merge", "inside .git"),
        ("agents/ops/memory/.GIT/config", "inside .git"),
        ("agents/other/memory/x.md", "outside the directory of agent ops"),
        ("README.md", "outside the directory of agent ops"),
        ("agents/ops/agent.md", "may write only memory files"),
        ("agents/ops/memory/logs/2026/03/2026-03-01.md", "a raw log or transcript"),
    ],
)
def test_path_rules(agent_repo: Path, path: str, reason: str) -> None:
    verdict = _verdict(agent_repo, path)
    assert not verdict.allowed
    assert reason in (verdict.reason or "")
    assert verdict.hint


def test_definition_kind_allows_only_definition_files(agent_repo: Path) -> None:
    assert _verdict(agent_repo, "agents/ops/SKILL.md", "definition").allowed
    refused = _verdict(agent_repo, f"{MEM}/MEMORY.md", "definition")
    assert not refused.allowed and "definition files" in (refused.reason or "")


def _refusal(root: Path, path: str) -> WriteRefused:
    repo, agent = _setup(root)
    before = snapshot(root)
    ident = commitbuilder.Identity(("gitdream", "g@x.invalid"), ("gitdream", "g@x.invalid"))
    with pytest.raises(WriteRefused) as info:
        commitbuilder.commit(
            repo,
            agent,
            "experience",
            [commitbuilder.Change(path, b"dream\n")],  # type: ignore[arg-type]
            "dream(ops): experience",
            ident,
        )
    assert snapshot(root) == before, "a refusal must leave files, index and status untouched"
    return info.value


def test_dirty_tracked_target_is_refused(agent_repo: Path) -> None:
    write(agent_repo, f"{MEM}/MEMORY.md", "my edit\n")
    exc = _refusal(agent_repo, f"{MEM}/MEMORY.md")
    assert "has uncommitted changes" in exc.message
    assert exc.hint and "commit or stash your change to agents/ops/memory/MEMORY.md" in exc.hint


def test_staged_target_is_refused(agent_repo: Path) -> None:
    write(agent_repo, f"{MEM}/MEMORY.md", "staged edit\n")
    git(agent_repo, "add", f"{MEM}/MEMORY.md")
    exc = _refusal(agent_repo, f"{MEM}/MEMORY.md")
    assert "has staged changes" in exc.message
    assert "git restore --staged" in (exc.hint or "")


def test_staged_new_target_is_refused(agent_repo: Path) -> None:
    write(agent_repo, f"{MEM}/new.md", "staged new\n")
    git(agent_repo, "add", f"{MEM}/new.md")
    assert "staged but not committed" in _refusal(agent_repo, f"{MEM}/new.md").message


def test_untracked_target_is_refused(agent_repo: Path) -> None:
    write(agent_repo, f"{MEM}/new.md", "mine\n")
    exc = _refusal(agent_repo, f"{MEM}/new.md")
    assert "is untracked" in exc.message
    assert (agent_repo / MEM / "new.md").read_text() == "mine\n"


def test_deleted_target_is_refused(agent_repo: Path) -> None:
    (agent_repo / MEM / "MEMORY.md").unlink()
    assert "deleted in the working tree" in _refusal(agent_repo, f"{MEM}/MEMORY.md").message


def test_ignored_target_is_refused(agent_repo: Path) -> None:
    write(agent_repo, ".gitignore", "*.tmp.md\n")
    commit_all(agent_repo, "ignore")
    exc = _refusal(agent_repo, f"{MEM}/x.tmp.md")
    assert "ignored by a .gitignore rule" in exc.message
    assert "git check-ignore -v" in (exc.hint or "")


def test_symlinked_folder_is_refused(agent_repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (agent_repo / MEM / "linked").symlink_to(outside)
    exc = _refusal(agent_repo, f"{MEM}/linked/topic.md")
    assert "is a symbolic link" in exc.message
    assert list(outside.iterdir()) == []


def test_committed_symlink_in_head_is_refused(agent_repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside2"
    outside.mkdir()
    (agent_repo / MEM / "topic.md").symlink_to(outside / "t.md")
    commit_all(agent_repo, "link")
    exc = _refusal(agent_repo, f"{MEM}/topic.md")
    assert "symbolic link" in exc.message
    assert not (outside / "t.md").exists()


def test_lfs_filtered_target_is_refused(agent_repo: Path) -> None:
    write(agent_repo, ".gitattributes", "*.md filter=lfs diff=lfs merge=lfs -text\n")
    commit_all(agent_repo, "lfs")
    exc = _refusal(agent_repo, f"{MEM}/topic.md")
    assert "filter=lfs" in exc.message


def test_working_tree_encoding_is_refused(agent_repo: Path) -> None:
    write(agent_repo, ".gitattributes", "agents/ops/memory/*.md working-tree-encoding=UTF-16\n")
    git(agent_repo, "add", ".gitattributes")
    git(agent_repo, "commit", "-q", "-m", "enc")
    assert "working-tree-encoding" in _refusal(agent_repo, f"{MEM}/topic.md").message


def test_all_refusals_are_listed_together(agent_repo: Path) -> None:
    write(agent_repo, f"{MEM}/MEMORY.md", "dirty\n")
    write(agent_repo, f"{MEM}/human.md", "dirty too\n")
    repo, agent = _setup(agent_repo)
    with pytest.raises(WriteRefused) as info:
        writegate.require(repo, agent, [f"{MEM}/MEMORY.md", f"{MEM}/human.md", f"{MEM}/ok.md"], "experience")  # type: ignore[arg-type]
    assert info.value.paths == [f"{MEM}/MEMORY.md", f"{MEM}/human.md"]


def test_crlf_checkout_of_lf_blob_is_clean(agent_repo: Path) -> None:
    git(agent_repo, "config", "core.autocrlf", "true")
    (agent_repo / MEM / "MEMORY.md").unlink()
    git(agent_repo, "checkout", "--", f"{MEM}/MEMORY.md")
    assert b"\r\n" in (agent_repo / MEM / "MEMORY.md").read_bytes()
    assert _verdict(agent_repo, f"{MEM}/MEMORY.md").allowed


def test_review_mode_ignores_the_working_tree(agent_repo: Path) -> None:
    write(agent_repo, f"{MEM}/MEMORY.md", "dirty\n")
    repo, agent = _setup(agent_repo)
    verdict = writegate.check(repo, agent, [f"{MEM}/MEMORY.md"], "experience", tree_only=True)[0]  # type: ignore[arg-type]
    assert verdict.allowed


@pytest.mark.parametrize("path", ["a", "a/b.md", "日本語/メモ.md", "Привет/мир.md", "emoji/🚀.md"])
def test_syntax_accepts_plain_paths(path: str) -> None:
    assert writegate.syntax_problem(path) is None
