"""gitdream: a git sidecar that dreams over an agent repository.

It consolidates what was committed since the last dream into durable memory and records
everything as ordinary, separately revertible commits. Importing this package has no side
effects and imports no submodule (the idle path of the hooks depends on that); even the
version is looked up only when asked for, since importlib.metadata costs tens of
milliseconds to import.
"""

from __future__ import annotations


def __getattr__(name: str) -> str:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version  # idle path: only where it is used

        try:
            return version("gitdream")
        except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
            return "0+unknown"
    raise AttributeError(name)
