"""The agent.md prefix guard (DESIGN §7): pure text in, a result out.

Planners read only the first `prefix_chars` characters of agent.md. Two rules keep what
they need inside that window:

- **self-sufficiency** — every required section *ends* within the first `prefix_chars`
  characters. A section ends after its last non-blank character (trailing blank lines do
  not count; managed-block content inside it does not count either);
- **order** — no gitdream managed block starts before the end of the last required
  section, so a block gitdream grows can never push a required section out of the window.

Required sections (`required_sections`; docs/check.md has examples):
- `[]` or `["default"]` — `"opening"` and `"role"` together;
- `"opening"` — the front matter if the file has one, then the *opening section* of the
  body: its first heading and the text up to the next heading (of any level), or, when
  the body starts with text rather than a heading (a Claude Code subagent: front matter,
  then prose), that text up to the first heading. In the usual layout (`# Name`, then a
  summary) this is DESIGN §7's "first H1 and its text". An H1 further down (an appended
  `# Persistent Agent Memory` chapter, say) is not the opening; name it explicitly to
  require it. One-line HTML comments before the opening are skipped;
- `"role"` — every section whose heading names the agent's role or purpose
  (`ROLE_WORDS`, `ROLE_TERMS`: "Role", "Your Role", "Purpose", "Core Responsibilities",
  "Mission", "역할", "角色", "职责", "役割", ...), with its sub-headings up to the next
  heading of the same or a higher level, so that the window still says what the agent
  does. A file without such a heading has none to require;
- `"front-matter"` — the YAML front matter, which must exist;
- `"## Role"` — the first heading of that level whose text equals `Role` (case and runs
  of spaces ignored), with its text and sub-headings up to the next heading of the same or
  a higher level; it must exist.

Headings are ATX (`# x`, up to three spaces of indent) and setext (a paragraph underlined
with `===` or `---`); lines inside fenced code blocks and inside managed blocks are never
headings. Front matter follows `gitdream.text.frontmatter`.

Counting: `unit="chars"` counts Unicode code points (Python `str` indexes; a CRLF is two
characters, a byte-order mark is one); `unit="utf16"` counts UTF-16 code units as
JavaScript's `String.prototype.slice` does (a character outside the BMP, such as most
emoji, counts 2). Every offset in a result is in the result's unit, 0-based, and an `end`
is exclusive: "ends at character 2143" means its last character is the 2143rd.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from gitdream.errors import BlockError
from gitdream.text import blocks as blocks_mod
from gitdream.text import frontmatter

UNITS = ("chars", "utf16")
DEFAULT_PREFIX_CHARS = 2000

RULE_SECTION = "prefix-section"
RULE_MISSING = "prefix-missing"
RULE_ORDER = "prefix-order"
RULE_FRONT_MATTER = "front-matter"
RULE_BLOCKS = "managed-block"

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_NOT_PARAGRAPH = re.compile(
    r"^ {0,3}(?:[-*+][ \t]|\d{1,9}[.)][ \t]|>|<|\||[-*_][ \t]*[-*_][ \t]*[-*_])|^(?: {4}|\t)"
)
_COMMENT_LINE = re.compile(r"^[ \t]*<!--.*-->[ \t]*$")
_REQUIRED_HEADING = re.compile(r"^(#{1,6})[ \t]+(\S.*?)[ \t]*$")
_WORD = re.compile(r"\w+")

# Words that make a heading name the agent's role or purpose, matched against the
# heading's words (case-folded): English, French, Spanish, Portuguese, German.
ROLE_WORDS = frozenset(
    [
        "role",
        "roles",
        "purpose",
        "purposes",
        "responsibility",
        "responsibilities",
        "mission",
        "duties",
        "rôle",
        "rol",
        "papel",
        "propósito",
        "finalidad",
        "responsabilidades",
        "responsabilités",
        "responsabilidad",
        "rolle",
        "aufgabe",
        "aufgaben",
        "zweck",
        "verantwortung",
        "verantwortlichkeiten",
    ]
)
# The same for scripts without spaces between words, matched as substrings: Korean,
# Chinese (simplified and traditional), Japanese.
ROLE_TERMS = frozenset(
    [
        "역할",
        "책임",
        "임무",
        "목적",
        "角色",
        "职责",
        "職責",
        "职能",
        "職能",
        "使命",
        "任务",
        "任務",
        "目的",
        "役割",
        "責務",
        "役目",
    ]
)


@dataclass(frozen=True)
class Problem:
    """One broken rule.

    `rule`: a stable id (`prefix-section`, `prefix-missing`, `prefix-order`,
    `front-matter`, `managed-block`, and in `gitdream.text.checks` also `memory-lines`,
    `memory-bytes`, `encoding`). `message` says what is wrong, `hint` the fix; together
    they read "message: hint". `start`/`end` are offsets in the check's unit (None when
    the rule is not about a span), `line` is 1-based (None when not about a line).
    """

    rule: str
    message: str
    hint: str
    start: int | None = None
    end: int | None = None
    line: int | None = None

    def text(self) -> str:
        """`message: hint`, the one-line form printed by `gitdream check`."""
        return f"{self.message}: {self.hint}" if self.hint else self.message

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "message": self.message,
            "hint": self.hint,
            "line": self.line,
            "start": self.start,
            "end": self.end,
        }


@dataclass(frozen=True)
class Section:
    """A required section as found: `name` ("front matter", "# ops", "## Role", or
    "first body section"), `start`/`end` in the result's unit (end exclusive, after the
    last non-blank character), `line` of its first line, and the `requirement` entry that
    asked for it ("default", "opening", "front-matter", the heading string, or "role" for
    a section required because its heading names the role or purpose)."""

    name: str
    start: int
    end: int
    line: int
    requirement: str

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "start": self.start,
            "end": self.end,
            "line": self.line,
            "requirement": self.requirement,
        }


@dataclass(frozen=True)
class PrefixResult:
    """What `check_prefix` found: `problems` (empty when the file passes), the required
    `sections`, the `unit` and `limit` used, and `length`, the text's length in that unit."""

    problems: tuple[Problem, ...]
    sections: tuple[Section, ...]
    unit: str
    limit: int
    length: int
    blocks: tuple[blocks_mod.Block, ...] = field(default=(), repr=False)

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class Heading:
    """A Markdown heading: `level` 1-6, `text` (trimmed), `start` offset of its first
    line (for setext headings, the paragraph's first line), `line` 1-based."""

    level: int
    text: str
    start: int
    line: int


