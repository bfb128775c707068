"""The command line: the only module that imports click.

It parses options, calls a function in `gitdream.commands`, and renders the result (human
text, or one JSON document with `--json`). Errors: a `GitdreamError` prints
`error: ...` / `hint: ...` on stderr (and `{"error": {...}}` on stdout with `--json`) and
exits with its code; anything else is a bug: exit 3 and a crash log under the user log
directory (set GITDREAM_RAISE_ERRORS=1 to get the traceback instead). Exit codes are in
`gitdream.errors` and docs/cli.md.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

import gitdream
from gitdream import clock, config, errors, output, render
from gitdream.agents import check_id_argument, list_agents, select
from gitdream.errors import GitdreamError, RepoStateError
from gitdream.trigger import HOOK_NAMES

F = TypeVar("F", bound=Callable[..., Any])
JSON_KEY = "gitdream.json"


def _is_json(ctx: click.Context) -> bool:
    return bool(ctx.meta.get(JSON_KEY))


def _set_json(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    if value:
        ctx.meta[JSON_KEY] = True
    return value


def json_option(func: F) -> F:
    """`--json`: print one JSON document on stdout (documented shapes in docs/json.md)."""
    return click.option(
        "--json",
        "json_",
        is_flag=True,
        callback=_set_json,
        expose_value=True,
        is_eager=True,
        help="Print one JSON document on stdout instead of text.",
    )(func)


def _emit(result: Any, lines: render.Lines, json_: bool) -> None:
    """The one way a command's result reaches the terminal (see `gitdream.render`): with
    `--json` its `to_json()` on stdout and only the lines marked `always` on stderr, else
    every line in order."""
    if json_:
        output.json_out(result.to_json())
    for stream, text, always in lines.items:
        if json_ and not always:
            continue
        if stream == "out":
            output.out(text)
        elif stream == "warn":
            output.warn(text)
        else:
            output.err(text)


def _report(ctx: click.Context, exc: errors.GitdreamError) -> None:
    if _is_json(ctx):
        output.json_error(exc.to_json())
    output.problem(f"error: {exc.message}")
    if exc.hint:
        output.problem(f"hint: {exc.hint}")


def _crash(exc: BaseException) -> int:
    from gitdream import crashlog, git  # idle path: a command loads only its own modules

    path = crashlog.write(exc, git.versions(), mask=output.masked)
    output.problem(f"error: gitdream failed unexpectedly: {type(exc).__name__}: {exc}")
    if path is not None:
        output.err(f"hint: this is a bug; please report it with the crash log at {path}")
    else:
        output.err("hint: this is a bug; rerun with GITDREAM_RAISE_ERRORS=1 to see the traceback")
    return errors.EXIT_INTERNAL


class GitdreamGroup(click.Group):
    """A group that turns gitdream's errors into messages and exit codes."""

    def invoke(self, ctx: click.Context) -> Any:
        raw = [*getattr(ctx, "_protected_args", []), *ctx.args]  # click empties them as it parses
        try:
            return super().invoke(ctx)
        except errors.GitdreamError as exc:
            if os.environ.get("GITDREAM_RAISE_ERRORS") == "2":
                raise
            _report(ctx, exc)
            ctx.exit(exc.exit_code)
        except click.UsageError as exc:
            # click prints its usage message on stderr and exits 2; with --json a script
            # reading stdout gets the error too, as for every other error.
            if _is_json(ctx) or "--json" in raw:
                where = exc.ctx.command_path if exc.ctx is not None else "gitdream"
                output.json_error(
                    {"type": "usage", "message": exc.format_message(), "hint": f"see `{where} --help`"}
                )
            raise
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except KeyboardInterrupt:
            output.err("interrupted")
            ctx.exit(errors.EXIT_INTERRUPTED)
        except Exception as exc:
            from gitdream.git.environment import translate  # idle path: only after an unexpected error
            from gitdream.git.repo import index_format_error  # idle path: --help and --version load no pygit2

            # an index libgit2 cannot read; a full disk, a read-only file system, a
            # partial clone: the environment's problem, said so (exit 1), not a bug
            known = index_format_error(exc) or translate(exc, _repo_for_diagnosis(ctx))
            if known is not None:
                _report(ctx, known)
                ctx.exit(known.exit_code)
            if os.environ.get("GITDREAM_RAISE_ERRORS"):
                raise
            ctx.exit(_crash(exc))


def _repo_for_diagnosis(ctx: click.Context) -> Any:
    """The command's repository, opened again to tell what an unexpected error means (an
    object missing from a partial clone, not from a damaged repository), or None."""
    from gitdream.git.environment import repository_at  # idle path: only after an unexpected error

    return repository_at(_start(ctx))


def _agent_argument(_ctx: click.Context, _param: click.Parameter, value: Any) -> Any:
    """Callback of every option or argument naming agents: a malformed id is a usage error
    (exit 2, `agents.check_id_argument`), before any repository is opened."""
    if value is None:
        return None
    if isinstance(value, tuple):
        return tuple(check_id_argument(v) for v in value)
    return check_id_argument(value)


