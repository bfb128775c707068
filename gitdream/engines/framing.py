"""What a distill request carries, and how it is framed for the model (DESIGN §9).

Material and memory go to the model as data inside XML-style tags, XML-escaped so that an
entry cannot open or close a tag (`escape`). Next to the material, each batch carries
the existing topics relevant to it (`relevant_topics`): the model cannot corroborate,
refine or correct what it cannot read.

A **topic view** (`TopicView`) is one topic file at the input commit as the model sees
it: its slug, name and description, who wrote it (`person` for a human-written topic,
`gitdream` for a dream-owned one), the text a person wrote in it (front matter and
gitdream's blocks left out, clipped to `TOPIC_TEXT_MAX_CHARS`), and its facts — those
inside gitdream's `facts` block — each with its fact id (`gitdream.dream.verify.fact_id`),
so `corroborate`, `refine` and `correct` can name the fact they change. A person's text has
no ids: gitdream never changes it; the model reads it to reuse the topic and to avoid
restating what it already says.

Relevance is lexical and language-neutral: words of three or more letters or digits
(common English words left out) and bigrams of CJK characters, shared between a topic
(slug, name, description, text, facts) and the batch (entries and their heading paths),
each weighted by its inverse document frequency over the agent's topics, so a rare shared
name (`clawk`) counts more than a common one. Topics are taken best first until the
batch's topic budget (tokens) is used; a topic that does not fit whole is shown with its
most relevant facts first (`shown="12 of 40 facts"`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gitdream.dream import memoryfiles as mf
from gitdream.dream.memoryfiles import split_front_matter
from gitdream.dream.verify import ExistingFact, fact_id
from gitdream.engines.budget import content_tokens
from gitdream.errors import BlockError
from gitdream.text import blocks
from gitdream.text.clip import clip

if TYPE_CHECKING:
    from gitdream.agents import Agent
    from gitdream.units import Entry

TOPIC_TEXT_MAX_CHARS = 1500
"""Most characters of a person's text in a topic view."""


