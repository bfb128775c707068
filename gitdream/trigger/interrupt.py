"""SIGINT/SIGTERM: stop before the next write (DESIGN §5).

While `catch()` is active, the first SIGINT or SIGTERM only sets a flag; the run calls
`checkpoint()` before each write (commit, watermark) and stops there with Interrupted,
so nothing is half-committed and the receipt says `aborted`. A second signal interrupts
at once (KeyboardInterrupt), as a user pressing Ctrl-C twice expects; the commit builder's
journal makes even that safe.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from gitdream.errors import Interrupted

_requested: list[int] = []


def requested() -> bool:
    """True once a stop was requested (engines check it between model calls)."""
    return bool(_requested)


def checkpoint() -> None:
    """Raise Interrupted when a stop was requested; call before every write."""
    if _requested:
        name = signal.Signals(_requested[0]).name
        raise Interrupted(
            f"stopped by {name} before the next write; nothing was half-committed",
            hint="run again when you are ready; the watermark did not move",
        )


def _handler(signum: int, _frame: FrameType | None) -> None:
    if _requested:
        raise KeyboardInterrupt
    _requested.append(signum)


@contextmanager
def catch() -> Iterator[None]:
    """Defer SIGINT/SIGTERM to `checkpoint()` inside the block (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _requested.clear()
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig in previous:
        signal.signal(sig, _handler)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        _requested.clear()
