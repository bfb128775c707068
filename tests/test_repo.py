"""The repository model: discovery, states, common dir, inherited hook variables, agents."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from gitdream import config
from gitdream.agents import list_agents, select
from gitdream.errors import ConfigError, RepoStateError
from gitdream.git.repo import Repo
from tests.helpers import cli, commit_all, git, head, init_repo, write


def test_discovers_from_a_subfolder(agent_repo: Path) -> None:
    repo = Repo.open(agent_repo / "agents" / "ops" / "memory")
    assert repo.workdir == agent_repo.resolve()
    assert repo.common_dir == (agent_repo / ".git").resolve()
    assert repo.head().branch == "refs/heads/main"


def test_linked_worktree_uses_the_common_dir(agent_repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "linked"
    git(agent_repo, "worktree", "add", "-q", "-b", "side", str(other))
    repo = Repo.open(other / "agents")
    assert repo.workdir == other.resolve()
    assert repo.common_dir == (agent_repo / ".git").resolve()
    assert repo.git_dir != repo.common_dir
    assert repo.head().short_branch == "side"


def test_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(RepoStateError) as info:
        Repo.open(tmp_path)
    assert "not a git repository" in info.value.message
    assert "git init" in (info.value.hint or "")


def test_bare_repository_is_refused(tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    with pytest.raises(RepoStateError, match="bare repository"):
        Repo.open(bare)
    result = cli(bare, "init")
    assert result.exit_code == 1
    assert "bare repository" in result.stderr


def test_repository_without_commits(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "empty")
    repo = Repo.open(root)
    problem = repo.state_problem()
    assert problem is not None and "no commits yet" in problem.message
    assert "gitdream init --commit" in (problem.hint or "")


def test_detached_head(agent_repo: Path) -> None:
    git(agent_repo, "checkout", "-q", "--detach")
    repo = Repo.open(agent_repo)
    assert repo.head().detached
    problem = repo.state_problem()
    assert problem is not None and "HEAD is detached" in problem.message


def _conflict(root: Path) -> None:
    write(root, "c.txt", "base\n")
    commit_all(root, "base")
    git(root, "checkout", "-q", "-b", "other")
    write(root, "c.txt", "other\n")
    commit_all(root, "other")
    git(root, "checkout", "-q", "main")
    write(root, "c.txt", "main\n")
    commit_all(root, "main")


@pytest.mark.parametrize(
    ("command", "state", "hint"),
    [
        (["merge", "other"], "merge", "git merge --abort"),
        (["rebase", "other"], "rebase", "git rebase --abort"),
        (["cherry-pick", "other"], "cherry-pick", "git cherry-pick --abort"),
        (["revert", "--no-edit", "HEAD"], "revert", "git revert --abort"),
    ],
)
def test_operation_in_progress(git_repo: Path, command: list[str], state: str, hint: str) -> None:
    _conflict(git_repo)
    if state == "revert":
        write(git_repo, "c.txt", "main2\n")
        commit_all(git_repo, "main2")
        git(git_repo, "revert", "--no-edit", "HEAD~1", check=False)
    else:
        git(git_repo, *command, check=False)
    repo = Repo.open(git_repo)
    assert repo.in_progress() == state
    problem = repo.state_problem()
    assert problem is not None
    assert f"a {state} is in progress" in problem.message
    assert hint in (problem.hint or "")


def test_bisect_in_progress(git_repo: Path) -> None:
    first = head(git_repo)
    write(git_repo, "x", "1")
    commit_all(git_repo, "x")
    git(git_repo, "bisect", "start", "HEAD", first)
    assert Repo.open(git_repo).in_progress() == "bisect"


def test_inherited_git_dir_and_work_tree_are_honoured(agent_repo: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"GIT_DIR": str(agent_repo / ".git"), "GIT_WORK_TREE": str(agent_repo)}
    repo = Repo.open(elsewhere, env=env)
    assert repo.workdir == agent_repo.resolve()
    # Relative GIT_DIR, as git exports it to hooks (cwd = worktree root).
    repo = Repo.open(agent_repo, env={"GIT_DIR": ".git"})
    assert repo.workdir == agent_repo.resolve()


def test_inherited_index_file_refuses_writes(agent_repo: Path) -> None:
    repo = Repo.open(agent_repo, env={"GIT_INDEX_FILE": ".git/index.lock"})
    with pytest.raises(RepoStateError, match="GIT_INDEX_FILE is set to"):
        repo.require_own_index()
    same = Repo.open(agent_repo, env={"GIT_INDEX_FILE": ".git/index"})
    same.require_own_index()  # its own index: fine


def test_cli_write_refused_inside_commit_hook_environment(agent_repo: Path) -> None:
    """`gitdream init --commit` run with a hook's GIT_INDEX_FILE must not write the index."""
    before = git(agent_repo, "ls-files", "-s")
    result = cli(
        agent_repo,
        "init",
        "--agent",
        "x",
        "--commit",
        "--json",
        env={"GIT_INDEX_FILE": str(agent_repo / ".git" / "index.lock")},
    )
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"]["type"] == "repo_state"
    assert git(agent_repo, "ls-files", "-s") == before


