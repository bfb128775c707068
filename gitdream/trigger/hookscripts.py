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
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
HOOK_ID = "gitdream-hook-5c0b7e21"
PRIOR_IDS: tuple[str, ...] = ()
PREV_SUFFIX = ".gitdream-prev"
OTHER_CHAIN_SUFFIXES = (".legacy",)  # pre-commit framework's name for a chained hook
CREATED_MARKER = ".gitdream-created"
_START = "# start templated"
_END = "# end templated"


@dataclass(frozen=True)
class HooksDir:
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


@dataclass
class HookAction:
    """What install/uninstall did to one hook: `action` is one of installed, chained,
    updated, unchanged (install); removed, restored, not-installed, foreign (uninstall).
    `previous` is the saved previous hook, when there is one."""

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
        return any(h.action not in ("unchanged", "not-installed", "foreign") for h in self.hooks)

    def to_json(self) -> dict[str, Any]:
        return {
            "hooks_dir": self.hooks_dir.to_json(),
            "changed": self.changed,
            "hooks": [h.to_json() for h in self.hooks],
            "warnings": list(self.warnings),
        }


@dataclass
class HookState:
    """One hook as found by `status`: `state` is installed, outdated, not-executable,
    broken (the baked interpreter is gone), chained-by-other (ours runs as `<hook>.legacy`
    under another manager), foreign (someone else's, gitdream not in it) or missing."""

    name: str
    path: Path
    state: str
    previous: Path | None = None
    python: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": str(self.path),
            "state": self.state,
            "previous": str(self.previous) if self.previous else None,
            "python": self.python,
        }


@dataclass
class HooksStatus:
    """`status` of every hook gitdream installs."""

    hooks_dir: HooksDir
    hooks: list[HookState]

    @property
    def installed(self) -> bool:
        return all(h.state in ("installed", "chained-by-other") for h in self.hooks)

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
    names = _names(hooks)
    directory = where.path
    warnings: list[str] = []
    plan: list[tuple[str, str]] = []  # (name, what to do)
    for name in names:
        path = directory / name
        prev = directory / (name + PREV_SUFFIX)
        chained_by = next(
            (directory / (name + s) for s in OTHER_CHAIN_SUFFIXES if is_ours(directory / (name + s))),
            None,
        )
        if is_ours(path):
            plan.append((name, "ours"))
        elif chained_by is not None:
            plan.append((name, "other-chain"))
        elif os.path.lexists(path):
            if where.in_worktree and _tracked(repo, path):
                raise HookInstallError(
                    f"{path} is tracked by git; gitdream will not move a tracked file",
                    hint="call gitdream from that hook yourself (docs/hooks.md: 'core.hooksPath, Husky, lefthook and pre-commit'), "
                    "or install with --hook for the other hooks only",
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
                plan.append((name, "replace-duplicate"))
            else:
                plan.append((name, "chain"))
        else:
            plan.append((name, "new"))

    created = False
    if not directory.is_dir():
        directory.mkdir(parents=True)
        (directory / CREATED_MARKER).write_bytes(b"created by gitdream hooks install\n")
        created = True

    actions: list[HookAction] = []
    for name, what in plan:
        path = directory / name
        prev = directory / (name + PREV_SUFFIX)
        content = render(name, python)
        if what == "ours":
            if path.read_bytes() == content and _executable(path):
                actions.append(HookAction(name, path, "unchanged", prev if os.path.lexists(prev) else None))
            else:
                _write(path, content)
                actions.append(HookAction(name, path, "updated", prev if os.path.lexists(prev) else None))
        elif what == "other-chain":
            target = next(
                directory / (name + s) for s in OTHER_CHAIN_SUFFIXES if is_ours(directory / (name + s))
            )
            note = f"runs as {target.name}, chained by the hook now at {name}"
            if target.read_bytes() == content and _executable(target):
                actions.append(HookAction(name, target, "unchanged", None, note))
            else:
                _write(target, content)
                actions.append(HookAction(name, target, "updated", None, note))
        elif what == "replace-duplicate":
            os.remove(path)
            _write(path, content)
            actions.append(HookAction(name, path, "chained", prev, "the hook here equals the saved one"))
        elif what == "chain":
            os.replace(path, prev)
            _write(path, content)
            actions.append(HookAction(name, path, "chained", prev))
        else:
            _write(path, content)
            actions.append(HookAction(name, path, "installed"))
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


def uninstall(
    repo: Any, *, hooks: tuple[str, ...] | list[str] = HOOK_NAMES, allow_outside: bool = False
) -> HooksResult:
    """Remove gitdream's `hooks` and put back what was there before install.

    A hook that is not gitdream's is left alone (action "foreign"); nothing to remove is
    not an error ("not-installed"). Raises HookInstallError for a hooks directory outside
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
        if is_ours(path):
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
            actions.append(HookAction(name, path, "not-installed"))
    marker = directory / CREATED_MARKER
    if marker.is_file() and not marker.is_symlink():
        rest = [p for p in directory.iterdir() if p.name != CREATED_MARKER]
        if not rest:
            marker.unlink()
            directory.rmdir()
    return HooksResult(where, actions, warnings)


def status(repo: Any) -> HooksStatus:
    """The state of each of gitdream's hooks (see HookState). Reads files only."""
    where = locate(repo)
    states = []
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
            state = "foreign" if os.path.lexists(path) else "missing"
            states.append(HookState(name, path, state, previous))
            continue
        data = target.read_bytes()
        python = _baked(data, "GITDREAM_PYTHON")
        template = (resources.hooks_dir() / TEMPLATES[name]).read_bytes()
        if not _executable(target):
            state = "not-executable"
        elif python and not (os.path.isfile(python) and os.access(python, os.X_OK)):
            state = "broken"
        elif _template_body(data) != _template_body(template):
            state = "outdated"
        else:
            state = "chained-by-other" if target is chained else "installed"
        states.append(HookState(name, target, state, previous, python))
    return HooksStatus(where, states)


def describe_state(state: str) -> str:
    """A short human explanation of a HookState.state."""
    return {
        "installed": "installed",
        "outdated": "installed by another gitdream version; run `gitdream hooks install` to update",
        "not-executable": "not executable, so git skips it; run `gitdream hooks install`",
        "broken": "its Python interpreter is gone; run `gitdream hooks install` again",
        "chained-by-other": "installed, run by the hook manager that now owns the hook",
        "foreign": "another tool's hook; gitdream is not installed in it",
        "missing": "not installed",
    }.get(state, state)
