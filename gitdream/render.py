"""Human output: every command's result, rendered as lines for the terminal.

The one render path of the CLI: a command returns a typed result, the function here for
its type turns it (never its JSON) into `Lines`, and the CLI writes them in order — `out`
to stdout, `err` and `warn` to stderr. With `--json` stdout carries the result's
`to_json()` instead, and only the stderr lines marked `always` (warnings, errors) are
written. Nothing here prints; `gitdream/cli.py` alone does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gitdream.config import KEYS

if TYPE_CHECKING:
    from gitdream.commands.check import CheckResult
    from gitdream.commands.configshow import ConfigShowResult
    from gitdream.commands.demo import DemoResult
    from gitdream.commands.init import InitResult
    from gitdream.commands.revert import RevertResult
    from gitdream.commands.review import AuditResult, LogResult, ShowResult
    from gitdream.commands.run import RunResult
    from gitdream.commands.schedule import ScheduleInstall, ScheduleShow
    from gitdream.commands.status import StatusResult
    from gitdream.commands.trust import TrustResult
    from gitdream.dream.runs import Run
    from gitdream.trigger.hookscripts import HooksResult, HooksStatus

MAX_QUOTED_LINES = 6
ESTIMATE_NOTE = " — nothing was sent"


class Lines:
    """Lines to write, in order: `(stream, text, always)` with stream "out", "err" or
    "warn"; `always`: written with `--json` too (never for "out"). A plain class, not a
    dataclass: every command, a closed gate's too, imports this module."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str, bool]] = []

    def out(self, text: str = "") -> None:
        self.items.append(("out", text, False))

    def err(self, text: str, *, always: bool = True) -> None:
        self.items.append(("err", text, always))

    def warn(self, text: str, *, always: bool = True) -> None:
        self.items.append(("warn", text, always))

    def warnings(self, texts: list[str]) -> None:
        for text in texts:
            self.warn(text)

    def table(self, rows: list[list[str]], header: list[str] | None = None) -> None:
        for line in table(rows, header):
            self.out(line)


def table(rows: list[list[str]], header: list[str] | None = None) -> list[str]:
    """Rows as left-aligned columns, two spaces apart (the header first)."""
    every = ([header] if header else []) + rows
    if not every:
        return []
    widths = [max(len(str(row[i])) for row in every) for i in range(len(every[0]))]
    return ["  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=False)).rstrip() for row in every]


def clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 1)] + "…"


def short_time(iso: str | None) -> str:
    """`2026-03-08T12:00:05Z` → `2026-03-08 12:00` (UTC)."""
    if not iso:
        return "?"
    return iso.replace("T", " ")[:16]


# --- init, config -----------------------------------------------------------------------


def init(result: InitResult, shown: Callable[[str], str]) -> Lines:
    """`shown(path)`: a repository-relative path as seen from the current folder."""
    lines = Lines()
    lines.warnings(result.warnings)
    for path in result.kept:
        lines.out(f"Kept     {shown(path)} (exists)")
    for path in result.created:
        lines.out(f"Created  {shown(path)}")
    if result.adopted and result.agent_id is None:
        count = len(result.adopted)
        lines.out(
            f"Adopted {count} agent{'s' if count != 1 else ''}: {', '.join(result.adopted)} "
            "(their files are kept as they are)"
        )
    elif result.adopted:
        lines.out(
            f"Adopted agent {result.agent_id} ({shown(result.agent_dir or '.')}): its files are kept as they are"
        )
    if result.commit:
        n = len(result.created)
        lines.out(f"Committed {n} {'file' if n == 1 else 'files'} as {result.commit[:7]}")
    elif not result.created:
        lines.out("Nothing to create: everything gitdream needs is there")
    else:
        lines.out("Not committed: review the files, then `git add` and `git commit` them")
    if result.untracked:
        # an earlier `init` without --commit: `--commit` commits only what it creates
        count = len(result.untracked)
        lines.out(
            f"Not tracked by git yet ({count} file{'s' if count != 1 else ''} kept above: "
            f"{', '.join(shown(p) for p in result.untracked)}): a dream reads only committed files; "
            "`git add` and `git commit` them"
        )
    return lines


