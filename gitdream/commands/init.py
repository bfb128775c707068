"""`gitdream init`: set a repository up for gitdream, creating only what is missing.

- A new agent (its folder does not exist yet) gets the skeleton from `templates/agent/`:
  agent.md, soul.md, SKILL.md, memory/MEMORY.md.
- An existing agent is **adopted**: its files are kept as they are and only the memory
  index gitdream maintains is created when it is missing. Definitions are the user's;
  gitdream invents none.
- Without `--agent`, a repository that already has agents (by the `agents` globs) is
  adopted as a whole: nothing is added to any agent.
- `gitdream.toml` is written unless it exists, with every key commented out at its
  default: only what the user chose on the command line is set (`agents = ["."]` for
  `--single`), so the user config and the defaults of later versions apply.

Nothing is ever overwritten: every path is checked by the write gate first, and each
file is created exclusively.
"""

from __future__ import annotations

import os
import re
import string
from dataclasses import dataclass, field
from typing import Any

from gitdream import config, resources
from gitdream.agents import ID_HINT, Agent, join, list_agents, make_agent, valid_ref_name
from gitdream.errors import UsageError
from gitdream.git import commitbuilder, writegate
from gitdream.git.repo import Repo
from gitdream.globs import any_match

DEFAULT_AGENT_ID = "assistant"
# Letters (any script), digits, "-", "_" and "."; not starting with "." or "-".
_ID = re.compile(r"[^\W_][\w.-]{0,99}|_[\w.-]{0,99}")
_INDEX_TEMPLATE = "memory/MEMORY.md"


@dataclass
class InitResult:
    """What init did: files created (repository-relative), files it kept because they
    already existed, the agent id and directory, `adopted` (agent ids whose existing
    files were kept: an agent adopted, or every agent of a repository adopted without
    --agent), the commit id (None without --commit or when nothing was created),
    warnings, and `untracked`: kept files that git does not track yet (an earlier `init`
    without --commit), which no dream reads and `--commit` does not commit."""

    created: list[str]
    kept: list[str]
    agent_id: str | None
    agent_dir: str | None
    adopted: list[str] = field(default_factory=list)
    commit: str | None = None
    warnings: list[str] = field(default_factory=list)
    untracked: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "agent": self.agent_id,
            "agent_dir": None if self.agent_dir is None else self.agent_dir or ".",
            "adopted": self.adopted,
            "created": self.created,
            "kept": self.kept,
            "commit": self.commit,
            "untracked": self.untracked,
            "warnings": self.warnings,
        }


def _untracked(repo: Repo, paths: list[str]) -> list[str]:
    """The `paths` (repository-relative files) that are in neither the index nor HEAD:
    `git ls-files` of them, as git itself decides what is tracked."""
    if not paths:
        return []
    listed = repo.git("ls-files", "-z", "--", *paths).stdout.decode("utf-8", "surrogateescape")
    tracked = set(listed.split("\0"))
    return [p for p in paths if p not in tracked]


def _agent_files(agent_id: str, agent_dir: str, cfg: config.Config) -> dict[str, bytes]:
    """The skeleton: `{repository path: content}` rendered from templates/agent/."""
    root = resources.templates_dir() / "agent"
    files: dict[str, bytes] = {}
    agent = make_agent(agent_dir, cfg)
    for template in sorted(root.rglob("*")):
        if not template.is_file():
            continue
        rel = template.relative_to(root).as_posix()
        if rel.startswith("memory/"):
            target = join(agent.memory_dir, rel.removeprefix("memory/"))
        else:
            target = agent.path(rel)
        text = string.Template(template.read_text(encoding="utf-8")).substitute(agent_id=agent_id)
        files[target] = text.encode("utf-8")
    return files


def _exists(repo: Repo, rel: str) -> bool:
    return os.path.lexists(repo.workdir / rel)


def _has_files(repo: Repo, agent: Agent) -> bool:
    """True when the agent's folder already holds a definition file or a memory folder:
    a real agent, to be adopted rather than given a skeleton."""
    return any(_exists(repo, p) for p in agent.definition_files) or (
        bool(agent.memory_dir) and _exists(repo, agent.memory_dir)
    )


