"""Layered, typed configuration.

Precedence (DESIGN §3), highest first:

    CLI flag > GITDREAM_* environment variable > gitdream.toml (repository root)
    > user config (platformdirs.user_config_dir("gitdream")/config.toml) > built-in default

Every key is declared once in `KEYS` with its type, default, allowed values and help text;
`gitdream init` renders the commented `gitdream.toml` from the same table, and
`gitdream config show` reports each effective value with the layer it came from. Keys in
TOML sections are dotted (`[anthropic] model` is `anthropic.model`); the environment
variable is `GITDREAM_` + the dotted name upper-cased with dots as underscores
(`GITDREAM_ANTHROPIC_MODEL`). A bad value raises ConfigError naming the file (or variable),
the key, the value and what is allowed.
"""

from __future__ import annotations

import builtins
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from gitdream import paths, patterns
from gitdream.errors import ConfigError

REPO_FILE = "gitdream.toml"
ENV_PREFIX = "GITDREAM_"


class Key(NamedTuple):  # not a frozen dataclass: 4x cheaper to build at import (idle path)
    """One configuration key: dotted name, type, default and validation rules.

    `type` is one of "bool", "int", "float", "str", "list" (of strings) or "enum" (one of
    `choices`). `minimum`/`maximum` bound numbers (inclusive). `secret` values are masked
    by `config show`. `env_aliases` are extra environment variables read after the
    `GITDREAM_*` one (e.g. ANTHROPIC_API_KEY). `user_only` keys choose where data or
    credentials go or what runs: a repository's gitdream.toml may not set them unless the
    user trusts it (`gitdream.trust`); the user config, the environment and flags may.
    `ceiling` keys are limits on what a run may spend: gitdream.toml may lower them, but a
    value above the user config's (or the default) is ignored unless the user trusts it.
    `patterns` lists hold regular expressions, compiled when the configuration is read
    (`compile_pattern`: RE2 from gitdream.toml, Python `re` from the user's layers), so a
    pattern that does not compile stops every command up front, as any other bad value.
    """

    name: str
    type: str
    default: Any
    help: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    secret: bool = False
    env_aliases: tuple[str, ...] = ()
    relative: bool = False
    user_only: bool = False
    ceiling: bool = False
    patterns: bool = False

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.name.upper().replace(".", "_").replace("-", "_")

    def allowed(self) -> str:
        """Human description of the allowed values, used in error messages."""
        if self.type == "enum":
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.type == "bool":
            return "true or false"
        if self.type == "list":
            return (
                "a list of relative paths or globs (no '..', not absolute)"
                if self.relative
                else "a list of strings"
            )
        if self.type == "str":
            return "a relative path (no '..', not absolute)" if self.relative else "a string"
        kind = "an integer" if self.type == "int" else "a number"
        if self.minimum is not None and self.maximum is not None:
            return f"{kind} from {_num(self.minimum)} to {_num(self.maximum)}"
        if self.minimum is not None:
            return f"{kind} >= {_num(self.minimum)}"
        return kind


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