def _run_argument(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """Callback of every option or argument naming a run: one that has not the form of a
    run reference (`ids.is_run_ref`) is a usage error (exit 2)."""
    from gitdream import ids  # idle path: only commands that name a run

    if value is None or ids.is_run_ref(value):
        return value
    raise errors.UsageError(
        f"{value!r} is not a run: give {ids.RUN_REF_FORMS}", hint="list runs with `gitdream log`"
    )


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """`--version`: click's eager-option recipe rather than `click.version_option`, which
    asks gettext for its help text when this module is imported (loading `locale` on every
    command's idle path); the version is looked up only when asked for."""
    if not value or ctx.resilient_parsing:
        return
    output.out(f"gitdream {gitdream.__version__}")
    ctx.exit()


@click.group(
    cls=GitdreamGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and exit.",
)
@click.option(
    "-C",
    "directory",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Run as if gitdream was started in this directory (like git -C).",
)
@click.pass_context
def cli(ctx: click.Context, directory: Path | None) -> None:
    """Dream over an agent repository: consolidate committed logs into memory, as commits.

    \b
    Examples:
      gitdream demo                 try it on a generated repository (offline)
      gitdream init --commit        add gitdream.toml and an agent skeleton
      gitdream run                  dream now, for every agent
      gitdream log                  list dreams; `gitdream revert last` undoes one
      gitdream config show          effective configuration and where it came from

    Exit codes: 0 ok (also a no-op, or a closed gate in --auto), 1 refused, failed or
    partial, 2 usage, 3 internal error, 75 another dream holds the lock, 130 interrupted.
    """
    ctx.ensure_object(dict)
    ctx.obj["start"] = directory.resolve() if directory else Path.cwd()


def _start(ctx: click.Context) -> Path:
    obj = ctx.find_root().obj or {}
    return obj.get("start") or Path.cwd()


def open_repo(ctx: click.Context) -> Any:
    """Open the repository for the current command (see gitdream.git.repo.Repo.open), and
    finish a dream commit a killed gitdream left half-done (its journal, its index.lock,
    the ref lock files it held: `commitbuilder.repair`), whichever command this is."""

    from gitdream.git.repo import Repo  # idle path: --help and --version load no pygit2

    repo = Repo.open(_start(ctx))
    journals = repo.common_dir / "gitdream" / "journal"
    reflocks = repo.common_dir / "gitdream" / "reflocks"  # a killed ref move's (refs.drop_dead_locks)
    interrupted = (
        (journals.is_dir() and any(journals.iterdir()))
        or (repo.git_dir / "index.lock").exists()
        or (reflocks.is_dir() and any(reflocks.iterdir()))
    )
    if interrupted and repo.inherited_index is None:  # (the cheap test first: the idle path)
        from gitdream.git import commitbuilder  # idle path: a command loads only its own modules

        try:
            warnings = commitbuilder.repair(repo)
        except (errors.GitdreamError, OSError) as exc:
            reason = (
                exc.message
                if isinstance(exc, errors.GitdreamError)
                else commitbuilder.environment_reason(exc)
            )
            warnings = [f"an interrupted dream commit could not be finished yet: {reason}"]
        for warning in warnings:
            output.warn(warning)
    return repo


def load_config(ctx: click.Context, repo: Any, overrides: dict[str, Any] | None = None) -> Any:
    """The effective configuration of `repo` (an open Repo, or None outside a repository);
    `overrides` are `{key: (value, "flag --x")}`. Prints the configuration's warnings
    (a user-only key that gitdream.toml may not set) on stderr."""

    cfg = config.load(
        repo.workdir if repo is not None else None,
        common_dir=repo.common_dir if repo is not None else None,
        overrides={k: v for k, v in (overrides or {}).items() if v[0] is not None},
    )
    for warning in cfg.warnings:
        output.warn(warning)
    return cfg


# --- init ---------------------------------------------------------------------------------


@cli.command(name="init")
@click.option(
    "--agent",
    "agent_id",
    metavar="ID",
    callback=_agent_argument,
    help="Agent id (folder agents/ID); default: assistant.",
)
@click.option(
    "--single", is_flag=True, help='Single-agent repository: the agent at the root, agents = ["."].'
)
@click.option("--commit", is_flag=True, help="Commit the created files (only those).")
@json_option
@click.pass_context
def init_cmd(ctx: click.Context, agent_id: str | None, single: bool, commit: bool, json_: bool) -> None:
    """Set the repository up for gitdream, creating only what is missing.

    Writes gitdream.toml unless it exists: every key documented and commented out at its
    default, only what you chose set (`agents = ["."]` with --single), so your user
    config and the defaults apply. A new agent gets a skeleton (agent.md, soul.md,
    SKILL.md, memory/MEMORY.md); an existing agent is adopted: its files are kept and only
    a missing memory index is added. Without --agent, a repository that already has agents
    is adopted as it is. Nothing is ever overwritten. Paths are relative to the repository
    root, whatever folder it runs in (`--json` keeps them so); the lines printed name them
    as seen from the current folder.

    \b
    Examples:
      gitdream init                        an agents repository: adopt it; else agents/assistant/
      gitdream init --agent kit            adopt agents/kit (or create it)
      gitdream init --agent ops --commit   and commit what was created
      gitdream init --single               the repository root is the agent
    """
    from gitdream.commands.init import run_init  # idle path: a command loads only its own modules

    repo = open_repo(ctx)
    result = run_init(repo, agent_id, single, commit)

    def shown(path: str) -> str:  # as seen from the current folder (or -C), maybe a sub-folder
        return os.path.relpath(repo.workdir / path, _start(ctx))

    _emit(result, render.init(result, shown), json_)


# --- config -------------------------------------------------------------------------------


@cli.group(name="config", cls=GitdreamGroup)
def config_group() -> None:
    """Inspect gitdream's configuration."""


@config_group.command(name="show")
@json_option
@click.pass_context
def config_show(ctx: click.Context, json_: bool) -> None:
    """Print the effective configuration and where each value came from.

    Sources, highest first: flag, env GITDREAM_*, gitdream.toml, user config, default.
    Works outside a repository too (then without the gitdream.toml layer).

    \b
    Examples:
      gitdream config show
      gitdream config show --json | jq '.keys.min_hours'
    """
    from gitdream.commands.configshow import show  # idle path: a command loads only its own modules

    try:
        repo = open_repo(ctx)
    except RepoStateError:
        repo = None
    result = show(load_config(ctx, repo))
    _emit(result, render.config_show(result), json_)


# --- trust --------------------------------------------------------------------------------


@cli.command(name="trust")
@click.option("--revoke", is_flag=True, help="Withdraw the trust of this repository.")
@click.option("--list", "list_all", is_flag=True, help="List every repository you trusted.")
@json_option
@click.pass_context
def trust_cmd(ctx: click.Context, revoke: bool, list_all: bool, json_: bool) -> None:
    """Let this repository's gitdream.toml set the user-only keys, with its current values.

    The keys that decide where your data and credentials go or what runs (engine,
    anthropic.base_url, anthropic.api_key, anthropic.auth_token, and screen.allow, which
    lets findings of the secret scanner through) are honoured only from your user config,
    the environment and flags: a gitdream.toml that sets them is ignored with a warning,
    because whoever can push to a repository writes its gitdream.toml. So is one that
    raises a spending limit (anthropic.max_calls_per_run, max_tokens_per_run,
    max_tokens_per_day) above yours; lowering one needs no trust. `gitdream trust`
    records — outside the repository, in trusted.json beside your user config — that you
    accept the values this repository's gitdream.toml sets now. A later change of one of
    them is ignored again until you run `gitdream trust` once more. Read the file first.

    \b
    Examples:
      gitdream config show          what gitdream.toml sets, and what was ignored
      gitdream trust                trust its current values
      gitdream trust --revoke       withdraw it
      gitdream trust --list         every repository you trusted
    """
    from gitdream.commands.trust import run_trust  # idle path: a command loads only its own modules

    if revoke and list_all:
        raise click.UsageError("--revoke and --list cannot be used together")
    repo = None if list_all else open_repo(ctx)
    result = run_trust(repo, revoke=revoke, list_all=list_all)
    _emit(result, render.trust(result), json_)


# --- run ----------------------------------------------------------------------------------


class _Progress:
    """Per-phase progress on stderr, shown only on a terminal: a line per phase, and
    inside a phase one line that each report rewrites in place (an engine's batches and
    screener calls)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.open = False

    def phase(self, agent: str, phase: str, detail: str = "") -> None:
        if self.enabled:
            self.close()
            output.err(f"{agent}: {phase}{' — ' + detail if detail else ''}")

    def progress(self, agent: str, phase: str, detail: str) -> None:
        if self.enabled:
            output.status_line(f"{agent}: {phase} — {detail}")
            self.open = True

    def close(self) -> None:
        """End a line that progress left open."""
        if self.open:
            output.err()
            self.open = False


@cli.command(name="run")
@click.option(
    "--agent",
    "agent_ids",
    multiple=True,
    metavar="ID",
    callback=_agent_argument,
    help="Dream for this agent only (repeatable).",
)
@click.option("--dry-run", is_flag=True, help="Print the diff it would commit; change nothing.")
@click.option("--branch", metavar="NAME", help="Commit onto a new review branch NAME started at HEAD.")
@click.option(
    "--engine", type=click.Choice(["offline", "anthropic"]), help="Engine (default: config `engine`)."
)
@click.option("--since", metavar="REV", help="Read material since REV instead of the watermark.")
@click.option("--full", is_flag=True, help="Read all material, ignoring the watermark.")
@click.option(
    "--estimate", is_flag=True, help="Print the model calls and input tokens a run would need; call nothing."
)
@click.option("--auto", is_flag=True, help="Dream only if the gates are open (for hooks and schedules).")
@click.option(
    "--trigger",
    type=click.Choice(["manual", "post-merge", "schedule"]),
    default=None,
    help="What started this run (recorded in the receipt); default manual, or schedule with --auto.",
)
@click.option("--verbose", "-v", is_flag=True, help="Say which gate is closed, and why.")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but warnings and errors.")
@json_option
@click.pass_context
def run_cmd(
    ctx: click.Context,
    agent_ids: tuple[str, ...],
    dry_run: bool,
    branch: str | None,
    engine: str | None,
    since: str | None,
    full: bool,
    estimate: bool,
    auto: bool,
    trigger: str | None,
    verbose: bool,
    quiet: bool,
    json_: bool,
) -> None:
    """Dream now: consolidate what was committed since the last dream, as commits.

    For each agent (all, or those named with --agent), one after another: read the raw
    material committed since its watermark, distill it into units, verify and screen
    them, then commit the experience (memory files) and the definitions (managed blocks
    in agent.md, soul.md, SKILL.md) as two separate commits, move the watermark and write
    the receipt. One agent's failure does not stop the others; the exit status is 1 when
    any failed or ended partial.

    \b
    Examples:
      gitdream run                         every agent
      gitdream run --agent ops --dry-run   show the diff, change nothing
      gitdream run --branch dream/review   commit onto a review branch
      gitdream run --since HEAD~20         re-read material since a revision
      gitdream run --engine anthropic --estimate   calls and tokens it would need
      gitdream run --auto --trigger schedule   what cron and the hooks run

    With --auto the gates decide first (enabled, repository state, min_hours since the
    last dream that consolidated material, min_sessions new sessions, the lock); a closed
    gate exits 0 silently (--verbose or --json say which and why; a hook's run also
    writes it to the hooks log that `gitdream status` names).
    """
    from gitdream.commands.run import run  # idle path: a command loads only its own modules
    from gitdream.dream.options import RunOptions  # idle path: a command loads only its own modules

    if since and full:
        raise click.UsageError("--since and --full cannot be used together")
    hook = os.environ.get("_GITDREAM_HOOK") if auto else None  # set by gitdream's hook scripts
    try:
        repo = open_repo(ctx)
        cfg = load_config(ctx, repo, {"engine": (engine, "flag --engine")})
        trigger = trigger or ("schedule" if auto else "manual")
        opts = RunOptions(
            trigger=trigger,
            engine=engine,
            dry_run=dry_run,
            branch=branch,
            since=since,
            full=full,
            estimate=estimate,
        )
        progress = _Progress(output.stderr_is_terminal() and not quiet and not json_)
        try:
            result = run(repo, cfg, agent_ids, opts, progress, auto=auto)
        finally:
            progress.close()
    except errors.GitdreamError as exc:
        if hook:  # the hooks log says why this firing did not dream
            from gitdream.trigger import hooklog  # idle path: a command loads only its own modules

            hooklog.record(_start(ctx), hook, output.masked(f"error: {exc.message}"))
        raise
    if hook and not result.disabled:
        from gitdream.trigger import hooklog  # idle path: a command loads only its own modules

        hooklog.record(repo.workdir, hook, hooklog.describe(result))
    _emit(result, render.run(result, quiet=quiet, verbose=verbose), json_)
    closed = result.gate is not None and not result.gate.get("open")
    ctx.exit(0 if closed else result.exit_code)


# --- demo ---------------------------------------------------------------------------------


@cli.command(name="demo")
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
@json_option
@click.pass_context
def demo_cmd(ctx: click.Context, directory: Path | None, json_: bool) -> None:
    """Try gitdream on a generated agent repository, offline.

    Builds a small repository (agent `ops`: definitions, a human-written memory, a week
    of daily logs and a session transcript, committed day by day) in DIRECTORY (default:
    a new temporary folder), runs one dream with the offline engine, and shows the
    commits, the memory it wrote, and how to review and undo it.

    \b
    Examples:
      gitdream demo
      gitdream demo ./try-gitdream
    """
    from gitdream.commands.demo import run_demo  # idle path: a command loads only its own modules

    result = run_demo(directory)
    _emit(result, render.Lines() if json_ else render.demo(result), json_)
    ctx.exit(result.run.exit_code if result.run else 1)


# --- status -------------------------------------------------------------------------------


@cli.command(name="status")
@json_option
@click.pass_context
def status_cmd(ctx: click.Context, json_: bool) -> None:
    """Show, per agent, the last dream and when the next one can start.

    Per agent: last run (time, run id, status; "(repository)" when this machine never
    ran the agent and the dream comes from the repository's receipt notes, as in a clone
    that fetched them — the time gate counts this machine's runs), NEXT — when `run --auto` (a hook, a
    schedule) will dream it: "in 3.5 h" (time gate), "at 5 sessions", "now", "after the
    running dream" (lock held), "after the first commit" (no commit yet: commit the
    agent files, e.g. `gitdream init --commit`), "after the repository is fixed" (merge,
    rebase or detached HEAD), "after fetching gitdream's refs" (a clone without the watermark),
    "never (disabled)" — new sessions since the watermark against min_sessions, raw
    files not committed yet (the next dream ignores them), back-off; for the repository:
    the lock holder, installed hooks, the hooks log and its last decision, the engine
    and whether it is usable.
    Changes nothing in the repository; when gitdream is enabled it rewrites the
    machine-local stamp the hooks read (the time the next dream may start).

    \b
    Examples:
      gitdream status
      gitdream status --json | jq '.agents[] | {id, sessions}'
    """
    from gitdream.commands.status import status  # idle path: a command loads only its own modules

    repo = open_repo(ctx)
    cfg = load_config(ctx, repo)
    result = status(repo, cfg)
    _emit(result, render.status(result), json_)


# --- review and undo: log, show, audit, revert -----------------------------------------------


def _term_width() -> int:
    """Columns for human output: the terminal's width, at most 120 (80 when unknown)."""

    return max(40, min(shutil.get_terminal_size((80, 24)).columns, 120))


