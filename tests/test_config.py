"""Configuration: layers, precedence, validation, the rendered default file, `config show`."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from gitdream import config
from gitdream.errors import ConfigError
from tests.helpers import cli, write


def test_defaults_without_any_file(tmp_path: Path) -> None:
    cfg = config.load(tmp_path, env={})
    assert cfg.float("min_hours") == 24.0
    assert cfg.list("agents") == ["agents/*"]
    assert cfg.source("min_hours") == "default"


def test_precedence_flag_env_repo_user_default(tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text("min_hours = 1\nmin_sessions = 2\nscan_interval_minutes = 3\nmax_units = 4\n")
    write(tmp_path, "gitdream.toml", "min_hours = 10\nmin_sessions = 20\nscan_interval_minutes = 30\n")
    env = {"GITDREAM_MIN_HOURS": "100", "GITDREAM_MIN_SESSIONS": "200"}
    cfg = config.load(
        tmp_path, env=env, user_file=user, overrides={"min_hours": (1000.0, "flag --min-hours")}
    )
    assert (cfg.float("min_hours"), cfg.source("min_hours")) == (1000.0, "flag --min-hours")
    assert (cfg.int("min_sessions"), cfg.source("min_sessions")) == (200, "env GITDREAM_MIN_SESSIONS")
    assert (cfg.float("scan_interval_minutes"), cfg.source("scan_interval_minutes")) == (
        30.0,
        "gitdream.toml",
    )
    assert cfg.int("max_units") == 4 and cfg.source("max_units").startswith("user config ")
    assert cfg.source("archive_days") == "default"


def test_section_keys_and_env_aliases(tmp_path: Path) -> None:
    write(tmp_path, "gitdream.toml", '[anthropic]\nmodel = "m1"\n')
    cfg = config.load(tmp_path, env={"ANTHROPIC_API_KEY": "sk-test-123456789"})
    assert cfg.str("anthropic.model") == "m1"
    assert cfg.str("anthropic.api_key") == "sk-test-123456789"
    assert cfg.source("anthropic.api_key") == "env ANTHROPIC_API_KEY"
    cfg = config.load(tmp_path, env={"ANTHROPIC_API_KEY": "a", "GITDREAM_ANTHROPIC_API_KEY": "b"})
    assert cfg.str("anthropic.api_key") == "b"


@pytest.mark.parametrize(
    ("toml", "fragment"),
    [
        ('min_hours = "soon"', "key 'min_hours' has the value \"soon\", but it must be a number >= 0"),
        ("min_sessions = -1", "key 'min_sessions' has the value -1, but it must be an integer >= 0"),
        ("min_sessions = 1.5", "must be an integer"),
        ('enabled = "yes"', "key 'enabled' has the value \"yes\", but it must be true or false"),
        ('engine = "gpt"', "must be one of 'offline', 'anthropic'"),
        ('prefix_unit = "bytes"', "must be one of 'chars', 'utf16'"),
        ('agents = "agents/*"', "must be a list of relative paths or globs"),
        ("max_loss_fraction = 2", "must be a number from 0 to 1"),
        ('memory_dir = "../.."', "must be a relative path (no '..', not absolute)"),
        ('memory_dir = "/tmp"', "must be a relative path"),
        ('log_globs = ["../../**"]', "must be a list of relative paths or globs"),
        ('definition_files = ["/etc/passwd"]', "must be a list of relative paths or globs"),
    ],
)
def test_bad_value_names_file_key_value_and_allowed(tmp_path: Path, toml: str, fragment: str) -> None:
    write(tmp_path, "gitdream.toml", toml + "\n")
    with pytest.raises(ConfigError) as info:
        config.load(tmp_path, env={})
    assert info.value.message.startswith("gitdream.toml: ")
    assert fragment in info.value.message
    assert info.value.hint


def test_unknown_key_suggests_the_closest(tmp_path: Path) -> None:
    write(tmp_path, "gitdream.toml", "min_hour = 3\n")
    with pytest.raises(ConfigError) as info:
        config.load(tmp_path, env={})
    assert "unknown key 'min_hour'" in info.value.message
    assert info.value.hint == "did you mean 'min_hours'?"


def test_a_top_level_key_appended_below_a_table_says_where_to_move_it(tmp_path: Path) -> None:
    """Appending `min_hours = 5` to the gitdream.toml that init writes puts it in the last
    table ([screen]): the hint says so instead of guessing another key."""
    write(tmp_path, "gitdream.toml", "[screen]\nallow = []\nmin_hours = 5\n")
    with pytest.raises(ConfigError) as info:
        config.load(tmp_path, env={})
    assert "unknown key 'screen.min_hours'" in info.value.message
    assert "'min_hours' is a top-level key, but it was written below the [screen] header" in info.value.hint


def test_unknown_section_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "gitdream.toml", "[openai]\nmodel = 'x'\n")
    with pytest.raises(ConfigError, match="unknown key 'openai'"):
        config.load(tmp_path, env={})


def test_invalid_toml_reports_line(tmp_path: Path) -> None:
    write(tmp_path, "gitdream.toml", "min_hours = = 3\n")
    with pytest.raises(ConfigError, match=r"gitdream.toml is not valid TOML: .*line 1"):
        config.load(tmp_path, env={})


def test_bad_env_value_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        config.load(tmp_path, env={"GITDREAM_ENABLED": "maybe"})
    assert "environment variable GITDREAM_ENABLED" in info.value.message
    with pytest.raises(ConfigError, match="GITDREAM_MIN_HOURS: key 'min_hours' has the value 'x'"):
        config.load(tmp_path, env={"GITDREAM_MIN_HOURS": "x"})


@pytest.mark.parametrize(("raw", "value"), [("0", False), ("off", False), ("TRUE", True), ("yes", True)])
def test_env_booleans(tmp_path: Path, raw: str, value: bool) -> None:
    assert config.load(tmp_path, env={"GITDREAM_ENABLED": raw}).bool("enabled") is value


def test_env_lists_are_comma_separated(tmp_path: Path) -> None:
    cfg = config.load(tmp_path, env={"GITDREAM_AGENTS": "a/*, b/*"})
    assert cfg.list("agents") == ["a/*", "b/*"]


def test_env_lists_may_be_toml_arrays_and_are_validated_like_the_file(tmp_path: Path) -> None:
    """A value copied from gitdream.toml means the same in the environment, and an absolute
    glob is refused there exactly as in the file (it was once taken as one odd relative glob)."""
    cfg = config.load(tmp_path, env={"GITDREAM_LOG_GLOBS": '["notes/*.md", "logs/**/*.md"]'})
    assert cfg.list("log_globs") == ["notes/*.md", "logs/**/*.md"]
    with pytest.raises(ConfigError) as info:
        config.load(tmp_path, env={"GITDREAM_LOG_GLOBS": '["/etc/*.md"]'})
    assert "GITDREAM_LOG_GLOBS" in info.value.message and "not absolute" in info.value.message
    with pytest.raises(ConfigError) as info:
        config.load(tmp_path, env={"GITDREAM_LOG_GLOBS": '["a/*.md", '})
    assert "not a TOML array" in info.value.message


def test_relative_paths_are_read_in_their_normal_form(tmp_path: Path) -> None:
    """Empty and `.` components are dropped wherever a relative path or glob is given, so
    every check sees one spelling (issue 16: `./memory/logs` passed the raw-material
    check); `..` stays an error."""
    (tmp_path / "gitdream.toml").write_text(
        'memory_dir = "./memory//"\nlog_globs = ["./memory/./logs//**/*.md"]\nagents = ["./"]\n'
    )
    cfg = config.load(tmp_path, env={"GITDREAM_DEFINITION_FILES": "./agent.md,soul.md/"})
    assert cfg.str("memory_dir") == "memory"
    assert cfg.list("log_globs") == ["memory/logs/**/*.md"]
    assert cfg.list("agents") == ["."]
    assert cfg.list("definition_files") == ["agent.md", "soul.md"]
    for bad in ("memory/../../x", "./.."):
        (tmp_path / "gitdream.toml").write_text(f'memory_dir = "{bad}"\n')
        with pytest.raises(ConfigError, match=re.escape("no '..'")):
            config.load(tmp_path, env={})


def test_rendered_default_toml_sets_nothing_but_documents_every_key() -> None:
    """`gitdream init`'s file leaves every key to the user config and the defaults: each is
    documented and commented out, and uncommenting it gives its default."""
    text = config.render_default_toml()
    assert tomllib.loads(text) == {}
    uncommented = "\n".join(
        line[2:]
        if line.startswith("# ")
        and ("=" in line or line.startswith("# ["))
        and not line.startswith("# allowed")
        else line
        for line in text.splitlines()
    )
    flat = config._flatten(tomllib.loads(uncommented), "rendered")
    for key in config.KEYS:
        assert flat[key.name] == (key.default if not key.secret else ""), key.name
        assert key.help.split()[0] in text


def test_rendered_toml_sets_the_chosen_keys_only() -> None:
    text = config.render_default_toml({"agents": ["."], "anthropic.max_calls_per_run": 3})
    assert tomllib.loads(text) == {"agents": ["."], "anthropic": {"max_calls_per_run": 3}}
    with pytest.raises(ConfigError, match="unknown key"):
        config.render_default_toml({"agent": ["."]})


def test_config_show_reports_sources(git_repo: Path) -> None:
    write(git_repo, "gitdream.toml", "min_hours = 6\n")
    result = cli(git_repo, "config", "show", "--json", env={"GITDREAM_MIN_SESSIONS": "9"})
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["keys"]["min_hours"] == {"value": 6.0, "source": "gitdream.toml"}
    assert doc["keys"]["min_sessions"] == {"value": 9, "source": "env GITDREAM_MIN_SESSIONS"}
    assert doc["files"]["repository"] == str(git_repo / "gitdream.toml")
    human = cli(git_repo, "config", "show")
    assert human.exit_code == 0
    assert any(
        line.split()[:3] == ["min_hours", "6.0", "gitdream.toml"] for line in human.stdout.splitlines()
    )


def test_config_show_masks_secrets(git_repo: Path) -> None:
    result = cli(git_repo, "config", "show", "--json", env={"ANTHROPIC_API_KEY": "sk-ant-secret-value-1234"})
    doc = json.loads(result.stdout)
    assert "secret" not in json.dumps(doc)
    assert doc["keys"]["anthropic.api_key"]["value"] == "(set, ends in 1234)"


@pytest.mark.parametrize(
    ("toml", "value", "default"),
    [
        ("min_hours = -5", "-5", "24.0"),  # printed -5.0: the value after conversion
        ('enabled = "no"', '"no"', "true"),  # printed True
        ('agents = "agents/*"', '"agents/*"', '["agents/*"]'),  # printed ['agents/*']
        ("agents = [1]", "[1]", '["agents/*"]'),
    ],
)
def test_a_bad_value_and_its_default_are_quoted_as_toml(
    tmp_path: Path, toml: str, value: str, default: str
) -> None:
    # The fix goes into a TOML file: the value and the default read as TOML writes them.
    write(tmp_path, "gitdream.toml", toml + "\n")
    with pytest.raises(ConfigError) as info:
        config.load(tmp_path, env={})
    key = toml.split(" ", 1)[0]
    assert info.value.message.startswith(f"gitdream.toml: key '{key}' has the value {value}, but it must be ")
    assert info.value.hint == f"fix '{key}' in gitdream.toml (default: {default})"


def test_config_show_outside_a_repository(tmp_path: Path) -> None:
    result = cli(tmp_path, "config", "show", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["files"]["repository"] is None


def test_config_error_is_reported_without_traceback(git_repo: Path) -> None:
    write(git_repo, "gitdream.toml", "min_hours = -5\n")
    result = cli(git_repo, "config", "show", "--json")
    assert result.exit_code == 1
    assert result.stderr.startswith("error: gitdream.toml: key 'min_hours' has the value -5")
    assert "\nhint: " in result.stderr
    assert json.loads(result.stdout)["error"]["type"] == "config"
