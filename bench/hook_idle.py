"""Idle cost of gitdream's hooks, and `gitdream check` on 500 real-size definitions.

Run by hand from the repository root:

    python -m bench.hook_idle [--runs 30] [--agents 500]

1. A real `git merge --no-ff` of a trivial branch, with gitdream's hooks installed and the
   time gate closed (stamp in the future), against the same merge in a repository without
   hooks. Both repositories are reset between runs (not timed); runs alternate so drift
   hits both. Variants: no gitdream.toml; the commented gitdream.toml `gitdream init`
   writes (the sh fast path scans it for `enabled`); a linked worktree (git exports
   GIT_DIR, the common dir is found through its `commondir` file).
2. `gitdream check` (a subprocess, as a user or hook runs it, and the library call) over a
   repository of N agents whose agent.md files are copied from ../shared/realdata.

Prints Markdown for bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REALDATA_CANDIDATES = (ROOT.parent / "shared" / "realdata", ROOT.parent.parent / "shared" / "realdata")


def git(cwd: Path, *args: str, env: dict[str, str]) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def make_env(home: Path) -> dict[str, str]:
    from gitdream.git.gitenv import scrubbed

    env = scrubbed()
    for key in list(env):
        if key.startswith(("GITDREAM_", "_GITDREAM_")):
            del env[key]
    gitconfig = home / "gitconfig"
    gitconfig.write_text(
        "[user]\n\tname = bench\n\temail = bench@example.invalid\n[init]\n\tdefaultBranch = main\n"
    )
    template = home / "template"
    template.mkdir(exist_ok=True)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        GITDREAM_HOME=str(home / "gitdream-home"),
        GIT_CONFIG_GLOBAL=str(gitconfig),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TEMPLATE_DIR=str(template),
        PYTHONPATH=str(ROOT),
    )
    return env


def merge_repo(path: Path, env: dict[str, str]) -> Path:
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


def install_hooks(path: Path, env: dict[str, str]) -> None:
    subprocess.run(
        [sys.executable, "-m", "gitdream", "hooks", "install"],
        cwd=path,
        env=env,
        check=True,
        capture_output=True,
    )
    common = Path(
        subprocess.run(
            ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
            cwd=path,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    (common / "gitdream").mkdir(exist_ok=True)
    (common / "gitdream" / "stamp").write_text(f"{int(time.time()) + 86400}\n")


def merge_once(path: Path, env: dict[str, str]) -> float:
    elapsed = timed(["git", "merge", "-q", "--no-ff", "--no-edit", "feature"], path, env)
    git(path, "reset", "-q", "--hard", "HEAD~1", env=env)
    return elapsed


def bench_merge(runs: int, tmp: Path, env: dict[str, str]) -> list[tuple[str, float, float]]:
    from gitdream import config

    plain = merge_repo(tmp / "plain", env)
    hooked = merge_repo(tmp / "hooked", env)
    install_hooks(hooked, env)
    toml = merge_repo(tmp / "toml", env)
    (toml / "gitdream.toml").write_text(config.render_default_toml())
    install_hooks(toml, env)
    main_wt = merge_repo(tmp / "wtmain", env)
    install_hooks(main_wt, env)
    linked = tmp / "linked"
    git(main_wt, "worktree", "add", "-q", "--detach", str(linked), "main", env=env)
    git(linked, "switch", "-q", "-c", "wt", env=env)
    plain_linked = tmp / "plain-linked"
    git(plain, "worktree", "add", "-q", "--detach", str(plain_linked), "main", env=env)
    git(plain_linked, "switch", "-q", "-c", "wt", env=env)

    cases = {"plain": plain, "hooked": hooked, "toml": toml, "linked": linked, "plain-linked": plain_linked}
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(3):  # warm-up
        for path in cases.values():
            merge_once(path, env)
    for _ in range(runs):
        for name, path in cases.items():
            times[name].append(merge_once(path, env))
    base = statistics.median(times["plain"])
    base_linked = statistics.median(times["plain-linked"])
    rows = []
    for name, label, reference in (
        ("hooked", "hooks installed, gate closed, no gitdream.toml", base),
        (
            "toml",
            f"... with the default gitdream.toml ({len(config.render_default_toml().splitlines())} lines)",
            base,
        ),
        ("linked", "... in a linked worktree (GIT_DIR exported)", base_linked),
    ):
        median = statistics.median(times[name])
        rows.append((label, median, reference))
    return [("no hooks (baseline)", base, base), *rows]


def hook_alone(runs: int, tmp: Path, env: dict[str, str]) -> float:
    """The post-merge script by itself, as git starts it (closed gate)."""
    path = tmp / "hooked"
    cmd = [str(path / ".git" / "hooks" / "post-merge"), "0"]
    samples = [timed(cmd, path, env) for _ in range(runs)]
    return statistics.median(samples)


def bench_check(agents: int, tmp: Path, env: dict[str, str]) -> list[tuple[str, float]] | None:
    realdata = next((p for p in REALDATA_CANDIDATES if p.is_dir()), None)
    if realdata is None:
        return None
    sources = sorted(
        p for p in realdata.rglob("*.md") if "agents" in p.parts or p.name in ("CLAUDE.md", "AGENTS.md")
    )
    repo = tmp / "agents-repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main", env=env)
    total = 0
    for index in range(agents):
        source = sources[index % len(sources)]
        target = repo / "agents" / f"a{index:04d}" / "agent.md"
        target.parent.mkdir(parents=True)
        shutil.copyfile(source, target)
        total += target.stat().st_size
    git(repo, "add", "-A", env=env)
    git(repo, "commit", "-q", "-m", "agents", env=env)
    cmd = [sys.executable, "-m", "gitdream", "check", "--json"]
    results = []
    for args in ([], ["--staged"]):
        samples = []
        for _ in range(5):
            start = time.perf_counter()
            subprocess.run(cmd + args, cwd=repo, env=env, capture_output=True)
            samples.append(time.perf_counter() - start)
        results.append(
            (f"`gitdream check{' ' + ' '.join(args) if args else ''}` (process)", statistics.median(samples))
        )
    sys.path.insert(0, str(ROOT))
    from gitdream import config
    from gitdream.commands.check import check_agents
    from gitdream.git.repo import Repo

    opened = Repo.open(repo, env={})
    cfg = config.load(opened.workdir, env={})
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        result = check_agents(opened, cfg)
        samples.append(time.perf_counter() - start)
    assert len(result.files) == agents
    results.append(("`check_agents()` (library, in process)", statistics.median(samples)))
    results.append((f"({agents} agent.md files from {len(sources)} real ones, {total // 1024} KiB)", 0.0))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--agents", type=int, default=500)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="gitdream-bench-"))
    try:
        env = make_env(tmp)
        merges = bench_merge(args.runs, tmp, env)
        alone = hook_alone(args.runs, tmp, env)
        checks = bench_check(args.agents, tmp, env)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    git_version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    print(
        f"Machine: {platform.platform()}, {os.cpu_count()} CPUs; {git_version}; /bin/sh -> {os.path.realpath('/bin/sh')}"
    )
    print()
    print(f"`git merge --no-ff` of a trivial branch, median of {args.runs} runs:")
    print()
    print("| case | median | added | ratio |")
    print("|---|---|---|---|")
    for label, median, reference in merges:
        added = (median - reference) * 1000
        print(f"| {label} | {median * 1000:.1f} ms | {added:+.1f} ms | {median / reference:.2f}× |")
    print()
    print(f"The post-merge script alone (closed gate), median of {args.runs}: {alone * 1000:.1f} ms")
    if checks is None:
        print("\n`gitdream check`: skipped, ../shared/realdata not found")
        return
    print()
    print(f"`gitdream check` on {args.agents} real-size agent.md files, median of 5:")
    print()
    print("| what | median |")
    print("|---|---|")
    for label, seconds in checks:
        if seconds:
            print(f"| {label} | {seconds * 1000:.0f} ms |")
        else:
            print(f"| {label} | |")


if __name__ == "__main__":
    main()
