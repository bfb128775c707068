"""Where gitdream keeps files outside the tracked tree.

- Per user (platformdirs): the user config file and the log directory. `GITDREAM_HOME`
  overrides both (`$GITDREAM_HOME/config.toml`, `$GITDREAM_HOME/logs/`), which tests use,
  since platformdirs ignores `XDG_*` on macOS.
- Per repository: `<git-common-dir>/gitdream/`, never tracked (DESIGN §2.1). It holds the
  lock, the stamp, machine-local state and the commit journal, and can be rebuilt.

Nothing here creates a directory at import time; `ensure_dir()` does, when a caller that
is allowed side effects (gitdream enabled) needs it. `atomic_write()` replaces a file
whole (state files here, and the commit builder's working-tree files).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

APP = "gitdream"
STATE_DIRNAME = "gitdream"


def _home_override() -> Path | None:
    value = os.environ.get("GITDREAM_HOME")
    return Path(value) if value else None


def user_config_file() -> Path:
    """Path of the user config file (may not exist)."""
    home = _home_override()
    if home is not None:
        return home / "config.toml"
    import platformdirs  # idle path: only where it is used

    return Path(platformdirs.user_config_dir(APP)) / "config.toml"


def user_log_dir() -> Path:
    """Directory for logs of detached runs and crash logs (may not exist)."""
    home = _home_override()
    if home is not None:
        return home / "logs"
    import platformdirs  # idle path: only where it is used

    return Path(platformdirs.user_log_dir(APP))


def is_utf8(path: str) -> bool:
    """True when `path` (decoded with `os.fsdecode`) was valid UTF-8 on disk: a name that
    was not holds lone surrogates (surrogateescape), which no UTF-8 text — a receipt, a
    commit message, a topic file citing it — can carry."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def display(path: str) -> str:
    """`path` as it can be printed and recorded: bytes that are not UTF-8 as `\\xNN`."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def state_dir(common_dir: Path) -> Path:
    """`<git-common-dir>/gitdream/`: machine-local state shared by all worktrees."""
    return common_dir / STATE_DIRNAME


def ensure_dir(path: Path) -> Path:
    """Create `path` (and parents) if missing and return it."""
    path.mkdir(parents=True, exist_ok=True)
    return path


def atomic_write(path: Path, data: bytes, mode: int = 0o666, keep: Callable[[], bool] | None = None) -> bool:
    """Write `data` to `path` through a temporary file in the same folder, fsync and
    `os.replace`, so readers see the old bytes or the new, never a mix. `mode` is masked
    by the umask, as git's checkout does. `keep`, when given, is asked once the new bytes
    are on disk, right before the replace: False leaves `path` alone (the temporary file
    is removed). Returns True when written."""
    tmp = path.with_name(f".{path.name}.gitdream-{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if keep is not None and not keep():
            tmp.unlink()
            return False
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass
        raise
    return True
