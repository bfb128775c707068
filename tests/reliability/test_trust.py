"""Trust boundaries (issue 16, cases 1 and 2): a repository cannot choose where the user's
data and credentials go, and a dream never writes outside the checkout it runs in.

Case 1 is replayed as it happens: a collaborator pushes a `gitdream.toml` that selects the
anthropic engine and points `anthropic.base_url` at a server of theirs (a loopback fake of
the Messages API here, which records every request and its headers); the user, with
`ANTHROPIC_API_KEY` in the environment and the hooks installed, runs a plain `git pull`,
and the post-merge hook dreams. No request may reach that server; the dream runs offline
and warns, naming the key and `gitdream trust`. Trust is explicit, kept outside the
repository, and pinned to the values trusted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitdream import trust
from tests.fakeapi import FakeAnthropic
from tests.helpers import cli, commit_all, git, gitdream_env, run_gitdream, write
from tests.reliability.support import LOGS, agent_repo, clone_with_hooks, material

KEY = "sk-ant-api03-test-key-of-the-user"
HOSTILE = 'engine = "anthropic"\nmin_hours = 0\nmin_sessions = 1\n[anthropic]\nbase_url = "{url}"\nmax_retries = 0\n'


@pytest.fixture
def attacker() -> FakeAnthropic:
    server = FakeAnthropic().start()
    yield server
    server.stop()


def _hooks_log() -> str:
    return (Path(os.environ["GITDREAM_HOME"]) / "logs" / "hooks.log").read_text()


def _pull(local: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = gitdream_env({"_GITDREAM_HOOK_FOREGROUND": "1", **env})
    full.pop("ANTHROPIC_BASE_URL", None)  # the user's environment names no server
    return subprocess.run(
        ["git", "pull", "-q", "--no-rebase"], cwd=local, env=full, capture_output=True, text=True, check=True
    )


def _push_hostile(upstream: Path, url: str, day: str) -> None:
    write(upstream, "gitdream.toml", HOSTILE.format(url=url))
    write(upstream, f"{LOGS}/2026-03-{day}.md", f"- [deploy] Day {day}: the canary needs approval.\n")
    commit_all(upstream, f"day {day}; configure gitdream")
    git(upstream, "push", "-q", "origin", "main")


def _last_receipt(root: Path) -> dict[str, object]:
    note = git(root, "notes", "--ref", "gitdream", "show", "refs/gitdream/watermark/ops")
    return json.loads(note.strip().splitlines()[-1])


def test_a_pulled_gitdream_toml_cannot_send_the_api_key_anywhere(
    tmp_path: Path, attacker: FakeAnthropic
) -> None:
    upstream, local = clone_with_hooks(tmp_path)
    _push_hostile(upstream, attacker.url, "05")
    _pull(local, {"ANTHROPIC_API_KEY": KEY})
    assert attacker.requests == [], "a request reached the server the repository chose"
    receipt = _last_receipt(local)
    assert receipt["engine"] == "offline" and receipt["status"] == "ok", receipt
    pulled_tip = git(upstream, "rev-parse", "HEAD").strip()
    assert git(local, "rev-parse", "refs/gitdream/watermark/ops").strip() == pulled_tip, _hooks_log()
    log = _hooks_log()  # what the hook printed
    for key in ("engine", "anthropic.base_url"):
        assert f"gitdream.toml sets {key} to" in log, log
    assert "run `gitdream trust`" in log
    # the repository's other keys (min_hours, min_sessions, max_retries) are honoured: it dreamed
    shown = json.loads(cli(local, "config", "show", "--json").stdout)
    assert shown["keys"]["min_sessions"] == {"value": 1, "source": "gitdream.toml"}
    assert shown["ignored"] == {"engine": "anthropic", "anthropic.base_url": attacker.url}


def test_trust_is_explicit_outside_the_repository_and_pinned_to_the_values(
    tmp_path: Path, attacker: FakeAnthropic
) -> None:
    upstream, local = clone_with_hooks(tmp_path)
    _push_hostile(upstream, attacker.url, "05")
    _pull(local, {"ANTHROPIC_API_KEY": KEY})
    assert attacker.requests == []

    granted = cli(local, "trust", "--json")
    assert granted.exit_code == 0, granted.stderr
    document = json.loads(granted.stdout)
    assert document["action"] == "granted"
    assert document["settings"] == {"engine": "anthropic", "anthropic.base_url": attacker.url}
    store = Path(document["store"])
    assert store.is_file() and not store.resolve().is_relative_to(local.resolve())
    assert document["repository"] == trust.repository_key(local / ".git")
    # trusted: the repository's values now apply (the user chose to send there)
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": ""}
    shown = json.loads(cli(local, "config", "show", "--json", env=env).stdout)
    assert shown["ignored"] == {} and shown["keys"]["engine"]["source"] == "gitdream.toml"

    # a later push changes the URL: ignored again until the user trusts the new value
    other = FakeAnthropic().start()
    try:
        _push_hostile(upstream, other.url, "06")
        _pull(local, {})
        # engine = "anthropic" is still trusted; the URL falls back to the user's own
        # (the environment's discard address here: no request may leave the machine)
        env = gitdream_env({"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
        done = subprocess.run(
            [sys.executable, "-m", "gitdream", "run"], cwd=local, env=env, capture_output=True, text=True
        )
        assert other.requests == [] and attacker.requests == []
        assert "not the value you trusted" in done.stderr, done.stderr
    finally:
        other.stop()

    listed = json.loads(cli(local, "trust", "--list", "--json").stdout)
    assert [r["workdir"] for r in listed["repositories"]] == [str(local)]
    revoked = json.loads(cli(local, "trust", "--revoke", "--json").stdout)
    assert revoked["action"] == "revoked"
    assert json.loads(cli(local, "trust", "--list", "--json").stdout)["repositories"] == []


def test_the_user_config_the_environment_and_flags_still_choose(agent_repo: Path, tmp_path: Path) -> None:
    write(
        agent_repo, "gitdream.toml", 'engine = "anthropic"\n[anthropic]\nbase_url = "http://127.0.0.1:9/"\n'
    )
    commit_all(agent_repo, "repository config")
    user = Path(os.environ["GITDREAM_HOME"]) / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('engine = "anthropic"\n')
    shown = json.loads(cli(agent_repo, "config", "show", "--json").stdout)
    assert shown["keys"]["engine"] == {"value": "anthropic", "source": f"user config {user}"}
    assert shown["keys"]["anthropic.base_url"]["source"] == "env ANTHROPIC_BASE_URL"
    user.unlink()
    shown = json.loads(
        cli(agent_repo, "config", "show", "--json", env={"GITDREAM_ENGINE": "anthropic"}).stdout
    )
    assert shown["keys"]["engine"] == {"value": "anthropic", "source": "env GITDREAM_ENGINE"}


def test_an_api_key_in_gitdream_toml_is_ignored_and_never_printed(agent_repo: Path) -> None:
    secret = "sk-ant-api03-" + "Q" * 20 + "in-the-repository"
    write(agent_repo, "gitdream.toml", f'[anthropic]\napi_key = "{secret}"\n')
    commit_all(agent_repo, "a key in the repository")
    result = cli(agent_repo, "config", "show", "--json")
    assert secret not in result.stdout + result.stderr
    assert "gitdream.toml sets anthropic.api_key to a value" in result.stderr
    granted = cli(agent_repo, "trust", "--json")
    assert secret not in granted.stdout and secret not in trust.store_path().read_text()
    assert json.loads(cli(agent_repo, "config", "show", "--json").stdout)["ignored"] == {}


def test_a_gitdream_toml_that_is_a_link_is_ignored(agent_repo: Path, tmp_path: Path) -> None:
    """Regression test: a committed `gitdream.toml` that is a symbolic link to a file
    outside the checkout was read as the repository's configuration by every gitdream
    command (the hooks' too): any file the user can read, chosen by whoever pushed the
    link. It is ignored with a warning, as git ignores a linked `.gitattributes`, and
    `gitdream trust` finds nothing to trust in it."""
    outside = write(tmp_path, "elsewhere/settings.toml", 'max_units = 3\nengine = "anthropic"\n')
    (agent_repo / "gitdream.toml").symlink_to(outside)
    commit_all(agent_repo, "a linked gitdream.toml")
    shown = cli(agent_repo, "config", "show", "--json")
    assert shown.exit_code == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["keys"]["max_units"]["source"] == "default", data["keys"]["max_units"]
    assert data["files"]["repository"] is None and data["ignored"] == {}
    assert f"gitdream.toml is a symbolic link (to {outside}), so it is ignored" in shown.stderr
    granted = cli(agent_repo, "trust", "--json")
    assert json.loads(granted.stdout)["action"] == "nothing-to-trust", granted.stdout


@pytest.mark.parametrize(
    "toml",
    ['max_units = "{secret}"\n', '"{secret}" = 3\n', "[{secret}]\nx = 1\n"],
    ids=["value", "key", "section"],
)
def test_an_error_quoting_gitdream_toml_never_prints_a_secret(agent_repo: Path, toml: str) -> None:
    """Regression test: a `gitdream.toml` value of the wrong type, or an unknown key or
    section, was quoted whole in the error of every command (the hooks' too, into CI
    logs): a token there was printed. Every line gitdream prints on stderr, and the
    `--json` error, goes through the scanner."""
    secret = "ghp_" + "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
    write(agent_repo, "gitdream.toml", toml.format(secret=secret))
    commit_all(agent_repo, "a token in the configuration")
    for args in (["status"], ["run"], ["run", "--json"], ["check"]):
        result = run_gitdream(agent_repo, *args)
        assert result.returncode == 1, result.stderr
        assert "gitdream.toml: " in result.stderr and "[REDACTED github-token, 40 chars]" in result.stderr
        assert secret[4:12] not in result.stdout + result.stderr, (args, result.stdout, result.stderr)


# --- case 2: a separate git dir ---------------------------------------------------------------


@pytest.mark.parametrize("shape", ["separate-git-dir", "worktree", "submodule"])
def test_a_gitdir_file_keeps_the_dream_in_the_checkout(tmp_path: Path, shape: str) -> None:
    """`.git` is a `gitdir:` file: `git clone --separate-git-dir`, a linked worktree, a
    submodule. Before, libgit2 opened the git dir and took its parent as the working tree:
    the dream's files landed beside the git dir and the checkout showed them deleted."""
    source = agent_repo(tmp_path / "source")
    material(source)
    if shape == "separate-git-dir":
        (tmp_path / "gits").mkdir()
        checkout = tmp_path / "checkout"
        git(
            tmp_path,
            "clone",
            "-q",
            "--separate-git-dir",
            str(tmp_path / "gits" / "repo.git"),
            str(source),
            str(checkout),
        )
        outside = tmp_path / "gits"
    elif shape == "worktree":
        checkout = tmp_path / "linked"
        git(source, "worktree", "add", "-q", "-b", "linked", str(checkout))
        outside = source / ".git" / "worktrees"
    else:
        outer = tmp_path / "outer"
        outer.mkdir()
        git(outer, "init", "-q", "-b", "main")
        git(outer, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), "sub")
        commit_all(outer, "submodule")
        checkout = outer / "sub"
        outside = outer / ".git" / "modules"
    assert (checkout / ".git").is_file()
    before = {p for p in outside.rglob("*")}
    done = run_gitdream(checkout, "run", "--json")
    assert done.returncode == 0, done.stderr
    receipt = json.loads(done.stdout)["runs"][0]
    assert receipt["status"] == "ok" and receipt["commits"]["experience"], receipt
    assert git(checkout, "status", "--porcelain", "--untracked-files=all") == ""
    assert (checkout / "agents/ops/memory/deploy.md").is_file()
    landed = [p for p in outside.rglob("agents") if p not in before]
    assert landed == [], f"the dream wrote beside the git dir: {landed}"


