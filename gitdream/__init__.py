"""gitdream: a git sidecar that dreams over an agent repository.

It consolidates what was committed since the last dream into durable memory and records
everything as ordinary, separately revertible commits. Importing this package has no side
effects and imports no submodule (the idle path of the hooks depends on that).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("gitdream")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0+unknown"