KEYS: tuple[Key, ...] = (
    # --- what and where -------------------------------------------------------------
    Key(
        "enabled",
        "bool",
        True,
        "Master switch. false: gitdream dreams and writes nothing — `run` says it is disabled "
        "and exits 0, `revert` is refused, the hooks do nothing, no stamp, lock, state or log "
        "file is created; reading commands (`log`, `show`, `audit`, `check`, `status`, "
        "`config show`) and `hooks install`/`uninstall` still work.",
    ),
    Key(
        "agents",
        "list",
        ["agents/*"],
        'Globs (relative to the repository root) of agent directories; ["."] for a '
        'single-agent repository. An agent\'s id is its directory name ("default" for ".").',
        relative=True,
    ),
    Key(
        "memory_dir",
        "str",
        "memory",
        "An agent's memory directory, relative to the agent directory (MEMORY.md, topics).",
        relative=True,
    ),
    Key(
        "definition_files",
        "list",
        ["agent.md", "soul.md", "SKILL.md"],
        "Definition files, relative to the agent directory; only their managed blocks are ever written.",
        relative=True,
    ),
    Key(
        "log_globs",
        "list",
        ["memory/logs/**/*.md"],
        "Raw Markdown daily logs, globs relative to the agent directory.",
        relative=True,
    ),
    Key(
        "session_globs",
        "list",
        ["sessions/**/*.jsonl"],
        "Raw session transcripts (Claude Code JSONL or {role,text,ts} JSONL), globs relative "
        "to the agent directory.",
        relative=True,
    ),
    Key(
        "max_file_bytes",
        "int",
        10_000_000,
        "Raw files larger than this many bytes are skipped with a warning.",
        minimum=1,
    ),
    # --- when (gates) -------------------------------------------------------------------
    Key(
        "min_hours",
        "float",
        24.0,
        "Auto mode: hours since the last dream (the last run that consolidated material) before "
        "the next may start (stretched by failure back-off).",
        minimum=0,
    ),
    Key(
        "scan_interval_minutes",
        "float",
        10.0,
        "Auto mode: minutes during which the last count of new sessions is reused instead of "
        "counting again, as long as nothing was committed since.",
        minimum=0,
    ),
    Key(
        "min_sessions",
        "int",
        5,
        "Auto mode: source files added or changed since the watermark before a dream starts.",
        minimum=0,
    ),
    Key(
        "max_run_minutes",
        "float",
        120.0,
        "A run that has taken longer than this many minutes stops before its next phase, as failed.",
        minimum=1,
    ),
    Key(
        "lock_ttl_minutes",
        "float",
        240.0,
        "A dream that has held the lock longer than this many minutes is reported by "
        "`gitdream status` as probably hung (the lock is never broken while its process "
        "holds it: the kernel releases it when the process ends); keep it above max_run_minutes.",
        minimum=1,
    ),
    # --- what a dream may do --------------------------------------------------------------
    Key(
        "engine",
        "enum",
        "offline",
        "Engine that turns raw material into units: offline (deterministic, no network) or "
        "anthropic (model distillation and screening). User-only: it decides where the "
        "material is sent, so gitdream.toml may set it only after `gitdream trust`.",
        choices=("offline", "anthropic"),
        user_only=True,
    ),
    Key(
        "max_units",
        "int",
        30,
        "At most this many units (facts created or corroborated) per agent per run; what is "
        "over the cap stays pending for the next run, highest salience first.",
        minimum=1,
    ),
    Key(
        "max_new_topics",
        "int",
        5,
        "At most this many new topic files per agent per run; entries whose subject needs "
        "another one stay pending for the next run.",
        minimum=0,
    ),
    Key(
        "archive_days",
        "int",
        90,
        "Dream-owned topics not corroborated for this many days are demoted to memory/archive/<YYYY-MM>.md.",
        minimum=1,
    ),
    Key(
        "max_loss_fraction",
        "float",
        0.25,
        "Loss guard: a run that would drop more than this fraction of existing facts or "
        "index lines is refused.",
        minimum=0,
        maximum=1,
    ),
    Key("memory_max_lines", "int", 200, "MEMORY.md limit in lines.", minimum=1),
    Key("memory_max_bytes", "int", 25_000, "MEMORY.md limit in bytes (UTF-8).", minimum=1),
    # --- the agent.md prefix guard ----------------------------------------------------------
    Key(
        "prefix_chars",
        "int",
        2000,
        "Planners read only this many characters of agent.md; required sections must end within them.",
        minimum=1,
    ),
    Key(
        "prefix_unit",
        "enum",
        "chars",
        "How prefix_chars counts: chars (Unicode code points) or utf16 (UTF-16 code units, "
        "as JavaScript's slice).",
        choices=("chars", "utf16"),
    ),
    Key(
        "required_sections",
        "list",
        [],
        'Sections that must end within the prefix: "default" ("opening" and "role"), "opening" '
        "(the front matter if present, then the opening section of the body: its first heading "
        'and text, or the prose before the first heading), "role" (every section whose heading '
        "names the role or purpose: Role, Purpose, Responsibilities, 역할, 角色, 职责, 役割, ...), "
        '"front-matter", or a heading such as "## Role". Empty means ["default"].',
    ),
    # --- commits ------------------------------------------------------------------------------
    Key("author_name", "str", "gitdream", "Author name of dream commits."),
    Key("author_email", "str", "gitdream@gitdream.invalid", "Author e-mail of dream commits."),
    # --- offline engine ------------------------------------------------------------------------
    Key(
        "offline.similarity",
        "float",
        0.82,
        "Offline engine: similarity (0-1) above which an entry corroborates an existing fact "
        "instead of adding one.",
        minimum=0,
        maximum=1,
    ),
    Key(
        "offline.salience_threshold",
        "float",
        0.325,
        "Offline engine: an entry whose salience (the probability, 0-1, that it holds "
        "durable knowledge: lessons, rules, decisions, corrections, preferences, stable facts "
        "rather than status, activity, plans, narration or output) is below this is read and "
        "not kept.",
        minimum=0,
        maximum=1,
    ),
    Key(
        "offline.keep_cues",
        "list",
        [],
        "Offline engine: extra words or phrases (any language) that mark an entry as worth "
        "keeping; Latin-script ones match whole words, others as substrings.",
    ),
    Key(
        "offline.skip_cues",
        "list",
        [],
        "Offline engine: extra words or phrases (any language) that mark an entry as status or "
        "activity, not worth keeping.",
    ),
    # --- anthropic engine ------------------------------------------------------------------
    Key("anthropic.model", "str", "claude-sonnet-5-5", "Model for distillation and screening."),
    Key(
        "anthropic.api_key",
        "str",
        "",
        "API key; prefer the ANTHROPIC_API_KEY environment variable to writing it in a file. "
        "User-only: gitdream.toml may set it only after `gitdream trust`.",
        secret=True,
        env_aliases=("ANTHROPIC_API_KEY",),
        user_only=True,
    ),
    Key(
        "anthropic.auth_token",
        "str",
        "",
        "Bearer token, for a gateway or server that takes one instead of an API key (the SDK's "
        "ANTHROPIC_AUTH_TOKEN); used only when no API key is set. "
        "User-only: gitdream.toml may set it only after `gitdream trust`.",
        secret=True,
        env_aliases=("ANTHROPIC_AUTH_TOKEN",),
        user_only=True,
    ),
    Key(
        "anthropic.base_url",
        "str",
        "",
        "Messages API base URL; empty means the SDK default (or ANTHROPIC_BASE_URL). "
        "User-only: it decides where the material and the API key are sent, so gitdream.toml "
        "may set it only after `gitdream trust`.",
        env_aliases=("ANTHROPIC_BASE_URL",),
        user_only=True,
    ),
    Key("anthropic.max_tokens", "int", 4096, "max_tokens of each model call.", minimum=1),
    Key("anthropic.timeout_seconds", "float", 120.0, "Timeout of each HTTP request, seconds.", minimum=1),
    Key(
        "anthropic.call_deadline_seconds",
        "float",
        600.0,
        "Total wall-clock limit of one model call, seconds: the SDK's retries, their waits and "
        "the whole streamed answer included (timeout_seconds bounds each read only, and a "
        "server's pings reset it). A limit: gitdream.toml may lower it, and raises it above "
        "your user config's value only after `gitdream trust`.",
        minimum=1,
        ceiling=True,
    ),
    Key(
        "anthropic.max_retries",
        "int",
        2,
        "Retries of a failed request (429, 529, 5xx, network) by the SDK.",
        minimum=0,
        maximum=10,
    ),
    Key(
        "anthropic.max_retry_wait_seconds",
        "float",
        60.0,
        "Cap on the total seconds spent waiting between retries of one call.",
        minimum=0,
    ),
    Key(
        "anthropic.max_input_tokens", "int", 40_000, "Input-token budget of one distill batch.", minimum=1000
    ),
    Key(
        "anthropic.max_units_per_batch",
        "int",
        10,
        "At most this many units are asked of one distill call (in the prompt, and enforced); "
        "each costs one screener call. max_units caps the units of a whole run.",
        minimum=1,
        maximum=50,
    ),
    Key(
        "anthropic.max_calls_per_run",
        "int",
        50,
        "Hard limit: model calls per run. A limit: gitdream.toml may lower it, and raises it "
        "above your user config's value only after `gitdream trust`.",
        minimum=2,
        ceiling=True,
    ),
    Key(
        "anthropic.count_tokens",
        "bool",
        True,
        "Count the first batch's tokens with the server's count_tokens endpoint and plan with "
        "that figure; without the endpoint (or with false) the local estimate is used.",
    ),
    Key(
        "anthropic.max_tokens_per_run",
        "int",
        500_000,
        "Hard limit: input + output tokens per run. A limit: gitdream.toml may lower it, and "
        "raises it above your user config's value only after `gitdream trust`.",
        minimum=1,
        ceiling=True,
    ),
    Key(
        "anthropic.max_tokens_per_day",
        "int",
        2_000_000,
        "Hard limit: input + output tokens per repository per UTC day, summed from receipts. "
        "A limit: gitdream.toml may lower it, and raises it above your user config's value "
        "only after `gitdream trust`.",
        minimum=1,
        ceiling=True,
    ),
    # --- screening ----------------------------------------------------------------------------
    Key(
        "screen.policy",
        "enum",
        "private",
        "Privacy policy the anthropic engine's distiller and screener follow: private (one "
        "private repository: no secrets, third parties' personal data or raw copies of "
        "conversations; project, tool, platform and collaborator names are fine) or shared "
        "(memory that crosses companies: also no company, product or people names, URLs or paths).",
        choices=("private", "shared"),
    ),
    Key(
        "screen.allow",
        "list",
        [],
        "Regular expressions; a scanner finding that matches one is allowed. User-only: it lets "
        "secrets into memory and to the model, so gitdream.toml may set it only after `gitdream trust`.",
        user_only=True,
        patterns=True,
    ),
    Key(
        "screen.deny",
        "list",
        [],
        "Extra regular expressions the scanner rejects (in addition to the built-in rules). "
        "From gitdream.toml they are matched with RE2, in time linear in the text, so that a "
        "committed pattern cannot hang a dream (RE2 has no look-around or backreferences; \\d, \\w "
        "and \\s keep Python's Unicode meaning, and \\b next to non-ASCII text is refused); from "
        "your user config, the environment or a flag, with Python `re`.",
        patterns=True,
    ),
)