def _known_agent(ctx: click.Context, repo: Any, agent_id: str) -> None:
    """ConfigError (exit 1) for an agent id no `agents` glob gives and no run names."""
    from gitdream.commands.review import log  # idle path: a command loads only its own modules

    agents = list_agents(repo.workdir, load_config(ctx, repo), [])
    if agent_id in {a.id for a in agents} or log(repo, agent_id=agent_id, limit=1, noops=True).total:
        return
    select(agents, [agent_id])  # raises ConfigError naming the known agents


@cli.command(name="log")
@click.option("--agent", "agent_id", metavar="ID", callback=_agent_argument, help="Only this agent's runs.")
@click.option("--limit", "-n", type=click.IntRange(min=0), metavar="N", help="Show at most N runs.")
@click.option(
    "--status",
    type=click.Choice(["ok", "partial", "noop", "failed", "aborted", "unknown"]),
    help="Only runs with this status (unknown: commits without a receipt).",
)
@click.option("--all", "all_", is_flag=True, help="Also list no-op runs (agents that had nothing new).")
@json_option
@click.pass_context
def log_cmd(
    ctx: click.Context, agent_id: str | None, limit: int | None, status: str | None, all_: bool, json_: bool
) -> None:
    """List dreams and reverts, newest first, including failed runs.

    No-op runs (one per agent with nothing new, per dream) are hidden, and the last
    line says how many; `--all` or `--status noop` lists them.

    One line per run: id, start time (UTC), agent, status, trigger, memories improved (the
    number of the run's summary line), facts created and corroborated, rejected units, and
    its commits (e: experience, d: definition).
    Runs come from receipts (notes under refs/notes/gitdream) and from the trailers of
    the last 2000 commits of HEAD (a run whose receipt was not fetched shows as unknown).
    `last` in other commands is the newest line with COMMITS (a run that changed
    something), `last~N` the N-th such line below it.

    \b
    Examples:
      gitdream log
      gitdream log --agent ops -n 5
      gitdream log --all
      gitdream log --status failed --json | jq '.runs[].run'
    """
    from gitdream.commands.review import log  # idle path: a command loads only its own modules

    repo = open_repo(ctx)
    if agent_id is not None:
        _known_agent(ctx, repo, agent_id)
    result = log(repo, agent_id=agent_id, limit=limit, status=status, noops=all_)
    filtered = agent_id is not None or status is not None
    _emit(result, render.log(result, limit=limit, filtered=filtered, width=_term_width()), json_)


