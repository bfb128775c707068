"""Named fault points for the reliability tests (test-only, inert in normal use).

`point(name)` does nothing unless the environment variable `GITDREAM_FAULT` names it:

    GITDREAM_FAULT="after-ref-move:kill"        SIGKILL this process there
    GITDREAM_FAULT="after-ref-move:raise"       raise FaultInjected (a crash, in-process)
    GITDREAM_FAULT="before-index-update:pause"  create $GITDREAM_FAULT_DIR/<name>.reached,
                                                 then wait for <name>.continue (60 s max)

Several entries may be given, separated by commas. The points are named where the code
crosses a boundary that matters for crash safety: before-experience-commit, after-blobs, after-tree,
after-commit-object, before-ref-move, after-ref-move, mid-worktree-update,
before-index-update, after-experience-commit, before-watermark, before-receipt.
FaultInjected derives from BaseException so that phase isolation (`except Exception`)
cannot swallow it, as it cannot swallow a real SIGKILL.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

POINTS = (
    "before-experience-commit",
    "after-blobs",
    "after-tree",
    "after-commit-object",
    "before-ref-move",
    "after-ref-move",
    "mid-worktree-update",
    "before-index-update",
    "after-experience-commit",
    "before-watermark",
    "before-receipt",
)


class FaultInjected(BaseException):
    """Raised at a fault point configured with the `raise` action."""


def point(name: str) -> None:
    """Act on fault point `name` if GITDREAM_FAULT configures it (see module docstring)."""
    spec = os.environ.get("GITDREAM_FAULT")
    if not spec:
        return
    for item in spec.split(","):
        target, _, action = item.strip().partition(":")
        if target != name:
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
