"""The error hierarchy and the documented exit codes.

Every error gitdream raises for a condition a user can act on is a `GitdreamError`: its
`message` says what happened and why, its `hint` (optional) the next step, and its
`exit_code` what the process exits with. The CLI prints them as

    error: <message>
    hint: <hint>

and never a traceback. Anything else that escapes is a bug: exit 3 and a crash log.
"""

from __future__ import annotations

# Exit codes (documented in docs/cli.md, "Exit codes").
EXIT_OK = 0  # success, including a no-op run and a closed gate in --auto mode
EXIT_FAILURE = 1  # a refusal or failure the user can fix
EXIT_USAGE = 2  # bad command line (click's own code)
EXIT_INTERNAL = 3  # unexpected internal error; a crash log was written
EXIT_LOCKED = 75  # another dream holds the lock (EX_TEMPFAIL: try again later)
EXIT_INTERRUPTED = 130  # SIGINT/SIGTERM: stopped before the next write


class GitdreamError(Exception):
    """Base class: a printable message, an optional next step, an exit code."""

    exit_code = EXIT_FAILURE
    kind = "error"

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def to_json(self) -> dict[str, str | None]:
        """The `{"type", "message", "hint"}` object printed under `--json`."""
        return {"type": self.kind, "message": self.message, "hint": self.hint}


class UsageError(GitdreamError):
    """A command-line argument is malformed: an agent id that cannot name a git ref, a run
    reference that is no run id, prefix, `last` or `last~N`. Exit 2, click's code for a bad
    parameter; a well-formed id that names nothing is a ConfigError or UnknownRun (exit 1)."""

    kind = "usage"
    exit_code = EXIT_USAGE


class ConfigError(GitdreamError):
    """A configuration file, environment variable or flag has a bad value."""

    kind = "config"


class RepoStateError(GitdreamError):
    """The repository is in a state gitdream does not work in (bare, no commits, merge...)."""

    kind = "repo_state"


class WriteRefused(GitdreamError):
    """The write gate refused one or more target paths; nothing was written."""

    kind = "write_refused"

    def __init__(self, message: str, hint: str | None = None, paths: list[str] | None = None):
        super().__init__(message, hint)
        self.paths = list(paths or [])


class HeadMoved(WriteRefused):
    """The branch moved during a run and touched one of the run's own paths."""

    kind = "head_moved"


class SigningError(GitdreamError):
    """`commit.gpgsign` is set but the commit could not be signed."""

    kind = "signing"


class LockHeld(GitdreamError):
    """Another dream holds the repository lock."""

    kind = "lock_held"
    exit_code = EXIT_LOCKED


class EngineError(GitdreamError):
    """The engine (model API, prompt files) failed."""

    kind = "engine"


class BlockError(GitdreamError):
    """Managed-block markers are malformed (unbalanced, nested, duplicated)."""

    kind = "managed_block"

    def __init__(self, message: str, hint: str | None = None, line: int | None = None):
        super().__init__(message, hint)
        self.line = line


class HookInstallError(GitdreamError):
    """A hook could not be installed or uninstalled."""

    kind = "hook_install"


class Interrupted(GitdreamError):
    """SIGINT or SIGTERM arrived; the run stopped before its next write."""

    kind = "interrupted"
    exit_code = EXIT_INTERRUPTED


class LossGuardError(GitdreamError):
    """A dream's result would drop more than `max_loss_fraction` of the existing facts or
    index lines, or change bytes gitdream does not own; nothing is written."""

    kind = "loss_guard"