@cli.command(name="show")
@click.argument("run_ref", metavar="[RUN]", default="last", callback=_run_argument)
@click.option(
    "--agent",
    "agent_id",
    metavar="ID",
    callback=_agent_argument,
    help="Resolve `last` and prefixes among this agent's runs.",
)
@click.option("--patch", "-p", is_flag=True, help="Also print each commit's patch.")
@json_option
@click.pass_context
def show_cmd(ctx: click.Context, run_ref: str, agent_id: str | None, patch: bool, json_: bool) -> None:
    """Show one run: receipt, commits with diffstat, units with sources, rejections.

    RUN is a run id, a unique prefix of one, `last` or `last~N` (default: `last`). As for
    `gitdream revert`, `last` is the newest run that made a commit, not the no-op of an
    agent with nothing new; `last~N` counts back among those runs.

    \b
    Examples:
      gitdream show
      gitdream show 1m8ne43 --patch
      gitdream show last~1 --agent ops --json
    """
    from gitdream.commands.review import show  # idle path: a command loads only its own modules

    repo = open_repo(ctx)
    width = _term_width()
    result = show(repo, run_ref, agent_id=agent_id, patch=patch, width=width)
    _emit(result, render.show(result, width), json_)


@cli.command(name="audit")
@click.argument("agent_id", metavar="[AGENT]", required=False, callback=_agent_argument)
@click.option(
    "--run",
    "run_ref",
    metavar="RUN",
    callback=_run_argument,
    help="Only the facts this run wrote or corroborated.",
)
@click.option("--strict", is_flag=True, help="Exit 1 when any source is missing.")
@json_option
@click.pass_context
def audit_cmd(
    ctx: click.Context, agent_id: str | None, run_ref: str | None, strict: bool, json_: bool
) -> None:
    """Show every fact gitdream wrote beside the source text it cites.

    For each fact in the agent's memory and definitions (as committed at HEAD), each
    source `path#Lstart-Lend@commit` is read at the commit it names, so a log deleted
    later still resolves. A source that does not resolve (commit gone after a history
    rewrite, file or lines missing) is shown as MISSING and counted in the summary line.
    Without AGENT: every agent (with --run: that run's agent).

    \b
    Examples:
      gitdream audit ops
      gitdream audit --run last
      gitdream audit ops --strict --json | jq '.summary'
    """
    from gitdream.commands.review import (  # idle path: a command loads only its own modules
        audit,
        strict_failure,
    )

    repo = open_repo(ctx)
    cfg = load_config(ctx, repo)
    result = audit(repo, cfg, agent_id, run_ref=run_ref)
    failure = strict_failure(result) if strict else None
    _emit(result, render.audit(result, _term_width()), json_)
    if failure is not None:
        output.problem(f"error: {failure.message}")
        if failure.hint:
            output.problem(f"hint: {failure.hint}")
        ctx.exit(failure.exit_code)