def _toml_shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(f'"{v}"' for v in value) + "]"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def config_show(result: ConfigShowResult) -> Lines:
    lines = Lines()
    user = result.files.get("user") or f"(none: {result.user_file} does not exist)"
    lines.out(f"user config:  {user}")
    lines.out(f"gitdream.toml: {result.files.get('repository') or '(none)'}")
    lines.out()
    lines.table([[k.name, _toml_shown(k.value), k.source] for k in result.keys], ["KEY", "VALUE", "SOURCE"])
    if result.ignored:
        lines.out()
        lines.out("ignored (gitdream.toml may not set these user-only keys; see `gitdream trust`):")
        for name, value in result.ignored.items():
            lines.out(f"  {name} = {_toml_shown(value)}")
    return lines


def trust(result: TrustResult) -> Lines:
    from gitdream.commands.trust import masked  # idle path: render is imported by every command

    lines = Lines()
    if result.action == "list":
        if not result.grants:
            lines.out(f"no repository is trusted ({result.store})")
        for grant in result.grants:
            values = ", ".join(f"{k} = {v!r}" for k, v in masked(grant.settings).items())
            lines.out(f"{grant.workdir}  (since {grant.granted}): {values}")
        return lines
    settings = ", ".join(f"{k} = {v!r}" for k, v in result.shown_settings.items())
    if result.action == "granted":
        lines.out(f"Trusted {result.workdir}: its gitdream.toml may set {settings}")
        lines.out(
            "A different value is ignored until you run `gitdream trust` again; "
            "`gitdream trust --revoke` withdraws this."
        )
    elif result.action == "revoked":
        lines.out(f"No longer trusted: {result.workdir}" + (f" (was: {settings})" if settings else ""))
    elif result.action == "not-trusted":
        lines.out(f"{result.workdir} was not trusted; nothing changed")
    else:
        names = ", ".join(k.name for k in KEYS if k.user_only)
        lines.out(
            f"{result.workdir}: gitdream.toml sets none of the user-only keys ({names}); nothing to trust"
        )
    return lines


# --- run, demo ----------------------------------------------------------------------------


def run(result: RunResult, *, quiet: bool = False, verbose: bool = False) -> Lines:
    """A run: a closed gate (said only with `verbose`), or per agent its warnings, diff
    (--dry-run) or estimate, summary (or error) and refused phases."""
    lines = Lines()
    if result.gate is not None and not result.gate.get("open"):
        if verbose:
            lines.err(f"gate '{result.gate['gate']}' is closed: {result.gate['reason']}", always=False)
        return lines
    lines.warnings(result.warnings)
    if result.disabled:
        lines.err(
            f"gitdream is disabled (enabled = false, from {result.disabled}); nothing to do", always=False
        )
        return lines
    idle = [o for o in result.outcomes if o.receipt.status == "noop" and o.estimate is None and not o.diff]
    collapse = len(idle) > 1
    idle_ids = {id(o) for o in idle}
    for outcome in result.outcomes:
        receipt = outcome.receipt
        for warning in [*receipt.warnings, *outcome.warnings]:
            lines.warn(f"{outcome.agent}: {warning}")
        if outcome.diff:
            lines.out(outcome.diff.rstrip("\n"))
        if outcome.estimate is not None:
            lines.out(f"{outcome.agent}: {_estimate(outcome.estimate)}")
            continue
        if receipt.error:
            lines.err(f"error: {outcome.summary}")
            if receipt.error.get("hint"):
                lines.err(f"hint: {receipt.error['hint']}")
        elif not quiet and not (collapse and id(outcome) in idle_ids):
            lines.out(outcome.summary)
            if receipt.not_kept:
                lines.out(f"  read and not kept: {_reasons(receipt.not_kept)}")
    if collapse and not quiet:
        lines.out(_idle_line([o.agent for o in idle]))
    return lines


NOT_KEPT_REASONS = 4
"""How many reasons for entries read and not kept `gitdream run` names (`show` lists all)."""


