"""Install, uninstall and inspect gitdream's git hooks (modelled on pre-commit's
install_uninstall, with the changes DESIGN §8 asks for).

Invariants:
- **Where**: the directory git runs hooks from, `git rev-parse --path-format=absolute
  --git-path hooks` — `core.hooksPath` (relative paths are relative to the worktree root)
  or the common dir's `hooks/` (linked worktrees share it). A directory outside the
  repository (a global hooksPath shared by many repositories) is refused unless
  `allow_outside` is given.
- **Ours**: a regular file (never a symlink: its target may be anything, even gitdream's
  own shipped template) containing `HOOK_ID` or one of `PRIOR_IDS`.
- **Never overwrite**: a hook that is not ours is moved aside to `<hook>.gitdream-prev`
  (`os.replace`: bytes, mode and even a dead symlink kept) and our hook runs it first with
  the same arguments and stdin; for `pre-commit` its failure blocks the commit. A
  suffix of our own, so that pre-commit's `.legacy` and ours never collide. A hook
  tracked by git (a hooks directory inside the worktree) is never moved.
- **Idempotent**: installing again rewrites only our own file, and only when its bytes
  would change; a second install changes nothing.
- **Exact uninstall**: our file goes, the saved hook comes back with `os.replace`; a
  hooks directory gitdream created (marked by `.gitdream-created`) is removed when empty.
  When another manager chained our hook as `<hook>.legacy` (pre-commit install after
  ours), uninstall takes ours out of that chain and leaves the other manager working.
- **Hook managers**: under the pre-commit framework's own hook, ours goes where pre-commit
  chains a hook itself, `<hook>.legacy`, so that `pre-commit install` run again (in any
  order) keeps running it; a copy of pre-commit's script saved as our previous hook (which
  would make pre-commit run itself "in migration mode") is removed. lefthook renames a
  hook it replaces to `<hook>.old` and never runs it, and Husky rewrites its stubs on every
  install: `status` names both (`renamed-by-lefthook`, `dropped-by-husky`, `husky`) with
  the fix, `gitdream hook NAME` called from the manager's own configuration.
- **CRLF**: a hook whose lines end in CRLF cannot run on a POSIX system (its `#!` line
  names an interpreter with a `\r`); install converts it to LF when it moves it aside
  (saying so), and refuses when it is a symbolic link (the target is not ours to change).
"""

from __future__ import annotations

import os
import re
import shlex
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from gitdream import paths, resources
from gitdream.errors import HookInstallError
from gitdream.trigger import HOOK_NAMES

# Installed hook name -> template in hooks/ (post-merge is the shared body).
TEMPLATES = {
    "pre-commit": "pre-commit",
    "post-merge": "post-merge",
    "post-rewrite": "post-merge",
    "post-commit": "post-merge",
}
# What each hook does, in the words `hooks install` prints after installing it.
PURPOSES = {
    "pre-commit": "checks the agent files the commit stages (`gitdream check --staged --changed`: "
    "agent.md's first 2000 characters, managed blocks, front matter, a MEMORY.md the commit "
    "pushes over its limits) and blocks the commit on a problem; `git commit --no-verify` skips it",
    "post-merge": "dreams in the background after a pull or merge, when the gates are open",
    "post-rewrite": "the same after a rebase (`git pull --rebase` with local commits)",
    "post-commit": "the same when a commit concludes a merge that had stopped (conflicts, `--no-commit`)",
}
INSTALL_ACTIONS = ("installed", "chained", "updated", "unchanged")
"""The `HookAction.action`s of `install`: the hook is in place afterwards."""
RUNNING = ("installed", "chained-by-other", "via-lefthook", "via-husky", "via-hook")
"""The `HookFound.status`es under which git runs gitdream's hook."""
# Where lefthook reads its configuration, relative to the worktree root (lefthook's
# internal/config/load.go: these names, with .yml/.yaml/.toml/.json, and their -local forms).
LEFTHOOK_CONFIGS = tuple(
    f"{folder}{dot}lefthook{local}.{ext}"
    for folder in ("", ".config/")
    for dot in ("", ".")
    for local in ("", "-local")
    for ext in ("yml", "yaml", "toml", "json")
)
HOOK_ID = "gitdream-hook-5c0b7e21"
PRIOR_IDS: tuple[str, ...] = ()
PREV_SUFFIX = ".gitdream-prev"
LEGACY_SUFFIX = ".legacy"  # the pre-commit framework's name for the hook it chains
OTHER_CHAIN_SUFFIXES = (LEGACY_SUFFIX,)
LEFTHOOK_SUFFIX = ".old"  # where lefthook renames a hook it replaces (and never runs it)
# The pre-commit framework's hook script, current and earlier (pre_commit/commands/
# install_uninstall.py: CURRENT_HASH, PRIOR_HASHES).
PRE_COMMIT_IDS = (
    b"138fd403232d2ddd5efb44317e38bf03",
    b"4d9958c90bc262f47553e2c073f14cfe",
    b"d8ee923c46731b42cd95cc869add4062",
    b"49fd668cb42069aa1b6048464be5d395",
    b"79f09a650522a87b0da915d0d983b2de",
    b"e358c9dae00eac5d06b38dfdb1e33a8c",
)
# Husky 9's stub in .husky/_/<hook> (husky's index.js), which sources its runner `h`.
_HUSKY_STUB = re.compile(rb'\A#!/usr/bin/env sh\r?\n\. "(?:\$\(dirname "\$0"\)|\$\{0%/\*\})/h"\s*\Z')
CREATED_MARKER = ".gitdream-created"
_START = "# start templated"
_END = "# end templated"


