"""Agents: which directories of the repository are agents, and what each may be written.

An agent is a directory matched by one of the config's `agents` globs (in the working
tree; symlinked directories are skipped, since the write gate would refuse them anyway).
Its id is the directory's name, or "default" for the repository root (`agents = ["."]`);
it names the watermark ref `refs/gitdream/watermark/<id>`, so it must be a valid ref
component of at most 250 bytes (git locks the ref as `<id>.lock`), and unique.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from gitdream import paths
from gitdream.config import Config
from gitdream.errors import ConfigError, UsageError
from gitdream.globs import any_match, collapse

ROOT_AGENT_ID = "default"
# git stores refs/gitdream/watermark/<id> as a file and locks it as <id>.lock: a file name
# holds at most 255 bytes on common file systems (NAME_MAX).
MAX_ID_BYTES = 250


_REF_FORBIDDEN = frozenset(" ~^:?*[\\\x7f") | {chr(c) for c in range(32)}


def valid_ref_name(name: str) -> bool:
    """Whether `name` (a full ref name such as `refs/gitdream/watermark/ops`) may name a
    git ref, by git's rules (git-check-ref-format(1)): no empty component and none that
    begins with "." or ends with ".lock", no "..", no "@{", no control character, space,
    "~", "^", ":", "?", "*", "[" or "\\", not "@", not ending with ".". Pure (the ground
    floor imports no pygit2); a test holds it equal to libgit2's
    `reference_is_valid_name` on the names that matter."""
    if name == "@" or name.endswith(".") or ".." in name or "@{" in name:
        return False
    if any(ch in _REF_FORBIDDEN for ch in name):
        return False
    return all(part and not part.startswith(".") and not part.endswith(".lock") for part in name.split("/"))


ID_HINT = "use letters, digits, '-', '_' or '.'; no '/', spaces or '..'"
"""What an agent id may hold, for the errors of a malformed one."""


def check_id_argument(agent_id: str) -> str:
    """Return `agent_id`, a command-line argument naming an agent, when it has the form of
    an agent id: a folder name (no '/') that names the watermark ref
    `refs/gitdream/watermark/<id>` (`valid_ref_name`) in at most MAX_ID_BYTES bytes of
    UTF-8. Raises UsageError (exit 2) otherwise; whether such an agent exists is the
    caller's question (an unknown well-formed id is a ConfigError, exit 1)."""
    try:
        size = len(agent_id.encode("utf-8"))
    except UnicodeEncodeError:
        size = -1
    if (
        0 < size <= MAX_ID_BYTES
        and "/" not in agent_id
        and valid_ref_name(f"refs/gitdream/watermark/{agent_id}")
    ):
        return agent_id
    shown = agent_id if size <= 80 else agent_id[:60] + "…"
    raise UsageError(f"{shown!r} cannot be an agent id (an agent id is its folder's name)", hint=ID_HINT)


def join(*parts: str) -> str:
    """Join repository-relative POSIX path parts; "" and "." are the root."""
    kept = [p.strip("/") for p in parts if p not in ("", ".")]
    return "/".join(k for k in kept if k)


class Agent(NamedTuple):  # not a frozen dataclass: 4x cheaper to build at import (idle path)
    """One agent. Paths are repository-relative POSIX strings; `dir` is "" for the root."""

    id: str
    dir: str
    memory_dir: str
    definition_files: tuple[str, ...]
    log_globs: tuple[str, ...]
    session_globs: tuple[str, ...]

    def path(self, relative: str) -> str:
        """`relative` (to the agent directory) as a repository-relative path."""
        return join(self.dir, relative)

    def relative(self, path: str) -> str | None:
        """`path` relative to the agent directory, or None when outside it."""
        if not self.dir:
            return path
        prefix = self.dir + "/"
        return path[len(prefix) :] if path.startswith(prefix) else None

    def contains(self, path: str) -> bool:
        return self.relative(path) is not None

    def is_source(self, path: str) -> bool:
        """True for a raw-material path (daily log or session transcript) of this agent."""
        rel = self.relative(path)
        return rel is not None and (any_match(self.log_globs, rel) or any_match(self.session_globs, rel))

    def is_session(self, path: str) -> bool:
        rel = self.relative(path)
        return rel is not None and any_match(self.session_globs, rel)

    def is_memory_path(self, path: str) -> bool:
        """True for a path the experience commit may write: inside the memory directory
        and not a raw source (raw logs are the runtime's, never the dream's)."""
        prefix = self.memory_dir + "/" if self.memory_dir else ""
        return path.startswith(prefix) and not self.is_source(path)

    def is_definition_path(self, path: str) -> bool:
        """True for one of the agent's definition files."""
        return path in self.definition_files

    @property
    def watermark_ref(self) -> str:
        return f"refs/gitdream/watermark/{self.id}"


