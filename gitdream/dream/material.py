"""New material: what was committed to an agent's raw sources since its watermark.

The watermark of an agent is the ref `refs/gitdream/watermark/<agent>`, pointing at the
input commit of its last completed dream (DESIGN §4). New material is found by a
tree-to-tree diff of the agent's directory between the watermark and the input commit —
never by mtimes — and costs O(changed files), not O(history), because libgit2 skips
subtrees whose ids are equal (patches are computed for modified files only: an added
file's blob is not read here):

- a source file added since the watermark counts whole;
- a modified source file contributes only its added lines (`+` lines of the diff);
- a deleted file, and a file that was only renamed, add nothing;
- only files matching the agent's `log_globs`/`session_globs` are sources, and the dream's
  own outputs (MEMORY.md, topic files at the top of the memory directory, `archive/`,
  the definition files) never are, whatever the globs say;
- when the watermark is not an ancestor of the input commit (a dream on another branch or
  worktree moved it, or history was rewritten), the
  merge base is used, with a warning; in a shallow clone a watermark that cannot be reached
  is an error with the fix, never a silent "everything is new"; so is a missing watermark
  when the agent's MEMORY.md holds gitdream's index block but no reflog shows a dream of
  it made here (a clone that did not fetch `refs/gitdream/*`, not a run that died before
  moving its watermark);
- paths that a previous run could not process ("pending", from its receipt) are read
  again, from the base that run used.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gitdream import paths
from gitdream.errors import BlockError, RepoStateError
from gitdream.git import graph, notes, refs, treediff

if TYPE_CHECKING:
    from gitdream.agents import Agent
    from gitdream.git.repo import Repo


@dataclass(frozen=True)
class SourceFile:
    """One raw source file with new material.

    `path` is repository-relative; `kind` is "log" or "transcript"; `status` is "added"
    (the whole file is new) or "modified"; `blob` is its id at the input commit;
    `added_lines` holds the 1-based line numbers added since the base (None: every line).
    """

    path: str
    kind: str
    status: str
    blob: str
    added_lines: frozenset[int] | None


@dataclass
class Material:
    """The new material of one agent: the base commit (None: from nothing, as with
    `--full` or before the first dream), the input commit, the source files, warnings.

    `since` maps each path read again because an earlier run left it pending to the base
    it was read from (older than `base`); `since_of(path)` is the base a path's material
    was measured from, which is what a run that leaves it pending again must record.
    `fresh` maps each path new or changed since `base` itself to its added lines (None:
    the whole file), so a pending path's new lines are told apart from its pending ones."""

    base: str | None
    input_commit: str
    files: list[SourceFile] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    since: dict[str, str | None] = field(default_factory=dict)
    fresh: dict[str, frozenset[int] | None] = field(default_factory=dict)

    def since_of(self, path: str) -> str | None:
        return self.since.get(path, self.base)

    def is_fresh(self, path: str, start: int, end: int) -> bool:
        """True when lines `start`..`end` of `path` hold a line added since `base` (new
        material, whatever an earlier run left pending in the same file)."""
        if path not in self.fresh:
            return False
        lines = self.fresh[path]
        return lines is None or any(n in lines for n in range(start, end + 1))

    @property
    def sessions(self) -> int:
        """Source files added or changed: the unit of the `min_sessions` gate."""
        return len(self.files)


def read_watermark(repo: Repo, agent: Agent) -> str | None:
    """The watermark's commit id (hex), or None when the agent never dreamed; the
    RepoStateError of `refs.commit_target` when it names no commit."""
    return refs.commit_target(repo, agent.watermark_ref)


def fetch_hint(repo: Repo) -> str:
    """How to get the history and refs a watermark needs (`--unshallow` in a shallow clone)."""

    return (
        f"fetch the history and gitdream's refs: `{notes.fetch_refs_command(unshallow=repo.shallow())}`, "
        f"and its receipts: `{notes.fetch_command()}`; or run with --full to read all material again"
    )


def _dreamed_index(repo: Repo, agent: Agent, commit: str) -> str | None:
    """The path of the agent's MEMORY.md at `commit` when it holds gitdream's `index`
    block — only a dream writes it — else None."""
    from gitdream.dream.memoryfiles import INDEX_BLOCK, index_path  # idle path: only where it is used
    from gitdream.text import blocks  # idle path: only where it is used

    path = index_path(agent)
    from gitdream.git import trees  # idle path: only without a watermark

    data = trees.blob_at(repo, commit, path)
    if data is None:
        return None
    try:
        found = blocks.find(data.decode("utf-8", "replace"), INDEX_BLOCK, path)
    except BlockError:
        return None
    return path if found is not None else None


DREAMED_WALK = 2000
"""How many commits of the input commit's history are searched for a dream commit of an
agent without a watermark (as `gitdream log` walks for trailers)."""


