"""Commit chaining: where the next commit of one invocation goes, and what is published.

One `gitdream run` (every agent of it) or one `gitdream revert` makes its commits through
one `CommitChain`:

- On the **current branch** (`CommitChain()`), each commit's contents were computed at an
  input commit (the run's HEAD when it started), so the commit builder is told so
  (`Destination.head(base)`): if someone committed to one of those paths meanwhile, the
  commit is refused rather than undoing their work. After a commit, the next one computed
  at the same input commit builds on it — unless the commit was rebuilt on commits made
  meanwhile: then the next is compared from the input commit too, or it would overwrite
  what those commits changed.
- On a **review branch** (`CommitChain(review_branch=NAME)`), commits chain from the
  input commit, then from the previous commit (another agent's part of the branch); no
  ref moves until `publish`, which creates or moves the branch to the `tip` in one
  reference transaction (with the watermark, for a dream). `published` is where the
  branch is; `unpublished()` what is built but not on it yet.

A fact's sources are cited at a commit (`path#Lx-Ly@commit`). An agent's input commit on
the current branch is often the commit this chain made for the agent before it, which
holds the same raw material but is no commit of the person's: `source_commit` names the
commit the material came from instead — the input commit, or, for a commit of this chain
that was not rebuilt on someone else's, the source commit of its own input.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gitdream.git import commitbuilder
from gitdream.git.refs import compare_and_swap_all

if TYPE_CHECKING:
    from gitdream.agents import Agent
    from gitdream.git.commitbuilder import Change, CommitResult, Identity
    from gitdream.git.repo import Repo


@dataclass
class CommitChain:
    """The commits of one invocation (see the module docstring). `tip`: the last review
    commit built; `published`: where the review branch points (None: not created yet);
    `bases`: per input commit, the commit the next current-branch commit builds on;
    `made`: per commit of this chain (not rebuilt), the source commit of its input."""

    review_branch: str | None = None
    tip: str | None = None
    published: str | None = None
    bases: dict[str, str] = field(default_factory=dict)
    made: dict[str, str] = field(default_factory=dict)

    def source_commit(self, input_commit: str) -> str:
        """The commit to cite sources read at `input_commit` at (module docstring): hex
        id, `input_commit` itself unless this chain made it."""
        return self.made.get(input_commit, input_commit)

    def destination(self, input_commit: str) -> commitbuilder.Destination:
        """Where the next commit, computed at `input_commit`, goes."""
        if self.review_branch is None:
            return commitbuilder.Destination.head(self.bases.get(input_commit, input_commit))
        return commitbuilder.Destination.review(
            self.review_branch, self.tip or input_commit, self.published is None
        )

    def commit(
        self,
        repo: Repo,
        agent: Agent,
        kind: str,
        changes: Sequence[Change],
        message: str,
        ident: Identity,
        input_commit: str,
    ) -> CommitResult:
        """`commitbuilder.commit` onto `destination(input_commit)`, then remember the
        commit so the next one builds on it. Raises what `commitbuilder.commit` raises;
        the chain is unchanged then."""
        done = commitbuilder.commit(
            repo, agent, kind, changes, message, ident, self.destination(input_commit)
        )
        if self.review_branch is not None:
            self.tip = done.oid
        elif not done.rebuilt:
            self.bases[input_commit] = done.oid
            # Only what this chain changed lies between the commit and its input: the
            # material read at either is the same.
            self.made[done.oid] = self.source_commit(input_commit)
        return done

    def unpublished(self) -> tuple[str | None, str] | None:
        """`(where the review branch is, tip)` when review commits are built that the
        branch does not hold yet; None on the current branch or with nothing to publish."""
        if self.review_branch is None or self.tip is None or self.tip == self.published:
            return None
        return self.published, self.tip

    def publish(
        self, repo: Repo, message: str, also: Sequence[tuple[str, str | None, str | None]] = ()
    ) -> bool:
        """Move the review branch to the tip (creating it the first time), with the refs of
        `also` (`(ref, expected, new)`) in the same transaction; with nothing to publish,
        move only those refs. Returns whether the branch moved. Raises what
        `commitbuilder.publish` raises (nothing moved then)."""
        pending = self.unpublished()
        if pending is None:
            if also:
                compare_and_swap_all(repo, list(also), message)
            return False
        assert self.review_branch is not None
        commitbuilder.publish(repo, self.review_branch, pending[0], pending[1], message, also=also)
        self.published = pending[1]
        return True
