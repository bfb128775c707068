"""Shared probes of the hostile-input and leak suites (issue 8): run a real dream, then look
at everything it could have written — every object reachable from any ref, every commit
message, the receipts, the working tree — and at what it must not have touched."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from gitdream.text import blocks
from tests.helpers import cli, git

OPS = "agents/ops"
MEMORY = f"{OPS}/memory"
LOGS = f"{MEMORY}/logs"
SESSIONS = f"{OPS}/sessions"
DEFINITIONS = (f"{OPS}/agent.md", f"{OPS}/soul.md", f"{OPS}/SKILL.md")


# These probes are about what reaches memory safely, not about which entries are worth
# keeping (tests/dream/test_salience.py): every entry above the bar, no cap in the way.
EVERY_ENTRY = {
    "GITDREAM_OFFLINE_SALIENCE_THRESHOLD": "0",
    "GITDREAM_MAX_UNITS": "100000",
    "GITDREAM_MAX_NEW_TOPICS": "100000",
}


def dream(root: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """`gitdream run --json ARGS` in-process (GITDREAM_RAISE_ERRORS=1: a crash raises);
    asserted to exit 0 without a traceback. Returns the first receipt, with the run's
    stderr under "_stderr"."""
    result = cli(root, "run", "--json", *args, env={**EVERY_ENTRY, **(env or {})})
    assert result.exit_code == 0, f"exit {result.exit_code}\n{result.stdout}\n{result.stderr}"
    assert "Traceback" not in result.stderr, result.stderr
    receipt = json.loads(result.stdout)["runs"][0]
    receipt["_stderr"] = result.stderr
    return receipt


def changed_paths(root: Path, before: str) -> list[str]:
    """Paths the dream's commits changed since `before`; the working tree must equal HEAD."""
    assert git(root, "status", "--porcelain=v1", "--untracked-files=all") == ""
    return git(root, "-c", "core.quotePath=false", "diff", "--name-only", before, "HEAD").splitlines()


def assert_only_memory_written(root: Path, before: str) -> list[str]:
    """Nothing outside the agent's memory files and the managed blocks of its definition
    files changed between `before` and HEAD (raw logs and transcripts included), and
    `gitdream check` still passes on the definitions that passed before."""
    paths = changed_paths(root, before)
    for path in paths:
        if path in DEFINITIONS:
            old = git(root, "show", f"{before}:{path}")
            new = git(root, "show", f"HEAD:{path}")
            (block,) = blocks.parse(new, path)
            assert block.name == "learned", path
            if blocks.parse(old, path):
                assert blocks.outside(old, path) == blocks.outside(new, path), path
            else:
                rest = new[: block.start] + new[block.end :]
                assert rest.rstrip("\n") == old.rstrip("\n"), (
                    f"{path}: bytes outside gitdream's block changed"
                )
            continue
        assert path.startswith(f"{MEMORY}/"), f"the dream wrote {path}, outside the agent's memory"
        assert not path.startswith((f"{LOGS}/", f"{SESSIONS}/")), f"the dream rewrote raw material {path}"
        rest = path[len(MEMORY) + 1 :]
        assert "/" not in rest or rest.startswith("archive/"), path
    return paths


def reachable_blobs(root: Path) -> dict[str, bytes]:
    """Every blob reachable from any ref (branches, watermarks, notes), by object id."""
    listed = git(root, "rev-list", "--all", "--objects").splitlines()
    ids = [line.split(" ", 1)[0] for line in listed if line]
    batch = subprocess.run(
        ["git", "cat-file", "--batch"], cwd=root, input="\n".join(ids).encode() + b"\n", capture_output=True
    ).stdout
    blobs: dict[str, bytes] = {}
    pos = 0
    while pos < len(batch):
        header_end = batch.index(b"\n", pos)
        oid, kind, size = batch[pos:header_end].decode().split(" ")
        body = batch[header_end + 1 : header_end + 1 + int(size)]
        if kind == "blob":
            blobs[oid] = body
        pos = header_end + 1 + int(size) + 1
    return blobs


def everything_written(root: Path, own: set[str] = frozenset()) -> str:
    """All text gitdream could have written, as one string: every reachable blob except
    the raw files the user committed (`own`: blob ids), every commit message with its
    trailers (all refs), every receipt note, and the working tree outside `.git` minus the
    user's raw files. Lower-cased copies are included, so a case-folded secret (a topic
    slug) is found too."""
    parts = [b.decode("utf-8", "replace") for oid, b in reachable_blobs(root).items() if oid not in own]
    parts.append(git(root, "log", "--all", "--format=%H%n%B%n%(trailers)"))
    parts.append(git(root, "log", "refs/notes/gitdream", "--format=%B", "-p", check=False))
    inside = root.resolve()
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(".git/") or rel == ".git" or not path.is_file() or path.is_symlink():
            continue
        if not path.resolve().is_relative_to(inside):  # under a symlinked folder: not ours
            continue
        if rel.startswith((f"{LOGS}/", f"{SESSIONS}/")):
            continue
        parts.append(path.read_bytes().decode("utf-8", "replace"))
    text = "\n".join(parts)
    return text + "\n" + text.lower()


def raw_blob_ids(root: Path) -> set[str]:
    """Blob ids of every version of the raw logs and transcripts in any commit (the user's
    own committed bytes)."""
    ids: set[str] = set()
    for commit in git(root, "rev-list", "--all").split():
        out = git(root, "ls-tree", "-r", commit, "--", LOGS, SESSIONS)
        ids |= {line.split()[2] for line in out.splitlines() if line}
    return ids


def receipts(root: Path) -> list[dict[str, Any]]:
    """Every receipt in the notes, oldest first."""
    found = []
    for line in git(root, "notes", "--ref", "gitdream", "list", check=False).splitlines():
        _note, commit = line.split()
        for record in git(root, "notes", "--ref", "gitdream", "show", commit).splitlines():
            if record.strip():
                found.append(json.loads(record))
    return sorted(found, key=lambda r: r.get("started", ""))


def memory_text(root: Path, rev: str = "HEAD") -> str:
    """The agent's memory and definition files at `rev` (no raw material), joined."""
    names = git(root, "-c", "core.quotePath=false", "ls-tree", "-r", "--name-only", rev, "--", OPS)
    parts = []
    for path in names.splitlines():
        if path.startswith((f"{LOGS}/", f"{SESSIONS}/")) or not path.endswith(".md"):
            continue
        parts.append(git(root, "show", f"{rev}:{path}"))
    return "\n".join(parts)