KEY_BY_NAME: dict[str, Key] = {k.name: k for k in KEYS}
SECTIONS = sorted({k.name.split(".")[0] for k in KEYS if "." in k.name})


class Setting(NamedTuple):  # not a frozen dataclass: 4x cheaper to build at import (idle path)
    """An effective value and the layer it came from ("default", "user config <path>",
    "gitdream.toml", "env GITDREAM_X", "flag --x")."""

    value: Any
    source: str


@dataclass(eq=False)  # eq=False: never compared; less to build at import
class Config:
    """The effective configuration, read through typed accessors.

    `cfg.int("max_units")`, `cfg.float("min_hours")`, `cfg.str("engine")` (str and enum
    keys), `cfg.bool("enabled")`, `cfg.list("agents")`; `cfg.value(name)` for code that
    handles every key alike (`config show`); `cfg.source(name)` names the layer a value
    came from. An accessor checks the key's declared type in `KEYS`: asking for an
    unknown key, or for a key as another type, is a programming error (KeyError,
    TypeError), never a silent cast. The values themselves were validated when the
    layers were read, so a call site needs no cast of its own.
    """

    settings: dict[builtins.str, Setting]
    files: dict[builtins.str, builtins.str | None] = field(default_factory=dict)
    warnings: builtins.list[builtins.str] = field(default_factory=builtins.list)
    """What the user must know about how the layers were read (a user-only key that
    gitdream.toml set and that was ignored)."""
    ignored: dict[builtins.str, Any] = field(default_factory=dict)
    """`{key: value}` that gitdream.toml set but may not (user-only, not trusted)."""

    def _typed(self, name: builtins.str, *types: builtins.str) -> Any:
        key = KEY_BY_NAME[name]
        if key.type not in types:
            raise TypeError(f"config key {name!r} is declared {key.type}, not {' or '.join(types)}")
        return self.settings[name].value

    def int(self, name: builtins.str) -> builtins.int:
        """The value of an "int" key."""
        value: builtins.int = self._typed(name, "int")
        return value

    def float(self, name: builtins.str) -> builtins.float:
        """The value of a "float" key."""
        value: builtins.float = self._typed(name, "float")
        return value

    def str(self, name: builtins.str) -> builtins.str:
        """The value of a "str" or "enum" key."""
        value: builtins.str = self._typed(name, "str", "enum")
        return value

    def bool(self, name: builtins.str) -> builtins.bool:
        """The value of a "bool" key."""
        value: builtins.bool = self._typed(name, "bool")
        return value

    def list(self, name: builtins.str) -> builtins.list[builtins.str]:
        """The value of a "list" key (a copy: a caller cannot change the config)."""
        return builtins.list(self._typed(name, "list"))

    def value(self, name: builtins.str) -> Any:
        """The value of any key, untyped: for code that treats every key alike."""
        return self.settings[name].value

    def source(self, name: builtins.str) -> builtins.str:
        return self.settings[name].source

    def with_overrides(self, overrides: Mapping[builtins.str, tuple[Any, builtins.str]]) -> Config:
        """A copy with `{name: (value, source)}` applied (validated like flags)."""
        settings = dict(self.settings)
        for name, (value, source) in overrides.items():
            key = _key_or_error(name, source)
            settings[name] = Setting(_check(key, value, source), source)
        return Config(settings, dict(self.files), list(self.warnings), dict(self.ignored))


