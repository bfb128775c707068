"""`gitdream check`: the agent.md prefix guard and the definition/memory file rules.

Two entry points:

- `check_definition(path, text, cfg)` judges one file's *text* — what the definition
  writer calls on the new text of agent.md/soul.md/SKILL.md before every definition
  commit (libgit2 runs no hooks, so gitdream must call the guard itself, DESIGN §7);
- `check_agents(repo, cfg, paths, staged=..., index_file=...)` finds every agent's
  definition and memory files, in the working tree or in an index (the staged blobs, as
  the `pre-commit` hook needs), and judges each.

The rules themselves are pure text functions in `gitdream.text.checks` and
`gitdream.text.prefix`. A failed check is a result (`CheckResult.ok` false, exit status
1), not an exception.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gitdream import clock, config
from gitdream.agents import Agent, agents_from_dirs, list_agents, skipped_warning
from gitdream.config import Config
from gitdream.dream.memoryfiles import index_link_slug
from gitdream.errors import GitdreamError
from gitdream.globs import glob_match
from gitdream.text.checks import (
    KIND_AGENT,
    KIND_DEFINITION,
    KIND_INDEX,
    KIND_TOPIC,
    RULE_BYTES,
    RULE_LINES,
    FileCheck,
    Limits,
    Problem,
    check_bytes,
    check_text,
    kind_by_name,
)

__all__ = [
    "KIND_AGENT",
    "KIND_DEFINITION",
    "KIND_INDEX",
    "KIND_TOPIC",
    "CheckResult",
    "FileCheck",
    "Limits",
    "check_agents",
    "check_definition",
]


@dataclass
class CheckResult:
    """The verdict on a set of files.

    `files` (sorted by path) holds every file checked, passing or not; `mode` is
    "worktree" or "staged"; `index_file` the index read in staged mode (absolute path
    as a string); `unit`/`prefix_chars` the prefix window used; `warnings` notes that do
    not fail the check (for example a symlink that was skipped).
    """

    files: list[FileCheck]
    mode: str
    unit: str
    prefix_chars: int
    index_file: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(f.ok for f in self.files)

    @property
    def failed(self) -> list[FileCheck]:
        return [f for f in self.files if not f.ok]

    @property
    def problem_count(self) -> int:
        return sum(len(f.problems) for f in self.files)

    @property
    def exit_code(self) -> int:
        """0 when every file passes, 1 otherwise (the documented exit status of check)."""
        return 0 if self.ok else 1

    @property
    def warning_count(self) -> int:
        return sum(len(f.warnings) for f in self.files) + len(self.warnings)

    def summary(self) -> str:
        """One line: "12 files ok", "12 files ok, 3 warnings" or "2 problems in 1 of 12
        files, 3 warnings" — the warnings counted apart, since they do not fail the check."""
        total = len(self.files)
        noun = "file" if total == 1 else "files"
        warnings = self.warning_count
        tail = f", {warnings} warning{'s' if warnings != 1 else ''}" if warnings else ""
        if self.ok:
            return f"{total} {noun} ok{tail}"
        problems = self.problem_count
        return (
            f"{problems} problem{'s' if problems != 1 else ''} in {len(self.failed)} of {total} {noun}{tail}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "mode": self.mode,
            "index_file": self.index_file,
            "unit": self.unit,
            "prefix_chars": self.prefix_chars,
            "counts": {
                "files": len(self.files),
                "failed": len(self.failed),
                "problems": self.problem_count,
                "warnings": self.warning_count,
            },
            "files": [f.to_json() for f in self.files],
            "warnings": list(self.warnings),
        }


def check_definition(path: str, text: str, cfg: Config, *, kind: str | None = None) -> FileCheck:
    """Judge the text of one definition (or memory) file, as the definition writer must
    before every definition commit.

    Arguments: `path` repository-relative POSIX path, used for the kind and in messages;
    `text` the complete new file content as `str`; `cfg` a `gitdream.config.Config`
    (keys prefix_chars, prefix_unit, required_sections, memory_max_lines,
    memory_max_bytes); `kind` overrides the kind derived from the name (agent.md →
    "agent": prefix guard and managed blocks; other names → "definition": managed blocks;
    MEMORY.md → "index"; "topic" must be passed explicitly).

    Returns a FileCheck: `.ok`, `.problems` (each with `rule`, `message`, `hint`, `line`,
    and `start`/`end` counted in `cfg.str("prefix_unit")`: code points for "chars", UTF-16
    code units for "utf16"), `.lines()` for messages. Raises ConfigError for an invalid
    `required_sections` entry. Checking that text *outside* managed blocks is unchanged is
    the writer's job, not this function's.
    """
    return check_text(path, text, Limits.from_config(cfg), kind or kind_by_name(path))


