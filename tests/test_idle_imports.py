"""The idle path imports only what it needs (DEVELOPING.md, rule 3, and bench/RESULTS.md:
import time is most of what a closed gate costs). A closed `run --auto` loads neither the
pipeline, the engines, the commit builder, the lock, the hook installer nor `subprocess`;
`status` and `check` never load the pipeline or an engine.

And an import inside a function says why it is there (issue 12: 198 of them, most for no
reason): its line ends with `# idle path: …` (it keeps a module off the idle path, and the
idle path really does run without it), `# cycle: …` (the module imports this one at import
time) or `# optional: …` (an extra that may not be installed, or a crash log that must be
written even when a dependency cannot be imported). Every other import is at the top."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import commit_all, git, gitdream_env, run_gitdream, write

PACKAGE = Path(__file__).resolve().parents[1] / "gitdream"
REASONS = ("idle path", "cycle", "optional")

NEVER_IDLE = (
    "gitdream.dream.pipeline",
    "gitdream.engines",
    "gitdream.dream.integrate",
    "gitdream.dream.readers",
    "anthropic",
)
NOT_ON_A_CLOSED_GATE = (
    "gitdream.git.commitbuilder",
    "gitdream.git.writegate",
    "gitdream.trigger.dreamlock",
    "gitdream.trigger.hookscripts",
    "gitdream.ids",
    "subprocess",
    "difflib",
    "re2",  # the default globs are matched with `re` (gitdream.globs)
)


def _loaded(root: Path, args: list[str], env: dict[str, str] | None = None) -> set[str]:
    code = (
        "import sys\n"
        "from gitdream.cli import cli\n"
        "try:\n"
        f"    cli({args!r}, prog_name='gitdream')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('LOADED', ' '.join(sorted(sys.modules)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=gitdream_env(env), capture_output=True, text=True
    )
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("LOADED "))
    return set(line.split()[1:])


def _heavy(loaded: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in loaded if any(m == n or m.startswith(n + ".") for n in names))


def test_a_closed_gate_imports_only_the_gates(agent_repo: Path) -> None:
    write(agent_repo, "agents/ops/memory/logs/2026/03/2026-03-01.md", "- one session\n")
    commit_all(agent_repo, "one session: fewer than min_sessions")
    loaded = _loaded(agent_repo, ["run", "--auto", "--trigger", "post-merge"])
    assert "gitdream.trigger.gates" in loaded  # it did get as far as the gates
    assert _heavy(loaded, NEVER_IDLE + NOT_ON_A_CLOSED_GATE) == []


def test_a_clone_without_gitdreams_refs_is_a_closed_gate_too(agent_repo: Path, tmp_path: Path) -> None:
    """An agent that dreamed, in a clone without its watermark: the sessions gate cannot
    count and stays closed — on the idle path, not a dream that fails."""
    for day in range(1, 6):
        write(
            agent_repo,
            f"agents/ops/memory/logs/2026/03/2026-03-0{day}.md",
            f"- Lesson: the deploy of day {day} needs the cache warmed first, because cold starts time out.\n",
        )
    commit_all(agent_repo, "five sessions")
    assert run_gitdream(agent_repo, "run").returncode == 0
    assert git(agent_repo, "log", "-1", "--format=%s").startswith("dream(ops): experience")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(agent_repo), str(clone))
    write(clone, "agents/ops/memory/logs/2026/03/2026-03-06.md", "- one session\n")
    commit_all(clone, "one more session")
    loaded = _loaded(clone, ["run", "--auto", "--trigger", "post-merge"])
    assert "gitdream.trigger.gates" in loaded
    assert _heavy(loaded, NEVER_IDLE + NOT_ON_A_CLOSED_GATE) == []


@pytest.mark.parametrize("args", [["status"], ["check"]])
def test_status_and_check_never_import_the_pipeline_or_an_engine(agent_repo: Path, args: list[str]) -> None:
    assert _heavy(_loaded(agent_repo, args), NEVER_IDLE) == []


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["run", "--help"]])
def test_help_and_version_never_import_pygit2(agent_repo: Path, args: list[str]) -> None:
    """`--help` and `--version` open no repository, so they do not pay for libgit2
    (issue 12: importing pygit2 cost them about 20 ms)."""
    loaded = _loaded(agent_repo, args)
    assert "gitdream.cli" in loaded  # it did run the command line
    assert _heavy(loaded, ("pygit2", "gitdream.git", *NEVER_IDLE)) == []


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules an import statement loads (`from a import b`: `a.b` when that is a
    module of gitdream, else `a`)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    assert node.module is not None and node.level == 0, "gitdream uses absolute imports"
    names = []
    for alias in node.names:
        name = f"{node.module}.{alias.name}"
        base = PACKAGE.parent / name.replace(".", "/")
        names.append(
            name if base.with_suffix(".py").exists() or (base / "__init__.py").exists() else node.module
        )
    return names


def _local_imports() -> list[tuple[str, int, str, list[str]]]:
    """`(module, line, reason, imported modules)` of every import inside a function in
    gitdream/ (`reason`: the comment at the end of its first line, "" when none)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        seen: set[int] = set()
        for func in ast.walk(ast.parse(text, str(path))):
            if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(func):
                if isinstance(node, ast.Import | ast.ImportFrom) and node.lineno not in seen:
                    seen.add(node.lineno)
                    line = lines[node.lineno - 1]
                    reason = line.split("#", 1)[1].strip() if "#" in line else ""
                    found.append((_module_name(path), node.lineno, reason, _imported(node)))
    return found