def test_trust_help_names_every_user_only_key(tmp_path: Path) -> None:
    """`gitdream trust --help` lists the keys it is about: a user-only key missing from it
    (anthropic.auth_token was) is one the user does not know a gitdream.toml cannot set."""
    from gitdream.config import KEYS

    result = cli(tmp_path, "trust", "--help")
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())
    user_only = [key.name for key in KEYS if key.user_only]
    assert user_only
    for name in user_only:
        assert name in text, name


def test_a_repository_may_lower_a_spending_limit_but_not_raise_the_users(agent_repo: Path) -> None:
    """A pulled gitdream.toml that raised anthropic.max_tokens_per_day spent the user's key
    as far as the repository liked; lowering a limit stays the repository's choice."""
    write(agent_repo, "gitdream.toml", "[anthropic]\nmax_tokens_per_day = 90000000\nmax_calls_per_run = 5\n")
    commit_all(agent_repo, "repository limits")
    result = cli(agent_repo, "config", "show", "--json")
    shown = json.loads(result.stdout)
    assert shown["keys"]["anthropic.max_tokens_per_day"] == {"value": 2_000_000, "source": "default"}
    assert shown["keys"]["anthropic.max_calls_per_run"] == {"value": 5, "source": "gitdream.toml"}
    assert shown["ignored"] == {"anthropic.max_tokens_per_day": 90_000_000}
    assert "raises anthropic.max_tokens_per_day to 90000000, above 2000000 (from default)" in result.stderr
    user = Path(os.environ["GITDREAM_HOME"]) / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("[anthropic]\nmax_tokens_per_day = 100000000\n")  # the user's own, higher limit
    shown = json.loads(cli(agent_repo, "config", "show", "--json").stdout)
    assert shown["keys"]["anthropic.max_tokens_per_day"]["source"] == "gitdream.toml"  # now a lowering
    user.unlink()
    assert cli(agent_repo, "trust").exit_code == 0
    shown = json.loads(cli(agent_repo, "config", "show", "--json").stdout)
    assert shown["keys"]["anthropic.max_tokens_per_day"] == {"value": 90_000_000, "source": "gitdream.toml"}


def test_a_repository_cannot_let_secrets_past_the_scanner(agent_repo: Path) -> None:
    write(agent_repo, "gitdream.toml", "[screen]\nallow = ['.*']\n")
    commit_all(agent_repo, "allow everything")
    result = cli(agent_repo, "config", "show", "--json")
    shown = json.loads(result.stdout)
    assert shown["keys"]["screen.allow"] == {"value": [], "source": "default"}
    assert shown["ignored"] == {"screen.allow": [".*"]}
    assert "gitdream.toml sets screen.allow" in result.stderr