# --- finding the files -------------------------------------------------------------------


def _agent_dirs_from_paths(paths: list[str], patterns: list[str]) -> list[str]:
    """Agent directories (repository-relative) implied by file paths: every ancestor
    directory matched by one of the `agents` globs (pathlib glob syntax, as
    `gitdream.agents.list_agents` applies it to the working tree)."""
    root_agent = any(p.strip() in ("", ".", "./") for p in patterns)
    globs = [p for p in patterns if p.strip() not in ("", ".", "./")]
    found: set[str] = {""} if root_agent else set()
    seen: set[str] = set()
    for path in paths:
        parts = path.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            directory = "/".join(parts[:depth])
            if directory in seen:
                continue
            seen.add(directory)
            if ".git" in parts[:depth]:
                continue
            if any(glob_match(g, directory) for g in globs):
                found.add(directory)
    return sorted(found)


def _agents(dirs: list[str], cfg: Config, bad: dict[str, Any]) -> list[Agent]:
    return agents_from_dirs(dirs, cfg, skipped=bad)


def _classify(agent: Agent, available: set[str]) -> dict[str, str]:
    """`{path: kind}` of the agent's files present in `available`."""
    out: dict[str, str] = {}
    for path in agent.definition_files:
        if path in available:
            out[path] = KIND_AGENT if path.rsplit("/", 1)[-1].lower() == "agent.md" else KIND_DEFINITION
    prefix = agent.memory_dir + "/" if agent.memory_dir else ""
    for path in available:
        if not path.startswith(prefix) or not path.endswith(".md"):
            continue
        rest = path[len(prefix) :]
        if "/" in rest or path in out or agent.is_source(path):
            continue
        out[path] = KIND_INDEX if rest == "MEMORY.md" else KIND_TOPIC
    return out


def _worktree_files(workdir: Path, agent: Agent, warnings: list[str]) -> set[str]:
    """The agent's definition files and top-level memory *.md files on disk (regular
    files; symlinks are skipped with a warning, as the write gate refuses them too)."""
    candidates = list(agent.definition_files)
    memory = workdir / agent.memory_dir if agent.memory_dir else workdir
    try:
        with os.scandir(memory) as entries:
            for entry in entries:
                if entry.name.endswith(".md"):
                    rel = f"{agent.memory_dir}/{entry.name}" if agent.memory_dir else entry.name
                    candidates.append(rel)
    except (FileNotFoundError, NotADirectoryError):
        pass
    out = set()
    for rel in candidates:
        full = workdir / rel
        if full.is_symlink():
            warnings.append(f"{rel}: a symbolic link, not checked")
            continue
        if full.is_file():
            out.add(rel)
    return out


def _bad_folders(bad: dict[str, Any], filters: list[str], warnings: list[str] | None) -> list[FileCheck]:
    """A FileCheck (kind "folder", rule `agent-id`) per agent folder whose name cannot be an
    agent id (`gitdream.agents.agents_from_dirs`): every other agent is still checked. With
    `warnings` (the pre-commit hook's `--changed` mode) each becomes a warning instead, so a
    folder committed earlier does not block every later commit."""
    found = []
    for folder, error in sorted(bad.items()):
        if filters and not any(
            f == "" or folder == f or folder.startswith(f + "/") or f.startswith(folder + "/")
            for f in filters
        ):
            continue
        if warnings is not None:
            warnings.append(skipped_warning(folder, error))
            continue
        found.append(
            FileCheck(folder, "folder", None, problems=[Problem("agent-id", error.message, error.hint or "")])
        )
    return found


def _dangling_links(data: bytes, topic_files: set[str]) -> list[Problem]:
    """Warnings (rule `index-link`) for the `MEMORY.md` lines that link to a topic file
    (`[Title](name.md)`, `gitdream.dream.memoryfiles.index_link_slug`) not among
    `topic_files` (file names in the memory folder): a topic deleted or renamed by hand.
    Warnings, not problems: such a line blocks nothing, and the next dream drops the lines
    of its own block that point nowhere."""

    found = []
    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        slug = index_link_slug(line)
        if slug is not None and f"{slug}.md" not in topic_files:
            found.append(
                Problem(
                    "index-link",
                    f"links to {slug}.md, which is not in the memory folder",
                    "restore the file or remove the line",
                    line=number,
                )
            )
    return found


