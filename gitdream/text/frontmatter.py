"""YAML front matter: find it, split it off, parse it safely.

Front matter is the block Claude Code subagents, skills and memory topic files start with:

    ---
    name: ops
    description: keeps the pipeline healthy
    ---
    body...

Rules (the same for every reader in gitdream):
- the first line is exactly `---` (trailing spaces allowed; a UTF-8 byte-order mark before
  it is allowed and counted as text); the block ends at the next line that is exactly
  `---` or `...`. A first line `---` with no closing line is an *unterminated* front matter:
  `split()` raises FrontMatterError rather than guessing where it ends;
- offsets are indexes into the `str` (Unicode code points), lines are 1-based;
- parsing uses PyYAML's safe loader (libyaml's when available) with three guards against
  hostile or accidental blow-ups, checked on the event stream before anything is built:
  at most `MAX_BYTES` of YAML, no aliases (`*name`, the "billion laughs" vector), and at
  most `MAX_DEPTH` levels of nesting (deeper would end in RecursionError).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

from gitdream.errors import GitdreamError

MAX_BYTES = 64 * 1024
MAX_DEPTH = 50

_OPEN = re.compile(r"\A(\ufeff?)---[ \t]*(\r\n|\n|\r)")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$", re.MULTILINE)


class FrontMatterError(GitdreamError):
    """Front matter is unterminated, too large, or not valid (safe) YAML.

    `line` is the 1-based line of the problem in the whole file when known.
    """

    kind = "front_matter"

    def __init__(self, message: str, hint: str | None = None, line: int | None = None) -> None:
        super().__init__(message, hint)
        self.line = line


@dataclass(frozen=True)
class FrontMatter:
    """Where the front matter is. Offsets index the text (code points).

    `start`: offset of the opening `---` (0, or 1 after a byte-order mark);
    `yaml_start`/`yaml_end`: the YAML text between the delimiter lines;
    `end`: offset just after the closing delimiter (`---`/`...`), before its newline;
    `body_start`: offset of the first character after the closing line's newline;
    `end_line`: 1-based line number of the closing delimiter.
    """

    start: int
    yaml_start: int
    yaml_end: int
    end: int
    body_start: int
    end_line: int

    def yaml_text(self, text: str) -> str:
        return text[self.yaml_start : self.yaml_end]


def find(text: str) -> FrontMatter | None:
    """The front matter of `text`, or None when the text does not start with `---`.

    Raises FrontMatterError (line 1) when the opening line has no closing line.
    """
    opening = _OPEN.match(text)
    if opening is None:
        return None
    yaml_start = opening.end()
    closing = _CLOSE.search(text, yaml_start)
    if closing is None:
        raise FrontMatterError(
            "front matter opened with '---' on line 1 is never closed",
            hint="add a line '---' after the last front-matter key, or remove the opening '---'",
            line=1,
        )
    end = closing.start() + 3
    rest = text[end:]
    newline = re.match(r"[ \t]*(\r\n|\n|\r)?", rest)
    body_start = end + (newline.end() if newline else 0)
    end_line = text.count("\n", 0, closing.start()) + 1
    return FrontMatter(len(opening.group(1)), yaml_start, closing.start(), end, body_start, end_line)


def split(text: str) -> tuple[FrontMatter | None, str]:
    """`(front matter or None, body text)`; see `find` for the rules and errors."""
    found = find(text)
    if found is None:
        return None, text
    return found, text[found.body_start :]


def _loader() -> type:

    # libyaml's parser when PyYAML was built with it: ten times faster on real files.
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _line(event: Any) -> int:
    """The 0-based line a YAML event starts on (0 when PyYAML gives no mark)."""
    mark = event.start_mark
    return int(mark.line) if mark is not None else 0


def _guard(yaml_text: str, first_line: int) -> None:
    """Refuse aliases and deep nesting by reading the event stream before composing."""

    depth = 0
    for event in yaml.parse(yaml_text, Loader=_loader()):
        if isinstance(event, yaml.AliasEvent):
            raise FrontMatterError(
                "front matter uses a YAML alias (*name); gitdream does not expand aliases",
                hint="write the value out instead of referring to an anchor",
                line=_line(event) + first_line,
            )
        if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise FrontMatterError(
                    f"front matter nests deeper than {MAX_DEPTH} levels",
                    hint="flatten the front matter",
                    line=_line(event) + first_line,
                )
        elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            depth -= 1


def parse_yaml(yaml_text: str, *, first_line: int = 2) -> Any:
    """Parse front-matter YAML with the guards of the module docstring.

    `first_line` is the file line of the YAML's first line (2 when the file starts with
    `---`), so error lines refer to the file. Returns what `yaml.safe_load` returns (None
    for an empty block). Raises FrontMatterError with the line and a hint.
    """

    if len(yaml_text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise FrontMatterError(
            f"front matter is larger than {MAX_BYTES // 1024} KiB",
            hint="keep front matter to a few short keys; move long text into the body",
            line=first_line,
        )
    try:
        _guard(yaml_text, first_line)
        return yaml.load(yaml_text, Loader=_loader())  # a safe loader: plain data only
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + first_line if mark is not None else first_line
        problem = exc.problem or exc.context or "invalid YAML"
        raise FrontMatterError(
            f"front matter is not valid YAML: {problem}",
            hint="quote values that contain ': ' or start with a special character ('\"', '*', '&', '[', '{')",
            line=line,
        ) from None
    except yaml.YAMLError as exc:
        raise FrontMatterError(
            f"front matter is not valid YAML: {exc}", hint="fix the YAML", line=first_line
        ) from None
    except RecursionError:
        raise FrontMatterError(
            "front matter nests too deeply to parse", hint="flatten the front matter", line=first_line
        ) from None


def load(text: str) -> tuple[Any, str]:
    """`(parsed front matter or None, body)` of a whole file's text.

    Raises FrontMatterError when the front matter is unterminated or invalid.
    """
    found, body = split(text)
    if found is None:
        return None, body
    first_line = text.count("\n", 0, found.yaml_start) + 1
    return parse_yaml(found.yaml_text(text), first_line=first_line), body


_ORIGIN_LINE = re.compile(r"^[ \t]*origin[ \t]*:[ \t]*['\"]?([^'\"#\s]+)['\"]?[ \t]*(?:#.*)?$", re.MULTILINE)
NESTED_KEY = "metadata"


def claims_origin(text: str, origin: str) -> bool:
    """True when the front matter of `text` has a line `origin: <origin>`, read from the
    raw lines so that it answers even when the YAML is invalid or unterminated (then the
    whole text is searched up to the first blank line after the opening `---`)."""
    opening = _OPEN.match(text)
    if opening is None:
        return False
    closing = _CLOSE.search(text, opening.end())
    block = text[opening.end() : closing.start()] if closing else text[opening.end() :].split("\n\n", 1)[0]
    return any(m.group(1) == origin for m in _ORIGIN_LINE.finditer(block))


def field(data: Any, key: str) -> Any:
    """The front-matter value of `key` in parsed front matter `data`: the top-level key,
    else the same key inside a `metadata:` mapping (newer Claude Code memory files nest
    `type` and others there), else None."""
    if not isinstance(data, dict):
        return None
    if key in data:
        return data[key]
    nested = data.get(NESTED_KEY)
    return nested.get(key) if isinstance(nested, dict) else None