def run_init(repo: Repo, agent_id: str | None, single: bool, commit: bool) -> InitResult:
    """Set the repository up: gitdream.toml (unless it exists) and one agent, creating only
    what is missing (see the module docstring).

    `agent_id` None means: adopt the repository's existing agents, or, when it has none,
    create agent "assistant". `single` puts the agent at the repository root (and sets
    `agents = ["."]`). With `commit`, commits exactly the created files through the
    commit builder (works on a repository with no commits); otherwise writes them to the
    working tree only. Raises UsageError (exit 2) for a malformed id, ConfigError for a
    bad configuration, WriteRefused when a path to create is not writable (nothing is
    written then).
    """
    named = agent_id is not None
    agent_id = DEFAULT_AGENT_ID if agent_id is None else agent_id
    probe = make_agent(f"agents/{agent_id}", config.defaults())
    if not _ID.fullmatch(agent_id) or not valid_ref_name(probe.watermark_ref):
        raise UsageError(f"'{agent_id}' cannot be an agent id", hint=ID_HINT)
    chosen: dict[str, Any] = {"agents": ["."]} if single else {}
    toml_path = repo.workdir / config.REPO_FILE
    kept: list[str] = []
    files: dict[str, bytes] = {}
    warnings: list[str] = []
    if toml_path.exists() or toml_path.is_symlink():
        kept.append(config.REPO_FILE)
        cfg = config.load(repo.workdir)
        globs = cfg.list("agents")
    else:
        files[config.REPO_FILE] = config.render_default_toml(chosen).encode("utf-8")
        cfg = config.load(repo.workdir).with_overrides({k: (v, "gitdream init") for k, v in chosen.items()})
        globs = list(chosen.get("agents", cfg.list("agents")))
    result = InitResult([], kept, None, None, warnings=warnings)

    found = [] if named or single else list_agents(repo.workdir, cfg, warnings)
    if found:
        # An agents repository: gitdream.toml is all it needs; every agent is adopted as is.
        result.adopted = [a.id for a in found]
    else:
        agent_dir = "" if single else f"agents/{agent_id}"
        agent = make_agent(agent_dir, cfg)
        result.agent_id = agent_id if not single else "default"
        result.agent_dir = agent_dir
        if not any(
            p.strip() in (".", "./", "") if not agent_dir else any_match([p], agent_dir) for p in globs
        ):
            warnings.append(
                f"{agent_dir or '.'} is not matched by agents = {globs} in gitdream.toml; "
                "add it there so gitdream sees the agent"
            )
        skeleton = _agent_files(agent_id, agent_dir, cfg)
        if _has_files(repo, agent):
            result.adopted = [result.agent_id]
            index = join(agent.memory_dir, "MEMORY.md")
            wanted = {index: skeleton[index]} if index in skeleton else {}
        else:
            wanted = skeleton
        for rel, data in wanted.items():
            if _exists(repo, rel):
                kept.append(rel)
            else:
                files[rel] = data
        kept.extend(
            p for p in agent.definition_files if p not in kept and p not in files and _exists(repo, p)
        )
    result.created = list(files)
    result.untracked = _untracked(repo, kept)
    if not files:
        return result
    if commit:
        changes = [commitbuilder.Change(p, data) for p, data in files.items()]
        name = repo.config_value("user.name") or cfg.str("author_name")
        email = repo.config_value("user.email") or cfg.str("author_email")
        ident = commitbuilder.Identity((name, email), (name, email))
        subject = f"gitdream init: agent {result.agent_id}" if result.agent_id else "gitdream init"
        message = commitbuilder.format_message(subject, "Adds " + ", ".join(result.created) + ".", [])
        done = commitbuilder.commit(repo, None, "new", changes, message, ident)
        result.commit = done.oid
        result.warnings.extend(done.warnings)
        return result
    # Without --commit: check every path first (symlinked folders, ignored paths...),
    # then create each file exclusively, so nothing is ever overwritten.

    writegate.require(repo, None, result.created, writegate.NEW_FILES)
    for rel, data in files.items():
        target = repo.workdir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "xb") as handle:
            handle.write(data)
    return result


def agent_skeleton_paths(agent_dir: str) -> list[str]:
    """The agent paths init would create for a new agent (for docs and tests)."""
    return list(_agent_files("x", agent_dir, config.defaults()))