LIMIT_RULES = (RULE_LINES, RULE_BYTES)
"""The MEMORY.md size limits: the rules `--changed` does not block on for a file that was
already over them at HEAD (an agent runtime that commits its own long MEMORY.md)."""


def _demote_problems_at_head(checked: FileCheck, before: bytes, limits: Limits) -> None:
    """Turn `checked`'s problems into warnings when the file already had them at HEAD
    (`before`, its blob there): the commit did not bring them in, so it is not blocked.
    A size limit counts when the file was over the same limit at HEAD (a commit that adds a
    line to a MEMORY.md already 543 lines long does not make it over: the new user's item
    4, agent runtimes commit their own MEMORY.md); any other problem when HEAD had exactly
    the same one (same rule and message: a role section that already ended past the window
    at the same character, which an edit at the end of the file leaves where it was — a
    second new user could not append a line to such an agent.md). A commit that brings a
    problem in, or makes one worse (the section ends later), is still blocked. The
    problems stay reported, as warnings that say so."""
    old = check_bytes(checked.path, before, limits, checked.kind, agent=checked.agent)
    over_before = {p.rule for p in old.problems if p.rule in LIMIT_RULES}
    had = {(p.rule, p.message) for p in old.problems}
    kept = []
    for problem in checked.problems:
        if problem.rule in over_before:
            note = "it was over before this commit, which does not block it"
        elif (problem.rule, problem.message) in had:
            note = "it was there before this commit, which does not block it"
        else:
            kept.append(problem)
            continue
        checked.warnings.append(replace(problem, message=f"{problem.message} ({note})"))
    checked.problems = kept


def _selected(path: str, filters: list[str]) -> bool:
    if not filters:
        return True
    return any(f == "" or path == f or path.startswith(f + "/") for f in filters)


def staged_config(repo: Any, index_file: Path | None, problem: GitdreamError) -> tuple[Config, str]:
    """The configuration to check a commit with when the working tree's gitdream.toml
    cannot be read (`problem`, a ConfigError) and the commit does not carry it: the
    gitdream.toml staged in the index at `index_file` (default as `check_agents`), or none
    when the index has none, with the warning that says so. A pre-commit check judges what
    is being committed, so a typo in a gitdream.toml not yet staged does not block a
    commit of other files. Raises `problem` when the staged gitdream.toml is the one in
    the working tree (the commit brings the problem), and ConfigError when the staged one
    cannot be read either."""
    import tempfile  # idle path: only after a configuration error

    from gitdream.git import indexfile  # idle path: only after a configuration error

    index_path = index_file or repo.inherited_index
    staged = indexfile.read_staged(repo, index_path, lambda p: p == config.REPO_FILE).get(config.REPO_FILE)
    try:
        worktree = (Path(repo.workdir) / config.REPO_FILE).read_bytes()
    except OSError:
        worktree = None
    if staged == worktree:
        raise problem
    with tempfile.TemporaryDirectory(prefix="gitdream-staged-") as folder:
        standin = Path(folder) / config.REPO_FILE
        if staged is not None:
            standin.write_bytes(staged)
        cfg = config.load(Path(repo.workdir), common_dir=Path(repo.common_dir), repo_file=standin)
    warning = (
        f"{problem.message}; it is not staged, so this commit is checked with the "
        f"{'gitdream.toml it commits' if staged is not None else 'configuration without gitdream.toml'}"
        " (fix it before you commit it)"
    )
    return cfg, warning


