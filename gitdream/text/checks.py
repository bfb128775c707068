"""Per-file rules of `gitdream check`: one file's text in, a `FileCheck` out. Pure.

Which rules apply depends on the file's *kind*:

| kind         | file                                   | rules                                          |
|--------------|----------------------------------------|------------------------------------------------|
| `agent`      | a definition file named agent.md       | prefix guard (`gitdream.text.prefix`), blocks  |
| `definition` | the other definition files             | managed-block syntax                           |
| `index`      | `<memory_dir>/MEMORY.md`               | blocks; at most `memory_max_lines` lines and   |
|              |                                        | `memory_max_bytes` bytes (UTF-8)               |
| `topic`      | other `*.md` directly in `<memory_dir>`| blocks; front matter, if any, is a YAML mapping|

Every kind must be UTF-8 (`encoding`). Front matter that is not valid YAML (or, in a topic,
not a mapping) is a *warning*, not a problem, in every file gitdream does not own: Claude
Code reads such files leniently and writes some itself, and gitdream never writes a topic
whose front matter it cannot read. Only a topic gitdream created (`origin: gitdream`)
must have valid front matter, since gitdream rewrites it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gitdream.config import Config
from gitdream.errors import BlockError, ConfigError
from gitdream.text import blocks, frontmatter, prefix
from gitdream.text.prefix import Problem

KIND_AGENT = "agent"
KIND_DEFINITION = "definition"
KIND_INDEX = "index"
KIND_TOPIC = "topic"
KINDS = (KIND_AGENT, KIND_DEFINITION, KIND_INDEX, KIND_TOPIC)

ORIGIN_GITDREAM = "gitdream"  # `origin:` of the topics gitdream creates (dream.memoryfiles)
RULE_LINES = "memory-lines"
RULE_BYTES = "memory-bytes"
RULE_ENCODING = "encoding"


@dataclass(frozen=True)
class Limits:
    """The configuration the rules read (see `gitdream config show`): `prefix_chars` in
    `prefix_unit` ("chars" or "utf16"), `required_sections`, and the MEMORY.md limits
    `memory_max_lines` (lines) and `memory_max_bytes` (bytes of UTF-8)."""

    prefix_chars: int = prefix.DEFAULT_PREFIX_CHARS
    prefix_unit: str = "chars"
    required_sections: tuple[str, ...] = ()
    memory_max_lines: int = 200
    memory_max_bytes: int = 25_000

    @classmethod
    def from_config(cls, cfg: Config) -> Limits:
        """Read the five keys from a `gitdream.config.Config`.

        Raises ConfigError when `required_sections` has an entry that is not understood.
        """

        required = tuple(cfg.list("required_sections"))
        try:
            prefix.parse_required(required)
        except ValueError as exc:
            raise ConfigError(
                f"{cfg.source('required_sections')}: {exc}",
                hint='use "default", "opening", "role", "front-matter" or headings such as "## Role"',
            ) from None
        return cls(
            prefix_chars=cfg.int("prefix_chars"),
            prefix_unit=cfg.str("prefix_unit"),
            required_sections=required,
            memory_max_lines=cfg.int("memory_max_lines"),
            memory_max_bytes=cfg.int("memory_max_bytes"),
        )


@dataclass
class FileCheck:
    """The verdict on one file.

    `path` repository-relative (POSIX), `kind` one of KINDS, `agent` the agent id (None
    for a file checked by name only), `problems` (the file passes when empty), `warnings`
    (printed, never fail the check), and for `agent` files the `prefix` result (required
    sections found, with offsets in `unit`).
    """

    path: str
    kind: str
    agent: str | None = None
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    prefix: prefix.PrefixResult | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def lines(self) -> list[str]:
        """`path[:line]: rule: message: hint` for each problem, the form the CLI prints."""
        return [self._line(p) for p in self.problems]

    def warning_lines(self) -> list[str]:
        return [self._line(p) for p in self.warnings]

    def _line(self, problem: Problem) -> str:
        where = f"{self.path}:{problem.line}" if problem.line else self.path
        return f"{where}: {problem.rule}: {problem.text()}"

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "path": self.path,
            "agent": self.agent,
            "kind": self.kind,
            "ok": self.ok,
            "problems": [p.to_json() for p in self.problems],
            "warnings": [p.to_json() for p in self.warnings],
        }
        if self.prefix is not None:
            document["prefix"] = {
                "length": self.prefix.length,
                "sections": [s.to_json() for s in self.prefix.sections],
            }
        return document


def kind_by_name(path: str) -> str:
    """The kind of a file judged by its name alone: `agent.md` (any case) → agent,
    `MEMORY.md` → index, anything else → definition (managed-block syntax only)."""
    name = path.rsplit("/", 1)[-1]
    if name.lower() == "agent.md":
        return KIND_AGENT
    if name == "MEMORY.md":
        return KIND_INDEX
    return KIND_DEFINITION


def _block_problem(exc: BlockError) -> Problem:
    return Problem(prefix.RULE_BLOCKS, exc.message, exc.hint or "", None, None, exc.line)


def _front_matter_problem(exc: frontmatter.FrontMatterError) -> Problem:
    return Problem(prefix.RULE_FRONT_MATTER, exc.message, exc.hint or "", None, None, exc.line)


def _not_owned(problem: Problem) -> Problem:
    """A topic front-matter problem in a file gitdream did not create: a warning saying
    that gitdream leaves the file alone (its dreams neither read its name nor write it)."""
    return Problem(
        problem.rule,
        problem.message,
        (problem.hint + "; " if problem.hint else "")
        + "until then gitdream leaves this topic alone (not created by gitdream, so the commit is not blocked)",
        problem.start,
        problem.end,
        problem.line,
    )


def _count_lines(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _line_at_byte(data: bytes, limit: int) -> int:
    """1-based line holding byte number `limit + 1` (the first byte over the limit)."""
    return data.count(b"\n", 0, limit) + 1


def check_text(path: str, text: str, limits: Limits, kind: str, *, agent: str | None = None) -> FileCheck:
    """Judge one file's text (already decoded) by the rules of its `kind`.

    `path` is only used in messages; `kind` is one of KINDS (see the module docstring).
    Returns a FileCheck; never raises for bad content (bad content is a problem), raises
    ValueError for an unknown kind or bad `limits`.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    result = FileCheck(path, kind, agent)
    if kind == KIND_AGENT:
        found = prefix.check_prefix(
            text,
            prefix_chars=limits.prefix_chars,
            unit=limits.prefix_unit,
            required_sections=limits.required_sections,
        )
        result.prefix = found
        result.problems.extend(found.problems)
    else:
        try:
            blocks.parse(text)
        except BlockError as exc:
            result.problems.append(_block_problem(exc))

    if kind in (KIND_AGENT, KIND_DEFINITION, KIND_TOPIC):
        try:
            data, _body = frontmatter.load(text)
        except frontmatter.FrontMatterError as exc:
            problem = _front_matter_problem(exc)
            if kind == KIND_TOPIC and frontmatter.claims_origin(text, ORIGIN_GITDREAM):
                result.problems.append(problem)
            elif kind == KIND_TOPIC:
                result.warnings.append(_not_owned(problem))
            elif kind == KIND_DEFINITION or not any(
                p.rule == prefix.RULE_FRONT_MATTER for p in result.problems
            ):
                result.warnings.append(problem)
        else:
            if kind == KIND_TOPIC and data is not None and not isinstance(data, dict):
                problem = Problem(
                    prefix.RULE_FRONT_MATTER,
                    f"front matter is a YAML {type(data).__name__}, not a mapping of keys",
                    "write it as 'key: value' lines (name, description, type)",
                    None,
                    None,
                    2,
                )
                if frontmatter.claims_origin(text, ORIGIN_GITDREAM):
                    result.problems.append(problem)
                else:
                    result.warnings.append(_not_owned(problem))

    if kind == KIND_INDEX:
        lines = _count_lines(text)
        if lines > limits.memory_max_lines:
            result.problems.append(
                Problem(
                    RULE_LINES,
                    f"MEMORY.md has {lines} lines, over the limit of {limits.memory_max_lines}",
                    "keep one short line per topic and move detail into topic files "
                    "(or raise memory_max_lines in gitdream.toml)",
                    None,
                    None,
                    limits.memory_max_lines + 1,
                )
            )
        data_bytes = text.encode("utf-8", "surrogatepass")
        if len(data_bytes) > limits.memory_max_bytes:
            result.problems.append(
                Problem(
                    RULE_BYTES,
                    f"MEMORY.md is {len(data_bytes)} bytes, over the limit of {limits.memory_max_bytes}",
                    "keep one short line per topic and move detail into topic files "
                    "(or raise memory_max_bytes in gitdream.toml)",
                    None,
                    None,
                    _line_at_byte(data_bytes, limits.memory_max_bytes),
                )
            )
    return result


def check_bytes(path: str, data: bytes, limits: Limits, kind: str, *, agent: str | None = None) -> FileCheck:
    """`check_text` for raw file content: content that is not UTF-8 is one `encoding`
    problem naming the line and byte offset of the first bad byte."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return FileCheck(
            path,
            kind,
            agent,
            problems=[
                Problem(
                    RULE_ENCODING,
                    f"the file is not UTF-8 (byte {exc.start} is invalid)",
                    "save it as UTF-8",
                    None,
                    None,
                    line,
                )
            ],
        )
    return check_text(path, text, limits, kind, agent=agent)