def _agent_dirs(workdir: Path, pattern: str) -> list[Path]:
    if pattern.strip() in ("", ".", "./"):
        return [workdir]
    if PurePosixPath(pattern).is_absolute() or ".." in PurePosixPath(pattern).parts:
        raise ConfigError(
            f"gitdream.toml: key 'agents' has the pattern {pattern!r}, which leaves the repository",
            hint='use globs relative to the repository root, such as "agents/*"',
        )
    found = []
    for hit in _recursive_dirs(workdir, pattern) if "**" in collapse(pattern) else workdir.glob(pattern):
        if hit.is_symlink() or not hit.is_dir():
            continue
        if ".git" in hit.relative_to(workdir).parts:
            continue
        found.append(hit)
    return found


def _recursive_dirs(workdir: Path, pattern: str) -> list[Path]:
    """The directories of `workdir` (itself included) that glob `pattern` with a `**`
    matches, as `Path.glob` finds them (a trailing `**` matches its parent too) but in one
    walk of the tree, each path matched in linear time: `Path.glob` walks the tree again
    for every `**`, so a committed `agents = ["**/**/**/**/**/**/**/**/x"]` took minutes
    (issue 16). Symbolic links to directories are not followed, `.git` is not entered."""
    parts = collapse(pattern)
    globs = ["/".join(parts), "/".join(parts[:-1])] if parts[-1] == "**" else ["/".join(parts)]
    found = []
    for top, dirs, _files in os.walk(workdir):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        rel = Path(top).relative_to(workdir).as_posix()
        if any_match(globs, "" if rel == "." else rel):
            found.append(Path(top))
    return found


def make_agent(rel_dir: str, cfg: Config) -> Agent:
    """Build the Agent for repository-relative directory `rel_dir` from config `cfg`."""
    agent_id = PurePosixPath(rel_dir).name if rel_dir else ROOT_AGENT_ID
    return Agent(
        id=agent_id,
        dir=rel_dir,
        memory_dir=join(rel_dir, cfg.str("memory_dir")),
        definition_files=tuple(join(rel_dir, f) for f in cfg.list("definition_files")),
        log_globs=tuple(cfg.list("log_globs")),
        session_globs=tuple(cfg.list("session_globs")),
    )


def skipped_warning(folder: str, problem: ConfigError) -> str:
    """The warning for an agent folder skipped because its name cannot be an agent id."""
    return f"skipped agent folder {folder}: {problem.message}; {problem.hint}"


def agents_from_dirs(
    dirs: list[str],
    cfg: Config,
    warnings: list[str] | None = None,
    skipped: dict[str, ConfigError] | None = None,
) -> list[Agent]:
    """Agents for repository-relative directories `dirs` ("" is the root), sorted by id.

    Raises ConfigError when two directories give the same id. A directory whose name cannot
    name a git ref (not a valid ref name, or longer than MAX_ID_BYTES) is skipped with a
    message appended to `warnings` when a list is given (so one badly named folder does not
    stop every other agent), or recorded in `skipped` (`{directory: ConfigError}`) when
    that dict is given, else raised as ConfigError.
    """
    agents: dict[str, Agent] = {}
    for rel in dirs:
        agent = make_agent(rel, cfg)
        other = agents.get(agent.id)
        if other is not None and other.dir != agent.dir:
            raise ConfigError(
                f"two agents share the id '{agent.id}': {other.dir or '.'} and {agent.dir or '.'}",
                hint="rename one of the directories; an agent's id is its directory name",
            )
        problem = None
        size = len(agent.id.encode("utf-8", "surrogateescape"))
        if not paths.is_utf8(agent.dir):
            shown = paths.display(agent.dir)
            problem = ConfigError(
                f"the agent directory '{shown}' has a name that is not UTF-8, which cannot name a git ref",
                hint="rename the directory to a UTF-8 name (git mv)",
            )
        elif not valid_ref_name(agent.watermark_ref):
            problem = ConfigError(
                f"the agent directory '{agent.dir}' gives the id '{agent.id}', which cannot name a git ref",
                hint="rename the directory (no spaces, '..', '~', '^', ':', '?', '*', '[' or '\\')",
            )
        elif size > MAX_ID_BYTES:
            problem = ConfigError(
                f"the agent directory '{agent.dir[:60]}…' gives an id of {size} bytes; its watermark "
                f"ref is a file whose lock file (<id>.lock) must fit a {MAX_ID_BYTES + 5}-byte file name",
                hint=f"rename the directory to at most {MAX_ID_BYTES} bytes",
            )
        if problem is not None:
            if skipped is not None:
                skipped[agent.dir] = problem
                continue
            if warnings is None:
                raise problem
            warnings.append(skipped_warning(paths.display(agent.dir), problem))
            continue
        agents[agent.id] = agent
    return [agents[k] for k in sorted(agents)]