def check_agents(
    repo: Any,
    cfg: Config,
    paths: list[str] | tuple[str, ...] = (),
    *,
    staged: bool = False,
    index_file: Path | None = None,
    changed: bool = False,
) -> CheckResult:
    """Check the definition and memory files of every agent (or of `paths`).

    `repo` is a `gitdream.git.repo.Repo`; `paths` are repository-relative POSIX paths of
    files or directories (empty: everything). With `staged`, content comes from the
    index at `index_file` (default: the index named by an inherited `GIT_INDEX_FILE`,
    else this worktree's index) and agents are found from the index's paths; otherwise
    from the working tree. A path that is no agent's file but exists is judged by its
    name (`gitdream.text.checks.kind_by_name`). With `changed`, only files whose content
    differs from HEAD are judged (what the pre-commit hook wants: a file committed
    earlier with a problem does not block unrelated commits).

    With `staged` (and gitdream enabled) it also rewrites the patterns the pre-commit
    hook reads (`gitdream.trigger.state.write_precommit_paths`).

    Returns a CheckResult. Raises GitdreamError when a given path does not exist (in the
    index, with `staged`), ConfigError for bad configuration, RepoStateError when the
    index cannot be read.
    """

    config_seen = clock.epoch()
    limits = Limits.from_config(cfg)
    filters = [p.strip("/") if p not in ("", ".") else "" for p in paths]
    warnings: list[str] = []
    wanted: dict[str, tuple[str, str | None]] = {}  # path -> (kind, agent id)
    topics: dict[str, set[str]] = {}  # agent id -> names of its topic files ("deploys.md")
    bad: dict[str, Any] = {}  # agent folder -> ConfigError: a name that cannot be an agent id

    exists: Callable[[str], bool]
    if staged:
        from gitdream.git import indexfile  # idle path: only where it is used

        index_path = index_file or repo.inherited_index
        available_all = set(indexfile.staged_paths(repo, index_path))
        for agent in _agents(_agent_dirs_from_paths(sorted(available_all), cfg.list("agents")), cfg, bad):
            for path, kind in _classify(agent, available_all).items():
                wanted.setdefault(path, (kind, agent.id))
                if kind == KIND_TOPIC:
                    topics.setdefault(agent.id, set()).add(path.rsplit("/", 1)[-1])
        exists = available_all.__contains__
    else:
        index_path = None
        for agent in list_agents(repo.workdir, cfg, skipped=bad):
            for path, kind in _classify(agent, _worktree_files(repo.workdir, agent, warnings)).items():
                wanted.setdefault(path, (kind, agent.id))
                if kind == KIND_TOPIC:
                    topics.setdefault(agent.id, set()).add(path.rsplit("/", 1)[-1])

        def exists(path: str) -> bool:
            full = repo.workdir / path
            return full.is_file() and not full.is_symlink()

    selected = {p: v for p, v in wanted.items() if _selected(p, filters)}
    for given in filters:
        if given == "" or any(p == given or p.startswith(given + "/") for p in selected):
            continue
        if exists(given):
            selected[given] = (kind_by_name(given), None)
            continue
        is_dir = (repo.workdir / given).is_dir() if not staged else False
        if not is_dir:
            where = "in the index" if staged else "in the working tree"
            raise GitdreamError(
                f"{given}: no such file {where}",
                hint="give paths of agent files or folders, relative to the current directory",
            )

    if staged:
        from gitdream.git import indexfile  # idle path: only where it is used

        contents = indexfile.read_staged(repo, index_path, selected.__contains__)
    else:
        contents = {}
        for path in selected:
            try:
                contents[path] = (repo.workdir / path).read_bytes()
            except OSError as exc:
                warnings.append(f"{path}: cannot be read ({exc.strerror}), not checked")
    at_head: dict[str, bytes | None] = {}
    if changed:
        from gitdream.git import indexfile  # idle path: only where it is used

        at_head = indexfile.head_blobs(repo, set(contents))
        contents = {p: data for p, data in contents.items() if at_head[p] != data}
    files = [
        check_bytes(path, contents[path], limits, selected[path][0], agent=selected[path][1])
        for path in sorted(contents)
    ]
    for checked in files:
        before = at_head.get(checked.path)
        if before is not None and checked.problems:
            _demote_problems_at_head(checked, before, limits)
    files += _bad_folders(bad, filters, warnings if changed else None)
    files.sort(key=lambda f: f.path)
    for checked in files:
        if checked.kind == KIND_INDEX and checked.agent is not None:
            checked.warnings.extend(_dangling_links(contents[checked.path], topics.get(checked.agent, set())))
    if staged and cfg.bool("enabled"):
        # What lets the next pre-commit hook tell in sh that a commit stages nothing to check.
        from gitdream.trigger import state as state_mod  # idle path: only where it is used

        state_mod.write_precommit_paths(repo.common_dir, repo.workdir, cfg, config_seen=config_seen)
    return CheckResult(
        files=files,
        mode="staged" if staged else "worktree",
        unit=limits.prefix_unit,
        prefix_chars=limits.prefix_chars,
        index_file=str(index_path)
        if index_path is not None
        else (str(repo.index_path()) if staged else None),
        warnings=warnings,
    )
