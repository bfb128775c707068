"""Engine prompts: files under `templates/prompts/` (shipped in the wheel), rendered with
`string.Template` (`$name` placeholders, `$$` for a literal dollar sign).

Prompts are files, not strings in code, so a reviewer reads them as the model does and a
change to one shows in `git log -p templates/prompts/` (DESIGN §9).
"""

from __future__ import annotations

import string

from gitdream.errors import EngineError
from gitdream.resources import templates_dir

PROMPTS = "prompts"


def load(name: str) -> str:
    """The text of `templates/prompts/<name>.md` (UTF-8).

    Raises EngineError naming the path when the file is missing or unreadable.
    """
    path = templates_dir() / PROMPTS / f"{name}.md"
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise EngineError(
            f"prompt template {path} cannot be read: {exc.strerror or exc}",
            hint="reinstall gitdream; the prompts ship in templates/prompts/",
        ) from None


def render(name: str, **values: object) -> str:
    """`load(name)` with its `$placeholders` substituted from `values`.

    Raises EngineError naming the template and the placeholder when a placeholder has no
    value or is malformed (e.g. a lone `$`).
    """
    text = load(name)
    try:
        return string.Template(text).substitute({k: str(v) for k, v in values.items()})
    except KeyError as exc:
        raise EngineError(
            f"prompt template {PROMPTS}/{name}.md uses the placeholder ${exc.args[0]}, which has no value",
            hint=f"known placeholders: {', '.join('$' + k for k in sorted(values)) or 'none'}",
        ) from None
    except ValueError as exc:
        raise EngineError(
            f"prompt template {PROMPTS}/{name}.md has a malformed placeholder: {exc}",
            hint="write a literal dollar sign as $$",
        ) from None