def _reasons(counts: dict[str, int], most: int = NOT_KEPT_REASONS) -> str:
    """`395 activity record, 142 status snapshot, … 18 for 3 other reasons` (counts most first)."""
    items = list(counts.items())
    named = [f"{n:,} {reason}" for reason, n in items[:most]]
    rest = items[most:]
    if len(rest) == 1:
        named.append(f"{rest[0][1]:,} {rest[0][0]}")
    elif rest:
        named.append(f"{sum(n for _, n in rest):,} for {len(rest)} other reasons")
    return ", ".join(named)


IDLE_NAMES = 10
"""How many idle agents `gitdream run` names in its one line about them (`--json` has all)."""


def _idle_line(agents: list[str]) -> str:
    """One line for every agent with nothing new (one line each hid the dreams among 30)."""
    named = ", ".join(agents[:IDLE_NAMES])
    more = len(agents) - IDLE_NAMES
    tail = f", … and {more} more (`--json` lists every run)" if more > 0 else ""
    return f"Nothing new for {len(agents)} agents: {named}{tail}"


def _estimate(estimate: dict[str, Any]) -> str:
    """The plan in one line: its calls and tokens, the entries they cover and, when the
    budgets leave some, how many are left for the next run and the limit that leaves them."""
    calls = int(estimate.get("calls", 0))
    screens = estimate.get("screen_calls")
    entries = int(estimate.get("entries", 0))
    left = int(estimate.get("entries_left", 0))
    planned = int(estimate.get("entries_planned", entries - left))
    covered = f"{planned:,} of {entries:,}" if left else f"{entries:,}"
    limit = estimate.get("limit")
    return (
        f"{calls} distill call{'s' if calls != 1 else ''}"
        + (f" (screener: {screens})" if screens else "")
        + f", about {estimate.get('input_tokens', 0)} input tokens for {covered} entries"
        + (f"; {left:,} entries left for the next run" + (f" ({limit})" if limit else "") if left else "")
        + ESTIMATE_NOTE
    )


def demo(result: DemoResult) -> Lines:
    lines = run(result.run) if result.run is not None else Lines()
    where = result.path
    lines.out("")
    lines.out(f"Demo repository: {where}")
    lines.out("")
    lines.out("The dream's commits (newest first):")
    for line in result.log_stat.rstrip().splitlines():
        lines.out(f"  {line}")
    for path, text in result.files.items():
        lines.out("")
        lines.out(f"--- {path} ---")
        shown = text.rstrip().splitlines()
        for line in shown[:30]:
            lines.out(f"  {line}")
        if len(shown) > 30:
            lines.out(f"  … ({len(shown) - 30} more lines)")
    lines.out("")
    lines.out("Review and undo:")
    lines.out(f"  cd {where}")
    lines.out("  git log -p -2              # the experience and definition commits, as diffs")
    lines.out("  gitdream log               # every dream, with its receipt")
    lines.out("  gitdream show last         # units, sources and rejected units of the last dream")
    lines.out("  gitdream audit ops         # every fact beside the log text it cites")
    lines.out("  gitdream revert last       # undo the last dream, keeping everything else")
    return lines


# --- status -------------------------------------------------------------------------------


def _last_run(agent: Any) -> str:
    """`status`'s LAST RUN of an `AgentStatus`: "2026-12-01T21:52:00Z ok", "never", and
    "(repository)" after a dream learnt from the repository (a clone), not this machine."""
    if agent.last_run_source == "repository" and agent.last_run_time is None:
        return f"watermark {(agent.watermark or '')[:7]} (repository)"
    text = (agent.last_run_time or "never") + (f" {agent.last_run_status}" if agent.last_run_status else "")
    return text + (" (repository)" if agent.last_run_source == "repository" else "")