def test_list_agents_from_globs(agent_repo: Path) -> None:
    write(agent_repo, "agents/qa/agent.md", "# qa\n")
    write(agent_repo, "agents/not-a-dir.md", "x")
    (agent_repo / "agents" / "linked").symlink_to(agent_repo / "agents" / "qa")
    cfg = config.load(agent_repo, env={})
    agents = list_agents(agent_repo, cfg)
    assert [a.id for a in agents] == ["ops", "qa"]
    ops = agents[0]
    assert ops.memory_dir == "agents/ops/memory"
    assert ops.definition_files == ("agents/ops/agent.md", "agents/ops/soul.md", "agents/ops/SKILL.md")
    assert ops.is_memory_path("agents/ops/memory/topic.md")
    assert not ops.is_memory_path("agents/ops/memory/logs/2026/03/2026-03-01.md")
    assert ops.is_source("agents/ops/memory/logs/2026/03/2026-03-01.md")
    assert ops.is_source("agents/ops/sessions/a/b.jsonl")
    assert select(agents, ["qa"]) == [agents[1]]
    with pytest.raises(ConfigError, match="no agent with id 'nope'"):
        select(agents, ["nope"])


def test_single_agent_repository(git_repo: Path) -> None:
    write(git_repo, "gitdream.toml", 'agents = ["."]\n')
    agents = list_agents(git_repo, config.load(git_repo, env={}))
    assert [(a.id, a.dir, a.memory_dir) for a in agents] == [("default", "", "memory")]


def test_duplicate_agent_ids_are_an_error(git_repo: Path) -> None:
    write(git_repo, "agents/ops/agent.md", "")
    write(git_repo, "teams/ops/agent.md", "")
    write(git_repo, "gitdream.toml", 'agents = ["agents/*", "teams/*"]\n')
    with pytest.raises(ConfigError, match="two agents share the id 'ops'"):
        list_agents(git_repo, config.load(git_repo, env={}))


def test_agent_glob_leaving_the_repository_is_an_error(git_repo: Path) -> None:
    write(git_repo, "gitdream.toml", 'agents = ["../*"]\n')
    with pytest.raises(ConfigError, match="must be a list of relative paths or globs"):
        config.load(git_repo, env={})


def test_badly_named_agent_folder_is_skipped_not_fatal(git_repo: Path) -> None:
    """Regression test: one folder `agents/x~1` made `status` and `run` fail for every agent."""
    write(git_repo, "agents/ops/agent.md", "# ops\n")
    write(git_repo, "agents/x~1/agent.md", "# x\n")
    warnings: list[str] = []
    agents = list_agents(git_repo, config.load(git_repo, env={}), warnings)
    assert [a.id for a in agents] == ["ops"]
    assert warnings and "skipped agent folder agents/x~1" in warnings[0]
    result = cli(git_repo, "status")
    assert result.exit_code == 0 and "skipped agent folder agents/x~1" in result.stderr