# Typed records as NamedTuples, not dataclasses: `status` imports this module, and a
# dataclass costs 0.3-0.5 ms to create at import (generated methods), a NamedTuple ~0.07 ms.
class HooksDir(NamedTuple):
    """Where git looks for hooks: `path` (absolute), `source` ("core.hooksPath" or
    "default"), `inside` (within the worktree or the git dir), `in_worktree` (within the
    working tree, so files there may be tracked or show up in `git status`)."""

    path: Path
    source: str
    inside: bool
    in_worktree: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "source": self.source,
            "inside_repository": self.inside,
            "in_worktree": self.in_worktree,
        }


class HookAction(NamedTuple):
    """What install/uninstall did to one hook: `action` is one of installed, chained,
    updated, unchanged (install); removed, restored, missing (nothing to remove), foreign
    (uninstall).
    `previous` is the saved previous hook, when there is one; `note` says more (where it
    runs under a hook manager, a CRLF conversion)."""

    name: str
    path: Path
    action: str
    previous: Path | None = None
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": str(self.path),
            "action": self.action,
            "previous": str(self.previous) if self.previous else None,
            "note": self.note,
        }


@dataclass
class HooksResult:
    """The outcome of install or uninstall: the hooks directory, one HookAction per hook,
    and warnings (printed, not failures)."""

    hooks_dir: HooksDir
    hooks: list[HookAction]
    warnings: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return any(h.action not in ("unchanged", "missing", "foreign") for h in self.hooks)

    def to_json(self) -> dict[str, Any]:
        return {
            "hooks_dir": self.hooks_dir.to_json(),
            "changed": self.changed,
            "hooks": [h.to_json() for h in self.hooks],
            "warnings": list(self.warnings),
        }


class HookFound(NamedTuple):
    """One hook as found by `status`: its `status` is installed, outdated, not-executable,
    broken (the baked interpreter is gone), chained-by-other (ours runs as `<hook>.legacy`
    under the pre-commit framework), chain-loop (that chain would run pre-commit's own
    script again), renamed-by-lefthook (ours is `<hook>.old`, which lefthook never runs),
    dropped-by-husky (Husky rewrote its stub over ours), husky (a Husky stub without
    gitdream), via-lefthook / via-husky / via-hook (the manager's configuration, the Husky
    script or the hook itself calls `gitdream hook NAME`), foreign (someone else's,
    gitdream not in it), foreign-tracked (the same, tracked by git: install will not move
    it) or missing."""

    name: str
    path: Path
    status: str
    previous: Path | None = None
    python: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": str(self.path),
            "status": self.status,
            "previous": str(self.previous) if self.previous else None,
            "python": self.python,
        }


