"""Test isolation and core fixtures.

Every test runs against real git repositories in temporary folders, isolated from the
developer's machine, as pre-commit's and llm's test suites are: a temporary HOME and XDG dirs, `GITDREAM_HOME`, a
private global git config for both the git CLI (GIT_CONFIG_GLOBAL) and libgit2 (pygit2's
search path), no system config, an empty template dir, no inherited hook variables, no
Anthropic key and a discard address as the API base URL.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import GITCONFIG, commit_all, git, init_repo, write

ISOLATED_PREFIXES = ("GITDREAM_", "ANTHROPIC_", "_GITDREAM_")


def pytest_configure(config: pytest.Config) -> None:
    # freezegun's default ignore list has "gi" (PyGObject) and matches it as a *prefix* of
    # module names, so every call from "gitdream.*" would get the real time. Keep the
    # list, but name PyGObject precisely.
    import freezegun
    from freezegun.config import DEFAULT_IGNORE_LIST

    ignore = [name for name in DEFAULT_IGNORE_LIST if name != "gi"] + ["gi.repository"]
    freezegun.configure(default_ignore_list=ignore)


@pytest.fixture(autouse=True)
def isolate(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    import pygit2

    from gitdream.git.gitenv import LOCAL_ENV_VARS

    home = tmp_path_factory.mktemp("home")
    for key in list(os.environ):
        if key.startswith("GITDREAM_TEST_"):  # the tests' own knobs (a seed to replay, rounds)
            continue
        if key in LOCAL_ENV_VARS or key.startswith(ISOLATED_PREFIXES) or key.startswith("GIT_CONFIG_"):
            monkeypatch.delenv(key, raising=False)
    for key in (
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_DATE",
        "GIT_EDITOR",
        "GIT_TRACE",
    ):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        folder = home / name.lower()
        folder.mkdir()
        monkeypatch.setenv(name, str(folder))
    monkeypatch.setenv("GITDREAM_HOME", str(home / "gitdream-home"))
    gitconfig = home / ".gitconfig"
    gitconfig.write_text(GITCONFIG)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    template = home / "git-template"
    template.mkdir()
    monkeypatch.setenv("GIT_TEMPLATE_DIR", str(template))
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("GITDREAM_RAISE_ERRORS", "1")
    levels = (
        pygit2.enums.ConfigLevel.GLOBAL,
        pygit2.enums.ConfigLevel.XDG,
        pygit2.enums.ConfigLevel.SYSTEM,
    )
    saved = {level: pygit2.settings.search_path[level] for level in levels}
    empty = home / "empty"
    empty.mkdir()
    pygit2.settings.search_path[pygit2.enums.ConfigLevel.GLOBAL] = str(home)
    pygit2.settings.search_path[pygit2.enums.ConfigLevel.XDG] = str(empty)
    pygit2.settings.search_path[pygit2.enums.ConfigLevel.SYSTEM] = str(empty)
    yield home
    for level, value in saved.items():
        pygit2.settings.search_path[level] = value


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """A repository with one commit (a README), on branch main."""
    root = tmp_path / "repo"
    init_repo(root)
    write(root, "README.md", "# test repository\n")
    commit_all(root, "initial commit")
    return root


AGENT_MD = """# ops

ops keeps the deployment pipeline healthy and answers questions about it.

## Role

- Watch the pipeline, fix what breaks, and write down what it learned.

## Notes

Free text written by a human.
"""


@pytest.fixture
def agent_repo(git_repo: Path) -> Path:
    """`git_repo` plus agent `ops` (agents/ops) with definitions and memory, committed."""
    write(git_repo, "agents/ops/agent.md", AGENT_MD)
    write(git_repo, "agents/ops/soul.md", "# ops — persona\n\nCalm.\n")
    write(git_repo, "agents/ops/SKILL.md", "# ops — skills\n\n- Read logs.\n")
    write(git_repo, "agents/ops/memory/MEMORY.md", "# ops — memory index\n\n- [Human topic](human.md)\n")
    write(
        git_repo,
        "agents/ops/memory/human.md",
        "---\nname: human\ndescription: written by a person\ntype: note\n---\n\nKeep.\n",
    )
    commit_all(git_repo, "add agent ops")
    git(git_repo, "status", "--short")
    return git_repo


# --- anthropic_api: a loopback fake of the Messages API (tests/fakeapi.py) ---------------


@pytest.fixture
def anthropic_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """A FakeAnthropic server for this test, with ANTHROPIC_BASE_URL pointing at it and a
    fake ANTHROPIC_API_KEY set. Fails the test when a request found no scripted reply."""
    from tests.fakeapi import FakeAnthropic

    server = FakeAnthropic().start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
    try:
        yield server
    finally:
        server.stop()
    assert server.unscripted == 0, f"{server.unscripted} request(s) found no scripted reply"


@pytest.fixture
def model_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """`anthropic_api` answered by `tests.fakeapi.ModelLike` (`server.responder`): a fake
    that answers like a model from what each request holds, and fails on command."""
    from tests.fakeapi import FakeAnthropic, ModelLike

    server = FakeAnthropic(responder=ModelLike()).start()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
    try:
        yield server
    finally:
        server.stop()