def status(result: StatusResult) -> Lines:
    lines = Lines()
    lines.warnings(result.warnings)
    engine = result.engine
    usable = "usable" if engine.usable else f"NOT usable: {engine.reason}"
    lines.out(
        f"gitdream {'enabled' if result.enabled else 'DISABLED'} ({result.enabled_source}); "
        f"engine {engine.name} ({usable})"
    )
    repository = result.repository
    head = (repository.head or "")[:7] or "(no commits)"
    lines.out(f"branch {repository.branch or '(detached)'} at {head}")
    if repository.problem:
        lines.out(f"repository: {repository.problem}")
        if repository.hint:
            lines.out(f"  next: {repository.hint}")
    if result.lock:
        lock = result.lock
        stale = f" (stale: {lock.stale})" if lock.stale else ""
        if not lock.recorded:
            lines.out(
                f"lock: a lock file with no holder recorded yet (being written, or left by a crash){stale}"
            )
        else:
            lines.out(f"lock: run {lock.run}, pid {lock.pid} on {lock.host} since {lock.since}{stale}")
    else:
        lines.out("lock: free")
    hooks = result.hooks.hooks if result.hooks is not None else []
    if any(hook.status != "missing" for hook in hooks):
        lines.out("hooks: " + ", ".join(f"{hook.name} {hook.status}" for hook in hooks))
    else:
        lines.out("hooks: missing (gitdream hooks install)")
    if result.hooks_log is not None:
        lines.out(f"hooks log: {result.hooks_log.path}")
        last_decision = result.hooks_log.last
        if last_decision is not None:
            lines.out(f"  last: {last_decision.time} {last_decision.hook}: {last_decision.message}")
    lines.out("")
    rows = []
    for agent in result.agents:
        rows.append(
            [
                agent.id,
                _last_run(agent),
                agent.next,
                f"{agent.sessions if agent.sessions is not None else '?'}/{agent.needed}"
                + (f" +{agent.pending} pending" if agent.pending else ""),
                str(agent.failures),
                "?" if agent.uncommitted_raw is None else str(len(agent.uncommitted_raw)),
            ]
        )
    lines.table(rows, ["AGENT", "LAST RUN", "NEXT", "SESSIONS", "FAILURES", "UNCOMMITTED RAW"])
    for agent in result.agents:
        for path in (agent.uncommitted_raw or [])[:10]:
            lines.out(f"  {agent.id}: not committed, ignored by the next dream: {path}")
    return lines


# --- log, show, audit, revert ---------------------------------------------------------------


def _run_commits(run: Run) -> str:
    parts = [
        f"{kind[0]}:{oid[:7]}" for kind in ("experience", "definition") if (oid := run.commits.get(kind))
    ]
    return " ".join(parts) or "-"


def _of_agent(run: Run) -> str:
    return f" of agent {run.agent}" if run.agent else ""


def _run_notes(run: Run) -> list[str]:
    notes = []
    if run.reverts:
        what = f" ({run.only} only)" if run.only else ""
        notes.append(f"reverts {run.reverts}{what}")
    for item in run.reverted_by:
        what = f" ({item['only']} only)" if item.get("only") else ""
        notes.append(f"reverted by {item['run']}{what}")
    if run.receipt is None and run.completed_by:
        notes.append(f"interrupted before its receipt; finished by run {run.completed_by}")
    elif run.receipt is None and run.unfinished == "interrupted":
        notes.append(f"interrupted; the next run{_of_agent(run)} finishes it")
    elif run.receipt is None and run.unfinished == "running":
        notes.append("running now; its receipt is written when it ends")
    elif run.receipt is None:
        notes.append("no receipt here (fetch refs/notes/gitdream); from commit trailers")
    return notes