def _has_dreamed(repo: Repo, agent: Agent, commit: str) -> str | None:
    """Why `agent` has dreamed before at `commit`, or None: its MEMORY.md holds gitdream's
    index block, a commit of its history carries its dream trailers, or one of its topic
    files holds gitdream's facts block. Not the index block alone (issue 16): a human index
    over its limits never gets one."""
    from gitdream.dream.memoryfiles import FACTS_BLOCK  # idle path: only where it is used
    from gitdream.git import history, trees  # idle path: only without a watermark

    index = _dreamed_index(repo, agent, commit)
    if index is not None:
        return f"{index} has gitdream's index block"
    # One walk for every agent of the run (its later commits are of agents that now have
    # a watermark, so the first walk answers for all).
    dreamed = repo.memo.get("dream-commits")
    if dreamed is None:
        found, _truncated = history.trailer_commits(repo, commit, DREAMED_WALK)
        dreamed = repo.memo["dream-commits"] = {}
        for item in found:
            if item.agent and item.kind in ("experience", "definition") and not item.reverts:
                dreamed.setdefault(item.agent, item.oid)
    if agent.id in dreamed:
        return f"commit {dreamed[agent.id][:12]} is its dream commit"
    marker = f"<!-- gitdream:begin {FACTS_BLOCK} -->"
    folder = agent.path(agent.memory_dir) if agent.memory_dir else agent.dir

    def topic(path: str) -> bool:  # a topic file: directly in the memory folder
        rest = path[len(folder) + 1 :] if folder else path
        return path.endswith(".md") and "/" not in rest

    for path, text in sorted(trees.files_under(repo, commit, folder, topic).items()):
        if marker in text:
            return f"{path} has gitdream's facts block"
    return None


def _dreamed_here(repo: Repo, agent: Agent) -> bool:
    """True when a branch's reflog shows a dream commit of `agent` made in this repository
    (gitdream's message "commit: dream(<id>): …"): the watermark is missing because that
    run died before moving it, not because a clone left gitdream's refs behind."""
    return refs.branch_reflog_mentions(repo, f"commit: dream({agent.id}): ")


def resolve_base(
    repo: Repo, agent: Agent, input_commit: str, *, since: str | None = None, full: bool = False
) -> tuple[str | None, list[str]]:
    """The commit new material is measured from, and warnings.

    `full` → None (everything is new). `since` → that revision (RepoStateError when it
    does not resolve). Otherwise the watermark: None before the first dream (RepoStateError
    when there is none but MEMORY.md shows a dream no reflog here shows: gitdream's refs
    were not fetched); the merge
    base (with a warning) when it is not an ancestor of the input commit. Raises
    RepoStateError when the watermark's commit is missing, or, in a shallow clone, when it
    is not in the history the clone has of the input commit.
    """
    if full:
        return None, []
    if since is not None:
        commit = graph.resolve_commit(repo, since)
        if commit is None:
            raise RepoStateError(
                f"--since {since}: no such revision", hint="give a commit, branch or tag (see `git log`)"
            )
        return commit, []
    mark = read_watermark(repo, agent)
    if mark is None:
        evidence = _has_dreamed(repo, agent, input_commit)
        if evidence is not None and not _dreamed_here(repo, agent):
            # A clone does not fetch refs/gitdream/*: "never dreamed" would re-read all.
            raise RepoStateError(
                f"agent {agent.id} has dreamed before ({evidence}), but "
                f"its watermark {agent.watermark_ref} is not in this "
                + ("shallow clone" if repo.shallow() else "clone"),
                hint=fetch_hint(repo),
            )
        return None, []
    if not graph.has_object(repo, mark):
        raise RepoStateError(
            f"the watermark of agent {agent.id} points at {mark[:12]}, which is not in this "
            + ("shallow clone" if repo.shallow() else "repository"),
            hint=fetch_hint(repo),
        )
    if mark == input_commit or repo.descends_from(input_commit, mark):
        return mark, []
    if repo.shallow():
        # The history between the watermark and HEAD may be cut off by the shallow
        # boundary: "not an ancestor" cannot be told from "not fetched".
        raise RepoStateError(
            f"the watermark of agent {agent.id} ({mark[:12]}) is not in the history this shallow "
            "clone has of HEAD, so the material since it cannot be found",
            hint=fetch_hint(repo),
        )
    merge_base = graph.merge_base(repo, mark, input_commit)
    if merge_base is None:
        return None, [
            f"the watermark of agent {agent.id} ({mark[:12]}) shares no history with HEAD; "
            "reading all material again"
        ]
    return str(merge_base), [
        f"the watermark of agent {agent.id} ({mark[:12]}) is not an ancestor of HEAD "
        "(a dream of it on another branch or worktree, or rewritten history); reading material "
        f"since the merge base {str(merge_base)[:12]}, which may repeat what that dream consumed"
    ]