@dataclass(frozen=True)
class Requirement:
    """One parsed `required_sections` entry: kind "default" (the opening), "role",
    "front-matter" or "heading" (then `level` and `text`); `raw` is the entry as written."""

    kind: str
    raw: str
    level: int = 0
    text: str = ""


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def names_role(heading: str) -> bool:
    """True when a heading's text names the agent's role or purpose (ROLE_WORDS among its
    words, or a ROLE_TERMS term in it): "Role", "Your Role", "Purpose", "역할", "职责"."""
    folded = heading.casefold()
    return any(word in ROLE_WORDS for word in _WORD.findall(folded)) or any(
        term in folded for term in ROLE_TERMS
    )


def parse_required(entries: list[str] | tuple[str, ...]) -> list[Requirement]:
    """Parse `required_sections` entries; `[]` means `["default"]`, and "default" means
    "opening" and "role" (see the module docstring).

    Raises ValueError naming the first entry that is none of "default", "opening",
    "role", "front-matter" or a heading such as "## Role".
    """
    if not entries:
        entries = ["default"]
    out = []
    for entry in entries:
        stripped = entry.strip()
        if stripped.lower() == "default":
            out.append(Requirement("default", entry))
            out.append(Requirement("role", entry))
        elif stripped.lower() == "opening":
            out.append(Requirement("default", entry))
        elif stripped.lower() == "role":
            out.append(Requirement("role", entry))
        elif stripped.lower() in ("front-matter", "front matter", "frontmatter"):
            out.append(Requirement("front-matter", entry))
        else:
            match = _REQUIRED_HEADING.match(stripped)
            if match is None:
                raise ValueError(
                    f"required_sections entry {entry!r} is not 'default', 'opening', 'role', "
                    "'front-matter' or a heading such as '## Role'"
                )
            out.append(Requirement("heading", entry, len(match.group(1)), match.group(2).rstrip("# \t")))
    return out