def log(result: LogResult, *, limit: int | None, filtered: bool, width: int) -> Lines:
    """`filtered`: --agent or --status was given."""
    lines = Lines()
    if result.walk_truncated:
        lines.err(
            f"note: commits without receipts were looked for in the last {result.walk_limit} commits of HEAD only",
            always=False,
        )
    if not result.runs:
        if result.total:
            lines.out(f"{result.total} runs match; --limit {limit} shows none of them.")
        elif result.hidden:
            lines.out("No runs changed anything" + (" that match." if filtered else "."))
        elif filtered:
            lines.out("No runs match.")
        else:
            lines.out("No dreams yet; dream with `gitdream run`.")
        _log_footer(lines, result)
        return lines
    rows = []
    for run in result.runs:
        counts: dict[str, Any] = run.shown_counts
        if run.status in ("failed", "aborted") and not any(run.commits.values()):
            # nothing was written: what it would have created is not news (`--json` has it)
            counts.update(improved="-", created="-", corroborated="-")
        rows.append(
            [
                run.run,
                short_time(run.time),
                run.agent or "?",
                run.status,
                run.trigger or "-",
                str(counts["improved"]),
                str(counts["created"]),
                str(counts["corroborated"]),
                str(counts["rejected"]),
                _run_commits(run),
            ]
        )
    header = ["RUN", "TIME (UTC)", "AGENT", "STATUS", "TRIGGER", "IMPR", "NEW", "CORR", "REJ", "COMMITS"]
    shown_lines = table(rows, header)
    # Long agent names are clipped so a line fits the terminal; `--json` has them whole.
    # Never so short that two agents look alike (`playwright-checkout`, `playwright-login`).
    over = max(len(line) for line in shown_lines) - width
    if over > 0:
        names = sorted({row[2] for row in rows})
        keep = max(max(len(n) for n in names) - over, 10)
        while len({clip(n, keep) for n in names}) < len(names):
            keep += 1
        for row in rows:
            row[2] = clip(row[2], keep)
        shown_lines = table(rows, header)
    lines.out(shown_lines[0])
    for line, run in zip(shown_lines[1:], result.runs, strict=True):
        lines.out(line)
        for note in _run_notes(run):
            lines.out(f"  └ {note}")
    if result.total > len(result.runs):
        lines.out(f"… {result.total - len(result.runs)} older runs (raise --limit to see them)")
    _log_footer(lines, result)
    return lines


def _log_footer(lines: Lines, result: LogResult) -> None:
    if result.hidden:
        runs = "run" if result.hidden == 1 else "runs"
        lines.out(f"({result.hidden} no-op {runs} hidden: agents with nothing new; --all lists them)")


def show(result: ShowResult, width: int) -> Lines:
    lines = Lines()
    run = result.run
    receipt = run.receipt
    lines.out(f"run      {run.run}  {run.status}")
    for note in _run_notes(run):
        lines.out(f"         {note}")
    lines.out(f"agent    {run.agent or '?'}")
    duration = receipt.duration_seconds if receipt else None
    took = f", took {duration:g} s" if duration is not None else ""
    lines.out(f"time     {run.time or '?'}{took}")
    lines.out(f"trigger  {run.trigger or '?'}, engine {run.engine or '-'}")
    if run.input_commit:
        line = f"input    {run.input_commit[:12]}"
        replayed = receipt is not None and receipt.revert is not None and receipt.revert.replay
        if receipt is not None and (receipt.watermark_after is not None or replayed):
            before, after = receipt.watermark_before, receipt.watermark_after
            line += f", watermark {before[:12] if before else 'none'} → {after[:12] if after else 'none'}"
        lines.out(line)
    if receipt is not None:
        _show_receipt(lines, receipt, result.not_written(), made_commit=bool(result.commits))
    for commit in result.commits:
        lines.out("")
        view = commit.view
        if view is None:
            lines.out(f"{commit.kind} commit {commit.oid[:12]}: not in this repository")
            continue
        where = "" if commit.in_head else "  (not in HEAD's history)"
        lines.out(clip(f"{commit.kind} commit {view.oid[:7]}  {view.subject}{where}", width))
        for line in view.stat.rstrip("\n").splitlines():
            lines.out(line)
        if commit.with_patch:
            lines.out("")
            lines.out((view.patch or "").rstrip("\n"))
    if receipt is not None:
        _show_units(lines, result.units(), width)
        _show_lists(lines, receipt, width)
    return lines


_COUNT_ORDER = (
    "entries",
    "not_kept",
    "units",
    "created",
    "corroborated",
    "definition",
    "rejected",
    "demoted",
    "files",
)
# The words `show` uses for a receipt's counts where the key alone would mislead.
_COUNT_NAMES = {"not_kept": "not kept", "skipped": "already consolidated or empty"}


# Counts of what a run distilled or dropped, not of what it wrote to memory.
_READ_COUNTS = frozenset({"entries", "units", "rejected", "skipped", "deferred", "not_kept"})