def _key_or_error(name: str, where: str) -> Key:
    key = KEY_BY_NAME.get(name)
    if key is None:
        import difflib  # idle path: only where it is used

        table, _, bare = name.rpartition(".")
        close = difflib.get_close_matches(name, KEY_BY_NAME, n=1)
        if table and bare in KEY_BY_NAME:
            # TOML: every key below a `[table]` header belongs to that table
            hint = (
                f"'{bare}' is a top-level key, but it was written below the [{table}] header; "
                f"move `{bare} = …` above the first [table] header of the file"
            )
        elif close:
            hint = f"did you mean '{close[0]}'?"
        else:
            # not `gitdream config show`: it loads this same file and fails the same way
            hint = (
                "remove it or correct its name; the gitdream.toml that `gitdream init` writes lists "
                "every key, commented out (so does gitdream's documentation, docs/configuration.md)"
            )
        raise ConfigError(f"{where}: unknown key '{name}'", hint=hint)
    return key


def _check(key: Key, value: Any, where: str) -> Any:
    """Validate a value already in Python form (from TOML or a flag). A bad value is a
    ConfigError that quotes it, and the default, as TOML writes them (`-5`, `true`,
    `["agents/*"]`), not as Python does (`-5.0`, `True`, `['agents/*']`)."""
    given = value

    def bad() -> ConfigError:
        return ConfigError(
            f"{where}: key '{key.name}' has the value {_toml_value(given)}, but it must be {key.allowed()}",
            hint=f"fix '{key.name}' in {where} (default: {_toml_value(key.default)})",
        )

    if key.type == "bool":
        if not isinstance(value, bool):
            raise bad()
        return value
    if key.type == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad()
    elif key.type == "float":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise bad()
        value = float(value)
        if not math.isfinite(value):
            raise bad()
    elif key.type == "str":
        if not isinstance(value, str) or (key.relative and not _relative_ok(value)):
            raise bad()
        return normal_relative(value) if key.relative else value
    elif key.type == "enum":
        if value not in key.choices:
            raise bad()
        return value
    elif key.type == "list":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise bad()
        if key.relative and not all(_relative_ok(v) for v in value):
            raise bad()
        if key.relative:
            value = [normal_relative(v) for v in value]
        if key.patterns and where != REPO_FILE:  # a repository's: when it takes effect (`load`)
            for pattern in value:
                compile_pattern(key.name, pattern, where)
        return list(value)
    if key.minimum is not None and value < key.minimum:
        raise bad()
    if key.maximum is not None and value > key.maximum:
        raise bad()
    return value