def escape(text: str) -> str:
    """XML-escape `text` so material cannot open or close a tag (`<`, `>`, `&`, quotes)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def entry_xml(entry: Entry) -> str:
    """`<entry id=… date=… kind=… role=… context=…>text</entry>` for one raw entry."""
    attrs = [f'id="{escape(entry.id)}"']
    if entry.date:
        attrs.append(f'date="{entry.date.isoformat()}"')
    attrs.append(f'kind="{escape(entry.kind)}"')
    if entry.role:
        attrs.append(f'role="{escape(entry.role)}"')
    if entry.context:
        attrs.append(f'context="{escape(" > ".join(entry.context))}"')
    return f"<entry {' '.join(attrs)}>\n{escape(entry.text)}\n</entry>\n"


def fact_xml(fact: ExistingFact) -> str:
    """`<fact id="fact:…">text</fact>`."""
    return f'<fact id="{fact.id}">{escape(fact.text)}</fact>\n'


# --- terms ---------------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]{3,}")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
_STOPWORDS = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "that",
        "this",
        "was",
        "were",
        "had",
        "has",
        "have",
        "are",
        "not",
        "but",
        "from",
        "all",
        "any",
        "can",
        "its",
        "our",
        "out",
        "you",
        "his",
        "her",
        "she",
        "him",
        "they",
        "them",
        "then",
        "than",
        "into",
        "onto",
        "when",
        "what",
        "which",
        "who",
        "why",
        "how",
        "been",
        "will",
        "would",
        "should",
        "could",
        "also",
        "only",
        "just",
        "more",
        "most",
        "some",
        "such",
        "very",
        "there",
        "their",
        "these",
        "those",
        "each",
        "other",
        "over",
        "under",
        "after",
        "before",
        "about",
        "again",
        "did",
        "does",
        "doing",
        "done",
        "one",
        "two",
        "use",
        "used",
    ]
)


def terms(text: str) -> set[str]:
    """Words (3+ letters/digits, lower-cased, common English words left out) and CJK
    character bigrams of `text`."""
    lower = text.lower()
    found = {w for w in _WORD.findall(lower) if not _CJK.fullmatch(w)} - _STOPWORDS
    for run in _CJK.findall(lower):
        found.update(run[i : i + 2] for i in range(max(1, len(run) - 1)))
    return found


# --- topic views -----------------------------------------------------------------------------


@dataclass(frozen=True)
class TopicView:
    """One topic as the model sees it (module docstring)."""

    slug: str
    path: str
    name: str
    description: str
    written_by: str
    text: str
    facts: tuple[ExistingFact, ...]
    terms: frozenset[str] = field(default=frozenset(), compare=False)

    def header(self, shown: str = "") -> str:
        """The opening `<topic …>` tag; `shown` says how many facts a partial view holds."""
        attrs = [
            f'slug="{escape(self.slug)}"',
            f'name="{escape(self.name)}"',
            f'written-by="{self.written_by}"',
        ]
        if self.description:
            attrs.append(f'description="{escape(self.description)}"')
        if shown:
            attrs.append(f'shown="{shown}"')
        return f"<topic {' '.join(attrs)}>\n"

    def render(self, facts: Sequence[ExistingFact] | None = None) -> str:
        """The `<topic>` element with `facts` (default: all of them)."""
        chosen = self.facts if facts is None else tuple(facts)
        shown = f"{len(chosen)} of {len(self.facts)} facts" if len(chosen) < len(self.facts) else ""
        text = f"<text>\n{escape(self.text)}\n</text>\n" if self.text else ""
        return self.header(shown) + text + "".join(fact_xml(f) for f in chosen) + "</topic>\n"


def _person_text(text: str, path: str) -> str:
    """What a person wrote in a topic file: without its front matter and gitdream's
    managed blocks (whose facts are shown with ids), clipped."""

    _, start = split_front_matter(text)
    body = text[start:]
    try:
        found = blocks.parse(body, path)
    except BlockError:
        found = []
    for block in reversed(found):
        body = body[: block.start] + body[block.end :]
    body = "\n".join(line.rstrip() for line in body.strip().splitlines())
    return clip(re.sub(r"\n{3,}", "\n\n", body), TOPIC_TEXT_MAX_CHARS)


def topic_views(memory_files: dict[str, str], agent: Agent) -> list[TopicView]:
    """The agent's topics at the input commit as views (module docstring), in slug order.
    A topic file gitdream leaves alone (malformed markers, unreadable front matter) is
    shown with its text only."""

    memory = mf.read_memory(agent, memory_files)
    views: list[TopicView] = []
    for slug, topic in sorted(memory.topics.items()):
        facts = tuple(
            ExistingFact(fact_id(topic.path, text), topic.path, slug, text)
            for text in (" ".join(f.text.split()) for f in (topic.facts or ()))
            if text
        )
        person = "" if topic.owned else _person_text(topic.text, topic.path)
        name = topic.name or topic.title
        description = topic.description
        words = " ".join([slug.replace("-", " ").replace("_", " "), name, description, person])
        words += " " + " ".join(f.text for f in facts)
        views.append(
            TopicView(
                slug,
                topic.path,
                clip(" ".join(name.split()), 80),
                clip(description, 200),
                "gitdream" if topic.owned else "person",
                person,
                facts,
                frozenset(terms(words)),
            )
        )
    return views


def topics_tokens(views: Sequence[TopicView]) -> int:
    """Estimated tokens of all views rendered whole (the most a batch could carry)."""
    return sum(content_tokens(v.render()) for v in views)


def relevant_topics(views: Sequence[TopicView], batch: Sequence[Entry], budget: int) -> list[str]:
    """The rendered `<topic>` elements for `batch`, most relevant first, within `budget`
    tokens (module docstring). Topics sharing no weighted term with the batch are left
    out."""
    if not views or budget <= 0:
        return []
    wanted: set[str] = set()
    for entry in batch:
        wanted |= terms(entry.text + " " + " ".join(entry.context) + " " + " ".join(entry.tags))
    df: Counter[str] = Counter()
    for view in views:
        df.update(view.terms & wanted)
    idf = {t: math.log(1 + len(views) / n) for t, n in df.items()}
    scored = []
    for order, view in enumerate(views):
        score = sum(idf[t] for t in view.terms & wanted)
        if score > 0:
            scored.append((-score, order, view))
    scored.sort(key=lambda item: (item[0], item[1]))
    out: list[str] = []
    used = 0
    for _, _, view in scored:
        whole = view.render()
        cost = content_tokens(whole)
        if used + cost <= budget:
            out.append(whole)
            used += cost
            continue
        room = budget - used - content_tokens(view.render(()))
        if room <= 0:
            continue
        ranked = sorted(view.facts, key=lambda f: -sum(idf.get(t, 0.0) for t in terms(f.text) & wanted))
        chosen: list[ExistingFact] = []
        for fact in ranked:
            cost = content_tokens(fact_xml(fact))
            if cost <= room:
                chosen.append(fact)
                room -= cost
        if chosen or view.text:
            part = view.render(chosen)
            out.append(part)
            used += content_tokens(part)
    return out
