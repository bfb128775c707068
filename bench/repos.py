"""Synthetic agent repositories, built with `git fast-import` (10 000 commits or 100 000
files in seconds, where a `git commit` loop would take minutes).

A history is a sequence of `Commit`s (files to set, files to delete, a message, a time);
`fast_import` streams them as one branch, returns the commit ids, and `checkout` repacks
(see there why) and fills the index and working tree. The layouts:

- `agent_files(agent)`: the definitions and memory index of one agent (what
  `gitdream init --agent` would create);
- `daily_log(...)`: a daily log in the shape real agent runtimes write (dated bullets
  under headings, a tag now and then);
- `agent_history(...)`: many agents, each commit adding or extending one agent's daily
  log, round-robin;
- `wide_tree(...)`: one commit of N tracked files spread over folders of ~100 files.
"""

from __future__ import annotations

import random
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from bench.harness import git

EPOCH = 1767225600  # 2026-01-01T00:00:00Z
START_DAY = date(2026, 1, 1)

AGENT_MD = """# {id}

{id} keeps its part of the system healthy and answers questions about it.

## Role

- Watch the pipeline, fix what breaks, and write down what it learned.
- Prefer small, reversible changes; say what was changed and why.

## Notes

Free text written by a human.
"""

PHRASES = [
    "Rollback failed: the registry job pruned the previous image tag",
    "Promote only after the smoke test passes on staging",
    "The integration suite is flaky when the database container starts slowly",
    "Retrying hides the flake; the real fix is a readiness probe",
    "Backups run at 02:00 UTC and take about forty minutes",
    "The Tokyo region answers slowly during the nightly batch",
    "Certificates for the API gateway expire next month",
    "Cache hit rate fell to sixty percent after the schema change",
    "The user prefers short answers with the command first",
    "Log rotation runs weekly; keep eight weeks of logs",
    "Build cache is cleared every night at midnight",
    "Pin the base image by digest, never by tag",
]
HEADINGS = ["Deploys", "CI", "Ops", "Notes", "Research"]


@dataclass
class Commit:
    """One commit: `files` to add or replace (path → bytes), `delete` paths, a message,
    the time (epoch seconds)."""

    files: Mapping[str, bytes] = field(default_factory=dict)
    delete: Iterable[str] = ()
    message: str = "update"
    when: int = EPOCH


