"""`gitdream revert`: exactly one dream undone, everything since kept, every safety rule.

The dreams here are built by `tests.dreamfake` through gitdream's own commit builder (no
engine needed); the end-to-end tests with `gitdream run` are in test_review_e2e.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gitdream import config
from gitdream.commands.revert import RevertConflict, revert
from gitdream.errors import LockHeld, RepoStateError, WriteRefused
from gitdream.git.repo import Repo
from gitdream.trigger import dreamlock
from tests.dreamfake import Planned, fake_dream
from tests.helpers import cli, commit_all, git, head, snapshot, write

LOG = "agents/ops/memory/logs/2026/03/2026-03-01.md"
LOG_TEXT = (
    "# 2026-03-01\n\n"
    "- Rollback failed: it needed the previous image tag. #deploys\n"
    "- The CI cache must be cleared after a runner upgrade. #ci\n"
    "- Always pin the node version. #skill\n"
)
PLANNED = Planned(
    topics={
        "deploys": [("Rollbacks need the previous image tag.", [f"{LOG}#L3-L3"])],
        "ci": [("Clear the CI cache after a runner upgrade.", [f"{LOG}#L4-L4"])],
    },
    learned={"SKILL.md": [("Pin the node version.", [f"{LOG}#L5-L5"])]},
)
MEMORY = (
    "agents/ops/memory/MEMORY.md",
    "agents/ops/memory/deploys.md",
    "agents/ops/memory/ci.md",
)
DEFINITION = "agents/ops/SKILL.md"


def tree_files(root: Path, rev: str, prefix: str = "agents") -> dict[str, str]:
    """`{path: blob id}` of every file under `prefix` at `rev`."""
    out = {}
    for line in git(root, "ls-tree", "-r", rev, "--", prefix).splitlines():
        meta, path = line.split("\t", 1)
        out[path] = meta.split()[2]
    return out


def notes(root: Path) -> str:
    return git(root, "for-each-ref", "refs/notes/gitdream", "--format=%(objectname)")


def refs(root: Path) -> str:
    return git(root, "for-each-ref", "--format=%(refname) %(objectname)")


def objects(root: Path) -> set[str]:
    found = set()
    for path in (root / ".git" / "objects").rglob("*"):
        if path.is_file():
            found.add(path.relative_to(root / ".git" / "objects").as_posix())
    return found


@pytest.fixture
def dreamed(agent_repo: Path) -> tuple[Path, dict[str, Any]]:
    """agent_repo + a second agent qa + one committed log, then one dream of ops that
    wrote two topics, the index and a `learned` block in SKILL.md."""
    write(agent_repo, LOG, LOG_TEXT)
    write(agent_repo, "agents/qa/agent.md", "# qa\n\nqa tests things.\n")
    write(agent_repo, "agents/qa/SKILL.md", "# qa — skills\n")
    write(agent_repo, "agents/qa/memory/MEMORY.md", "# qa — memory\n")
    write(
        agent_repo,
        "agents/qa/memory/logs/2026/03/2026-03-01.md",
        "# 2026-03-01\n\n- Flaky test found. #tests\n",
    )
    commit_all(agent_repo, "logs of the day")
    receipt = fake_dream(agent_repo, PLANNED)
    return agent_repo, receipt


def _run(root: Path) -> Any:
    repo = Repo.open(root)
    return repo, config.load(repo.workdir)


def test_plain_revert_undoes_both_commits_definition_first(dreamed: tuple[Path, dict[str, Any]]) -> None:
    root, receipt = dreamed
    before = tree_files(root, receipt["input_commit"])
    dream_head = head(root)
    result = cli(root, "revert", receipt["run"][:6], "--json")
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert [c["kind"] for c in document["commits"]] == ["definition", "experience"]
    assert document["reverts"] == receipt["run"] and document["agent"] == "ops"
    assert document["commits"][0]["reverts"] == receipt["commits"]["definition"]
    assert document["commits"][1]["paths"] == sorted(MEMORY)
    assert tree_files(root, "HEAD") == before
    assert git(root, "status", "--porcelain", "--untracked-files=all") == ""
    for path in MEMORY[1:]:
        assert not (root / path).exists()
    # Two commits, in order, with git's subject form and gitdream's trailers.
    log = git(root, "log", "--format=%H%x00%P%x00%B%x01", "-2").split("\x01")
    experience, definition = (entry.strip("\n").split("\x00") for entry in log[:2])
    assert definition[1] == dream_head and experience[1] == definition[0]
    assert definition[2].startswith('Revert "dream(ops): definitions — SKILL.md"')
    assert experience[2].startswith('Revert "dream(ops): experience — improved 2 memories"')
    new_run = document["run"]
    for entry, kind in ((definition, "definition"), (experience, "experience")):
        trailers = git(root, "interpret-trailers", "--parse", input=entry[2].encode())
        assert f"Gitdream-Reverts: {receipt['run']}" in trailers
        assert f"Gitdream-Run: {new_run}" in trailers
        assert f"Gitdream-Kind: {kind}" in trailers
        assert "Gitdream-Agent: ops" in trailers
    # The revert is a run of its own; the reverted run is annotated.
    listed = json.loads(cli(root, "log", "--json").stdout)["runs"]
    assert listed[0]["run"] == new_run and listed[0]["trigger"] == "revert"
    assert listed[0]["reverts"] == receipt["run"] and listed[0]["status"] == "ok"
    assert listed[1]["reverted_by"] == [{"run": new_run, "only": None}]
    note = git(root, "notes", "--ref", "gitdream", "show", receipt["input_commit"])
    assert f'"reverted_by":"{new_run}"' in note
    # The material stays consumed.
    assert git(root, "rev-parse", "refs/gitdream/watermark/ops").strip() == receipt["input_commit"]


def test_only_experience_keeps_the_definition_commit_byte_for_byte(
    dreamed: tuple[Path, dict[str, Any]],
) -> None:
    root, receipt = dreamed
    before = tree_files(root, receipt["input_commit"])
    after = tree_files(root, "HEAD")
    skill = (root / DEFINITION).read_bytes()
    result = cli(root, "revert", "last", "--only", "experience")
    assert result.exit_code == 0, result.stderr
    now = tree_files(root, "HEAD")
    assert now[DEFINITION] == after[DEFINITION] != before[DEFINITION]
    assert (root / DEFINITION).read_bytes() == skill
    assert {p: now.get(p) for p in MEMORY} == {p: before.get(p) for p in MEMORY}
    assert git(root, "log", "-1", "--format=%s") == 'Revert "dream(ops): experience — improved 2 memories"\n'
    listed = json.loads(cli(root, "log", "--json").stdout)["runs"]
    assert listed[1]["reverted_by"][0]["only"] == "experience"
    assert listed[0]["commits"]["definition"] is None


def test_only_definition_keeps_the_experience_commit_byte_for_byte(
    dreamed: tuple[Path, dict[str, Any]],
) -> None:
    root, receipt = dreamed
    before = tree_files(root, receipt["input_commit"])
    after = tree_files(root, "HEAD")
    memory = {p: (root / p).read_bytes() for p in MEMORY}
    result = cli(root, "revert", "last", "--only", "definition")
    assert result.exit_code == 0, result.stderr
    now = tree_files(root, "HEAD")
    assert now[DEFINITION] == before[DEFINITION]
    assert {p: now[p] for p in MEMORY} == {p: after[p] for p in MEMORY}
    assert {p: (root / p).read_bytes() for p in MEMORY} == memory
    assert git(root, "rev-list", "--count", f"{receipt['commits']['definition']}..HEAD").strip() == "1"


def test_later_unrelated_commits_are_kept(dreamed: tuple[Path, dict[str, Any]]) -> None:
    root, receipt = dreamed
    # A human edits other files, including one in the same memory folder …
    write(root, "README.md", "# test repository\n\nEdited by a person.\n")
    write(root, "agents/ops/memory/human.md", "---\nname: human\n---\n\nKeep, edited.\n")
    commit_all(root, "human edits")
    # … and another agent dreams.
    other = fake_dream(
        root,
        Planned(
            topics={
                "tests": [("A flaky test was found.", ["agents/qa/memory/logs/2026/03/2026-03-01.md#L3-L3"])]
            }
        ),
        agent_id="qa",
    )
    later = tree_files(root, "HEAD")
    result = cli(root, "revert", "last", "--agent", "ops")
    assert result.exit_code == 0, result.stderr
    now = tree_files(root, "HEAD")
    before = tree_files(root, receipt["input_commit"])
    for path in set(later) | set(now):
        if path in MEMORY or path == DEFINITION:
            assert now.get(path) == before.get(path), path
        else:
            assert now.get(path) == later.get(path), path
    assert (root / "README.md").read_text() == "# test repository\n\nEdited by a person.\n"
    assert "agents/qa/memory/tests.md" in now
    assert git(root, "rev-parse", "refs/gitdream/watermark/qa").strip() == other["input_commit"]


def test_conflict_with_a_later_dream_refuses_and_changes_nothing(
    dreamed: tuple[Path, dict[str, Any]],
) -> None:
    root, receipt = dreamed
    later = fake_dream(root, Planned(topics={"deploys": [("Deploys need a green build.", [f"{LOG}#L3-L3"])]}))
    state = snapshot(root)
    before_refs, before_notes = refs(root), notes(root)
    result = cli(root, "revert", receipt["run"], "--json")
    assert result.exit_code == 1
    error = json.loads(result.stdout)["error"]
    assert error["type"] == "revert_conflict"
    assert [c["path"] for c in error["conflicts"]] == ["agents/ops/memory/deploys.md"]
    assert error["conflicts"][0]["reason"] == "created by the run, and changed since"
    assert error["conflicts"][0]["later_commits"][0]["oid"] == later["commits"]["experience"]
    assert "agents/ops/memory/deploys.md: created by the run, and changed since" in result.stderr
    assert "nothing was changed" in result.stderr
    assert f"hint: revert the later run first (`gitdream revert {later['run']}`)" in result.stderr
    assert snapshot(root) == state
    assert refs(root) == before_refs and notes(root) == before_notes
    # Reverting the later dream first, then this one, works.
    assert cli(root, "revert", later["run"]).exit_code == 0
    assert cli(root, "revert", receipt["run"]).exit_code == 0
    assert tree_files(root, "HEAD") == tree_files(root, receipt["input_commit"])


def test_same_lines_changed_by_a_person_conflict(dreamed: tuple[Path, dict[str, Any]]) -> None:
    root, receipt = dreamed
    text = (root / DEFINITION).read_text()
    write(root, DEFINITION, text.replace("- Pin the node version.", "- Pin the node version (and npm)."))
    commit_all(root, "human refines the learned line")
    repo, cfg = _run(root)
    with pytest.raises(RevertConflict) as caught:
        revert(repo, cfg, receipt["run"])
    assert caught.value.paths == [DEFINITION]
    assert caught.value.conflicts[0]["reason"] == "the same lines were changed since the run"
    # Changes elsewhere in the same file merge cleanly, like git revert.
    git(root, "reset", "-q", "--hard", "HEAD~1")
    write(root, DEFINITION, "# ops — skills, edited\n" + text.split("\n", 1)[1])
    commit_all(root, "human edits the heading")
    assert cli(root, "revert", receipt["run"], "--only", "definition").exit_code == 0
    assert (root / DEFINITION).read_text() == "# ops — skills, edited\n\n- Read logs.\n"


@pytest.mark.parametrize("how", ["unstaged", "staged"])
def test_dirty_target_refuses_and_leaves_the_file_untouched(
    dreamed: tuple[Path, dict[str, Any]], how: str
) -> None:
    root, _receipt = dreamed
    path = root / "agents/ops/memory/ci.md"
    path.write_bytes(path.read_bytes() + b"\nmy own note\n")
    if how == "staged":
        git(root, "add", "agents/ops/memory/ci.md")
    state = snapshot(root)
    before_refs, before_notes = refs(root), notes(root)
    result = cli(root, "revert", "last")
    assert result.exit_code == 1
    assert "agents/ops/memory/ci.md" in result.stderr
    assert ("staged changes" if how == "staged" else "uncommitted changes") in result.stderr
    assert snapshot(root) == state
    assert refs(root) == before_refs and notes(root) == before_notes


def test_untracked_target_refuses(dreamed: tuple[Path, dict[str, Any]]) -> None:
    root, _receipt = dreamed
    undo = json.loads(cli(root, "revert", "last", "--only", "experience", "--json").stdout)
    # Reapplying the dream would create ci.md again, but a person has an untracked one.
    write(root, "agents/ops/memory/ci.md", "mine, not committed\n")
    state = snapshot(root)
    repo, cfg = _run(root)
    with pytest.raises(WriteRefused, match="untracked") as caught:
        revert(repo, cfg, undo["run"])
    assert caught.value.paths == ["agents/ops/memory/ci.md"]
    assert snapshot(root) == state


def test_user_changes_elsewhere_survive_byte_for_byte(dreamed: tuple[Path, dict[str, Any]]) -> None:
    root, _receipt = dreamed
    write(root, "README.md", "staged by the user\n")
    git(root, "add", "README.md")
    write(root, "README.md", "staged, then edited again\n")
    write(root, "agents/ops/memory/human.md", "unstaged edit\r\n")
    write(root, "agents/ops/memory/scratch.md", "untracked\n")
    write(root, "agents/ops/agent.md", "# ops\n\nunstaged edit of a definition the run did not touch\n")
    before = snapshot(root)
    result = cli(root, "revert", "last")
    assert result.exit_code == 0, result.stderr
    after = snapshot(root)
    ours = set(MEMORY) | {DEFINITION}
    keep = {p: b for p, b in before["files"].items() if p not in ours}
    assert {p: b for p, b in after["files"].items() if p not in ours} == keep
    index_before = [line for line in before["index"].splitlines() if line.split("\t")[1] not in ours]
    index_after = [line for line in after["index"].splitlines() if line.split("\t")[1] not in ours]
    assert index_after == index_before
    status = git(root, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert sorted(status) == sorted(
        [
            "MM README.md",
            " M agents/ops/agent.md",
            " M agents/ops/memory/human.md",
            "?? agents/ops/memory/scratch.md",
        ]
    )


def test_reverting_a_revert_reapplies_the_dream(dreamed: tuple[Path, dict[str, Any]]) -> None:
    root, receipt = dreamed
    dreamed_tree = tree_files(root, "HEAD")
    undo = json.loads(cli(root, "revert", "last", "--json").stdout)
    redo = json.loads(cli(root, "revert", undo["run"], "--json").stdout)
    assert redo["reverts"] == undo["run"]
    assert tree_files(root, "HEAD") == dreamed_tree
    assert git(root, "log", "-1", "--format=%s") == 'Reapply "dream(ops): experience — improved 2 memories"\n'
    runs = json.loads(cli(root, "log", "--json").stdout)["runs"]
    assert [r["run"] for r in runs[:3]] == [redo["run"], undo["run"], receipt["run"]]
    assert runs[1]["reverted_by"] == [{"run": redo["run"], "only": None}]
    # Reverting the original again now works once more.
    assert cli(root, "revert", receipt["run"]).exit_code == 0
    assert tree_files(root, "HEAD") == tree_files(root, receipt["input_commit"])


def test_dry_run_prints_the_patch_and_changes_nothing(dreamed: tuple[Path, dict[str, Any]]) -> None:
    root, _receipt = dreamed
    state = snapshot(root)
    before_refs, before_objects = refs(root), objects(root)
    state_dir = root / ".git" / "gitdream"
    before_state = sorted(p.name for p in state_dir.rglob("*")) if state_dir.exists() else []
    result = cli(root, "revert", "last", "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("diff --git a/agents/ops/SKILL.md b/agents/ops/SKILL.md\n")
    assert "-- Pin the node version.\n" in result.stdout
    assert "deleted file mode 100644\n" in result.stdout
    assert "+++ /dev/null\n" in result.stdout
    assert "nothing changed" in result.stderr
    assert snapshot(root) == state
    assert refs(root) == before_refs
    assert objects(root) == before_objects
    assert (sorted(p.name for p in state_dir.rglob("*")) if state_dir.exists() else []) == before_state
    # The patch is exactly what the revert then commits.
    applied = cli(root, "revert", "last", "--json")
    assert json.loads(applied.stdout)["patch"] == result.stdout


def test_branch_puts_the_revert_on_a_review_branch_only(dreamed: tuple[Path, dict[str, Any]]) -> None:
    root, receipt = dreamed
    write(root, "agents/ops/memory/ci.md", "dirty, but a review branch never touches the working tree\n")
    state = snapshot(root)
    main = head(root)
    result = cli(root, "revert", "last", "--branch", "undo/ops")
    assert result.exit_code == 0, result.stderr
    assert "on branch undo/ops" in result.stdout
    assert head(root) == main and snapshot(root) == state
    assert tree_files(root, "undo/ops") == tree_files(root, receipt["input_commit"])
    assert git(root, "rev-list", "--count", "main..undo/ops").strip() == "2"
    assert cli(root, "revert", "last~1", "--branch", "undo/ops").exit_code == 1  # exists already
    # Replaying material for a revert that is only proposed would duplicate memory.
    both = cli(root, "revert", "last~1", "--branch", "undo/two", "--replay")
    assert both.exit_code == 2 and "--replay cannot be combined with --branch" in both.stderr


def test_replay_moves_the_watermark_back(dreamed: tuple[Path, dict[str, Any]]) -> None:
    root, receipt = dreamed
    ref = "refs/gitdream/watermark/ops"
    assert receipt["watermark_before"] is None  # the first dream of ops
    result = cli(root, "revert", "last", "--replay")
    assert result.exit_code == 0, result.stderr
    assert "the next dream reads that material again" in result.stdout
    assert git(root, "rev-parse", "--verify", "-q", ref, check=False) == ""
    listed = json.loads(cli(root, "log", "--json").stdout)["runs"]
    shown = json.loads(cli(root, "show", listed[0]["run"], "--json").stdout)["receipt"]
    assert shown["replay"] is True
    assert shown["watermark_before"] == receipt["input_commit"] and shown["watermark_after"] is None


def _two_dreams(agent_repo: Path, second_topic: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Commit the log, dream it into `deploys`, add a day to the log and dream that into
    `second_topic`: the receipts of the two dreams."""
    write(agent_repo, LOG, LOG_TEXT)
    commit_all(agent_repo, "log")
    first = fake_dream(agent_repo, Planned(topics={"deploys": [("Tags.", [f"{LOG}#L3-L3"])]}))
    write(agent_repo, LOG, LOG_TEXT + "- Another day. #ci\n")
    commit_all(agent_repo, "more log")
    second = fake_dream(agent_repo, Planned(topics={second_topic: [("Another.", [f"{LOG}#L6-L6"])]}))
    return first, second


