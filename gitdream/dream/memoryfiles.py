"""Reading an agent's memory files: topics, their front matter, facts blocks, definition files.

Pure text, shared by the offline engine (to map topic names and find facts to corroborate)
and by integration (to write them). Layout (DESIGN §3):

- `<memory_dir>/MEMORY.md` — the index; gitdream's lines live in its `index` block;
- `<memory_dir>/<slug>.md` — topic files (Claude Code format: YAML front matter `name`,
  `description`, `type`). A topic is **dream-owned** when its front matter has
  `origin: gitdream` (gitdream created it); every other topic file is human-written and
  gitdream writes only inside its `facts` block;
- `<memory_dir>/archive/<YYYY-MM>.md` — demoted topics (dream-owned files);
- raw logs under the memory directory (`logs/...`) are never topics.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from urllib.parse import unquote

import yaml

from gitdream.agents import Agent, join
from gitdream.dream import facts as factfmt
from gitdream.dream import slugs
from gitdream.errors import BlockError
from gitdream.text import blocks, frontmatter

ORIGIN_KEY = "origin"
ORIGIN_VALUE = "gitdream"
INDEX_NAME = "MEMORY.md"
OVERFLOW_INDEX_NAME = "gitdream-topics.md"
"""Where gitdream indexes its topics while MEMORY.md's human part is over its limits."""
ARCHIVE_DIR = "archive"
FACTS_BLOCK = "facts"
INDEX_BLOCK = "index"
LEARNED_BLOCK = "learned"
SUPERSEDED_BLOCK = "superseded"
"""Block of a topic file holding facts a newer fact replaced, each with its sources and the
date and text that superseded it (DESIGN §6 managed blocks)."""
RELATED_BLOCK = "related"
"""Block of a topic file holding its `Related:` line of links to related topics."""
ARCHIVED_BLOCK_PREFIX = "archived-"
CLAUDE_TYPES = ("user", "feedback", "project", "reference")
# Slugs a topic may never take: they would collide with the index, the archive folder, the
# raw logs or a definition file (compared case-insensitively, since macOS and Windows file
# systems fold case).
RESERVED_SLUGS = frozenset(
    {"memory", "archive", "logs", "index", "readme", "claude", "agents", "agent", "soul", "skill"}
    | {"gitdream-topics"}
)
_H1 = re.compile(r"^#[ \t]+(.+?)[ \t#]*\r?$", re.MULTILINE)
_SLUG_BAD = re.compile(r"[\x00-\x1f\x7f/\\:*?\"<>|\s]")


def split_front_matter(text: str) -> tuple[dict[str, object] | None, int]:
    """`(front matter mapping or None, offset where the body starts)`.

    Uses the one front-matter reader (`gitdream.text.frontmatter`, with its guards against
    YAML bombs). Text that does not open with `---`, whose front matter is unterminated, or
    whose YAML is invalid or not a mapping, has none (offset 0).
    """
    try:
        found = frontmatter.find(text)
        if found is None:
            return None, 0
        data = frontmatter.parse_yaml(found.yaml_text(text))
    except frontmatter.FrontMatterError:
        return None, 0
    if not isinstance(data, dict):
        return None, 0
    return {str(k): v for k, v in data.items()}, found.body_start


def render_front_matter(data: Mapping[str, object]) -> str:
    """`---` / YAML (keys in the given order, Unicode kept, one line per value) / `---`."""
    dumped = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1_000_000)
    return f"---\n{dumped}---\n"


TOPIC_PATTERN = r'^[^\s./\\:*?"<>|#-][^\s/\\:*?"<>|]{0,63}$'
"""The JSON-schema `pattern` engines give a model for a unit's topic: a file stem without
separators, spaces or a leading dot or dash; `safe_slug` is the full test."""


def safe_slug(slug: str) -> bool:
    """True when `slug` can name a topic file `<slug>.md` next to MEMORY.md: non-empty, at
    most 64 characters and 120 UTF-8 bytes (as `slugs.slugify` makes them), no path separator, whitespace, control or shell-hostile character, starting
    with a letter or digit (no dot-file, dash or orphaned combining mark), not a reserved
    name (memory, archive, logs, ...). The one test of a topic slug, shared by the engines'
    verification and the integrator."""
    return (
        0 < len(slug) <= slugs.MAX_CHARS
        and len(slug.encode("utf-8")) <= slugs.MAX_BYTES
        and slug == slug.strip()
        and not slug.startswith((".", "-"))
        and unicodedata.category(slug[0])[0] in ("L", "N")
        and _SLUG_BAD.search(slug) is None
        and slug.casefold() not in RESERVED_SLUGS
        and not slug.casefold().endswith(".md")
    )