def _relative_ok(value: str) -> bool:
    """A relative POSIX path or glob that cannot leave its folder (DESIGN §6: gitdream
    reads and writes only inside the repository and the agent's folder)."""
    if not value.strip() or value.startswith("/") or "\\" in value or (len(value) > 1 and value[1] == ":"):
        return False
    return ".." not in value.split("/")


def normal_relative(value: str) -> str:
    """The normal form of a relative path or glob that `_relative_ok` accepted: without
    empty and `.` components (`./memory/logs`, `memory//logs/` → `memory/logs`; `./` → `.`),
    so every check and every join sees one spelling of each folder (issue 16:
    `memory_dir = "./memory/logs"` got past the raw-material check that refuses
    `memory/logs`)."""
    parts = [part for part in value.split("/") if part not in ("", ".")]
    return "/".join(parts) or "."


def compile_pattern(name: str, pattern: str, where: str = "") -> Any:
    """Regular expression `pattern` of key `name`, given in layer `where`, compiled: with
    RE2 in linear time, with Python `re`'s Unicode classes (`patterns.compile_untrusted`),
    when `where` is the repository's gitdream.toml — written by whoever can push, and a
    backtracking `(a+)+$` would hang every dream (issue 16) — and with Python `re` for the
    user's own layers (`where` names one: "user config …", "environment variable …", "flag
    …", or "" for a caller's own). Returns a `patterns.Pattern`.

    Raises ConfigError naming the layer, the key, the pattern, the engine's reason and
    what to do, for every way a pattern can fail to compile (a Python `re` OverflowError
    or RecursionError included): exit 1, never a crash."""
    if where == REPO_FILE:
        try:
            return patterns.compile_untrusted(pattern)
        except patterns.PatternError as exc:
            raise _repository_pattern_error(name, pattern, exc) from None
    try:
        return patterns.compile_python(pattern)
    except patterns.PatternError as exc:
        prefix = f"{where}: " if where else ""
        raise ConfigError(
            f"{prefix}key '{name}' has the pattern {pattern!r}, which is not a valid regular expression: {exc}",
            hint=f"fix '{name}'{f' in {where}' if where else ''} (Python `re` syntax)",
        ) from None