def utf16_offsets(text: str) -> list[int] | None:
    """Cumulative UTF-16 lengths (`result[i]` = units in `text[:i]`), or None when every
    character is in the BMP (then code points and UTF-16 units agree)."""
    if not text or max(text) <= "\uffff":
        return None
    out = [0] * (len(text) + 1)
    total = 0
    for index, char in enumerate(text):
        total += 2 if char > "\uffff" else 1
        out[index + 1] = total
    return out


class _Units:
    """Converts code-point offsets into the requested unit."""

    def __init__(self, text: str, unit: str) -> None:
        if unit not in UNITS:
            raise ValueError(f"unit must be one of {', '.join(UNITS)}, not {unit!r}")
        self.unit = unit
        self.table = utf16_offsets(text) if unit == "utf16" else None

    def __call__(self, offset: int) -> int:
        return offset if self.table is None else self.table[offset]

    @property
    def word(self) -> str:
        return "character" if self.unit == "chars" else "UTF-16 unit"

    @property
    def plural(self) -> str:
        return "characters" if self.unit == "chars" else "UTF-16 units"


def count(text: str, unit: str = "chars") -> int:
    """The length of `text` in `unit` ("chars": code points; "utf16": UTF-16 code units)."""
    return _Units(text, unit)(len(text))


def _line_spans(text: str, start: int) -> list[tuple[int, int]]:
    """(offset, end-without-line-break) of each line from `start`; lines end at "\n"
    (a "\r" before it is not content), as git and the line numbers count them."""
    spans = []
    offset = start
    for line in text[start:].split("\n"):
        length = len(line)
        spans.append((offset, offset + length - (1 if line.endswith("\r") else 0)))
        offset += length + 1
    if spans and spans[-1][0] == len(text):
        spans.pop()  # the empty "line" after a final newline
    return spans


def _in_blocks(offset: int, block_spans: list[tuple[int, int]]) -> bool:
    return any(s <= offset < e for s, e in block_spans)


def headings(text: str, start: int = 0, block_spans: list[tuple[int, int]] | None = None) -> list[Heading]:
    """The headings of `text` from offset `start` (see the module docstring for what is a
    heading); `block_spans` are (start, end) offsets of managed blocks to skip."""
    spans = block_spans or []
    out: list[Heading] = []
    fence: str | None = None
    # The block the previous line belongs to: None after a blank line, "paragraph" (with
    # its first line's offset and number) or "other" (list item, quote, table, HTML, ...).
    # Only a paragraph can be underlined into a setext heading.
    state: str | None = None
    para_offset = para_line = 0
    first_line = text.count("\n", 0, start) + 1
    for number, (offset, end) in enumerate(_line_spans(text, start), start=first_line):
        body = text[offset:end]
        if spans and _in_blocks(offset, spans):
            state = None
            continue
        fence_match = _FENCE.match(body)
        if fence_match:
            marker = fence_match.group(1)
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence) and not body.strip()[len(marker) :]:
                fence = None
            state = None
            continue
        if fence is not None:
            continue
        if not body.strip():
            state = None
            continue
        atx = _ATX.match(body)
        if atx:
            out.append(Heading(len(atx.group(1)), (atx.group(2) or "").strip(), offset, number))
            state = None
            continue
        setext = _SETEXT.match(body)
        if setext and state == "paragraph":
            title = " ".join(text[para_offset:offset].split())
            out.append(Heading(1 if setext.group(1)[0] == "=" else 2, title, para_offset, para_line))
            state = None
            continue
        if state is None:
            if _NOT_PARAGRAPH.match(body):
                state = "other"
            else:
                state, para_offset, para_line = "paragraph", offset, number
    return out


def _content_end(text: str, start: int, stop: int, block_spans: list[tuple[int, int]]) -> int:
    """Offset after the last non-blank character in [start, stop) outside managed blocks
    (`start` when there is none)."""
    cuts = sorted((max(s, start), min(e, stop)) for s, e in block_spans if s < stop and e > start)
    segments = []
    cursor = start
    for s, e in cuts:
        if s > cursor:
            segments.append((cursor, s))
        cursor = max(cursor, e)
    if cursor < stop:
        segments.append((cursor, stop))
    for s, e in reversed(segments):
        stripped = text[s:e].rstrip()
        if stripped:
            return s + len(stripped)
    return start