# Terminal escape sequences (CSI such as colours, OSC such as window titles and hyperlinks,
# and two-byte escapes), then any other C0/C1 control character and the explicit bidi
# formatting characters (embeddings, overrides, isolates: the "Trojan Source" characters).
_INVISIBLE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[@-_]?"
    r"|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"
)


def neutral(text: str) -> str:
    """`text` fit to be memory: `<!--` escaped as `&lt;!--`, so no memory text can open an
    HTML comment or look like a managed-block marker (which would make the file
    unparseable); terminal escape sequences and other control characters removed, so
    printing a memory file or `git log -p` cannot recolour, retitle or rewrite the
    terminal; explicit bidi formatting characters removed, so what a reviewer sees in a
    diff is the order in which a model reads it. Tabs and line breaks stay (callers make
    facts one line)."""
    if _INVISIBLE.search(text) is not None:
        text = _INVISIBLE.sub("", text)
    return text.replace("<!--", "&lt;!--")


@dataclass
class Topic:
    """One topic file at the input commit.

    `slug` is the file name without `.md`; `owned` is True for dream-owned topics;
    `meta` the front matter (None when absent or unparseable); `facts` the parsed `facts`
    block (None when the file has no such block); `error` says why gitdream leaves the file
    alone — its gitdream markers are malformed, or its front matter cannot be read (invalid
    or unterminated YAML, a YAML bomb: then neither its ownership nor its name is known) —
    and `error_line` is the 1-based line of the problem.
    """

    slug: str
    path: str
    text: str
    owned: bool
    meta: dict[str, object] | None
    facts: list[factfmt.Fact] | None
    error: str | None = None
    error_line: int | None = None

    @property
    def name(self) -> str | None:
        value = frontmatter.field(self.meta, "name")
        return str(value) if isinstance(value, str | int | float) and str(value).strip() else None

    @property
    def title(self) -> str:
        """The `# Title` line, else the front matter name, else the slug."""
        _, start = split_front_matter(self.text)
        match = _H1.search(self.text, start)
        if match:
            return match.group(1).strip()
        return self.name or self.slug

    @property
    def description(self) -> str:
        value = frontmatter.field(self.meta, "description")
        return " ".join(str(value).split()) if value is not None else ""

    @property
    def last(self):  # -> date | None
        """Newest `last` date among the topic's facts (None when none has one)."""
        dates = [f.last for f in self.facts or () if f.last is not None]
        return max(dates) if dates else None


@dataclass
class MemoryFiles:
    """The agent's memory as gitdream sees it: index text, topics by slug, archive files."""

    agent: Agent
    index_path: str
    index_text: str | None
    topics: dict[str, Topic] = field(default_factory=dict)
    archives: dict[str, str] = field(default_factory=dict)
    overflow_text: str | None = None


_LINK = re.compile(r"\]\(<?([^)<>]+?)>?\)")


def index_link_slug(line: str) -> str | None:
    """The topic slug a `MEMORY.md` line links to — `[Title](slug.md)`, the link
    percent-decoded, `<slug.md>` allowed — or None for a line with no such link (a link
    into a sub-folder, with an anchor, or to anything but a `.md` file is not a topic)."""

    match = _LINK.search(line)
    if match is None:
        return None
    target = unquote(match.group(1).strip())
    if not target.endswith(".md") or "/" in target or "#" in target:
        return None
    return target[: -len(".md")]


def index_path(agent: Agent) -> str:
    return join(agent.memory_dir, INDEX_NAME)


def overflow_index_path(agent: Agent) -> str:
    return join(agent.memory_dir, OVERFLOW_INDEX_NAME)


def topic_path(agent: Agent, slug: str) -> str:
    return join(agent.memory_dir, f"{slug}.md")


def archive_path(agent: Agent, month: str) -> str:
    return join(agent.memory_dir, ARCHIVE_DIR, f"{month}.md")