def _show_receipt(lines: Lines, receipt: Any, not_written: list[str], *, made_commit: bool) -> None:
    """The counts, tokens and error of a receipt. A run that wrote none of its units (it
    failed, was refused, or was a dry run) puts the counts of writes under "not written";
    one that wrote only some kinds says which kinds were not written."""
    counts = dict(receipt.counts)
    if receipt.not_kept:
        counts["not_kept"] = sum(receipt.not_kept.values())
    if counts:
        keys = [k for k in _COUNT_ORDER if k in counts] + sorted(k for k in counts if k not in _COUNT_ORDER)
        keys = [k for k in keys if isinstance(counts[k], int)]
        if not_written and not made_commit:
            read = ", ".join(f"{counts[k]} {_COUNT_NAMES.get(k, k)}" for k in keys if k in _READ_COUNTS)
            unwritten = ", ".join(
                f"{counts[k]} {_COUNT_NAMES.get(k, k)}" for k in keys if k not in _READ_COUNTS
            )
            lines.out(f"counts   {read}; not written: {unwritten}")
        else:
            lines.out(f"counts   {', '.join(f'{counts[k]} {_COUNT_NAMES.get(k, k)}' for k in keys)}")
            if not_written:
                kinds = " and ".join(not_written)
                lines.out(f"         not written: the {kinds} units (no {kinds} commit)")
    tokens = receipt.tokens
    if any(tokens.values()):
        lines.out(f"tokens   {tokens.get('input', 0)} input, {tokens.get('output', 0)} output")
    if receipt.error:
        lines.out(f"error    {receipt.error.get('message')}")


def _show_units(lines: Lines, units: list[dict[str, Any]], width: int) -> None:
    """`show`'s units: a unit the run did not write reads "would have <action>"."""
    import textwrap  # idle path: render is imported by every command

    if not units:
        return
    wrap = max(width - 6, 30)
    unwritten = sum(1 for unit in units if not unit["written"])
    note = (
        "" if not unwritten else ", not written" if unwritten == len(units) else f", {unwritten} not written"
    )
    lines.out("")
    lines.out(f"units ({len(units)}{note})")
    for unit in units:
        action = str(unit.get("action", "?"))
        if not unit["written"]:
            action = f"would have {action}"
        lines.out(clip(f"  {action}  {unit.get('path', '')}", width))
        for line in textwrap.wrap(str(unit.get("text", "")), wrap):
            lines.out(f"      {line}")
        for source in unit.get("sources", []):
            lines.out(clip(f"      source: {source}", width))


def _show_lists(lines: Lines, receipt: Any, width: int) -> None:
    import textwrap  # idle path: render is imported by every command

    wrap = max(width - 6, 30)
    if receipt.rejected:
        lines.out("")
        lines.out(f"rejected ({len(receipt.rejected)})")
        for item in receipt.rejected:
            lines.out(clip(f"  {item.get('stage', '?')}: {item.get('title', '')!r}", width))
            for line in textwrap.wrap(str(item.get("reason", "")), wrap):
                lines.out(f"      {line}")
    not_kept = receipt.not_kept
    if not_kept:
        lines.out("")
        count = sum(not_kept.values())
        lines.out(
            f"read and not kept ({count:,} {'entry' if count == 1 else 'entries'}, below the salience bar)"
        )
        for reason, n in not_kept.items():
            lines.out(clip(f"  {n:>6,}  {reason}", width))
    if receipt.pending:
        lines.out("")
        lines.out("pending (read again by the next dream)")
        for item in receipt.pending:
            _wrapped(lines, _pending_line(item), width)
    if receipt.warnings:
        lines.out("")
        lines.out("warnings")
        for warning in receipt.warnings:
            # wrapped, never clipped: a warning ends with what to do about it
            _wrapped(lines, str(warning), width)