class HooksStatus(NamedTuple):
    """`status` of every hook gitdream installs."""

    hooks_dir: HooksDir
    hooks: list[HookFound]

    @property
    def installed(self) -> bool:
        return all(h.status in RUNNING for h in self.hooks)

    def to_json(self) -> dict[str, Any]:
        return {
            "hooks_dir": self.hooks_dir.to_json(),
            "installed": self.installed,
            "hooks": [h.to_json() for h in self.hooks],
        }


# --- locating ----------------------------------------------------------------------------


def _within(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def locate(repo: Any) -> HooksDir:
    """Where git runs this repository's hooks from (see the module docstring).

    `repo` is a `gitdream.git.repo.Repo`. Raises GitCommandError when git fails.
    """
    proc = repo.git("rev-parse", "--path-format=absolute", "--git-path", "hooks")
    hooks = Path(os.path.realpath(proc.stdout.decode("utf-8", "surrogateescape").strip()))
    source = "core.hooksPath" if repo.config_value("core.hooksPath") else "default"
    workdir = Path(os.path.realpath(repo.workdir))
    roots = [workdir, Path(os.path.realpath(repo.git_dir)), Path(os.path.realpath(repo.common_dir))]
    inside = any(_within(hooks, r) for r in roots)
    in_worktree = _within(hooks, workdir) and not any(
        _within(hooks, r) for r in roots[1:] if _within(r, workdir)
    )
    return HooksDir(hooks, source, inside, in_worktree)


# --- the scripts -------------------------------------------------------------------------


def is_ours(path: Path) -> bool:
    """True when `path` is a regular file (not a symlink) holding gitdream's hook id."""
    if path.is_symlink() or not path.is_file():
        return False
    try:
        data = path.read_bytes()
    except OSError:
        return False
    return any(i.encode() in data for i in (HOOK_ID, *PRIOR_IDS))


def _read(path: Path) -> bytes:
    """The bytes of a regular file (through a symlink), b"" when it cannot be read."""
    try:
        return path.read_bytes() if path.is_file() else b""
    except OSError:
        return b""


def is_pre_commit_framework(path: Path) -> bool:
    """True when `path` holds the pre-commit framework's hook script."""
    data = _read(path)
    return b"pre-commit" in data and any(i in data for i in PRE_COMMIT_IDS)


def is_lefthook(path: Path) -> bool:
    """True when `path` holds lefthook's hook script (it calls `call_lefthook`)."""
    data = _read(path)
    return b"call_lefthook" in data or (b"LEFTHOOK" in data and b"lefthook" in data)


def is_husky_stub(path: Path) -> bool:
    """True when `path` is Husky 9's stub, which sources `h` from its own folder."""
    return _HUSKY_STUB.match(_read(path)) is not None


def _crlf(data: bytes) -> bool:
    """True when `data` is a text script whose lines end in CRLF: its first line ends with
    "\r\n", and it has no NUL byte (a binary is no script)."""
    first, _, _ = data.partition(b"\n")
    return first.endswith(b"\r") and b"\0" not in data


def _baked_values(name: str, python: str) -> dict[str, str]:
    return {
        "GITDREAM_PYTHON": python,
        "GITDREAM_HOOK": name,
        "GITDREAM_LOG_DIR": str(paths.user_log_dir()),
        "GITDREAM_USER_CONFIG": str(paths.user_config_file()),
    }


def render(name: str, python: str | None = None) -> bytes:
    """The script installed as hook `name`: its template from `hooks/` with the templated
    block filled in (the interpreter `python`, default `sys.executable`; the hook name;
    the user log dir and config file). Raises HookInstallError for an unknown hook or a
    value that cannot be written into a sh script (a newline)."""
    if name not in TEMPLATES:
        raise HookInstallError(f"gitdream has no '{name}' hook", hint=f"choose among {', '.join(HOOK_NAMES)}")
    values = _baked_values(name, python or sys.executable)
    for key, value in values.items():
        if "\n" in value or "\0" in value:
            raise HookInstallError(
                f"cannot write {key}={value!r} into a hook script",
                hint="install gitdream under a path without newlines",
            )
    template = (resources.hooks_dir() / TEMPLATES[name]).read_text(encoding="utf-8")
    lines = template.split("\n")
    start, end = lines.index(_START), lines.index(_END)
    for index in range(start + 1, end):
        key = lines[index].split("=", 1)[0]
        if key in values:
            lines[index] = f"{key}={shlex.quote(values[key])}"
    return "\n".join(lines).encode("utf-8")


def _template_body(data: bytes) -> bytes:
    """The script without its templated block (what changes between gitdream versions)."""
    lines = data.split(b"\n")
    try:
        start, end = lines.index(_START.encode()), lines.index(_END.encode())
    except ValueError:
        return data
    return b"\n".join(lines[:start] + lines[end + 1 :])


def _baked(data: bytes, key: str) -> str | None:
    for line in data.split(b"\n"):
        if line.startswith(key.encode() + b"="):
            words = shlex.split(line.decode("utf-8", "surrogateescape").split("=", 1)[1])
            return words[0] if words else ""
    return None


def _same_file_bytes(a: Path, b: Path) -> bool:
    return not a.is_symlink() and not b.is_symlink() and a.is_file() and b.is_file() and _read(a) == _read(b)


def _executable(path: Path) -> bool:
    return os.access(path, os.X_OK)


def _write(path: Path, data: bytes) -> None:
    """Atomically write an executable hook (mode 0755)."""
    tmp = path.with_name(f".{path.name}.gitdream-tmp")
    with open(tmp, "wb") as handle:
        handle.write(data)
    os.chmod(tmp, 0o755)
    os.replace(tmp, path)


def _tracked(repo: Any, path: Path) -> bool:
    rel = os.path.relpath(path, os.path.realpath(repo.workdir))
    proc = repo.git("ls-files", "-z", "--", rel, check=False)
    return bool(proc.stdout.strip(b"\0"))


def _ignored(repo: Any, path: Path) -> bool:
    rel = os.path.relpath(path, os.path.realpath(repo.workdir))
    return repo.git("check-ignore", "-q", "--no-index", "--", rel, check=False).returncode == 0


def _refuse_outside(where: HooksDir, allow_outside: bool, verb: str) -> None:
    if where.inside or allow_outside:
        return
    raise HookInstallError(
        f"the hooks directory {where.path} ({where.source}) is outside this repository; "
        f"{verb} there changes the hooks of every repository that uses it",
        hint="pass --allow-outside to do it anyway, or give this repository its own hooks "
        "directory (git config core.hooksPath .githooks)",
    )


def _refuse_crlf_link(path: Path) -> None:
    """Refuse to chain a symbolic link to a CRLF script: it cannot run here, and the file
    it points to is not gitdream's to convert."""
    if path.is_symlink() and _crlf(_read(path)):
        raise HookInstallError(
            f"{path} is a symbolic link to a script with CRLF (\\r\\n) line ends, which cannot "
            "run here (its first line names an interpreter ending in \\r)",
            hint=f"convert the file it points to ({os.path.realpath(path)}) to LF line ends, "
            "e.g. `sed -i 's/\\r$//' FILE`, then run `gitdream hooks install` again",
        )


def _move_aside(path: Path, prev: Path) -> str:
    """Move the hook at `path` to `prev` (bytes, mode, even a dead symlink kept), converting
    a regular CRLF script to LF line ends on the way; returns the note saying so, or ""."""
    data = b"" if path.is_symlink() else _read(path)
    os.replace(path, prev)
    if not _crlf(data):
        return ""
    mode = stat.S_IMODE(prev.stat().st_mode)
    tmp = prev.with_name(f".{prev.name}.gitdream-tmp")
    tmp.write_bytes(data.replace(b"\r\n", b"\n"))
    os.chmod(tmp, mode)
    os.replace(tmp, prev)
    return (
        f"converted {prev.name} from CRLF to LF line ends (with them it could not run here: "
        "its first line named an interpreter ending in \\r)"
    )


def _lefthook_command(name: str) -> str:
    """The lefthook.yml command that runs gitdream's hook `name`, as docs/hooks.md gives it:
    `{0}` is lefthook's placeholder for git's arguments, and lefthook passes git's standard
    input only when asked (post-rewrite reads it)."""
    if name == "post-rewrite":
        return f"`run: gitdream hook {name} {{0}}` with `use_stdin: true`"
    return f"`run: gitdream hook {name}{' {0}' if name == 'post-merge' else ''}`"


def _manager_warning(name: str, path: Path) -> str:
    """A warning when the hook being chained belongs to a manager that will drop ours."""
    if is_lefthook(path):
        return (
            f"{path} is lefthook's; when lefthook installs again it renames gitdream's hook to "
            f"{name}{LEFTHOOK_SUFFIX} and never runs it: in lefthook.yml, give {name} a command "
            f"{_lefthook_command(name)} instead "
            "(gitdream's documentation, docs/hooks.md, has the snippet)"
        )
    if is_husky_stub(path):
        return (
            f"{path} is a Husky stub; Husky rewrites them on every install and drops "
            f'gitdream\'s hook: add the line `gitdream hook {name} "$@"` to .husky/{name} instead '
            "(gitdream's documentation, docs/hooks.md, has the snippet)"
        )
    return ""


def _names(hooks: tuple[str, ...] | list[str]) -> list[str]:
    names = list(dict.fromkeys(hooks))
    for name in names:
        if name not in TEMPLATES:
            raise HookInstallError(
                f"gitdream has no '{name}' hook", hint=f"choose among {', '.join(HOOK_NAMES)}"
            )
    return names


# --- install / uninstall / status --------------------------------------------------------


def install(
    repo: Any,
    *,
    hooks: tuple[str, ...] | list[str] = HOOK_NAMES,
    python: str | None = None,
    allow_outside: bool = False,
) -> HooksResult:
    """Install gitdream's `hooks` (default: all of HOOK_NAMES) into the repository's hooks
    directory, chaining any hook that is already there.

    `repo` is a `gitdream.git.repo.Repo`; `python` the interpreter baked into the
    scripts (default `sys.executable`). Every hook is checked before anything is written:
    a refusal (hooks directory outside the repository without `allow_outside`, a tracked
    hook, a foreign hook next to an older `.gitdream-prev`) raises HookInstallError and
    leaves every file as it was.
    """
    where = locate(repo)
    _refuse_outside(where, allow_outside, "installing")
    directory = where.path
    warnings: list[str] = []
    plan = [(name, _plan(repo, where, name)) for name in _names(hooks)]

    created = False
    if not directory.is_dir():
        directory.mkdir(parents=True)
        (directory / CREATED_MARKER).write_bytes(b"created by gitdream hooks install\n")
        created = True

    actions = [_apply(directory, name, what, python, warnings) for name, what in plan]
    if where.in_worktree:
        for action in actions:
            if action.action in ("installed", "chained") and not _ignored(repo, action.path):
                warnings.append(
                    f"{action.path} is in the working tree and not ignored; add it to .gitignore "
                    "so it is not committed by accident"
                )
    if created:
        warnings.append(f"created the hooks directory {directory}")
    return HooksResult(where, actions, warnings)


def _plan(repo: Any, where: HooksDir, name: str) -> str:
    """What installing hook `name` into `where` means: "ours" (update), "other-chain"
    (another manager runs ours), "under-framework"/"under-framework-prev" (below
    pre-commit's hook), "replace-duplicate", "chain" (move the hook there aside) or "new".
    Raises HookInstallError for what must not be touched (nothing is written then)."""
    directory = where.path
    path = directory / name
    prev = directory / (name + PREV_SUFFIX)
    legacy = directory / (name + LEGACY_SUFFIX)
    chained_by = next(
        (directory / (name + s) for s in OTHER_CHAIN_SUFFIXES if is_ours(directory / (name + s))),
        None,
    )
    if is_ours(path):
        return "ours"
    elif chained_by is not None:
        return "other-chain"
    elif os.path.lexists(path) and is_pre_commit_framework(path) and not path.is_symlink():
        # pre-commit's hook runs `<hook>.legacy` first: ours goes there, so that
        # `pre-commit install` run again keeps running it (it would otherwise move ours
        # to .legacy and run itself, saved as our previous hook, in "migration mode").
        if os.path.lexists(legacy):
            if os.path.lexists(prev):
                raise HookInstallError(
                    f"{legacy} (run by pre-commit's hook) and {prev} (a hook saved by an "
                    "earlier install) both exist; gitdream will not overwrite either",
                    hint=f"keep the one you want as {legacy.name} and delete the other, then "
                    "run `gitdream hooks install` again",
                )
            _refuse_crlf_link(legacy)
            return "under-framework-prev"
        else:
            return "under-framework"
    elif os.path.lexists(path):
        if where.in_worktree and _tracked(repo, path):
            raise HookInstallError(
                f"{path} is tracked by git; gitdream will not move a tracked file",
                hint=f'end that hook with the line `exec gitdream hook {name} "$@"`, or install with '
                "--hook for the other hooks only",
            )
        if os.path.lexists(prev):
            same = (
                not path.is_symlink()
                and not prev.is_symlink()
                and path.is_file()
                and prev.is_file()
                and path.read_bytes() == prev.read_bytes()
            )
            if not same:
                raise HookInstallError(
                    f"{path} is not gitdream's hook, and {prev} (a hook saved by an "
                    "earlier install) exists too; gitdream will not overwrite either",
                    hint=f"keep the one you want as {path.name} and delete the other, then "
                    "run `gitdream hooks install` again",
                )
            return "replace-duplicate"
        else:
            _refuse_crlf_link(path)
            return "chain"
    else:
        return "new"


def _apply(directory: Path, name: str, what: str, python: str | None, warnings: list[str]) -> HookAction:
    """Carry out the plan `what` (see `_plan`) for hook `name`; warnings go to `warnings`."""
    path = directory / name
    prev = directory / (name + PREV_SUFFIX)
    legacy = directory / (name + LEGACY_SUFFIX)
    content = render(name, python)
    if what == "ours":
        if path.read_bytes() == content and _executable(path):
            return HookAction(name, path, "unchanged", prev if os.path.lexists(prev) else None)
        else:
            _write(path, content)
            return HookAction(name, path, "updated", prev if os.path.lexists(prev) else None)
    elif what == "other-chain":
        target = next(directory / (name + s) for s in OTHER_CHAIN_SUFFIXES if is_ours(directory / (name + s)))
        note = f"runs as {target.name}, chained by the hook now at {name}"
        if os.path.lexists(prev) and is_pre_commit_framework(prev) and is_pre_commit_framework(path):
            # An earlier install chained pre-commit's own script: pre-commit would run
            # itself "in migration mode" and fail every commit.
            os.remove(prev)
            note += f"; removed {prev.name}, a copy of pre-commit's own hook that made it loop"
            if target.read_bytes() != content or not _executable(target):
                _write(target, content)
            return HookAction(name, target, "updated", None, note)
        elif target.read_bytes() == content and _executable(target):
            return HookAction(name, target, "unchanged", None, note)
        else:
            _write(target, content)
            return HookAction(name, target, "updated", None, note)
    elif what in ("under-framework", "under-framework-prev"):
        note = f"runs as {legacy.name}, which pre-commit's hook at {name} runs first"
        previous = None
        if what == "under-framework-prev":
            converted = _move_aside(legacy, prev)
            previous = prev
            if converted:
                note += f"; {converted}"
        _write(legacy, content)
        return HookAction(name, legacy, "chained", previous, note)
    elif what == "replace-duplicate":
        os.remove(path)
        _write(path, content)
        return HookAction(name, path, "chained", prev, "the hook here equals the saved one")
    elif what == "chain":
        manager = _manager_warning(name, path)
        converted = _move_aside(path, prev)
        _write(path, content)
        if manager:
            warnings.append(manager)
        return HookAction(name, path, "chained", prev, converted)
    else:
        _write(path, content)
        return HookAction(name, path, "installed")


def uninstall(
    repo: Any, *, hooks: tuple[str, ...] | list[str] = HOOK_NAMES, allow_outside: bool = False
) -> HooksResult:
    """Remove gitdream's `hooks` and put back what was there before install.

    A hook that is not gitdream's is left alone (action "foreign"); nothing to remove is
    not an error ("missing", the name `status` gives it). Raises HookInstallError for a hooks directory outside
    the repository without `allow_outside`.
    """
    where = locate(repo)
    _refuse_outside(where, allow_outside, "uninstalling")
    directory = where.path
    actions: list[HookAction] = []
    warnings: list[str] = []
    for name in _names(hooks):
        path = directory / name
        prev = directory / (name + PREV_SUFFIX)
        has_prev = os.path.lexists(prev)
        chained = next(
            (directory / (name + s) for s in OTHER_CHAIN_SUFFIXES if is_ours(directory / (name + s))),
            None,
        )
        old = directory / (name + LEFTHOOK_SUFFIX)
        if not is_ours(path) and is_ours(old):
            # lefthook renamed ours to `.old` (its backup, which `lefthook uninstall` puts
            # back): the hook ours had chained takes that place, or ours just goes.
            if has_prev:
                os.replace(prev, old)
                note = f"lefthook had renamed gitdream's hook to {old.name}; put back there the hook saved as {prev.name}"
                actions.append(HookAction(name, old, "restored", prev, note))
            else:
                os.remove(old)
                note = f"lefthook had renamed gitdream's hook to {old.name}"
                actions.append(HookAction(name, old, "removed", None, note))
        elif is_ours(path):
            if has_prev:
                os.replace(prev, path)
                actions.append(HookAction(name, path, "restored", prev))
            else:
                os.remove(path)
                actions.append(HookAction(name, path, "removed"))
        elif chained is not None:
            note = f"taken out of the chain of the hook at {name} ({chained.name})"
            if has_prev:
                os.replace(prev, chained)
                actions.append(HookAction(name, chained, "restored", prev, note))
            else:
                os.remove(chained)
                actions.append(HookAction(name, chained, "removed", None, note))
        elif os.path.lexists(path) and has_prev and _same_file_bytes(path, prev):
            # A hook manager (Husky) wrote its hook again over ours: the saved copy is stale.
            os.remove(prev)
            actions.append(
                HookAction(
                    name,
                    path,
                    "removed",
                    prev,
                    "gitdream's hook was already replaced; removed its stale copy",
                )
            )
        elif os.path.lexists(path):
            actions.append(HookAction(name, path, "foreign", prev if has_prev else None))
            if has_prev:
                warnings.append(
                    f"{path} is not gitdream's hook but {prev.name} (saved by gitdream) exists; "
                    "left both alone"
                )
        elif has_prev:
            os.replace(prev, path)
            actions.append(HookAction(name, path, "restored", prev, "gitdream's hook was already gone"))
        else:
            actions.append(HookAction(name, path, "missing"))
    marker = directory / CREATED_MARKER
    if marker.is_file() and not marker.is_symlink():
        rest = [p for p in directory.iterdir() if p.name != CREATED_MARKER]
        if not rest:
            marker.unlink()
            directory.rmdir()
    return HooksResult(where, actions, warnings)


def status(repo: Any) -> HooksStatus:
    """The status of each of gitdream's hooks (see HookFound). Reads files only."""
    where = locate(repo)
    found = []
    for name in HOOK_NAMES:
        path = where.path / name
        prev = where.path / (name + PREV_SUFFIX)
        previous = prev if os.path.lexists(prev) else None
        chained = next(
            (where.path / (name + s) for s in OTHER_CHAIN_SUFFIXES if is_ours(where.path / (name + s))),
            None,
        )
        target = path if is_ours(path) else chained
        if target is None:
            via = _entry_point(repo, where, name, path)
            if via is not None:
                found.append(HookFound(name, via[1], via[0], previous))
                continue
            old = where.path / (name + LEFTHOOK_SUFFIX)
            if is_ours(old) and os.path.lexists(path):
                found.append(HookFound(name, old, "renamed-by-lefthook", previous))
                continue
            if is_husky_stub(path):
                status = "dropped-by-husky" if previous is not None else "husky"
            else:
                status = "foreign" if os.path.lexists(path) else "missing"
                if status == "foreign" and where.in_worktree and _tracked(repo, path):
                    status = "foreign-tracked"  # install will not move it: say what will work
            found.append(HookFound(name, path, status, previous))
            continue
        data = target.read_bytes()
        python = _baked(data, "GITDREAM_PYTHON")
        template = (resources.hooks_dir() / TEMPLATES[name]).read_bytes()
        if not _executable(target):
            status = "not-executable"
        elif python and not (os.path.isfile(python) and os.access(python, os.X_OK)):
            status = "broken"
        elif _template_body(data) != _template_body(template):
            status = "outdated"
        elif target is chained and previous is not None and is_pre_commit_framework(previous):
            status = "chain-loop"
        else:
            status = "chained-by-other" if target is chained else "installed"
        found.append(HookFound(name, target, status, previous, python))
    return HooksStatus(where, found)


def _calls_gitdream_hook(path: Path, name: str) -> bool:
    """True when the file at `path` calls `gitdream hook NAME` on a line that is not a
    comment (a shell script, or a hook manager's YAML, TOML or JSON configuration)."""
    text = _read(path).decode("utf-8", "replace")
    pattern = re.compile(rf"^[^#\n]*\bgitdream\s+hook\s+{re.escape(name)}(?![\w-])", re.MULTILINE)
    return pattern.search(text) is not None


def _entry_point(repo: Any, where: HooksDir, name: str, path: Path) -> tuple[str, Path] | None:
    """`(status, file)` when git's hook `path` runs gitdream through the `gitdream hook`
    entry point: lefthook's hook with a lefthook configuration calling it (via-lefthook),
    a Husky stub whose script `.husky/NAME` calls it (via-husky), or a hook file that calls
    it itself, as in a tracked hooks folder (via-hook). None otherwise."""
    if not os.path.lexists(path):
        return None
    if is_lefthook(path):
        root = Path(repo.workdir)
        for config in LEFTHOOK_CONFIGS:
            if _calls_gitdream_hook(root / config, name):
                return "via-lefthook", root / config
        return None
    if is_husky_stub(path):
        script = where.path.parent / name
        return ("via-husky", script) if _calls_gitdream_hook(script, name) else None
    return ("via-hook", path) if _calls_gitdream_hook(path, name) else None


_STATUSES = {
    "installed": "installed",
    "outdated": "installed by another gitdream version; run `gitdream hooks install` to update",
    "not-executable": "not executable, so git skips it; run `gitdream hooks install`",
    "broken": "its Python interpreter is gone; run `gitdream hooks install` again",
    "chained-by-other": "installed, run by the pre-commit framework's hook, which now owns the hook",
    "chain-loop": "pre-commit's hook runs gitdream's, which runs a copy of pre-commit's hook: every "
    "commit fails in 'migration mode'; run `gitdream hooks install` to repair",
    "renamed-by-lefthook": "lefthook renamed gitdream's hook to {name}.old and never runs it: in "
    "lefthook.yml, give {name} a command {lefthook}, then run "
    "`gitdream hooks uninstall`, which removes {old} (gitdream's documentation, docs/hooks.md, has "
    "the snippet)",
    "dropped-by-husky": "Husky rewrote its stub over gitdream's hook: put `gitdream hook {name}` in "
    ".husky/{name} (tracked, it survives Husky's reinstalls) and run `gitdream hooks uninstall`, or "
    "run `gitdream hooks install` again",
    "husky": "a Husky stub without gitdream: put `gitdream hook {name}` in .husky/{name}",
    "via-lefthook": "run by lefthook: {old} calls `gitdream hook {name}`",
    "via-husky": "run by Husky: {old} calls `gitdream hook {name}`",
    "via-hook": "the hook calls `gitdream hook {name}` itself",
    "foreign": "another tool's hook, which does not run gitdream: run `gitdream hooks install` to "
    'chain it, or call `gitdream hook {name} "$@"` from it',
    "foreign-tracked": "a hook file tracked by git, which does not run gitdream and which `gitdream hooks "
    'install` will not move: end it with the line `exec gitdream hook {name} "$@"`',
    "missing": "missing: run `gitdream hooks install`",
}


def describe_status(status: str, name: str = "HOOK", path: Path | None = None) -> str:
    """A short human explanation of a HookFound.status, with the fix (for hook `name`,
    found at `path`)."""
    return _STATUSES.get(status, status).format(
        name=name, old=path or f"{name}.old", lefthook=_lefthook_command(name)
    )
