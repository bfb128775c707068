"""`gitdream demo`: build a small, realistic agent repository and dream over it, offline.

The repository comes from `templates/demo/`: agent `ops` with its definitions and a
human-written memory, committed as of 2026-03-01, then one commit per day of raw
material (a week of daily logs and a session transcript), dated that day — the history
an agent runtime would have produced. Then one dream runs with the offline engine.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitdream import config, resources
from gitdream.commands.run import run
from gitdream.dream.options import RunOptions
from gitdream.errors import GitdreamError
from gitdream.git import gitcmd
from gitdream.git.repo import Repo

DATE = re.compile(r"(20\d\d-\d\d-\d\d)")
BASE_DAY = "2026-03-01"
IDENTITY = {
    "GIT_AUTHOR_NAME": "agent runtime",
    "GIT_AUTHOR_EMAIL": "runtime@demo.invalid",
    "GIT_COMMITTER_NAME": "agent runtime",
    "GIT_COMMITTER_EMAIL": "runtime@demo.invalid",
}


@dataclass
class DemoResult:
    """Where the demo repository is, the dream's outcome, and what to show the user."""

    path: Path
    run: Any = None
    log_stat: str = ""
    files: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "runs": self.run.to_json()["runs"] if self.run else [],
            "log": self.log_stat,
        }


def _git(root: Path, *args: str, day: str | None = None) -> str:
    env = dict(IDENTITY)
    if day:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"{day}T12:00:00+00:00"
    # A template-free init and a local identity: the demo must work on a fresh machine
    # with no git configuration at all.
    return gitcmd.run(list(args), cwd=root, env=env).stdout.decode("utf-8", "replace")


def build(dest: Path) -> Path:
    """Create the demo repository at `dest` (must not exist or be empty); returns it."""
    source = resources.templates_dir() / "demo"
    if dest.exists() and any(dest.iterdir()):
        raise GitdreamError(
            f"{dest} is not empty", hint="give a new folder, or leave DIR out to use a temporary one"
        )
    dest.mkdir(parents=True, exist_ok=True)
    _git(dest, "init", "-q", "--template=", "-b", "main")
    _git(dest, "config", "user.name", "Demo User")
    _git(dest, "config", "user.email", "demo@demo.invalid")
    _git(dest, "config", "commit.gpgsign", "false")
    raw: list[tuple[str, Path]] = []
    for path in sorted(source.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(source)
        if "logs" in rel.parts or "sessions" in rel.parts:
            match = DATE.search(rel.name)
            raw.append((match.group(1) if match else BASE_DAY, rel))
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "--no-verify", "-m", "ops: definitions and memory", day=BASE_DAY)
    for day, rel in sorted(raw):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / rel, target)
        _git(dest, "add", "-A")
        kind = "session" if "sessions" in rel.parts else "log"
        _git(dest, "commit", "-q", "--no-verify", "-m", f"ops: {kind} {day}", day=day)
    return dest


def run_demo(dest: Path | None) -> DemoResult:
    """Build the demo repository (in a new temporary folder when `dest` is None), dream
    once with the offline engine, and collect what to show."""

    path = dest if dest is not None else Path(tempfile.mkdtemp(prefix="gitdream-demo-"))
    build(path)
    repo = Repo.open(path)
    cfg = config.load(path, env={}, user_file=path / ".no-user-config")
    result = DemoResult(path.resolve())
    result.run = run(repo, cfg, [], RunOptions(trigger="manual", engine="offline"))
    result.log_stat = _git(path, "log", "--stat", "--format=%h %s", "-3")
    memory = path / "agents" / "ops" / "memory"
    for name in ("MEMORY.md", "deploy.md"):
        if (memory / name).is_file():
            result.files[f"agents/ops/memory/{name}"] = (memory / name).read_text(encoding="utf-8")
    return result