def _pending_line(item: dict[str, Any]) -> str:
    """One pending record of a receipt for `show`: how much of the file is left for the
    next run, and why (`path: 3 entries left for the next run (over max_units (30))`);
    the reason loses its own "left for the next run"."""
    reason = str(item.get("reason") or "")
    for said in ("; left for the next run", "left for the next run: ", "left for the next run"):
        reason = reason.replace(said, "")
    why = f" ({reason.strip()})" if reason.strip() else ""
    count = item.get("count")
    count = count if isinstance(count, int) else len(item.get("entries") or [])
    if count:
        what = f"{count:,} {'entry' if count == 1 else 'entries'}"
    else:  # no ids kept (`receipts.bounded_pending`): the whole file since `since`
        since = str(item.get("since") or "")[:7]
        what = f"the file's new lines since {since}" if since else "the whole file"
    return f"{item.get('path')}: {what} left for the next run{why}"


def _wrapped(lines: Lines, text: str, width: int) -> None:
    """`text` as an item of a `show` list: wrapped to `width`, continuation lines indented."""
    import textwrap  # idle path: render is imported by every command

    wrapped = textwrap.wrap(
        text,
        max(width, 40),
        initial_indent="  ",
        subsequent_indent="    ",
        break_long_words=False,
        break_on_hyphens=False,
    )
    for line in wrapped or ["  "]:
        lines.out(line.rstrip())


def audit(result: AuditResult, width: int) -> Lines:
    import textwrap  # idle path: render is imported by every command

    lines = Lines()
    lines.warnings(result.warnings)
    current = None
    for fact in result.facts:
        if fact.path != current:
            if current is not None:
                lines.out("")
            current = fact.path
            lines.out(fact.path)
        seen = f"  (seen {fact.seen})" if fact.seen and fact.seen > 1 else ""
        wrapped = textwrap.wrap(fact.text + seen, max(width - 4, 30)) or [""]
        lines.out(f"  - {wrapped[0]}")
        for line in wrapped[1:]:
            lines.out(f"    {line}")
        if not fact.sources:
            lines.out("      (no sources: not in gitdream's fact form)")
        for source in fact.sources:
            if source.status == "reference":
                named = (
                    f"{source.fact['path']}: {source.fact['text']}" if source.fact else "no longer in memory"
                )
                lines.out(clip(f"      refers to {source.ref} ({named})", max(width, len(source.ref) + 30)))
                continue
            # References are never clipped: a path cut short is no use for looking it up.
            if source.status == "missing":
                lines.out(f"      MISSING {source.ref}")
                for line in textwrap.wrap(str(source.reason), max(width - 8, 30)):
                    lines.out(f"        {line}")
                continue
            lines.out(f"      {source.path}#L{source.start}-L{source.end} @ {str(source.commit)[:12]}")
            quoted = source.message.splitlines() if source.message else (source.text or [])
            for line in quoted[:MAX_QUOTED_LINES]:
                lines.out(clip(f"        │ {line}", width))
            if len(quoted) > MAX_QUOTED_LINES:
                lines.out(f"        │ … {len(quoted) - MAX_QUOTED_LINES} more lines")
    if result.facts:
        lines.out("")
    lines.out(result.summary_line)
    return lines


def revert(result: RevertResult) -> Lines:
    lines = Lines()
    lines.warnings(result.warnings)
    if result.dry_run:
        lines.out(result.patch.rstrip("\n"))
        planned = ", ".join(
            f"{c.kind} {c.reverts[:7]} ({len(c.paths)} file{'s' if len(c.paths) != 1 else ''})"
            for c in result.commits
        )
        planned = planned or "no commit, only its watermark"
        lines.err(
            f"Dry run: would revert run {result.reverted} of agent {result.agent}: {planned}; nothing changed",
            always=False,
        )
        return lines
    made = ", ".join(f"{c.kind} {c.reverts[:7]} → {str(c.oid)[:7]}" for c in result.commits)
    where = f" on branch {result.branch}" if result.branch else ""
    reapplied = result.reverts_a_revert
    if made:
        if reapplied:
            lines.out(
                f"Re-applied what revert {result.reverted} of agent {result.agent} undid{where}: {made}"
            )
        else:
            lines.out(f"Reverted run {result.reverted} of agent {result.agent}{where}: {made}")
        lines.out(f"Revert run {result.run}; undo it with `gitdream revert {result.run}`")
    else:
        lines.out(
            f"Run {result.reverted} of agent {result.agent} was already undone: its files stay as they "
            f"are (this revert is run {result.run})"
        )
    if result.watermark is not None:
        moved_to = str(result.watermark["to"] or "")[:7] or "nothing (before the first dream)"
        lines.out(
            f"Watermark of {result.agent} moved back to {moved_to}: the next dream reads that material again"
        )
    elif not reapplied:
        lines.out(
            f"The run's material stays consumed; `gitdream run --agent {result.agent} --full` reads it again"
        )
    return lines