def test_replay_after_a_later_dream_that_consumed_material_is_refused(agent_repo: Path) -> None:
    # the second into an existing topic, far from the first dream's lines: no conflict
    first, second = _two_dreams(agent_repo, "human")
    ref = "refs/gitdream/watermark/ops"
    # `second` read material after `first`: replaying `first` would read it twice.
    before = snapshot(agent_repo)
    result = cli(agent_repo, "revert", first["run"], "--replay")
    assert result.exit_code == 1
    assert "a later dream consumed more material" in result.stderr
    assert "revert that later dream first" in result.stderr
    assert "gitdream run --agent ops --full" in result.stderr  # first had no watermark before it
    assert snapshot(agent_repo) == before
    assert git(agent_repo, "rev-parse", ref).strip() == second["input_commit"]
    # Without --replay the revert goes through and the watermark stays.
    assert cli(agent_repo, "revert", first["run"]).exit_code == 0
    assert git(agent_repo, "rev-parse", ref).strip() == second["input_commit"]


def test_replay_after_noop_dreams_moves_the_watermark_back(agent_repo: Path) -> None:
    first, second = _two_dreams(agent_repo, "ci")
    write(agent_repo, "README.md", "not material\n")
    commit_all(agent_repo, "human edit")
    noop = fake_dream(agent_repo, Planned(), status="noop")
    ref = "refs/gitdream/watermark/ops"
    assert git(agent_repo, "rev-parse", ref).strip() == noop["input_commit"]
    result = cli(agent_repo, "revert", second["run"], "--replay", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["watermark"] == {
        "ref": ref,
        "from": noop["input_commit"],
        "to": first["input_commit"],
    }
    assert git(agent_repo, "rev-parse", ref).strip() == first["input_commit"]


def test_replay_moves_back_to_the_previous_input(agent_repo: Path) -> None:
    first, second = _two_dreams(agent_repo, "ci")
    assert cli(agent_repo, "revert", second["run"], "--replay").exit_code == 0
    ref = "refs/gitdream/watermark/ops"
    assert git(agent_repo, "rev-parse", ref).strip() == first["input_commit"]


def test_replay_of_a_run_already_undone_moves_only_its_watermark(agent_repo: Path) -> None:
    first, second = _two_dreams(agent_repo, "ci")
    assert cli(agent_repo, "revert", second["run"]).exit_code == 0  # files undone, watermark stays
    before = snapshot(agent_repo)
    result = cli(agent_repo, "revert", second["run"], "--replay")
    assert result.exit_code == 0, result.stderr
    # It names the run asked for as undone, and this revert as a new run, not as the undoer.
    assert f"Run {second['run']} of agent ops was already undone: its files stay as they are" in result.stdout
    assert "(this revert is run " in result.stdout and "Watermark of ops moved back" in result.stdout
    assert snapshot(agent_repo) == before
    ref = "refs/gitdream/watermark/ops"
    assert git(agent_repo, "rev-parse", ref).strip() == first["input_commit"]


def test_lock_held_exits_75_and_changes_nothing(dreamed: tuple[Path, dict[str, Any]]) -> None:
    root, _receipt = dreamed
    repo = Repo.open(root)
    held = dreamlock.acquire(repo.common_dir, "0000000000ab", 60)
    try:
        state = snapshot(root)
        result = cli(root, "revert", "last")
        assert result.exit_code == 75
        assert "another dream" in result.stderr
        assert snapshot(root) == state
        with pytest.raises(LockHeld):
            revert(repo, config.load(repo.workdir), "last")
    finally:
        held.release()


def test_nothing_to_revert(dreamed: tuple[Path, dict[str, Any]]) -> None:
    root, _receipt = dreamed
    noop = fake_dream(root, Planned(), status="noop")
    result = cli(root, "revert", noop["run"])
    assert result.exit_code == 1
    assert f"run {noop['run']} (agent ops, status noop) made no commit" in result.stderr
    no_definition = fake_dream(
        root, Planned(topics={"deploys2": [("Other.", [f"{LOG}#L3-L3"])]}), status="ok"
    )
    result = cli(root, "revert", no_definition["run"], "--only", "definition")
    assert result.exit_code == 1 and "made no definition commit" in result.stderr
    # Undone already (by hand): nothing to do.
    git(root, "revert", "--no-edit", no_definition["commits"]["experience"])
    result = cli(root, "revert", no_definition["run"])
    assert result.exit_code == 1 and "already undone" in result.stderr


def test_disabled_refuses_except_dry_run(dreamed: tuple[Path, dict[str, Any]]) -> None:
    root, _receipt = dreamed
    state = snapshot(root)
    result = cli(root, "revert", "last", env={"GITDREAM_ENABLED": "false"})
    assert result.exit_code == 1 and "gitdream is disabled" in result.stderr
    assert cli(root, "revert", "last", "--dry-run", env={"GITDREAM_ENABLED": "false"}).exit_code == 0
    assert snapshot(root) == state
    assert not (root / ".git" / "gitdream" / "lock").exists()


def test_a_run_on_an_unmerged_review_branch_is_not_reverted_on_head(agent_repo: Path) -> None:
    write(agent_repo, LOG, LOG_TEXT)
    commit_all(agent_repo, "log")
    receipt = fake_dream(agent_repo, Planned(topics={"deploys": [("Tags.", [f"{LOG}#L3-L3"])]}))
    git(agent_repo, "branch", "-q", "review", "HEAD")
    git(agent_repo, "reset", "-q", "--hard", "HEAD~1")
    repo, cfg = _run(agent_repo)
    with pytest.raises(RepoStateError, match="is not in HEAD's history") as caught:
        revert(repo, cfg, receipt["run"])
    assert "merge the branch" in (caught.value.hint or "")


def test_a_rebased_run_is_found_by_its_trailers(dreamed: tuple[Path, dict[str, Any]]) -> None:
    root, receipt = dreamed
    # Rewrite history (new commit ids, same trailers): the receipt's ids are stale.
    git(root, "rebase", "-q", "--force-rebase", "--root", env={"GIT_COMMITTER_DATE": "2030-01-01T00:00:00Z"})
    assert head(root) != receipt["commits"]["definition"]
    result = cli(root, "revert", receipt["run"], "--json")
    assert result.exit_code == 0, result.stderr
    commits = json.loads(result.stdout)["commits"]
    assert commits[0]["reverts"] == git(root, "rev-parse", "HEAD~2").strip()
    assert "agents/ops/memory/deploys.md" not in tree_files(root, "HEAD")


def test_human_output(dreamed: tuple[Path, dict[str, Any]]) -> None:
    root, receipt = dreamed
    result = cli(root, "revert", "last")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"Reverted run {receipt['run']} of agent ops: definition ")
    assert lines[1].startswith("Revert run ") and "undo it with `gitdream revert " in lines[1]
    assert lines[2] == "The run's material stays consumed; `gitdream run --agent ops --full` reads it again"
    assert all(len(line) <= 100 for line in lines)