def test_every_import_inside_a_function_says_why(agent_repo: Path) -> None:
    write(agent_repo, "agents/ops/memory/logs/2026/03/2026-03-01.md", "- one session\n")
    commit_all(agent_repo, "one session: fewer than min_sessions")
    auto = ["run", "--auto", "--trigger", "post-merge"]
    idle = [  # before the first dream (no watermark yet): the sessions gate closes
        _loaded(agent_repo, auto),
        _loaded(agent_repo, ["status"]),
        _loaded(agent_repo, ["check"]),
        _loaded(agent_repo, ["check", "--staged"]),
        _loaded(agent_repo, ["--help"]),
        _loaded(agent_repo, ["--version"]),
    ]
    assert run_gitdream(agent_repo, "run").returncode == 0  # a dream: watermark and state
    idle.append(_loaded(agent_repo, ["run"]))  # a run with nothing new: no engine, no scanner
    write(agent_repo, "agents/ops/memory/logs/2026/03/2026-03-02.md", "- another session\n")
    commit_all(agent_repo, "one more session")
    idle += [  # after it: the time gate closes, or (min_hours 0) the sessions gate
        _loaded(agent_repo, auto),
        _loaded(agent_repo, auto, {"GITDREAM_MIN_HOURS": "0"}),  # counts the sessions
        _loaded(agent_repo, auto, {"GITDREAM_MIN_HOURS": "0"}),  # the throttle reuses the count
        _loaded(agent_repo, auto, {"GITDREAM_MIN_HOURS": "0", "GITDREAM_SCAN_INTERVAL_MINUTES": "0"}),
        _loaded(agent_repo, ["status"]),
    ]
    local = _local_imports()
    assert len(local) > 20  # the walk does find them
    wrong = []
    for module, line, reason, names in local:
        where = f"{module}:{line}"
        kind = next((r for r in REASONS if reason.startswith(r + ":")), None)
        if kind is None:
            wrong.append(
                f"{where}: no reason (end the line with '# idle path: …', '# cycle: …' or '# optional: …', or import at the top)"
            )
        elif kind == "idle path":
            runs = [loaded for loaded in idle if module in loaded]
            if not runs:
                wrong.append(f"{where}: {module} is not on the idle path; import at the top")
            elif all(name in loaded for loaded in runs for name in names):
                wrong.append(
                    f"{where}: every idle command that loads {module} loads {', '.join(names)} too; import at the top"
                )
    assert not wrong, "\n".join(wrong)