@cli.command(name="revert")
@click.argument("run_ref", metavar="RUN", callback=_run_argument)
@click.option(
    "--only", type=click.Choice(["experience", "definition"]), help="Revert only this commit of the run."
)
@click.option("--dry-run", is_flag=True, help="Print the patch it would commit; change nothing.")
@click.option(
    "--branch", metavar="NAME", help="Commit the revert onto a new review branch NAME started at HEAD."
)
@click.option(
    "--replay", is_flag=True, help="Also move the watermark back, so the next dream re-reads the material."
)
@click.option(
    "--agent",
    "agent_id",
    metavar="ID",
    callback=_agent_argument,
    help="Resolve `last` and prefixes among this agent's runs.",
)
@json_option
@click.pass_context
def revert_cmd(
    ctx: click.Context,
    run_ref: str,
    only: str | None,
    dry_run: bool,
    branch: str | None,
    replay: bool,
    agent_id: str | None,
    json_: bool,
) -> None:
    """Undo one dream — its experience, its definitions, or both — keeping later work.

    Makes revert commits (definition first, then experience) with the trailer
    `Gitdream-Reverts: RUN`, through the write gate: a target you changed and did not
    commit refuses, and your other staged and unstaged changes are untouched. Later
    commits to other files are kept; if later commits changed the same lines, nothing is
    changed and the paths are listed. The revert is a run of its own: `gitdream revert`
    of it re-applies the dream. The run's material stays consumed unless --replay.

    \b
    Examples:
      gitdream revert last
      gitdream revert 1m8ne43 --only definition
      gitdream revert last --agent ops --dry-run
      gitdream revert last --replay && gitdream run
    """
    from gitdream.commands.revert import revert  # idle path: a command loads only its own modules

    if replay and branch:
        raise click.UsageError(
            "--replay cannot be combined with --branch: the revert is only proposed there, and the "
            "next dream would re-read material still in memory; merge the review branch, then re-read "
            "with `gitdream run --since REV`"
        )
    repo = open_repo(ctx)
    cfg = load_config(ctx, repo)
    result = revert(
        repo, cfg, run_ref, agent_id=agent_id, only=only, dry_run=dry_run, branch=branch, replay=replay
    )
    _emit(result, render.revert(result), json_)