def fast_import(
    repo: Path, commits: Iterable[Commit], env: Mapping[str, str], branch: str = "main"
) -> list[str]:
    """Create `repo` (if needed) and import `commits` onto `branch`, each on the previous.
    Returns the commit ids in order. Does not touch the index or working tree."""
    if not (repo / ".git").exists():
        repo.mkdir(parents=True, exist_ok=True)
        git(repo, "init", "-q", "-b", branch, env=env)
    marks = repo / ".git" / "bench-marks"
    proc = subprocess.Popen(
        ["git", "fast-import", "--quiet", "--done", f"--export-marks={marks}"],
        cwd=repo,
        env=dict(env),
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None
    write = proc.stdin.write
    count = 0
    for count, commit in enumerate(commits, start=1):
        message = commit.message.encode()
        header = (
            f"commit refs/heads/{branch}\nmark :{count}\n"
            f"author bench <bench@example.invalid> {commit.when} +0000\n"
            f"committer bench <bench@example.invalid> {commit.when} +0000\n"
            f"data {len(message)}\n"
        ).encode()
        parts = [header, message, b"\n"]
        if count > 1:
            parts.append(f"from :{count - 1}\n".encode())
        for path in commit.delete:
            parts.append(f"D {path}\n".encode())
        for path, data in commit.files.items():
            parts.append(f"M 100644 inline {path}\ndata {len(data)}\n".encode())
            parts.append(data)
            parts.append(b"\n")
        parts.append(b"\n")
        write(b"".join(parts))
    write(b"done\n")
    proc.stdin.close()
    stderr = proc.stderr.read() if proc.stderr else b""
    if proc.wait() != 0:
        raise RuntimeError(f"git fast-import failed: {stderr.decode(errors='replace')}")
    ids: dict[int, str] = {}
    for line in marks.read_text().splitlines():
        mark, oid = line.split()
        ids[int(mark[1:])] = oid
    marks.unlink()
    return [ids[i] for i in range(1, count + 1)]


def checkout(repo: Path, env: Mapping[str, str], *, repack: bool = True) -> None:
    """Fill the index and working tree from HEAD (after `fast_import`), and repack.

    fast-import deltifies every object against the one it wrote before, so the newest
    trees and blobs sit at the ends of delta chains: reading them costs several times
    what it costs in a repository built commit by commit and packed by `git gc`, where the
    newest versions are stored whole. `git repack -a -d -f` recomputes the deltas the way
    gc does, so reads cost what they cost in a real repository."""
    if repack:
        git(repo, "repack", "-a", "-d", "-f", "-q", env=env)
    git(repo, "reset", "-q", "--hard", "HEAD", env=env)


def agent_files(agent_id: str, folder: str = "agents") -> dict[str, bytes]:
    """Definitions and a memory index for agent `agent_id` under `folder/`."""
    base = f"{folder}/{agent_id}"
    return {
        f"{base}/agent.md": AGENT_MD.format(id=agent_id).encode(),
        f"{base}/soul.md": f"# {agent_id} — persona\n\nCalm and precise.\n".encode(),
        f"{base}/SKILL.md": f"# {agent_id} — skills\n\n- Read logs.\n".encode(),
        f"{base}/memory/MEMORY.md": f"# {agent_id} — memory index\n".encode(),
    }


def log_path(agent_dir: str, day: date) -> str:
    return f"{agent_dir}/memory/logs/{day:%Y}/{day:%m}/{day:%Y-%m-%d}.md"


def daily_log(day: date, entries: int, rng: random.Random, serial: int = 0) -> bytes:
    """A daily log of `entries` dated bullets under a few headings; each bullet is a real-
    looking sentence made unique by a serial number (so no two runs dedupe it away)."""
    lines = [f"# {day.isoformat()}", ""]
    per_heading = max(1, entries // len(HEADINGS) + 1)
    written = 0
    for heading in HEADINGS:
        if written >= entries:
            break
        lines += [f"## {heading}", ""]
        for _ in range(per_heading):
            if written >= entries:
                break
            tag = " #ops" if rng.random() < 0.05 else ""
            lines.append(f"- [{day.isoformat()}] {rng.choice(PHRASES)} (case {serial + written}).{tag}")
            written += 1
        lines.append("")
    return ("\n".join(lines) + "\n").encode()


def one_agent_backlog(tmp: Path, entries: int, env: Mapping[str, str], name: str, per_day: int = 100) -> Path:
    """A checked-out repository at `tmp/<name>-<entries>` with one agent (`agents/a000`)
    whose daily logs hold `entries` raw entries, `per_day` a day, in one commit after the
    agent's first (none when `entries` is 0). Deterministic: seeded by `entries`."""
    rng = random.Random(entries)
    history = [Commit({**agent_files("a000"), "gitdream.toml": b'agents = ["agents/*"]\n'})]
    files = {}
    for first in range(0, entries, per_day):
        day = START_DAY + timedelta(days=first // per_day)
        files[log_path("agents/a000", day)] = daily_log(day, min(per_day, entries - first), rng, serial=first)
    if files:
        history.append(Commit(files, message="logs", when=EPOCH + 3600))
    repo = tmp / f"{name}-{entries}"
    fast_import(repo, history, env)
    checkout(repo, env)
    return repo


def agent_ids(count: int) -> list[str]:
    return [f"a{i:03d}" for i in range(count)]


def agent_history(
    agents: int,
    commits: int,
    *,
    entries_per_log: int = 6,
    seed: int = 1,
    days_per_file: int = 1,
    files_per_agent: int | None = None,
) -> list[Commit]:
    """Commit 0 adds `agents` agents; then `commits - 1` commits, round-robin over the
    agents, each writing one agent's daily log: a new day every `days_per_file` commits
    of that agent (in between, the day's log grows), so the tree grows with history. With
    `files_per_agent`, the days cycle over that many logs per agent instead (each rewritten
    with new entries): the tree stays the same size however long the history."""
    rng = random.Random(seed)
    ids = agent_ids(agents)
    first: dict[str, bytes] = {}
    for agent in ids:
        first.update(agent_files(agent))
    first["gitdream.toml"] = b'agents = ["agents/*"]\n'
    history = [Commit(first, message="add agents", when=EPOCH)]
    for n in range(1, commits):
        agent = ids[(n - 1) % agents]
        k = (n - 1) // agents  # this agent's k-th log commit
        if files_per_agent:
            day = START_DAY + timedelta(days=k % files_per_agent)
            data = daily_log(day, entries_per_log, rng, serial=n * 1000)
        else:
            day = START_DAY + timedelta(days=k // days_per_file)
            data = daily_log(day, entries_per_log * (1 + k % days_per_file), rng, serial=n * 1000)
        history.append(
            Commit(
                {log_path(f"agents/{agent}", day): data}, message=f"{agent}: log {day}", when=EPOCH + n * 60
            )
        )
    return history


def wide_tree(files: int, agents: int = 1, per_folder: int = 100) -> list[Commit]:
    """One commit with `agents` agents and `files` tracked files in all: besides the
    agents' own, filler files under `data/dNNNN/` (`per_folder` to a folder)."""
    tree: dict[str, bytes] = {}
    for agent in agent_ids(agents):
        tree.update(agent_files(agent))
    filler = max(0, files - len(tree))
    for i in range(filler):
        tree[f"data/d{i // per_folder:05d}/f{i % per_folder:03d}.txt"] = f"file {i}\n".encode()
    return [Commit(tree, message=f"{files} files")]