def _first_content(text: str, start: int, block_spans: list[tuple[int, int]]) -> tuple[int, int] | None:
    """(offset, line) of the first line from `start` that is neither blank, nor a one-line
    HTML comment, nor inside a managed block."""
    first_line = text.count("\n", 0, start) + 1
    for number, (offset, end) in enumerate(_line_spans(text, start), start=first_line):
        if block_spans and _in_blocks(offset, block_spans):
            continue
        line = text[offset:end]
        if line.strip() and not _COMMENT_LINE.match(line):
            return offset, number
    return None


def _label(name: str, line: int) -> str:
    if name == "front matter":
        return "the front matter"
    if name == "first body section":
        return f"the first body section (line {line})"
    return f"section '{name}'"


def _next_heading_start(found: list[Heading], after: int, max_level: int, default: int) -> int:
    for heading in found:
        if heading.start > after and heading.level <= max_level:
            return heading.start
    return default


def check_prefix(
    text: str,
    *,
    prefix_chars: int = DEFAULT_PREFIX_CHARS,
    unit: str = "chars",
    required_sections: list[str] | tuple[str, ...] = (),
) -> PrefixResult:
    """Judge the text of one agent.md against the prefix rules.

    Arguments: `text` is the whole file as `str` (decoded UTF-8, newlines as in the file);
    `prefix_chars` the window size, counted in `unit` ("chars" = code points, "utf16" =
    UTF-16 code units); `required_sections` as in the config (see `parse_required`).

    Returns a PrefixResult whose `problems` hold, in order: front-matter and
    managed-block syntax problems (an unterminated front matter is then treated as body
    text; malformed block markers disable the order rule), missing sections, sections
    ending past the window, blocks starting too early. Offsets are in `unit`.
    Raises ValueError for a bad `unit` or `required_sections` entry.
    """
    units = _Units(text, unit)
    requirements = parse_required(required_sections)
    problems: list[Problem] = []
    fm, found_blocks, blocks_ok = _structure(text, problems)
    sections = _Sections(text, fm, found_blocks, problems)
    for req in requirements:
        sections.require(req)
    problems += _late_sections(sections.found, units, prefix_chars)
    if blocks_ok and sections.found:
        problems += _early_blocks(sections.found, found_blocks, units)
    return PrefixResult(
        problems=tuple(problems),
        sections=tuple(Section(n, units(s), units(e), ln, r) for n, s, e, ln, r in sections.found),
        unit=unit,
        limit=prefix_chars,
        length=units(len(text)),
        blocks=tuple(found_blocks),
    )


def _structure(
    text: str, problems: list[Problem]
) -> tuple[frontmatter.FrontMatter | None, list[blocks_mod.Block], bool]:
    """The front matter (None when absent or unterminated) and the managed blocks of
    `text`, and whether the block markers parsed; syntax problems go to `problems`."""
    try:
        fm = frontmatter.find(text)
    except frontmatter.FrontMatterError as exc:
        fm = None
        problems.append(Problem(RULE_FRONT_MATTER, exc.message, exc.hint or "", 0, None, exc.line))
    try:
        return fm, blocks_mod.parse(text), True
    except BlockError as exc:
        problems.append(Problem(RULE_BLOCKS, exc.message, exc.hint or "", None, None, exc.line))
        return fm, [], False


_SectionSpan = tuple[str, int, int, int, str]
"""name, start, end, line, requirement (offsets in code points)."""


