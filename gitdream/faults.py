"""Named fault points for the reliability tests (test-only, inert in normal use).

`point(name)` does nothing unless the environment variable `GITDREAM_FAULT` names it:

    GITDREAM_FAULT="after-ref-move:kill"        SIGKILL this process there
    GITDREAM_FAULT="after-ref-move:raise"       raise FaultInjected (a crash, in-process)
    GITDREAM_FAULT="before-index-update:pause"  create $GITDREAM_FAULT_DIR/<name>.reached,
                                                 then wait for <name>.continue (60 s max)
    GITDREAM_FAULT="after-ref-move@2:kill"      act at the 2nd crossing of the point only
                                                 (the second commit of a run or revert)

Several entries may be given, separated by commas. Without `@N` an entry acts at every
crossing. The points are named where the code crosses a boundary that matters for crash
safety:

- every commit (`gitdream.git.commitbuilder.commit`): after-gate-look (the write gate
  asked the index which paths differ in the working tree), after-blobs, after-tree,
  after-commit-object, before-ref-move, after-ref-move; on the checked-out branch also
  after-index-lock (index.lock taken, nothing staged yet),
  mid-worktree-update (between two paths, when the commit has several) and
  before-index-update (after the working-tree files, before the index entries);
- every reference transaction (`gitdream.git.refs.transaction`): ref-lock-created (with
  each ref lock, right after libgit2 created its file, before the record names it),
  refs-locked (its ref lock files taken, right before it commits); the receipt notes' (`gitdream.git.notes`)
  then also note-locked (`refs/notes/gitdream.lock` taken);
- the dream lock (`gitdream.trigger.dreamlock.acquire`): lock-taken (the kernel lock is
  held, the file does not name the holder yet);
- `gitdream run` (per agent): before-experience-commit, after-experience-commit (before
  the definition commit), before-definition-commit, after-definition-commit,
  before-watermark, before-receipt;
- `gitdream revert` (definition first, then experience): before-definition-commit,
  after-definition-commit, before-experience-commit, after-experience-commit,
  before-watermark (`--replay`), before-receipt, before-annotation (the reverted run's
  note).

FaultInjected derives from BaseException so that phase isolation (`except Exception`)
cannot swallow it, as it cannot swallow a real SIGKILL.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

COMMIT_POINTS = (
    "after-gate-look",
    "after-blobs",
    "after-tree",
    "after-commit-object",
    "after-index-lock",
    "before-ref-move",
    "after-ref-move",
    "mid-worktree-update",
    "before-index-update",
)
RUN_POINTS = (
    "lock-taken",
    "before-experience-commit",
    *COMMIT_POINTS,
    "after-experience-commit",
    "before-definition-commit",
    "after-definition-commit",
    "before-watermark",
    "before-receipt",
)
REVERT_POINTS = (
    "before-definition-commit",
    *COMMIT_POINTS,
    "after-definition-commit",
    "before-experience-commit",
    "after-experience-commit",
    "before-watermark",
    "before-receipt",
    "before-annotation",
)
POINTS = tuple(dict.fromkeys(RUN_POINTS + REVERT_POINTS))

_crossed: dict[str, int] = {}


class FaultInjected(BaseException):
    """Raised at a fault point configured with the `raise` action."""


def point(name: str) -> None:
    """Act on fault point `name` if GITDREAM_FAULT configures it (see module docstring)."""
    spec = os.environ.get("GITDREAM_FAULT")
    if not spec:
        return
    crossing = _crossed[name] = _crossed.get(name, 0) + 1
    for item in spec.split(","):
        target, _, action = item.strip().partition(":")
        target, _, nth = target.partition("@")
        if target != name or (nth and int(nth) != crossing):
            continue
        action = action or "raise"
        if action == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(10)  # pragma: no cover - the signal ends the process
        elif action == "pause":
            folder = Path(os.environ.get("GITDREAM_FAULT_DIR", "."))
            (folder / f"{name}.reached").write_text(str(os.getpid()))
            deadline = time.monotonic() + 60
            while not (folder / f"{name}.continue").exists() and time.monotonic() < deadline:
                time.sleep(0.01)
        else:
            raise FaultInjected(name)
