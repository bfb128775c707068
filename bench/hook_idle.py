"""Idle cost of gitdream's hooks per `git merge` / `git pull`, and `gitdream check` on 500
real-size definitions (issue 3).

1. Hooks. A real `git merge --no-ff` of a trivial branch, and a real fast-forward
   `git pull` from a local remote, with gitdream's four hooks installed and the time gate
   closed (stamp one day ahead) — against the same command in a repository **without
   hooks**, the baseline because "added cost" is exactly what the hooks put on top of
   git. Repositories are reset between runs (not timed); all cases alternate in one loop.
   Variants: no gitdream.toml; the commented gitdream.toml `gitdream init` writes (which
   the sh fast path does not read while the stamp is trusted); a linked worktree (git exports GIT_DIR, the common
   dir is found through `commondir`), against a linked worktree without hooks. Target:
   under 10 ms added.
2. Pre-commit (issue 17). A real `git commit` of `code.txt` with the hook installed
   against the same commit without hooks (target: under 10 ms added: the hook decides in
   sh from the staged paths that nothing it checks is staged, and starts no Python), and
   a commit of a definition file, for which `gitdream check --staged` runs.
3. `gitdream check` (a process, as the pre-commit hook runs it) over N agents whose
   agent.md files are copies of the real definitions in ../shared/realdata, against
   `python -c "import pygit2, click"`: the start-up floor any gitdream command pays,
   so the difference is check's own work. The library call is timed in this process
   too. No target was set (issue 3 asks for the figure); the per-file cost is given.

    python -m bench --only hook_idle
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench.harness import (
    Figure,
    Row,
    Settings,
    Table,
    git,
    gitdream_cmd,
    interleave,
    median,
    ms,
    ratio,
    run_child,
)

NAME = "hook_idle"
TITLE = "Hooks when idle, and `gitdream check` (issue 3)"
TARGET_ADDED = 0.010
REALDATA_CANDIDATES = (
    Path(__file__).resolve().parent.parent.parent / "shared" / "realdata",
    Path(__file__).resolve().parent.parent.parent.parent / "shared" / "realdata",
)


def _merge_repo(path: Path, env: dict[str, str]) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main", env=env)
    (path / "a.md").write_text("a\n")
    git(path, "add", "-A", env=env)
    git(path, "commit", "-q", "-m", "base", env=env)
    git(path, "switch", "-q", "-c", "feature", env=env)
    (path / "b.md").write_text("b\n")
    git(path, "add", "-A", env=env)
    git(path, "commit", "-q", "-m", "feature", env=env)
    git(path, "switch", "-q", "main", env=env)
    return path


def _pull_repo(origin: Path, path: Path, env: dict[str, str]) -> Path:
    """A clone of `origin` one commit behind its main: `git pull` fast-forwards."""
    subprocess.run(["git", "clone", "-q", str(origin), str(path)], env=env, check=True, capture_output=True)
    git(path, "config", "pull.ff", "only", env=env)
    git(path, "reset", "-q", "--hard", "HEAD~1", env=env)
    return path


def _install_hooks(path: Path, env: dict[str, str], worktree: Path | None = None) -> None:
    """Install the hooks, close the time gate (a stamp one day ahead, as gitdream writes
    it for `worktree`, default `path`) and write the pre-commit hook's path patterns. A
    gitdream.toml there is dated a minute back first, as a configuration written before
    gitdream last read it is: the hooks trust the stamp only when it is the newer."""
    import os
    from datetime import UTC, datetime

    from gitdream import config
    from gitdream.trigger import state as state_mod

    worktree = worktree or path
    subprocess.run(gitdream_cmd("hooks", "install"), cwd=path, env=env, check=True, capture_output=True)
    toml = worktree / config.REPO_FILE
    if toml.exists():
        os.utime(toml, (time.time() - 60, time.time() - 60))
    common = Path(git(path, "rev-parse", "--path-format=absolute", "--git-common-dir", env=env).strip())
    opening = datetime.fromtimestamp(time.time() + 86400, UTC)
    state_mod.write_stamp(common, opening, workdir=worktree, env=env)
    state_mod.write_precommit_paths(common, worktree, config.load(worktree, env=env), env=env)


def _timed_git(path: Path, env: dict[str, str], *args: str) -> float:
    start = time.perf_counter()
    subprocess.run(["git", *args], cwd=path, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def _merge_case(path: Path, env: dict[str, str]):
    def case() -> float:
        seconds = _timed_git(path, env, "merge", "-q", "--no-ff", "--no-edit", "feature")
        git(path, "reset", "-q", "--hard", "HEAD~1", env=env)
        return seconds

    return case


def _pull_case(path: Path, env: dict[str, str]):
    def case() -> float:
        seconds = _timed_git(path, env, "pull", "-q")
        git(path, "reset", "-q", "--hard", "HEAD~1", env=env)
        return seconds

    return case


def bench_hooks(settings: Settings, tmp: Path, env: dict[str, str], figure: Figure) -> None:
    from gitdream import config

    plain = _merge_repo(tmp / "plain", env)
    hooked = _merge_repo(tmp / "hooked", env)
    _install_hooks(hooked, env)
    cases = {"plain": _merge_case(plain, env), "hooked": _merge_case(hooked, env)}
    if not settings.quick:  # the smoke run keeps to the first variant
        toml = _merge_repo(tmp / "toml", env)
        (toml / "gitdream.toml").write_text(config.render_default_toml())
        _install_hooks(toml, env)
        main_wt = _merge_repo(tmp / "wtmain", env)
        linked = tmp / "linked"
        git(main_wt, "worktree", "add", "-q", "--detach", str(linked), "main", env=env)
        git(linked, "switch", "-q", "-c", "wt", env=env)
        _install_hooks(main_wt, env, worktree=linked)  # the stamp of the worktree that merges
        plain_linked = tmp / "plain-linked"
        git(plain, "worktree", "add", "-q", "--detach", str(plain_linked), "main", env=env)
        git(plain_linked, "switch", "-q", "-c", "wt", env=env)
        origin = _merge_repo(tmp / "origin", env)
        git(origin, "merge", "-q", "--ff-only", "feature", env=env)
        pull_plain = _pull_repo(origin, tmp / "pull-plain", env)
        pull_hooked = _pull_repo(origin, tmp / "pull-hooked", env)
        _install_hooks(pull_hooked, env)
        cases.update(
            {
                "toml": _merge_case(toml, env),
                "plain-linked": _merge_case(plain_linked, env),
                "linked": _merge_case(linked, env),
                "pull-plain": _pull_case(pull_plain, env),
                "pull-hooked": _pull_case(pull_hooked, env),
            }
        )
    runs = settings.reps(40, 1)
    samples = interleave(cases, runs, warmup=settings.pick(3, 0))
    figure.samples.update(samples)
    med = {name: median(values) for name, values in samples.items()}
    toml_lines = len(config.render_default_toml().splitlines())
    table = Table(
        f"`git merge --no-ff` of a trivial branch and a fast-forward `git pull` from a local "
        f"remote; median of {runs} interleaved runs each:",
        columns=("case", "median", "baseline (no hooks)", "added (ratio)", "target", ""),
    )
    for label, name, base in (
        ("merge, hooks installed, gate closed, no gitdream.toml", "hooked", "plain"),
        (f"merge, ... with the default gitdream.toml ({toml_lines} lines)", "toml", "plain"),
        ("merge in a linked worktree (GIT_DIR exported)", "linked", "plain-linked"),
        ("pull (fast-forward), hooks installed, gate closed", "pull-hooked", "pull-plain"),
    ):
        if name not in med:
            continue
        added = med[name] - med[base]
        table.rows.append(
            Row(
                label,
                ms(med[name]),
                ms(med[base]),
                f"{added * 1000:+.1f} ms ({ratio(med[name], med[base])})",
                "< 10 ms added",
                added < TARGET_ADDED,
            )
        )
    figure.tables.append(table)

    post_merge = hooked / ".git" / "hooks" / "post-merge"
    alone = [run_child([str(post_merge), "0"], hooked, env).seconds for _ in range(settings.reps(40, 1))]
    figure.samples["post-merge alone"] = alone
    figure.notes.append(
        f"The post-merge script alone (closed gate), median of {len(alone)}: {ms(median(alone))}. "
        "The closed-gate path starts no `git` and no Python: one `sh`, one `date`; the "
        "rest is shell built-ins (the stamp's three lines; two `-nt` tests against the "
        "configuration files, which a trusted stamp spares reading; one line appended to "
        "the hooks log)."
    )


def _commit_repo(path: Path, env: dict[str, str]) -> Path:
    """A repository with one agent, where `code.txt` is changed and committed again and again."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main", env=env)
    (path / "agents" / "ops").mkdir(parents=True)
    (path / "agents" / "ops" / "agent.md").write_text("# ops\n\nops keeps the pipeline healthy.\n")
    (path / "code.txt").write_text("0\n")
    git(path, "add", "-A", env=env)
    git(path, "commit", "-q", "-m", "base", env=env)
    return path