class _Sections:
    """The required sections found in one text, in the order required; a requirement that
    is not met adds its problem."""

    def __init__(
        self,
        text: str,
        fm: frontmatter.FrontMatter | None,
        found_blocks: list[blocks_mod.Block],
        problems: list[Problem],
    ) -> None:
        self.text, self.fm, self.problems = text, fm, problems
        self.body_start = fm.body_start if fm else 0
        self.spans = [(b.start, b.end) for b in found_blocks]
        self.headings = headings(text, self.body_start, self.spans)
        self.found: list[_SectionSpan] = []

    def add(self, name: str, start: int, end: int, line: int, requirement: str) -> None:
        if not any(s[1] == start and s[0] == name for s in self.found):
            self.found.append((name, start, end, line, requirement))

    def require(self, req: Requirement) -> None:
        if req.kind in ("default", "front-matter"):
            self._front(req)
        elif req.kind == "role":
            self._role()
        else:
            self._heading(req)

    def _end(self, start: int, level: int) -> int:
        """Where the section starting at `start` under a heading of `level` ends."""
        stop = _next_heading_start(self.headings, start, level, len(self.text))
        return _content_end(self.text, start, stop, self.spans)

    def _front(self, req: Requirement) -> None:
        """The front matter, and (for "default") the opening section of the body."""
        text, fm = self.text, self.fm
        if fm is not None:
            self.add("front matter", fm.start, fm.end, 1, req.raw)
        elif req.kind == "front-matter":
            self.problems.append(
                Problem(
                    RULE_MISSING,
                    "required front matter not found (the file must start with a '---' line)",
                    "add YAML front matter at the top, or remove 'front-matter' from required_sections",
                    0,
                    0,
                    1,
                )
            )
        if req.kind == "front-matter":
            return
        first = _first_content(text, self.body_start, self.spans)
        if first is None:
            if fm is None:
                self.problems.append(
                    Problem(
                        RULE_MISSING,
                        "the file has no content, so planners would read nothing",
                        "start it with a '# Title' line and a short summary of the agent's role",
                        0,
                        0,
                        1,
                    )
                )
            return
        offset, line = first
        lead = next((h for h in self.headings if h.start == offset), None)
        if lead is not None:
            self.add(f"{'#' * lead.level} {lead.text}".rstrip(), offset, self._end(offset, 6), line, req.raw)
        else:
            stop = _next_heading_start(self.headings, offset - 1, 6, len(text))
            self.add(
                "first body section", offset, _content_end(text, offset, stop, self.spans), line, req.raw
            )

    def _role(self) -> None:
        """Every heading that names the agent's role or purpose."""
        for heading in self.headings:
            if names_role(heading.text):
                end = self._end(heading.start, heading.level)
                self.add(f"{'#' * heading.level} {heading.text}", heading.start, end, heading.line, "role")

    def _heading(self, req: Requirement) -> None:
        """A section required by its heading (e.g. "## Role")."""
        want = _norm(req.text)
        match = next((h for h in self.headings if h.level == req.level and _norm(h.text) == want), None)
        if match is None:
            self.problems.append(
                Problem(
                    RULE_MISSING,
                    f"required section '{req.raw.strip()}' not found",
                    f"add a '{req.raw.strip()}' heading near the top, or change required_sections in gitdream.toml",
                    None,
                    None,
                    None,
                )
            )
            return
        self.add(req.raw.strip(), match.start, self._end(match.start, match.level), match.line, req.raw)


def _late_sections(sections: list[_SectionSpan], units: _Units, limit: int) -> list[Problem]:
    """A problem for each required section that ends past the window."""
    problems = []
    for name, start, end, line, requirement in sections:
        end_u = units(end)
        if end_u <= limit:
            continue
        label = _label(name, line)
        if name == "front matter":
            hint = (
                f"shorten the front matter (a long description is the usual cause) so it ends "
                f"within the first {limit} {units.plural}"
            )
        elif name == "first body section":
            hint = (
                "shorten it or what comes before it, or start the body with a short "
                "'# Title' line and summary"
            )
        elif requirement == "role":
            hint = (
                "move it up or shorten what comes before it: it says what the agent does, and "
                "planners read only the window (a heading that names the role or purpose is "
                'required by default; required_sections = ["opening"] leaves it out)'
            )
        else:
            hint = "move it up or shorten what comes before it"
        problems.append(
            Problem(
                RULE_SECTION,
                f"{label} ends at {units.word} {end_u}, past {limit}",
                hint,
                units(start),
                end_u,
                line,
            )
        )
    return problems


def _early_blocks(
    sections: list[_SectionSpan], found_blocks: list[blocks_mod.Block], units: _Units
) -> list[Problem]:
    """A problem for each managed block that starts before the last required section ends."""
    last = max(sections, key=lambda s: s[2])
    last_label = _label(last[0], last[3])
    return [
        Problem(
            RULE_ORDER,
            f"managed block '{block.name}' starts at {units.word} {units(block.start)} "
            f"(line {block.begin_line}), before the end of {last_label} at "
            f"{units.word} {units(last[2])}",
            f"move the block (both marker lines and what is between them) below {last_label}",
            units(block.start),
            units(block.end),
            block.begin_line,
        )
        for block in found_blocks
        if block.start < last[2]
    ]
