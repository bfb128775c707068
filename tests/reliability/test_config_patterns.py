"""A configured pattern or file that cannot be read stops every command up front, with
exit 1 and what to fix (issue 16, trust boundaries).

`screen.deny` and `screen.allow` are compiled when the configuration is read — RE2 for a
repository's gitdream.toml, Python `re` for the user's own layers — so every command
(`run`, `status`, `check`, `config show`, `run --auto`, `trust`) reports a bad pattern as
it reports any other bad value, before a dream starts: no crash ("this is a bug", exit 3)
from an OverflowError or RecursionError of `re.compile`, no failed run recorded per agent
that counts toward the hook's back-off, one line in the hooks log. A configuration file
that is not UTF-8 is a configuration error naming the byte too. Real repositories, real
processes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gitdream.trigger import state
from tests.helpers import commit_all, git, gitdream_env, run_gitdream, write
from tests.reliability.support import LOGS, agent_repo, clone_with_hooks, material

COMMANDS = (["run"], ["status"], ["check"], ["config", "show"], ["run", "--auto"])

NESTED = "(?=x)" + "(" * 1200 + ")" * 1200
"""Look-ahead (so RE2 rejects it) in 1,200 nested groups: Python `re` raises RecursionError."""
OVERFLOW = "(?=x)a{99999999999}"
"""Look-ahead and a repeat count Python `re` raises OverflowError for."""


def _user_config(text: str | bytes) -> Path:
    path = Path(os.environ["GITDREAM_HOME"]) / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def _repo(tmp_path: Path, toml: str | bytes) -> Path:
    root = agent_repo(tmp_path / "repo")
    material(root)
    write(root, "gitdream.toml", toml)
    commit_all(root, "configure gitdream")
    return root


def _hooks_log() -> str:
    path = Path(os.environ["GITDREAM_HOME"]) / "logs" / "hooks.log"
    return path.read_text() if path.exists() else ""


def _assert_config_error(
    root: Path, args: list[str], *needles: str, env: dict[str, str] | None = None
) -> str:
    done = run_gitdream(root, *args, env=env)
    assert done.returncode == 1, (args, done.returncode, done.stderr)
    assert "unexpectedly" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    for needle in needles:
        assert needle in done.stderr, (args, needle, done.stderr)
    return done.stderr


def _toml_list(pattern: str) -> str:
    return "[screen]\ndeny = [" + "'" + pattern + "'" + "]\n"


# --- B1: every compile failure is the usual exit-1 error --------------------------------


@pytest.mark.parametrize("pattern", [OVERFLOW, NESTED], ids=["overflow", "recursion"])
@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_a_repository_pattern_python_cannot_compile_either_is_a_config_error(
    tmp_path: Path, pattern: str, args: list[str]
) -> None:
    root = _repo(tmp_path, "min_hours = 0\nmin_sessions = 1\n" + _toml_list(pattern))
    _assert_config_error(root, args, "gitdream.toml: key 'screen.deny' has the pattern", "RE2")
    assert git(root, "for-each-ref", "refs/gitdream").strip() == ""


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [("a{99999999999}", "repetition number is too large"), ("(" * 1200 + ")" * 1200, "nested too deeply")],
    ids=["overflow", "recursion"],
)
def test_a_user_pattern_python_cannot_compile_is_a_config_error(
    tmp_path: Path, pattern: str, reason: str
) -> None:
    root = _repo(tmp_path, "min_hours = 0\nmin_sessions = 1\n")
    user = _user_config(_toml_list(pattern))
    _assert_config_error(root, ["run"], f"user config {user}: key 'screen.deny'", reason, "Python `re`")
    user.unlink()
    env = {"GITDREAM_SCREEN_DENY": '["' + pattern + '"]'}
    _assert_config_error(
        root, ["status"], "environment variable GITDREAM_SCREEN_DENY: key 'screen.deny'", reason, env=env
    )


def test_a_pulled_pattern_python_cannot_compile_writes_one_decision_line(tmp_path: Path) -> None:
    upstream, local = clone_with_hooks(tmp_path)
    write(upstream, "gitdream.toml", "min_hours = 0\nmin_sessions = 1\n" + _toml_list(OVERFLOW))
    write(upstream, f"{LOGS}/2026-03-05.md", "- [deploy] Day 05: the canary needs approval.\n")
    commit_all(upstream, "configure gitdream")
    git(upstream, "push", "-q", "origin", "main")

    pulled = git(local, "pull", "-q", "--no-rebase", env=gitdream_env({"_GITDREAM_HOOK_FOREGROUND": "1"}))
    assert pulled is not None
    log = _hooks_log()
    # one decision line (docs/hooks.md: the run's own error follows it), and no crash
    decisions = [line for line in log.splitlines() if "\tpost-merge\t" in line]
    assert len(decisions) == 1, log
    assert "\terror: gitdream.toml: key 'screen.deny' has the pattern" in decisions[0], log
    assert "this is a bug" not in log and "unexpectedly" not in log, log
    crashes = Path(os.environ["GITDREAM_HOME"]) / "logs"
    assert not [p for p in crashes.iterdir() if p.name.startswith("crash")], list(crashes.iterdir())
    # no run was recorded: nothing counts toward the back-off
    assert git(local, "for-each-ref", "refs/gitdream", "refs/notes").strip() == ""


# --- B2: a configuration file that is not UTF-8 ----------------------------------------


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_a_repository_config_that_is_not_utf8_is_a_config_error(tmp_path: Path, args: list[str]) -> None:
    root = _repo(tmp_path, b'[screen]\ndeny = ["\xff\xfe"]\n')
    _assert_config_error(
        root,
        args,
        "gitdream.toml is not UTF-8: byte 0xff at offset 18 (line 2, column 10)",
        f"hint: save {root / 'gitdream.toml'} as UTF-8",
    )


def test_a_user_config_that_is_not_utf8_is_a_config_error(tmp_path: Path) -> None:
    root = _repo(tmp_path, "min_hours = 0\n")
    user = _user_config(b"min_hours = 1\n\xff = 1\n")
    for args in COMMANDS:
        _assert_config_error(
            root,
            args,
            f"user config {user} is not UTF-8: byte 0xff at offset 14 (line 2, column 1)",
            "as UTF-8",
        )


# --- B4: RE2's own reason, and a way out that works ------------------------------------


@pytest.mark.parametrize(
    ("pattern", "reason", "advice"),
    [
        (r"orders\Z", r"invalid escape sequence: \Z", r"RE2 writes the end of the text \z"),
        ("x{1001}", "invalid repetition size: {1001}", "RE2 repeats at most 1000 times"),
        ("(?x) order s", "invalid perl operator: (?x", "RE2 has no verbose mode"),
        ("a++", "bad repetition operator: ++", "no possessive repeats: write a+, not a++"),
        ("(?<=the )canary", "invalid perl operator: (?<", "RE2 has no look-behind"),
        ("(?!x)canary", "invalid perl operator: (?!", "RE2 has no look-ahead"),
        (r"(a)\1", r"invalid escape sequence: \1", "RE2 has no backreferences"),
        (r"\u0041", r"invalid escape sequence: \u", r"RE2 writes a code point \x{0041}"),
    ],
)
def test_an_re2_rejection_says_re2s_reason_and_what_to_write(
    tmp_path: Path, pattern: str, reason: str, advice: str
) -> None:
    root = _repo(tmp_path, _toml_list(pattern))
    err = _assert_config_error(root, ["status"], "which RE2 cannot match", reason, advice)
    assert "no backreferences and no look-around" not in err  # the old, fixed wording
    assert "remove 'screen.deny' from gitdream.toml (it outranks your user config)" in err
    assert "GITDREAM_SCREEN_DENY" in err


@pytest.mark.parametrize("pattern", ["(", "[z-a]", "a{2,1}"])
def test_a_pattern_invalid_anywhere_is_not_blamed_on_re2(tmp_path: Path, pattern: str) -> None:
    root = _repo(tmp_path, _toml_list(pattern))
    err = _assert_config_error(root, ["check"], "which is not a valid regular expression")
    assert "RE2 cannot match" not in err


def test_the_way_out_the_hint_gives_works(tmp_path: Path) -> None:
    root = _repo(tmp_path, "min_hours = 0\nmin_sessions = 1\n" + _toml_list("(?<=the )canary"))
    write(root, f"{LOGS}/2026-03-05.md", "- [deploy] Day 05: the canary needs approval.\n")
    commit_all(root, "day 05")
    # the user config alone does not help: gitdream.toml outranks it, as the hint says
    _user_config(_toml_list("(?<=the )canary"))
    _assert_config_error(root, ["run"], "which RE2 cannot match")
    # the environment does, with Python `re`'s look-behind
    done = run_gitdream(root, "run", env={"GITDREAM_SCREEN_DENY": '["(?<=the )canary"]'})
    assert done.returncode == 0, done.stderr
    topics = "".join(p.read_text() for p in (root / "agents/ops/memory").glob("*.md"))
    assert "canary needs approval" not in topics


def test_trust_checks_that_a_repository_allow_pattern_compiles(tmp_path: Path) -> None:
    root = _repo(tmp_path, "[screen]\nallow = ['(?<=@)ourco\\.com$']\n")
    err = _assert_config_error(root, ["trust"], "gitdream.toml: key 'screen.allow'", "RE2 has no look-behind")
    assert "Trusted" not in err


# --- B5: a bad repository pattern is found before anything runs -------------------------


def test_a_bad_repository_pattern_records_no_failed_run(tmp_path: Path) -> None:
    root = _repo(tmp_path, "min_hours = 0\nmin_sessions = 1\n[screen]\ndeny = ['(?<!x)password', '(a+)+$']\n")
    for args in COMMANDS:
        _assert_config_error(root, args, "key 'screen.deny' has the pattern '(?<!x)password'")
    # no receipt, no watermark, no failure counted toward back-off
    assert git(root, "for-each-ref", "refs/gitdream", "refs/notes").strip() == ""
    remembered = state.load(root / ".git").agents.get("ops")
    assert remembered is None or (remembered.failures == 0 and remembered.last_status is None), remembered