def _commit_case(path: Path, env: dict[str, str], name: str = "code.txt"):
    counter = [0]

    def case() -> float:
        counter[0] += 1
        (path / name).write_text(f"{counter[0]}\n")
        git(path, "add", name, env=env)
        return _timed_git(path, env, "commit", "-q", "-m", f"change {counter[0]}")

    return case


def bench_pre_commit(settings: Settings, tmp: Path, env: dict[str, str], figure: Figure) -> None:
    """Issue #17: a commit that stages no file `gitdream check` judges must not start Python."""
    plain = _commit_repo(tmp / "commit-plain", env)
    hooked = _commit_repo(tmp / "commit-hooked", env)
    _install_hooks(hooked, env)
    checked = _commit_repo(tmp / "commit-checked", env)
    _install_hooks(checked, env)
    cases = {
        "plain": _commit_case(plain, env),
        "hooked": _commit_case(hooked, env),
        "checked": _commit_case(checked, env, "agents/ops/soul.md"),
    }
    runs = settings.reps(30, 1)
    samples = interleave(cases, runs, warmup=settings.pick(3, 0))
    figure.samples.update({f"commit:{k}": v for k, v in samples.items()})
    med = {name: median(values) for name, values in samples.items()}
    table = Table(
        f"`git commit` of one staged file with gitdream's pre-commit hook installed, against the "
        f"same commit without hooks; median of {runs} interleaved runs each:",
        columns=("case", "median", "baseline (no hooks)", "added (ratio)", "target", ""),
    )
    added = med["hooked"] - med["plain"]
    table.rows.append(
        Row(
            "commit of `code.txt` (nothing gitdream checks): sh only",
            ms(med["hooked"]),
            ms(med["plain"]),
            f"{added * 1000:+.1f} ms ({ratio(med['hooked'], med['plain'])})",
            "< 10 ms added",
            added < TARGET_ADDED,
        )
    )
    table.rows.append(
        Row(
            "commit of `agents/ops/soul.md`: `gitdream check --staged` runs",
            ms(med["checked"]),
            ms(med["plain"]),
            f"{(med['checked'] - med['plain']) * 1000:+.1f} ms ({ratio(med['checked'], med['plain'])})",
            "",
        )
    )
    figure.tables.append(table)