ROLE_AGENT = "# ops\n\nops keeps deploys healthy.\n\n## Role\n\nWatch the pipeline.\n"
BLOCK = "<!-- gitdream:begin learned -->\n- Pin the node version.\n<!-- gitdream:end learned -->\n"


def test_definition_check_refuses_only_new_problems(agent_repo: Path) -> None:
    from gitdream.commands.revert import definition_check

    write(agent_repo, "gitdream.toml", 'required_sections = ["default", "## Role"]\n')
    cfg = config.load(agent_repo)
    path = "agents/ops/agent.md"
    good = (ROLE_AGENT + "\n" + BLOCK).encode()
    bad = ROLE_AGENT.replace("## Role", BLOCK + "\n## Role").encode()  # a block inside the window
    problems = definition_check(cfg, path, good, bad)
    assert len(problems) == 1 and problems[0].startswith(f"{path}:") and "prefix-order" in problems[0]
    assert definition_check(cfg, path, bad, bad) == []  # already broken: the undo is not blocked
    assert definition_check(cfg, path, bad, good) == []
    assert definition_check(cfg, path, good, None) == []


def test_a_revert_that_would_break_agent_md_is_refused(agent_repo: Path) -> None:
    # A commit that moved a block out of the required window; reverting it would move the
    # block back in.
    write(agent_repo, "gitdream.toml", 'required_sections = ["default", "## Role"]\n')
    write(agent_repo, "agents/ops/agent.md", ROLE_AGENT.replace("## Role", BLOCK + "\n## Role"))
    commit_all(agent_repo, "a block in the wrong place")
    write(agent_repo, "agents/ops/agent.md", ROLE_AGENT + "\n" + BLOCK)
    git(agent_repo, "add", "-A")
    message = (
        "dream(ops): definitions — agent.md\n\n"
        "Gitdream-Run: 1m8nd70ws8m5\nGitdream-Kind: definition\nGitdream-Agent: ops\n"
    )
    git(agent_repo, "commit", "-q", "-m", message)
    # its receipt (gitdream reverts only commits a receipt names)
    receipt = {
        "type": "receipt",
        "run": "1m8nd70ws8m5",
        "agent": "ops",
        "agent_dir": "agents/ops",
        "status": "ok",
        "input_commit": git(agent_repo, "rev-parse", "HEAD~1").strip(),
        "commits": {"experience": None, "definition": git(agent_repo, "rev-parse", "HEAD").strip()},
    }
    git(agent_repo, "notes", "--ref", "gitdream", "add", "-m", json.dumps(receipt), "HEAD~1")
    state = snapshot(agent_repo)
    result = cli(agent_repo, "revert", "1m8nd70ws8m5")
    assert result.exit_code == 1
    assert "would break the definition checks" in result.stderr and "prefix-order" in result.stderr
    assert snapshot(agent_repo) == state
    listed = json.loads(cli(agent_repo, "log", "--json").stdout)["runs"]
    assert listed[0]["run"] == "1m8nd70ws8m5" and listed[0]["status"] == "ok"