def _repository_pattern_error(name: str, pattern: str, exc: Any) -> ConfigError:
    """The error for a gitdream.toml pattern RE2 rejects (`exc`, a PatternError): its
    reason, what RE2 lacks and what to write, and the layers that outrank gitdream.toml
    (it outranks the user config, so moving the pattern there alone changes nothing)."""
    where = f"{REPO_FILE}: key '{name}' has the pattern {pattern!r}"
    if not exc.unsupported:
        return ConfigError(
            f"{where}, which is not a valid regular expression: {exc}",
            hint=f"fix the pattern of '{name}' in {REPO_FILE}: a repository's patterns are RE2, which is "
            "Python `re` without look-around or backreferences (more: gitdream's documentation, "
            "docs/security.md)",
        )
    var = KEY_BY_NAME[name].env if name in KEY_BY_NAME else ENV_PREFIX + name.upper().replace(".", "_")
    return ConfigError(
        f"{where}, which RE2 cannot match: {exc} ({exc.advice}). Patterns from a repository's "
        f"{REPO_FILE} are matched with RE2, in time linear in the text, so that a committed pattern "
        "cannot hang a dream",
        hint=f"rewrite it for RE2 in {REPO_FILE}; or, to keep Python `re` syntax, remove '{name}' from "
        f"{REPO_FILE} (it outranks your user config) and set it in your user config "
        f"{paths.user_config_file()}, or in {var} for one run",
    )


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _from_env(key: Key, raw: str, var: str) -> Any:
    """Convert an environment string to the key's type, then validate."""
    where = f"environment variable {var}"
    text = raw.strip()
    value: Any
    if key.type == "bool":
        if text.lower() in _TRUE:
            value = True
        elif text.lower() in _FALSE:
            value = False
        else:
            raise ConfigError(
                f"{where}: key '{key.name}' has the value {raw!r}, but it must be "
                "one of 1, 0, true, false, yes, no, on, off",
                hint=f"set {var}=true or {var}=false, or unset it",
            )
    elif key.type in ("int", "float"):
        try:
            value = int(text) if key.type == "int" else float(text)
        except ValueError:
            raise ConfigError(
                f"{where}: key '{key.name}' has the value {raw!r}, but it must be {key.allowed()}",
                hint=f"fix or unset {var}",
            ) from None
    elif key.type == "list":
        value = _env_list(key, text, var, where)
    else:
        value = raw
    return _check(key, value, where)


def _env_list(key: Key, text: str, var: str, where: str) -> list[Any]:
    """A list from an environment string: comma-separated (`a/*, b/*`), or a TOML array
    (`["a/*", "b/*"]`) when it starts with `[`, so a value copied from gitdream.toml means
    the same here and passes the same validation. Raises ConfigError for a malformed array."""
    if not text.startswith("["):
        return [part.strip() for part in text.split(",") if part.strip()]
    import tomllib  # idle path: only for a list given as a TOML array

    try:
        value = tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{where}: key '{key.name}' has the value {text!r}, which starts with '[' but is not "
            f"a TOML array ({exc})",
            hint=f'write it comma-separated ({var}=a/*,b/*) or as a TOML array ({var}=\'["a/*", "b/*"]\')',
        ) from None
    if not isinstance(value, list):  # pragma: no cover - tomllib returns a list for "[...]"
        raise ConfigError(f"{where}: key '{key.name}' must be {key.allowed()}", hint=f"fix or unset {var}")
    return value


def _flatten(data: Mapping[str, Any], where: str) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for name, value in data.items():
        if isinstance(value, dict):
            if name not in SECTIONS:
                _key_or_error(name, where)  # raises with a suggestion
            for sub, subvalue in value.items():
                flat[f"{name}.{sub}"] = subvalue
        else:
            flat[name] = value
    return flat


def read_toml(path: Path, label: str) -> dict[str, Any]:
    """Read and validate one TOML layer; returns `{dotted_name: value}`.

    Raises ConfigError for unreadable or invalid TOML (with tomllib's line and column), a
    file that is not UTF-8 (TOML is UTF-8: with the byte, its offset and line), an unknown
    key (with the closest known one) or a bad value.
    """
    import tomllib  # idle path: only when a configuration file exists

    try:
        raw = path.read_bytes()
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, label, raw, exc) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{label} is not valid TOML: {exc}", hint=f"fix the syntax in {path}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {label}: {exc.strerror}", hint=f"check {path}") from None
    values = {}
    for name, value in _flatten(data, label).items():
        key = _key_or_error(name, label)
        values[name] = _check(key, value, label)
    return values