# --- check --------------------------------------------------------------------------------


def _repo_paths(ctx: click.Context, repo: Any, paths: tuple[Path, ...]) -> list[str]:
    """PATH arguments (relative to the current directory or -C) as repository-relative
    POSIX paths; a path outside the repository is a usage error."""
    start = _start(ctx)
    out = []
    for path in paths:
        rel = repo.relpath(path if path.is_absolute() else start / path)
        if rel == ".." or rel.startswith("../"):
            raise click.BadParameter(f"{path} is outside the repository {repo.workdir}", param_hint="PATH")
        out.append("" if rel == "." else rel)
    return out


@cli.command(name="check")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--staged", is_flag=True, help="Check the staged content (the index), not the working tree.")
@click.option(
    "--index-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Index file to read (implies --staged); default: $GIT_INDEX_FILE, else the repository's index.",
)
@click.option(
    "--changed",
    is_flag=True,
    help="Only files whose content differs from HEAD, and only problems they did not already have there (the pre-commit hook's mode).",
)
@click.option("-q", "--quiet", is_flag=True, help="Print nothing when every file passes.")
@json_option
@click.pass_context
def check_cmd(
    ctx: click.Context,
    paths: tuple[Path, ...],
    staged: bool,
    index_file: Path | None,
    changed: bool,
    quiet: bool,
    json_: bool,
) -> None:
    """Check agent.md prefixes, managed blocks and MEMORY.md limits; exit 1 on a problem.

    Without PATHs, every agent's definition files (agent.md, soul.md, SKILL.md) and the
    *.md files directly in its memory folder are checked. agent.md: the required
    sections end within the first prefix_chars characters, and no managed block starts
    before them. All: managed-block markers are well formed. MEMORY.md: within
    memory_max_lines lines and memory_max_bytes bytes. Topic files: front matter is YAML.
    Problems are printed as `path:line: rule: what is wrong: the fix`.

    \b
    Examples:
      gitdream check                          the working tree, every agent
      gitdream check agents/ops               one agent
      gitdream check --staged                 what `git commit` would commit
      gitdream check --staged --changed       only what this commit changes (the pre-commit hook)
      gitdream check --json | jq '.files[] | select(.ok | not)'

    Exit codes: 0 every file passes, 1 a problem was found (or an error), 2 usage,
    3 internal error.
    """
    from gitdream.commands.check import check_agents, staged_config  # idle path: its own modules only

    repo = open_repo(ctx)
    if index_file is not None:
        staged = True
        index_file = (index_file if index_file.is_absolute() else _start(ctx) / index_file).absolute()
    try:
        cfg = load_config(ctx, repo)
    except errors.ConfigError as exc:
        if not staged:
            raise
        cfg, warning = staged_config(repo, index_file, exc)
        output.warn(warning)
    result = check_agents(
        repo, cfg, _repo_paths(ctx, repo, paths), staged=staged, index_file=index_file, changed=changed
    )
    _emit(result, render.check(result, quiet=quiet), json_)
    ctx.exit(result.exit_code)