def front_matter_problem(text: str) -> frontmatter.FrontMatterError | None:
    """Why the front matter of `text` cannot be read (unterminated, invalid YAML, a YAML
    bomb, not a mapping), or None when it reads or there is none."""
    try:
        found = frontmatter.find(text)
        if found is None:
            return None
        data = frontmatter.parse_yaml(
            found.yaml_text(text), first_line=text.count("\n", 0, found.yaml_start) + 1
        )
    except frontmatter.FrontMatterError as exc:
        return exc
    if data is not None and not isinstance(data, dict):
        return frontmatter.FrontMatterError("front matter is not a mapping of keys to values", line=2)
    return None


def read_topic(slug: str, path: str, text: str) -> Topic:
    meta, _ = split_front_matter(text)
    owned = meta is not None and meta.get(ORIGIN_KEY) == ORIGIN_VALUE
    try:
        content = blocks.get(text, FACTS_BLOCK, path)
    except BlockError as exc:
        return Topic(slug, path, text, owned, meta, None, error=exc.message, error_line=exc.line)
    parsed = factfmt.parse(content) if content is not None else None
    problem = front_matter_problem(text)
    if problem is not None:
        return Topic(slug, path, text, False, None, parsed, error=problem.message, error_line=problem.line)
    return Topic(slug, path, text, owned, meta, parsed)


def read_memory(agent: Agent, files: dict[str, str]) -> MemoryFiles:
    """Sort the agent's memory files (repository-relative path → text) into index, topics
    (direct `*.md` children of the memory directory except MEMORY.md, raw sources and
    definition files) and
    archive files (`archive/*.md`). Other paths are ignored."""
    prefix = agent.memory_dir + "/" if agent.memory_dir else ""
    idx = index_path(agent)
    overflow = overflow_index_path(agent)
    memory = MemoryFiles(agent, idx, files.get(idx), overflow_text=files.get(overflow))
    for path in sorted(files):
        if (
            not path.startswith(prefix)
            or path in (idx, overflow)
            or agent.is_source(path)
            or path in agent.definition_files
        ):
            continue
        rest = path[len(prefix) :]
        if not rest.endswith(".md"):
            continue
        parts = rest.split("/")
        if len(parts) == 1:
            slug = parts[0][: -len(".md")]
            memory.topics[slug] = read_topic(slug, path, files[path])
        elif len(parts) == 2 and parts[0] == ARCHIVE_DIR:
            memory.archives[path] = files[path]
    return memory


SUPERSEDED_MARK = " — superseded "
_SUPERSEDED_TAIL = re.compile(r" — superseded \d{4}-\d{2}-\d{2} by: .*$")


def superseded_text(text: str) -> str:
    """The old fact's own text of a line of the `superseded` block (without the
    " — superseded DATE by: …" tail)."""
    return _SUPERSEDED_TAIL.sub("", text)


def superseded_facts(topic: Topic) -> list[factfmt.Fact]:
    """The facts of a topic's `superseded` block (empty when it has none or its markers
    are malformed)."""
    try:
        content = blocks.get(topic.text, SUPERSEDED_BLOCK, topic.path)
    except BlockError:
        return []
    return factfmt.parse(content or "")


def body_text(text: str) -> str:
    """A topic file's text without its front matter and managed blocks (what a person
    wrote), for matching entries to a human-written topic by content."""
    _, start = split_front_matter(text)
    body = text[start:]
    try:
        found = blocks.parse(body)
    except BlockError:
        return body
    for block in reversed(found):
        body = body[: block.start] + body[block.end :]
    return body


def count_facts(path: str, text: str) -> int:
    """Facts in the `facts`, `superseded` and `archived-*` blocks of a memory file (0 when
    its markers are malformed — such a file is never rewritten, so it cannot lose any)."""
    try:
        found = blocks.parse(text, path)
    except BlockError:
        return 0
    total = 0
    for block in found:
        if block.name in (FACTS_BLOCK, SUPERSEDED_BLOCK) or block.name.startswith(ARCHIVED_BLOCK_PREFIX):
            total += len(factfmt.parse(text[block.inner_start : block.inner_end]))
    return total


def definition_path(agent: Agent, target: str) -> str | None:
    """The agent's definition file for a unit target (`skill` → SKILL.md, `soul` → soul.md,
    `agent` → agent.md): the configured definition file whose name, case-folded and without
    `.md`, equals the target. None when the agent has no such file configured."""
    for path in agent.definition_files:
        name = PurePosixPath(path).name
        if name.casefold().removesuffix(".md") == target:
            return path
    return None