MAX_SLUG_SAMPLE = 64
"""Topic names of 1 to this many characters are tried against the raw-material globs
(`check_layout`): as long as the longest slug gitdream makes (`dream.slugs.MAX_CHARS`)."""


def check_layout(cfg: Config) -> None:
    """Refuse a `memory_dir` whose own files — the topics, `MEMORY.md`, the archive — the
    raw-material globs would match: the dream would write among the raw logs and, as it
    never reads its own outputs, stop reading them (issue 16: `memory_dir = "memory/logs"`
    silently consumed the experience material). Raises ConfigError."""
    memory = cfg.str("memory_dir")
    globs = [*cfg.list("log_globs"), *cfg.list("session_globs")]
    # Topic names are a slug of any length: a name of each length up to the longest slug
    # stands for them (so `memory/?????.md` is caught as `memory/*.md` is).
    names = [
        *(join(memory, "t" * n + ".md") for n in range(1, MAX_SLUG_SAMPLE + 1)),
        join(memory, "a-topic.md"),
        join(memory, "MEMORY.md"),
        join(memory, "gitdream-topics.md"),
        join(memory, "archive/2026-01.md"),
    ]
    for own in names:
        clash = next((g for g in globs if any_match([g], own)), None)
        if clash is not None:
            raise ConfigError(
                f"memory_dir {memory!r} is where the raw material is: a file gitdream writes there "
                f"({own}) matches the raw-material glob {clash!r}, so the dream would write among the "
                "raw files and stop reading them",
                hint="point memory_dir at the memory folder (default 'memory') and the globs at the raw "
                "files inside it (default log_globs 'memory/logs/**/*.md')",
            )


def list_agents(
    workdir: Path,
    cfg: Config,
    warnings: list[str] | None = None,
    skipped: dict[str, ConfigError] | None = None,
) -> list[Agent]:
    """All agents of the working tree at `workdir` (the config's `agents` globs), sorted by id.

    Raises ConfigError when a pattern leaves the repository, two agents share an id or
    `memory_dir` overlaps the raw material (`check_layout`); a folder whose name cannot
    name a git ref is skipped with a warning (see `agents_from_dirs`).
    """
    check_layout(cfg)
    dirs: list[str] = []
    for pattern in cfg.list("agents"):
        for path in _agent_dirs(workdir, pattern):
            rel = path.relative_to(workdir).as_posix()
            dirs.append("" if rel == "." else rel)
    return agents_from_dirs(list(dict.fromkeys(dirs)), cfg, warnings, skipped)


def own_repository(workdir: Path, agent: Agent) -> bool:
    """True when the agent's folder is a repository of its own (a submodule, or a nested
    clone): it has a `.git` entry. Its files are not this repository's, so it is dreamed
    from inside (`gitdream -C <dir> run`), never from the outer repository."""
    return bool(agent.dir) and os.path.lexists(workdir / agent.dir / ".git")


KNOWN_SHOWN = 10


def select(agents: list[Agent], ids: list[str] | tuple[str, ...]) -> list[Agent]:
    """The agents named by `ids` (all when empty); ConfigError names an unknown id, the
    closest known id, and at most KNOWN_SHOWN known ids (a repository may hold thousands)."""
    if not ids:
        return agents
    by_id = {a.id: a for a in agents}
    missing = [i for i in ids if i not in by_id]
    if missing:
        import difflib  # idle path: only on this error

        names = sorted(by_id)
        known = ", ".join(names[:KNOWN_SHOWN]) or "none"
        if len(names) > KNOWN_SHOWN:
            known += f", … and {len(names) - KNOWN_SHOWN} more"
        close = [c for m in missing for c in difflib.get_close_matches(m, names, n=1)]
        guess = f"did you mean {', '.join(repr(c) for c in close)}? " if close else ""
        raise ConfigError(
            f"no agent with id {', '.join(repr(m) for m in missing)} (agents: {known})",
            hint=guess
            + "list agents with `gitdream status`; the `agents` globs in gitdream.toml decide which exist",
        )
    return [by_id[i] for i in ids]