# --- hooks --------------------------------------------------------------------------------


@cli.group(name="hooks", cls=GitdreamGroup)
def hooks_group() -> None:
    """Install, remove or inspect gitdream's git hooks.

    \b
    pre-commit    gitdream check --staged --changed: a problem the commit brings in blocks it
    post-merge    new commits arrived (merge, fast-forward): dream, detached
    post-rewrite  the same after `git pull --rebase` (rebase only, never amend)
    post-commit   the same when a commit concludes a merge that had stopped
    """


def _hook_option(func: F) -> F:

    return click.option(
        "--hook",
        "hooks",
        multiple=True,
        type=click.Choice(HOOK_NAMES),
        help="Only this hook (repeatable); default: all four.",
    )(func)


def _allow_outside_option(func: F) -> F:
    return click.option(
        "--allow-outside",
        is_flag=True,
        help="Allow a hooks directory outside this repository (a shared core.hooksPath).",
    )(func)


@hooks_group.command(name="install")
@_hook_option
@click.option(
    "--python",
    "python",
    type=click.Path(dir_okay=False),
    help="Interpreter the hooks start gitdream with (default: the one running this command).",
)
@_allow_outside_option
@json_option
@click.pass_context
def hooks_install(
    ctx: click.Context, hooks: tuple[str, ...], python: str | None, allow_outside: bool, json_: bool
) -> None:
    """Install the hooks where git runs them (core.hooksPath, worktrees honoured).

    A hook that is already there is kept, renamed to <hook>.gitdream-prev, and run
    first with the same arguments; a failing previous pre-commit still blocks the
    commit. Installing again changes nothing; `gitdream hooks uninstall` restores
    exactly what was there.

    \b
    Examples:
      gitdream hooks install
      gitdream hooks install --hook pre-commit
      gitdream hooks install --json
    """
    from gitdream.commands import hooks as hooks_cmd  # idle path: a command loads only its own modules

    repo = open_repo(ctx)
    seen = clock.epoch()
    try:
        cfg = load_config(ctx, repo)
    except GitdreamError:  # the hooks still go in; the first commit's check names the problem
        cfg = None
    result = hooks_cmd.install(
        repo, hooks, python=python, allow_outside=allow_outside, cfg=cfg, config_seen=seen
    )
    _emit(result, render.hooks_result(result), json_)


@hooks_group.command(name="uninstall")
@_hook_option
@_allow_outside_option
@json_option
@click.pass_context
def hooks_uninstall(ctx: click.Context, hooks: tuple[str, ...], allow_outside: bool, json_: bool) -> None:
    """Remove gitdream's hooks and put back the hooks they chained.

    Hooks that are not gitdream's are left alone; nothing to remove is not an error.

    \b
    Examples:
      gitdream hooks uninstall
      gitdream hooks uninstall --hook post-commit
    """
    from gitdream.commands import hooks as hooks_cmd  # idle path: a command loads only its own modules

    repo = open_repo(ctx)
    result = hooks_cmd.uninstall(repo, hooks, allow_outside=allow_outside)
    _emit(result, render.hooks_result(result), json_)


@hooks_group.command(name="status")
@json_option
@click.pass_context
def hooks_status(ctx: click.Context, json_: bool) -> None:
    """Show where git runs hooks from and the state of each of gitdream's hooks.

    States: installed, outdated, not-executable, broken, chained-by-other, chain-loop,
    renamed-by-lefthook, dropped-by-husky, husky, via-lefthook, via-husky, via-hook
    (a hook manager's configuration or the hook calls `gitdream hook NAME`), foreign,
    foreign-tracked (a hook file git tracks, which install will not move), missing;
    each that needs a fix says which. Exit status 0 in every case.

    \b
    Examples:
      gitdream hooks status
      gitdream hooks status --json | jq .installed
    """
    from gitdream.commands import hooks as hooks_cmd  # idle path: a command loads only its own modules
    from gitdream.trigger.hookscripts import describe_status  # idle path: hooks status only

    repo = open_repo(ctx)
    result = hooks_cmd.status(repo)
    _emit(result, render.hooks_status(result, describe_status), json_)