def test_descends_from_is_proper_ancestry_and_remembered(git_repo: Path) -> None:
    first = git(git_repo, "rev-parse", "HEAD").strip()
    write(git_repo, "b.md", "b\n")
    second = commit_all(git_repo, "second")
    repo = Repo.open(git_repo)
    assert repo.descends_from(second, first) is True
    assert repo.descends_from(first, second) is False
    assert repo.descends_from(first, first) is False  # proper ancestry, as libgit2's
    assert repo._ancestry == {(second, first): True, (first, second): False, (first, first): False}
    assert repo.descends_from(second, first) is True  # from memory


def test_a_badly_named_agent_folder_stops_no_command_for_the_others(agent_repo: Path) -> None:
    """Regression test: with one folder `agents/we:ird`, `check`, `audit` and `revert` of every
    agent failed ("cannot name a git ref"); like `run` and `status` they skip it and warn."""
    write(
        agent_repo,
        "agents/ops/memory/logs/2026/03/2026-03-01.md",
        "- [deploy] Rollbacks need the previous tag.\n",
    )
    commit_all(agent_repo, "log")
    dreamt = cli(agent_repo, "run", "--engine", "offline")
    assert dreamt.exit_code == 0, dreamt.stderr
    write(agent_repo, "agents/we:ird/agent.md", "# weird\n")
    commit_all(agent_repo, "a badly named folder")
    for args in (("audit", "ops"), ("revert", "last", "--dry-run"), ("check", "--staged", "--changed")):
        result = cli(agent_repo, *args)
        assert result.exit_code == 0, (args, result.stdout, result.stderr)
        if args[0] != "revert":
            assert "skipped agent folder agents/we:ird" in result.stdout + result.stderr, args
    # check names the folder as a problem, and still judges every other agent's files
    for args in (("check",), ("check", "--staged")):
        result = cli(agent_repo, *args)
        assert result.exit_code == 1, (args, result.stdout, result.stderr)
        assert "agents/we:ird: agent-id: the agent directory 'agents/we:ird'" in result.stdout
        assert "1 problem in 1 of 7 files" in result.stdout
    audit = json.loads(cli(agent_repo, "audit", "ops", "--json").stdout)
    assert audit["summary"]["facts"] >= 1
    assert any("agents/we:ird" in w for w in audit["warnings"])


def test_git_dir_without_work_tree_makes_the_current_directory_the_working_tree(
    agent_repo: Path, tmp_path: Path
) -> None:
    """As git does (git(1), --git-dir): GIT_DIR alone means "you are at the top level of the
    working tree"; core.worktree, when set, wins."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"GIT_DIR": str(agent_repo / ".git")}
    shown = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"],
        cwd=elsewhere,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
    )
    assert Path(shown.stdout.strip()).resolve() == elsewhere.resolve()
    assert Repo.open(elsewhere, env=env).workdir == elsewhere.resolve()
    git(agent_repo, "config", "core.worktree", str(agent_repo))
    assert Repo.open(elsewhere, env=env).workdir == agent_repo.resolve()


def test_descends_from_shares_one_walk_past_the_first_questions(git_repo: Path) -> None:
    """Regression test (issue 16): `status` asked libgit2 once per agent whether HEAD
    descends from its watermark, each a walk of the history, so 10 000 agents dreamed at
    their own commits took 32 s; past the first questions one walk answers them all."""
    from gitdream.git.repo import ANCESTRY_QUERIES

    commits = [git(git_repo, "rev-parse", "HEAD").strip()]
    for n in range(ANCESTRY_QUERIES + 4):
        write(git_repo, f"f{n}.md", f"{n}\n")
        commits.append(commit_all(git_repo, f"c{n}"))
    git(git_repo, "checkout", "-q", "-b", "side", commits[2])
    write(git_repo, "side.md", "side\n")
    stray = commit_all(git_repo, "side")
    head = commits[-1]
    repo = Repo.open(git_repo)
    answers = [repo.descends_from(head, c) for c in reversed(commits)]
    assert answers == [False] + [True] * (len(commits) - 1)
    assert head in repo._walks  # the later questions walked
    assert repo.descends_from(head, stray) is False
    assert repo.descends_from(stray, commits[2]) is True and repo.descends_from(stray, head) is False
    fresh = Repo.open(git_repo)
    assert [fresh.descends_from(head, c) for c in commits] == [c != head for c in commits]