def _definitions() -> list[Path] | None:
    realdata = next((p for p in REALDATA_CANDIDATES if p.is_dir()), None)
    if realdata is None:
        return None
    return sorted(
        p for p in realdata.rglob("*.md") if "agents" in p.parts or p.name in ("CLAUDE.md", "AGENTS.md")
    )


def bench_check(settings: Settings, tmp: Path, env: dict[str, str], figure: Figure) -> None:
    sources = _definitions()
    if not sources:
        figure.notes.append("`gitdream check`: skipped, ../shared/realdata not found.")
        return
    agents = settings.pick(500, 5)
    repo = tmp / "agents-repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main", env=env)
    total = 0
    for index in range(agents):
        target = repo / "agents" / f"a{index:04d}" / "agent.md"
        target.parent.mkdir(parents=True)
        shutil.copyfile(sources[index % len(sources)], target)
        total += target.stat().st_size
    git(repo, "add", "-A", env=env)
    git(repo, "commit", "-q", "-m", "agents", env=env)

    def process(*args: str):
        def case() -> float:
            return run_child(gitdream_cmd("check", "--json", *args), repo, env, check=False).seconds

        return case

    def baseline() -> float:
        return run_child([sys.executable, "-c", "import pygit2, click"], repo, env).seconds

    from gitdream import config
    from gitdream.commands.check import check_agents
    from gitdream.git.repo import Repo

    opened = Repo.open(repo, env={})
    cfg = config.load(opened.workdir, env={})

    def library() -> float:
        start = time.perf_counter()
        result = check_agents(opened, cfg)
        seconds = time.perf_counter() - start
        assert len(result.files) == agents
        return seconds

    runs = settings.reps(10, 1)
    cases = {"baseline": baseline, "check": process(), "staged": process("--staged"), "library": library}
    if settings.quick:
        del cases["staged"]
    samples = interleave(cases, runs, warmup=settings.pick(1, 0))
    figure.samples.update({f"check:{k}": v for k, v in samples.items()})
    med = {name: median(values) for name, values in samples.items()}
    table = Table(
        f"`gitdream check` on {agents} real-size agent.md files ({len(sources)} real definitions "
        f"from ../shared/realdata repeated, {total // 1024} KiB in all); median of {runs} "
        "interleaved runs:",
        columns=("case", "median", "baseline", "ratio", "per file", ""),
    )
    base = med["baseline"]
    for label, name in (
        ("`gitdream check` (process)", "check"),
        ("`gitdream check --staged` (process)", "staged"),
    ):
        if name not in med:
            continue
        table.rows.append(
            Row(
                label,
                ms(med[name]),
                f"{ms(base)} (`import pygit2, click`)",
                ratio(med[name], base),
                f"{(med[name] - base) / agents * 1000:.2f} ms",
            )
        )
    table.rows.append(
        Row(
            "`check_agents()` (library, in process)",
            ms(med["library"]),
            "",
            "",
            f"{med['library'] / agents * 1000:.2f} ms",
        )
    )
    figure.tables.append(table)


def run(settings: Settings, tmp: Path, env: dict[str, str]) -> Figure:
    figure = Figure(NAME, TITLE)
    bench_hooks(settings, tmp, env, figure)
    bench_pre_commit(settings, tmp, env, figure)
    bench_check(settings, tmp, env, figure)
    return figure
