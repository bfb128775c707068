"""The git layer: the only modules that talk to git (pygit2 and the `git` command)."""