def _not_utf8(path: Path, label: str, raw: bytes, exc: UnicodeDecodeError) -> ConfigError:
    """The error for a configuration file that is not UTF-8 (TOML files are UTF-8 by
    definition): the first byte that does not decode, its offset and its line."""
    line = raw.count(b"\n", 0, exc.start) + 1
    column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
    return ConfigError(
        f"{label} is not UTF-8: byte 0x{raw[exc.start]:02x} at offset {exc.start} (line {line}, "
        f"column {column}) does not decode, and a TOML file must be UTF-8",
        hint=f"save {path} as UTF-8 (or remove the byte)",
    )


def load(
    root: Path | None,
    *,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, tuple[Any, str]] | None = None,
    user_file: Path | None = None,
    common_dir: Path | None = None,
    repo_file: Path | None = None,
) -> Config:
    """Build the effective configuration.

    `root` is the repository's working-tree root (None outside a repository: no
    gitdream.toml layer); `common_dir` its git common dir, which keys the user's trust
    (default: `root`). `env` defaults to os.environ. `overrides` are CLI flags as
    `{name: (value, "flag --x")}`. `user_file` defaults to `paths.user_config_file()`;
    `repo_file` to `root`'s gitdream.toml (another file stands for it: the staged one).

    A user-only key (`Key.user_only`) that gitdream.toml sets is ignored — with a warning
    in `Config.warnings` naming the key and how to allow it, and the value in
    `Config.ignored` — unless the user trusted this repository with exactly that value
    (`gitdream.trust`). Raises ConfigError for any bad layer.
    """

    env = os.environ if env is None else env
    settings = {k.name: Setting(k.default, "default") for k in KEYS}
    files: dict[str, str | None] = {"user": None, "repository": None}
    warnings: list[str] = []
    ignored: dict[str, Any] = {}

    user_path = user_file or paths.user_config_file()
    if user_path.is_file():
        files["user"] = str(user_path)
        label = f"user config {user_path}"
        for name, value in read_toml(user_path, label).items():
            settings[name] = Setting(value, label)
    if root is not None:
        repo_path = repo_file or root / REPO_FILE
        if repo_path.is_symlink():
            warnings.append(linked_repo_file(repo_path))
        elif repo_path.is_file():
            files["repository"] = str(repo_path)
            values = read_toml(repo_path, REPO_FILE)
            trusted = _trusted(values, common_dir or root)
            for name, value in values.items():
                key = KEY_BY_NAME[name]
                guarded = key.user_only or (key.ceiling and value > settings[name].value)
                if guarded and (name not in trusted or trusted[name] != _pin(key, value)):
                    ignored[name] = value
                    warnings.append(_ignored_warning(key, value, name in trusted, user_path, settings[name]))
                    continue
                settings[name] = Setting(value, REPO_FILE)
    for key in KEYS:
        for var in (key.env, *key.env_aliases):
            if var in env:
                settings[key.name] = Setting(_from_env(key, env[var], var), f"env {var}")
                break
    config = Config(settings, files, warnings, ignored)
    if overrides:
        config = config.with_overrides(overrides)
    check_patterns({n: s.value for n, s in config.settings.items() if s.source == REPO_FILE})
    return config


def check_patterns(values: Mapping[str, Any]) -> None:
    """Compile the patterns among `values` (`{key: value}` from gitdream.toml) as a dream
    would (`compile_pattern`, RE2), so that a pattern RE2 rejects stops `load` — every
    command, before anything runs or is recorded — and `gitdream trust`, as any bad value
    does. `load` checks the values that take effect: one that a layer above replaces (the
    environment, a flag) or that is ignored (an untrusted `screen.allow`) is not used.
    Raises ConfigError."""
    for name, value in values.items():
        if KEY_BY_NAME[name].patterns:
            for pattern in value:
                compile_pattern(name, pattern, REPO_FILE)


def linked_repo_file(path: Path) -> str:
    """The warning for a repository's `gitdream.toml` that is a symbolic link, which is
    ignored: a repository's configuration is read only from a regular file of the
    checkout, as git reads no `.gitattributes`, `.gitignore` or `.mailmap` through a link
    (a committed link made every gitdream command, hooks included, read a file outside
    the checkout — any file the user can read — as the repository's configuration)."""
    try:
        target = os.readlink(path)
    except OSError:
        target = "?"
    return (
        f"{REPO_FILE} is a symbolic link (to {target}), so it is ignored: a repository's configuration "
        f"is read only from a regular file in the checkout; replace the link with the file itself"
    )