# --- check, hooks, schedule -----------------------------------------------------------------


def check(result: CheckResult, *, quiet: bool) -> Lines:
    lines = Lines()
    for checked in result.files:
        for line in checked.lines():
            lines.out(line)
    for checked in result.files:
        lines.warnings(checked.warning_lines())
    lines.warnings(result.warnings)
    if not result.ok or not quiet:
        lines.out(f"gitdream check: {result.summary()}")
    return lines


def hooks_result(result: HooksResult) -> Lines:
    lines = Lines()
    where = result.hooks_dir
    lines.out(f"hooks directory: {where.path} ({where.source})")
    rows = []
    for hook in result.hooks:
        detail = hook.note
        if hook.action == "chained" and hook.previous is not None:
            detail = f"the hook that was there runs first, kept as {hook.previous.name}" + (
                f"; {hook.note}" if hook.note else ""
            )
        elif hook.action == "restored" and hook.previous is not None:
            detail = detail or f"put back the hook saved as {hook.previous.name}"
        elif hook.action == "foreign":
            detail = "not gitdream's hook; left alone"
        elif hook.action == "missing":
            detail = "nothing to remove"
        rows.append([hook.action, hook.name, detail])
    lines.table(rows)
    from gitdream.trigger.hookscripts import INSTALL_ACTIONS, PURPOSES  # idle path: hooks commands only

    for hook in result.hooks:
        if hook.action in INSTALL_ACTIONS and hook.name in PURPOSES:
            lines.out(f"{hook.name}: {PURPOSES[hook.name]}")
    lines.warnings(result.warnings)
    return lines


def hooks_status(result: HooksStatus, describe: Callable[[str, str, Any], str]) -> Lines:
    """`describe(status, name, path)`: a hook's status in words, with the fix
    (`hookscripts.describe_status`)."""
    lines = Lines()
    where = result.hooks_dir
    lines.out(f"hooks directory: {where.path} ({where.source})")
    rows = []
    for hook in result.hooks:
        detail = describe(hook.status, hook.name, hook.path)
        if hook.previous is not None and hook.status in ("installed", "outdated", "chained-by-other"):
            detail += f"; runs {hook.previous.name} first"
        rows.append([hook.name, detail])
    lines.table(rows)
    return lines


def schedule_show(shown: ScheduleShow, kind: str | None) -> Lines:
    lines = Lines()
    single = {"cron": shown.cron, "github": shown.ci, "gitlab": shown.gitlab}
    if kind in single:
        lines.out(single[kind].rstrip("\n"))
        return lines
    parts = []
    if kind is None:
        parts.append(
            (
                f"crontab entry (crontab -e, or gitdream schedule install --cron); output in {shown.log}",
                shown.cron,
            )
        )
    for name, content in shown.systemd.items():
        parts.append((f"{shown.systemd_dir}/{name}", content))
    if kind is None:
        parts.append((shown.ci_path, shown.ci))
        parts.append((shown.gitlab_path, shown.gitlab))
    for index, (title, content) in enumerate(parts):
        if index:
            lines.out()
        lines.out(f"# ==> {title} <==")
        lines.out(content.rstrip("\n"))
    return lines


def schedule_result(result: ScheduleInstall) -> Lines:
    """What `schedule install` or `schedule uninstall` wrote or removed, and what is left."""
    lines = Lines()
    for item in result.written:
        # the crontab is one file of many jobs: only this repository's entry was touched
        where = "crontab (this repository's entry)" if item.path == "crontab" else item.path
        lines.out(f"{item.action:<9}  {where}")
    if result.next_steps:
        lines.out("next:")
        for step in result.next_steps:
            lines.out(f"  {step}")
    return lines