def _own_output(agent: Agent, path: str) -> bool:
    """The dream's own outputs: never material, whatever the globs say."""
    if path in agent.definition_files:
        return True
    prefix = agent.memory_dir + "/" if agent.memory_dir else ""
    if not path.startswith(prefix):
        return False
    rest = path[len(prefix) :]
    return "/" not in rest or rest.startswith("archive/")


def _kind(agent: Agent, path: str) -> str | None:
    if _own_output(agent, path):
        return None
    if agent.is_session(path):
        return "transcript"
    if agent.is_source(path):
        return "log"
    return None


def _uncitable(path: str) -> str | None:
    """Why the name of raw file `path` cannot be cited (`paths.is_utf8`, `paths.citable`),
    or None when it can."""
    if not paths.is_utf8(path):
        return "is not UTF-8"
    if not paths.citable(path):
        return "holds control characters (a line break, a terminal escape or a bidi override)"
    return None


def changed_sources(
    repo: Repo,
    agent: Agent,
    base: str | None,
    input_commit: str,
    pending: Iterable[tuple[str, str | None]] = (),
    *,
    remember: bool = False,
) -> Material:
    """The new material of `agent` between `base` and `input_commit` (see module doc).

    `pending` holds `(path, base)` pairs that a previous run failed to process: each is
    diffed again from its own base and merged in. Returns a Material; reads objects only,
    and with `remember` (a dream that may move the watermark to `input_commit`) records
    the agent folder's tree there in gitdream's cache (`git.subtrees`), for counting.
    """
    material = Material(base, input_commit)
    found: dict[str, SourceFile] = {}

    def collect(from_commit: str | None, wanted: set[str] | None) -> None:
        def source(path: str) -> bool:
            return (wanted is None or path in wanted) and _kind(agent, path) is not None

        for change in treediff.changes(
            repo, from_commit, input_commit, agent.dir, source, remember_new=remember
        ):
            path = change.path
            kind = _kind(agent, path)
            assert kind is not None
            if not change.regular:
                material.warnings.append(
                    f"{paths.display(path)}: not a regular file (symlink or submodule); skipped"
                )
                continue
            problem = _uncitable(path)
            if problem is not None:
                # Only this file stops: a fact cites its name in the topic file, the commit
                # message and the receipt (issue 16: a name not UTF-8 crashed the whole run;
                # an OSC 52 escape in one would write the clipboard wherever it is shown).
                material.warnings.append(
                    f"{paths.shown(path)}: the file name {problem}, so gitdream cannot cite it; skipped "
                    f"(rename it with `git mv`, then `gitdream run --agent {agent.id} --full` reads it: "
                    "a rename alone is not new material, and what was read before is recognised)"
                )
                continue
            if change.added:
                item = SourceFile(path, kind, "added", change.blob, None)
            else:
                # Only a changed file needs its patch (added lines); an added file is new
                # whole, so its blob is not even loaded.
                if not change.added_lines and not change.binary:
                    continue
                item = SourceFile(path, kind, "modified", change.blob, change.added_lines)
            previous = found.get(path)
            if previous is not None:
                item = _merge(previous, item)
            found[path] = item

    collect(base, None)
    material.fresh = {path: item.added_lines for path, item in found.items()}
    by_base: dict[str | None, set[str]] = {}
    for path, pending_base in pending:
        by_base.setdefault(pending_base, set()).add(path)
    for pending_base, wanted in by_base.items():
        if pending_base is not None and not graph.has_object(repo, pending_base):
            material.warnings.append(
                f"pending paths from an earlier run refer to {pending_base[:12]}, which is gone; "
                "reading them whole"
            )
            pending_base = None
        collect(pending_base, wanted)
        for path in wanted:
            if path in found:
                material.since[path] = pending_base
    material.files = [found[p] for p in sorted(found)]
    return material


def _merge(a: SourceFile, b: SourceFile) -> SourceFile:
    lines = None if a.added_lines is None or b.added_lines is None else a.added_lines | b.added_lines
    status = "added" if "added" in (a.status, b.status) else "modified"
    return SourceFile(a.path, a.kind, status, b.blob, lines)


def count_sessions(repo: Repo, agent: Agent, base: str | None, input_commit: str) -> int:
    """How many source files were added or changed between `base` and `input_commit`
    (the `min_sessions` gate). Like `changed_sources` but from the diff's deltas only —
    no patches are computed — so it stays cheap for the idle path."""

    def source(path: str) -> bool:
        return _kind(agent, path) is not None

    # The watermark's tree of the folder comes from gitdream's cache (`git.subtrees`):
    # one lookup, not a load of the parent folder's tree (one entry per agent) per agent.
    return len(treediff.changes(repo, base, input_commit, agent.dir, source, lines=False, cached_old=True))
