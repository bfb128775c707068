"""The git layer: the only modules that talk to git (pygit2 and the `git` command)."""


def versions() -> str:
    """pygit2's and libgit2's versions, for a crash log ("unavailable" when pygit2 cannot
    be imported)."""
    try:
        import pygit2  # optional: a crash log is written even when pygit2 cannot be imported
    except Exception:  # pragma: no cover - pygit2 is a dependency
        return "unavailable"
    return f"{pygit2.__version__} (libgit2 {pygit2.LIBGIT2_VERSION})"