def test_revert_last_skips_runs_that_changed_nothing(dreamed: tuple[Path, dict[str, Any]]) -> None:
    """Regression test: with many agents, `last` was nearly always some agent's no-op, and
    `gitdream revert last` refused with "made no commit"."""
    root, dream_receipt = dreamed
    write(root, "agents/zz/agent.md", "# zz\n\nzz has nothing to dream.\n")
    commit_all(root, "another agent, with nothing to dream")
    noop = json.loads(cli(root, "run", "--json", "--agent", "zz").stdout)["runs"]
    assert [r["status"] for r in noop] == ["noop"]
    result = cli(root, "revert", "last", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["reverts"] == dream_receipt["run"]


def test_last_means_the_newest_dream_in_heads_history(agent_repo: Path) -> None:
    """Regression test: a dream on another branch (a linked worktree's) was what `revert
    last` picked on main, which then refused; `last` now skips runs HEAD does not hold
    (and `--replay`, which hands back unmerged review runs, still sees them)."""
    write(agent_repo, LOG, LOG_TEXT)
    commit_all(agent_repo, "log")
    on_main = fake_dream(agent_repo, Planned(topics={"deploys": [("Tags.", [f"{LOG}#L3-L3"])]}))
    git(agent_repo, "switch", "-q", "-c", "side")
    on_side = fake_dream(agent_repo, Planned(topics={"builds": [("Cache.", [f"{LOG}#L4-L4"])]}))
    git(agent_repo, "switch", "-q", "main")
    result = cli(agent_repo, "revert", "last", "--dry-run", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["reverts"] == on_main["run"]
    # `log` and `show last` list the side dream first: the revert says which one it skipped.
    said = cli(agent_repo, "revert", "last", "--dry-run")
    assert f"the newest dream, run {on_side['run']}" in said.stderr + said.stdout
    assert "is not in HEAD's history" in said.stderr + said.stdout
    repo, cfg = _run(agent_repo)
    assert revert(repo, cfg, "last", replay=True, dry_run=True).reverted == on_side["run"]
