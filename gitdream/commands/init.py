"""`gitdream init`: write gitdream.toml and an agent skeleton, never overwriting a file."""

from __future__ import annotations

import os
import re
import string
from dataclasses import dataclass, field

from gitdream import config, resources
from gitdream.agents import join, make_agent
from gitdream.errors import ConfigError, WriteRefused
from gitdream.git import commitbuilder
from gitdream.git.repo import Repo
from gitdream.globs import any_match

DEFAULT_AGENT_ID = "assistant"
# Letters (any script), digits, "-", "_" and "."; not starting with "." or "-".
_ID = re.compile(r"[^\W_][\w.-]{0,99}|_[\w.-]{0,99}")


@dataclass
class InitResult:
    """What init did: files created (repository-relative), files it kept because they
    already existed and are not part of the agent (gitdream.toml), the agent id and
    directory, the commit id (None without --commit) and warnings."""

    created: list[str]
    kept: list[str]
    agent_id: str
    agent_dir: str
    commit: str | None = None
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "agent": self.agent_id,
            "agent_dir": self.agent_dir or ".",
            "created": self.created,
            "kept": self.kept,
            "commit": self.commit,
            "warnings": self.warnings,
        }


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


def run_init(repo: Repo, agent_id: str | None, single: bool, commit: bool) -> InitResult:
    """Create gitdream.toml (unless it exists) and the skeleton of one agent.

    The agent lives in `agents/<id>/` (default id "assistant"), or at the repository root
    with `single` (and `agents = ["."]`). Refuses (WriteRefused, nothing written) when
    any agent file exists or is otherwise not writable. With `commit`, commits exactly
    the created files through the commit builder (works on a repository with no
    commits); otherwise writes them to the working tree only.
    """
    agent_id = DEFAULT_AGENT_ID if agent_id is None else agent_id
    defaults = config.defaults()
    probe = make_agent(f"agents/{agent_id}", defaults)
    import pygit2

    if not _ID.fullmatch(agent_id) or not pygit2.reference_is_valid_name(probe.watermark_ref):
        raise ConfigError(
            f"'{agent_id}' cannot be an agent id",
            hint="use letters, digits, '-', '_' or '.'; no '/', spaces or '..'",
        )
    toml_path = repo.workdir / config.REPO_FILE
    kept: list[str] = []
    files: dict[str, bytes] = {}
    if single:
        agent_dir = ""
        toml_text = config.render_default_toml().replace('agents = ["agents/*"]', 'agents = ["."]')
    else:
        agent_dir = f"agents/{agent_id}"
        toml_text = config.render_default_toml()
    warnings: list[str] = []
    if toml_path.exists() or toml_path.is_symlink():
        kept.append(config.REPO_FILE)
        effective = config.load(repo.workdir)
        globs = effective.list("agents")
        if not any(
            p.strip() in (".", "./", "") if not agent_dir else any_match([p], agent_dir) for p in globs
        ):
            warnings.append(
                f"{agent_dir or '.'} is not matched by agents = {globs} in gitdream.toml; "
                "add it there so gitdream sees the new agent"
            )
        cfg = effective
    else:
        files[config.REPO_FILE] = toml_text.encode("utf-8")
        cfg = defaults
    files.update(_agent_files(agent_id, agent_dir, cfg))

    existing = [p for p in files if p not in kept and os.path.lexists(repo.workdir / p)]
    if existing:
        raise WriteRefused(
            "refusing to overwrite existing files: " + ", ".join(existing),
            hint="gitdream init creates only new files; pick another --agent id, or move those files away",
            paths=existing,
        )
    created = list(files)
    result = InitResult(created, kept, agent_id if not single else "default", agent_dir, None, warnings)
    if commit:
        changes = [commitbuilder.Change(p, data) for p, data in files.items()]
        name = repo.config_value("user.name") or cfg.str("author_name")
        email = repo.config_value("user.email") or cfg.str("author_email")
        ident = commitbuilder.Identity((name, email), (name, email))
        message = commitbuilder.format_message(
            f"gitdream init: agent {result.agent_id}",
            "Adds " + ", ".join(created) + ".",
            [],
        )
        done = commitbuilder.commit(repo, None, "new", changes, message, ident)
        result.commit = done.oid
        result.warnings.extend(done.warnings)
        return result
    # Without --commit: check every path first (symlinked folders, ignored paths...),
    # then create each file exclusively, so nothing is ever overwritten.
    from gitdream.git import writegate

    writegate.require(repo, None, created, writegate.NEW_FILES)
    for rel, data in files.items():
        target = repo.workdir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "xb") as handle:
            handle.write(data)
    return result


def agent_skeleton_paths(agent_dir: str) -> list[str]:
    """The agent paths init would create (for docs and tests)."""
    return list(_agent_files("x", agent_dir, config.defaults()))
