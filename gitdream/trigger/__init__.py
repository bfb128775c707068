"""Deciding *when* to dream: gates, the lock, the stamp, interruption, hooks, schedules."""

HOOK_NAMES = ("pre-commit", "post-merge", "post-rewrite", "post-commit")
"""gitdream's git hooks (here rather than in `hookscripts`, so that the CLI can name them
without importing the installer)."""