@cli.command(
    name="hook",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.argument("name", metavar="NAME", type=click.Choice(HOOK_NAMES))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def hook_cmd(name: str, args: tuple[str, ...]) -> None:
    """Run gitdream's git hook NAME here, for hooks that are not gitdream's files.

    The entry point for a tracked hooks folder (core.hooksPath), Husky's .husky/<hook>
    and lefthook's lefthook.yml: it does exactly what the hook `gitdream hooks install`
    writes does (the same sh script, its fast path and its log), with git's arguments
    and standard input, and chains nothing. Exit status: the hook's (pre-commit: 1 when
    the check blocks the commit; the others 0).

    \b
    Examples:
      gitdream hook pre-commit               in .husky/pre-commit
      exec gitdream hook post-merge "$@"     in .githooks/post-merge
      run: gitdream hook post-merge {0}      in lefthook.yml
    """
    from gitdream.commands import hooks as hooks_cmd  # idle path: a command loads only its own modules

    hooks_cmd.run_hook(name, args)


# --- schedule -----------------------------------------------------------------------------


@cli.group(name="schedule", cls=GitdreamGroup)
def schedule_group() -> None:
    """Run gitdream on a schedule: cron, a systemd user timer, GitHub Actions or GitLab CI.

    A schedule only asks `gitdream run --auto --trigger schedule`; the gates decide.
    """


def _schedule_kinds(verb: str) -> Callable[[F], F]:
    helps = {
        "cron": {
            "install": "Add the entry to your crontab (and create its log folder).",
            "uninstall": "Remove this repository's entry from your crontab.",
        },
        "systemd": {
            "install": "Write a user service and timer.",
            "uninstall": "Remove the user service, timer and its enable link.",
        },
        "github": {
            "install": "Write .github/workflows/gitdream.yml (not committed).",
            "uninstall": "Remove .github/workflows/gitdream.yml when it is gitdream's.",
        },
        "gitlab": {
            "install": "Write .gitlab/gitdream.yml (not committed).",
            "uninstall": "Remove .gitlab/gitdream.yml when it is gitdream's.",
        },
    }

    def decorate(func: F) -> F:
        for kind in reversed(("cron", "systemd", "github", "gitlab")):
            func = click.option(f"--{kind}", "kind", flag_value=kind, help=helps[kind][verb])(func)
        return func

    return decorate


@schedule_group.command(name="show")
@click.option("--cron", "kind", flag_value="cron", help="Only the crontab entry.")
@click.option("--systemd", "kind", flag_value="systemd", help="Only the systemd service and timer.")
@click.option("--github", "--ci", "kind", flag_value="github", help="Only the GitHub Actions workflow.")
@click.option("--gitlab", "kind", flag_value="gitlab", help="Only the GitLab CI job.")
@json_option
@click.pass_context
def schedule_show(ctx: click.Context, kind: str | None, json_: bool) -> None:
    """Print the schedules for this repository; write nothing.

    \b
    Examples:
      gitdream schedule show
      gitdream schedule show --cron
      gitdream schedule show --github > .github/workflows/gitdream.yml
    """
    from gitdream.commands import schedule as schedule_cmd  # idle path: a command loads only its own modules

    repo = open_repo(ctx)
    shown = schedule_cmd.show(repo.workdir)
    _emit(shown, render.schedule_show(shown, kind), json_)


@schedule_group.command(name="install")
@_schedule_kinds("install")
@json_option
@click.pass_context
def schedule_install(ctx: click.Context, kind: str | None, json_: bool) -> None:
    """Install a schedule for this repository: --cron, --systemd, --github or --gitlab.

    --systemd writes <unit>.service and <unit>.timer (Persistent=true, a randomized
    delay; the service reads its environment, e.g. ANTHROPIC_API_KEY, from the file
    `environment` next to your user config) into ~/.config/systemd/user (or
    $XDG_CONFIG_HOME/systemd/user) and prints the systemctl and loginctl commands that
    remain. --cron adds one entry to your crontab, keeping every other line, and creates
    its log folder. --github and --gitlab write the pipeline into the working tree for you
    to review and commit. Installing again updates gitdream's own entry or file only.

    \b
    Examples:
      gitdream schedule install --systemd
      gitdream schedule install --cron
      gitdream schedule install --github
    """
    from gitdream.commands import schedule as schedule_cmd  # idle path: a command loads only its own modules

    if kind is None:
        raise click.UsageError("choose --cron, --systemd, --github or --gitlab")
    repo = open_repo(ctx)
    result = schedule_cmd.install(repo.workdir, kind)
    _emit(result, render.schedule_result(result), json_)


@schedule_group.command(name="uninstall")
@_schedule_kinds("uninstall")
@json_option
@click.pass_context
def schedule_uninstall(ctx: click.Context, kind: str | None, json_: bool) -> None:
    """Remove a schedule of this repository: --cron, --systemd, --github or --gitlab.

    Removes only what `schedule install` wrote (gitdream's crontab entry for this
    repository, its unit files and enable link, its pipeline file) and says what is
    left to do; anything else of that name is left alone (exit 1). Nothing to remove is
    not an error.

    \b
    Examples:
      gitdream schedule uninstall --systemd
      gitdream schedule uninstall --cron
    """
    from gitdream.commands import schedule as schedule_cmd  # idle path: a command loads only its own modules

    if kind is None:
        raise click.UsageError("choose --cron, --systemd, --github or --gitlab")
    repo = open_repo(ctx)
    result = schedule_cmd.uninstall(repo.workdir, kind)
    _emit(result, render.schedule_result(result), json_)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="gitdream")


if __name__ == "__main__":  # pragma: no cover
    main()
