"""Where gitdream keeps files outside the tracked tree.

- Per user (platformdirs): the user config file and the log directory. `GITDREAM_HOME`
  overrides both (`$GITDREAM_HOME/config.toml`, `$GITDREAM_HOME/logs/`), which tests use,
  since platformdirs ignores `XDG_*` on macOS.
- Per repository: `<git-common-dir>/gitdream/`, never tracked (DESIGN §2.1). It holds the
  lock, the stamp, machine-local state and the commit journal, and can be rebuilt.

Nothing here creates a directory at import time; `ensure_dir()` does, when a caller that
is allowed side effects (gitdream enabled) needs it. `atomic_write()` replaces a file
whole (state files here, and the commit builder's working-tree files). `state_folder()`
creates the per-repository folders, refusing any that is a symbolic link, and
`open_state_file()` opens a file there without following one.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

from gitdream.errors import RepoStateError

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


_UNCITABLE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""Characters a file name may hold that no citation of it may: the C0 controls (line
breaks, tab, ESC), DEL, the C1 controls and the bidi embeddings, overrides and isolates."""


def citable(path: str) -> bool:
    """True when `path` can be cited as written in a topic file, a commit message or a
    receipt: it holds none of `_UNCITABLE`. A line break in a name splits the citation; ESC
    or a C1 control starts a terminal escape sequence (OSC 52 writes the clipboard) that
    `cat` or `git log` would pass on; a bidi override reorders what is shown (issue 16)."""
    return _UNCITABLE.search(path) is None


def shown(path: str) -> str:
    """`path` as a warning can print and record it: `display`, with every character
    `citable` refuses written as an escape (`\\x1b`, `\\x0a`, `\\u202e`)."""

    def escape(match: re.Match[str]) -> str:
        code = ord(match[0])
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _UNCITABLE.sub(escape, display(path))


def state_dir(common_dir: Path) -> Path:
    """`<git-common-dir>/gitdream/`: machine-local state shared by all worktrees."""
    return common_dir / STATE_DIRNAME


def state_folder(common_dir: Path, *parts: str, create: bool = True) -> Path:
    """`<git-common-dir>/gitdream/<parts…>`, every folder from the common dir down a real
    folder: each is looked at with `lstat` (never followed) and, when missing and `create`
    is true, created. Returns the path (which may not exist when `create` is false).

    Raises the RepoStateError of `linked_state` when one of them is a symbolic link or not
    a folder. gitdream writes its lock, state, journals and ref-lock records there; a link
    in their place (someone's, or a careless `ln -s`) had them written — and removed —
    wherever it pointed (issue 16)."""
    path = common_dir
    for name in (STATE_DIRNAME, *parts):
        path = path / name
        try:
            found = path.lstat()
        except FileNotFoundError:
            if not create:
                continue
            try:
                path.mkdir()
            except FileExistsError:  # created meanwhile: look at what is there
                pass
            found = path.lstat()
        if not stat.S_ISDIR(found.st_mode):
            raise linked_state(path)
    return path


def linked_state(path: Path) -> RepoStateError:
    """The refusal for gitdream's own state under the git dir that is a symbolic link, or
    not what it should be (a file where a folder goes): it names the path, where the link
    points, and the fix (remove it: gitdream recreates what it needs)."""
    try:
        is_link = path.is_symlink()
        target = os.readlink(path) if is_link else ""
    except OSError:
        is_link, target = False, ""
    what = f"a symbolic link (to {target})" if is_link else "not a regular file or folder of gitdream's"
    return RepoStateError(
        f"refusing to write gitdream's state through {path}: it is {what}",
        hint=(
            "gitdream keeps its state only in real files and folders inside the git dir, never "
            f"through a link; remove it (`rm {path}`) and run again — gitdream recreates it"
        ),
    )


def open_state_file(path: Path, flags: int, mode: int = 0o666) -> int:
    """`os.open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode)`: a file of gitdream's state
    (or a temporary file beside one) is never opened through a symbolic link. Raises the
    RepoStateError of `linked_state` when `path` is one; other OSErrors as `os.open`."""
    try:
        return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK) and path.is_symlink():
            raise linked_state(path) from None
        raise


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
    fd = open_state_file(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)  # never through a link
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