def user_only_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """The keys among `values` (`{key: value}` of gitdream.toml) that take effect from a
    repository only with the user's trust: user-only keys (`Key.user_only`) and limits
    (`Key.ceiling`, trusted when raised above the user's value)."""
    return {
        name: value
        for name, value in values.items()
        if KEY_BY_NAME[name].user_only or KEY_BY_NAME[name].ceiling
    }


def _pin(key: Key, value: Any) -> Any:
    from gitdream import trust  # idle path: only where it is used

    return trust.pin(value, key.secret)


def _trusted(values: Mapping[str, Any], where: Path) -> dict[str, Any]:
    """The values the user trusted this repository with; the trust file is read only when
    gitdream.toml sets a user-only key at all (the idle path stays cheap)."""
    if not user_only_values(values):
        return {}
    from gitdream import trust  # idle path: only where it is used

    return trust.granted(trust.repository_key(where))


def _ignored_warning(key: Key, value: Any, changed: bool, user_path: Path, below: Setting) -> str:
    shown = "a value" if key.secret else _toml_value(value)
    if key.ceiling and not key.user_only and not changed:
        return (
            f"{REPO_FILE} raises {key.name} to {shown}, above {_toml_value(below.value)} (from {below.source}); "
            f"ignored: a repository may lower a spending limit but not raise yours. To allow it, run "
            f"`gitdream trust`, or raise {key.name} in {user_path}"
        )
    if changed:
        return (
            f"{REPO_FILE} sets {key.name} to {shown}, not the value you trusted for this repository; "
            f"ignored. If you trust the new value, run `gitdream trust` again"
        )
    return (
        f"{REPO_FILE} sets {key.name} to {shown}, which only your user config, the environment or a flag "
        f"may set (it decides where your data and credentials go); ignored. To allow this repository's "
        f"{REPO_FILE} to set it, run `gitdream trust`, or set {key.name} in {user_path}"
    )


def defaults() -> Config:
    """The built-in defaults alone (no files, no environment)."""
    return Config({k.name: Setting(k.default, "default") for k in KEYS}, {})


def display_value(key: Key, value: Any) -> Any:
    """The value as `config show` prints it (secrets masked)."""
    if key.secret and value:
        return "(set, ends in " + str(value)[-4:] + ")" if len(str(value)) > 8 else "(set)"
    return value


def _toml_value(value: Any) -> str:
    """`value` written as TOML writes it (a basic string, `true`, an array, an inline table)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml_value(str(k))} = {_toml_value(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _comment(text: str, width: int = 92) -> list[str]:
    import textwrap  # idle path: only where it is used

    return ["# " + line for line in textwrap.wrap(text, width - 2)]


def render_default_toml(chosen: Mapping[str, Any] | None = None) -> str:
    """The commented gitdream.toml that `gitdream init` writes: every key documented, at its
    default and commented out, so that the user config and the defaults of later versions
    apply; only the keys in `chosen` (`{dotted name: value}`, what the user chose) are set.
    Raises ConfigError for an unknown key or bad value in `chosen`."""
    chosen = dict(chosen or {})
    for name, value in chosen.items():
        chosen[name] = _check(_key_or_error(name, "gitdream init"), value, "gitdream init")
    lines = [
        "# gitdream configuration for this repository. Every key is listed with its built-in",
        "# default, commented out: until you set it here, the user config",
        "# (`gitdream config show` names it) or the default applies. Uncomment a line to set it",
        "# for this repository (with its [table] line, for keys in a table).",
        "# Precedence: CLI flag > GITDREAM_* environment > this file > user config > default.",
        "",
    ]

    def entry(key: Key, label: str) -> list[str]:
        out = _comment(key.help)
        if key.type == "enum":
            out.append("# allowed: " + ", ".join(key.choices))
        if key.user_only:
            out.append(
                "# user-only: set it in your user config, the environment or a flag; in this file it is"
            )
            out.append("# ignored unless you trust this repository with it (`gitdream trust`)")
        if key.name in chosen:
            out.append(f"{label} = {_toml_value(chosen[key.name])}")
        elif key.secret:
            out.append(f'# {label} = ""')
        else:
            out.append(f"# {label} = {_toml_value(key.default)}")
        return out

    for key in KEYS:
        if "." in key.name:
            continue
        lines += entry(key, key.name)
        lines.append("")
    for section in SECTIONS:
        members = [k for k in KEYS if k.name.startswith(section + ".")]
        lines.append(f"[{section}]" if any(k.name in chosen for k in members) else f"# [{section}]")
        for key in members:
            lines += entry(key, key.name.split(".", 1)[1])
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
