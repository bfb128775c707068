"""The environment git gives hooks, and how to clean it before calling git elsewhere.

Git exports repository-routing variables (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, ...) to
hooks (githooks(5)); a process that inherits them and runs git would act on the wrong
repository or index. `LOCAL_ENV_VARS` is git's own list, printed by
`git rev-parse --local-env-vars` (environment.c `local_repo_env`, git 2.39), kept here so
the idle path need not start git to learn it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

LOCAL_ENV_VARS = (
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_OBJECT_DIRECTORY",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR",
)


def command_line_config(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The configuration given on git's command line that `env` (default: os.environ)
    carries: `GIT_CONFIG_PARAMETERS` (`git -c`) and `GIT_CONFIG_COUNT` with its
    `GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` (git-config(1), ENVIRONMENT)."""
    source = os.environ if env is None else env
    return {
        key: value
        for key, value in source.items()
        if key in ("GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT")
        or key.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))
    }


def scrubbed(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Return a copy of `env` (default: os.environ) without git's repository-local variables.

    `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` (git -c) go too, as git
    itself drops them for submodules.
    """
    source = os.environ if env is None else env
    out = {}
    for key, value in source.items():
        if key in LOCAL_ENV_VARS or key.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")):
            continue
        out[key] = value
    return out
