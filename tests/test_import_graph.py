"""The house rules of the layout, held by a test (issue 12; docs/DEVELOPING.md, "Floors").

Every import in `gitdream/` — at the top of a module or inside a function — is read from
the source. Floors, top to bottom: the face (`cli.py`, `__main__.py`, `output.py`),
`commands/`, the wings (`engines/`, `trigger/`), `dream/`, `git/`, `text/`, the ground
floor (every other top-level module). A module imports from its own floor and the floors
below, never from a floor above, and one wing never imports the other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "gitdream"

FLOORS = ("face", "commands", "wings", "dream", "git", "text", "ground")
FACE = {"gitdream.cli", "gitdream.__main__", "gitdream.output", "gitdream.render"}


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _floor(module: str) -> tuple[str, str]:
    """(floor, wing) of a gitdream module; the wing tells engines from trigger."""
    if module in FACE:
        return "face", ""
    parts = module.split(".")
    sub = parts[1] if len(parts) > 1 else ""
    if sub in ("engines", "trigger"):
        return "wings", sub
    if sub in ("commands", "dream", "git", "text"):
        return sub, ""
    return "ground", ""


def _absolute(path: Path, module: str | None, level: int) -> str:
    """The absolute name of `from <level dots><module> import …` in `path`: a relative
    import is resolved against the module's package, as Python does."""
    if level == 0:
        return module or ""
    package = _module(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    package = package[: len(package) - (level - 1)]
    return ".".join([*package, module] if module else package)


def _imports(path: Path) -> list[tuple[int, str]]:
    """`(line, imported module)` of every import in `path` (`from a import b` gives
    `a.b` when `a.b` is a module of gitdream, else `a`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(path, node.module, node.level)
            if not base:
                continue
            for alias in node.names:
                name = f"{base}.{alias.name}"
                is_module = (PACKAGE.parent / name.replace(".", "/")).with_suffix(".py").exists() or (
                    PACKAGE.parent / name.replace(".", "/") / "__init__.py"
                ).exists()
                found.append((node.lineno, name if is_module else base))
    return found


SOURCES = sorted(PACKAGE.rglob("*.py"))
IMPORTS = {path: _imports(path) for path in SOURCES}


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(PACKAGE.parent)}:{line}"


def _importers(prefix: str) -> set[str]:
    return {
        _module(path)
        for path, found in IMPORTS.items()
        for _line, name in found
        if name == prefix or name.startswith(prefix + ".")
    }


def test_only_the_git_layer_imports_pygit2() -> None:
    outside = {m for m in _importers("pygit2") if not m.startswith("gitdream.git")}
    assert outside == set()


def test_only_cli_imports_click() -> None:
    assert _importers("click") == {"gitdream.cli"}


def test_only_engines_messages_imports_the_sdk() -> None:
    assert _importers("anthropic") == {"gitdream.engines.messages"}


def test_only_cli_writes_to_the_terminal() -> None:
    """`output.py` is the CLI's writer (imported by cli.py alone); nothing else prints."""
    assert _importers("gitdream.output") == {"gitdream.cli"}
    printing = []
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                printing.append(_where(path, node.lineno))
            if (
                isinstance(node, ast.Attribute)
                and node.attr in ("stdout", "stderr")
                and isinstance(node.value, ast.Name)
                and node.value.id == "sys"
                and _module(path) not in ("gitdream.output",)
            ):
                printing.append(_where(path, node.lineno))
    assert printing == []


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_nothing_imports_upward(path: Path) -> None:
    floor, wing = _floor(_module(path))
    upward = []
    for line, name in IMPORTS[path]:
        if not name.startswith("gitdream"):
            continue
        other, other_wing = _floor(name)
        if FLOORS.index(other) < FLOORS.index(floor) or (other == "wings" == floor and other_wing != wing):
            upward.append(f"{_where(path, line)} ({floor}) imports {name} ({other})")
    assert upward == []


def test_the_core_never_imports_an_engine() -> None:
    core = ("gitdream.dream", "gitdream.git", "gitdream.text")
    assert {m for m in _importers("gitdream.engines") if m.startswith(core)} == set()
