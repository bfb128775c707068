"""A loopback fake of the Messages API, for testing the anthropic engine with the real SDK
over real HTTP, as `llm` tests its model plugins against recorded HTTP.

`FakeAnthropic` is an HTTP server on 127.0.0.1 in a thread. It answers `POST /v1/messages`
from a per-test script — a queue of replies built by the helpers below — and records every
request (`requests`: path, headers, JSON body). A request with `"stream": true` gets the
reply as server-sent events, exactly as the API streams it; otherwise as one JSON
document. A request that finds the queue empty gets a 400 that the SDK does not retry,
and is counted in `unscripted` (the fixture fails the test on it) — unless the server was
built with a `responder`, a function that makes the reply from the recorded request:
`ModelLike` (below) answers like a model, from what the request holds.

`POST /v1/messages/count_tokens` is answered by the server itself, not from the script:
`{"input_tokens": fake_tokens(request)}` — or 404, as servers without the endpoint do,
when built with `count_tokens=False`.

Reply helpers: `tool_use`, `text`, `truncated_tool_use` (stop_reason "max_tokens" with
cut-off tool input), `no_stop_reason`, `status` (any HTTP error, e.g. 429 with
`retry-after`), `overloaded` (529), `server_error` (500), `stream_error` (HTTP 200, then an
`error` event mid-stream), `cut_stream` (the connection drops mid-stream), `raw` (a body
sent as it is), `slow` (a reply after a delay, for timeouts), `endless` (HTTP 200 and a
stream that never ends: `event: ping` forever, or bytes trickled one at a time, each well
within any read timeout). Error replies carry `retry-after-ms: 1` unless the test sets its
own retry headers, so the SDK's back-off costs a millisecond, not seconds.
"""

from __future__ import annotations

import html
import itertools
import json
import math
import re
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ids = itertools.count(1)


@dataclass
class Reply:
    """One scripted reply: either a message (`message`, rendered as JSON or SSE) or an
    error (`status` + `body`), with extra `headers`; `delay` seconds before answering;
    `stream_events` overrides the SSE rendering; `truncate` drops the connection after
    that many bytes of the body (announcing the full length)."""

    status: int = 200
    message: dict[str, Any] | None = None
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    stream_events: list[tuple[str, dict[str, Any]]] | None = None
    truncate: int | None = None
    partial_json: str | None = None
    raw: bytes | None = None
    content_type: str = ""
    endless: str = ""
    """"ping" or "trickle": the stream never ends (`endless`)."""


@dataclass
class Recorded:
    """A request the server received: `path`, `headers` (lower-case names), `body` (JSON)."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def text(self) -> str:
        """The body as JSON text (for "contains" assertions)."""
        return json.dumps(self.body, ensure_ascii=False)


def usage(
    input_tokens: int = 100, output_tokens: int = 50, cache_creation: int = 0, cache_read: int = 0
) -> dict[str, Any]:
    """A `usage` object with the cache fields the API reports."""
    return {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": cache_creation,
        "cache_read_input_tokens": cache_read,
    }


def message(
    content: list[dict[str, Any]], stop_reason: str | None, use: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A complete Messages API response object (the model is filled in from the request)."""
    return {
        "id": f"msg_fake{next(_ids):06d}",
        "type": "message",
        "role": "assistant",
        "model": None,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": use or usage(),
    }


def _tool_block(name: str, tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_fake{next(_ids):06d}", "name": name, "input": tool_input}


def tool_use(name: str, tool_input: Any, *, stop_reason: str = "tool_use", **use: int) -> Reply:
    """A forced tool call answering with `tool_input`."""
    return Reply(message=message([_tool_block(name, tool_input)], stop_reason, usage(**use)))


def declared(units: Any) -> list[dict[str, str]]:
    """A `topics` declaration (slug, name, description) for each topic the experience units
    name: the answer schema of `record_units` wants every new topic declared."""
    slugs = dict.fromkeys(
        u["topic"]
        for u in units
        if isinstance(u, dict)
        and isinstance(u.get("topic"), str)
        and u.get("target", "experience") == "experience"
    )
    return [
        {"slug": s, "name": s.replace("-", " ").capitalize(), "description": f"Lessons about {s}"}
        for s in slugs
    ]


def distilled(units: Any, *, topics: list[dict[str, str]] | None = None, **use: int) -> Reply:
    """A `record_units` answer with `units` and their topics declared (or `topics`)."""
    return tool_use(
        "record_units", {"topics": declared(units) if topics is None else topics, "units": units}, **use
    )


def text(answer: str, *, stop_reason: str = "end_turn", **use: int) -> Reply:
    """A plain text answer (no tool call)."""
    return Reply(message=message([{"type": "text", "text": answer}], stop_reason, usage(**use)))


def truncated_tool_use(name: str, tool_input: Any, *, keep: float = 0.5, **use: int) -> Reply:
    """stop_reason "max_tokens": the tool input is cut off after `keep` of its JSON text
    (SSE carries the cut JSON; the JSON rendering carries what the API parsed: `{}`)."""
    full = json.dumps(tool_input)
    block = _tool_block(name, {})
    return Reply(
        message=message([block], "max_tokens", usage(**use)),
        partial_json=full[: max(1, int(len(full) * keep))],
    )


def no_stop_reason(name: str, tool_input: Any, **use: int) -> Reply:
    """A complete-looking tool call whose `stop_reason` is null."""
    return Reply(message=message([_tool_block(name, tool_input)], None, usage(**use)))


def status(
    code: int,
    error_type: str,
    text_: str = "",
    *,
    retry_after: str | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    """An HTTP error with the API's error body. Without `retry_after` or explicit retry
    headers it carries `retry-after-ms: 1`."""
    extra = dict(headers or {})
    if retry_after is not None:
        extra["retry-after"] = retry_after
    if not any(k.lower().startswith("retry-after") for k in extra):
        extra["retry-after-ms"] = "1"
    body = {"type": "error", "error": {"type": error_type, "message": text_ or error_type}}
    return Reply(status=code, body=body, headers=extra)


def overloaded() -> Reply:
    """529 overloaded_error."""
    return status(529, "overloaded_error", "Overloaded")


def rate_limited(retry_after: str | None = None, **kw: Any) -> Reply:
    """429 rate_limit_error."""
    return status(
        429,
        "rate_limit_error",
        "Number of request tokens has exceeded your rate limit",
        retry_after=retry_after,
        **kw,
    )


def server_error() -> Reply:
    """500 api_error."""
    return status(500, "api_error", "Internal server error")


def stream_error(error_type: str = "overloaded_error") -> Reply:
    """HTTP 200, message_start, then an `error` event (the API's mid-stream failure)."""
    start = message([], None, usage(output_tokens=1))
    return Reply(
        message=start,
        stream_events=[
            ("message_start", {"type": "message_start", "message": start}),
            ("ping", {"type": "ping"}),
            ("error", {"type": "error", "error": {"type": error_type, "message": "Overloaded"}}),
        ],
    )


def cut_stream(name: str, tool_input: Any) -> Reply:
    """A tool call whose stream breaks off: the connection closes half-way through."""
    reply = tool_use(name, tool_input)
    reply.truncate = -1
    return reply


def raw(body: bytes, content_type: str = "text/event-stream", code: int = 200) -> Reply:
    """`body` sent as it is, with `content_type` and status `code`: for answers that are
    not what the Messages API sends (a 200 whose body is not JSON, events of the wrong shape)."""
    return Reply(status=code, raw=body, content_type=content_type)


def slow(seconds: float, then: Reply) -> Reply:
    """`then`, answered only after `seconds`."""
    then.delay = seconds
    return then


ENDLESS_INTERVAL = 0.05
"""Seconds between two pings (or two trickled bytes) of an `endless` stream."""


def endless(how: str = "ping") -> Reply:
    """HTTP 200, `message_start`, then a stream that never ends, until the client closes
    the connection (or the server stops): `how` = "ping" sends `event: ping` every
    ENDLESS_INTERVAL seconds (as the API keeps a slow stream alive); "trickle" sends the
    bytes of a content block one at a time at that pace, never completing an event."""
    assert how in ("ping", "trickle")
    return Reply(endless=how)


def _send_endless(
    handler: BaseHTTPRequestHandler, reply: Reply, model: str, stopping: threading.Event
) -> None:
    start = dict(message([], None), model=model)
    head = f"event: message_start\ndata: {json.dumps({'type': 'message_start', 'message': start})}\n\n"
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("connection", "close")
    handler.end_headers()
    handler.wfile.write(head.encode())
    handler.wfile.flush()
    handler.close_connection = True
    ping = b'event: ping\ndata: {"type": "ping"}\n\n'
    trickle = itertools.cycle(b'event: content_block_start\ndata: {"type": "content_block_start", ')
    while not stopping.wait(ENDLESS_INTERVAL):
        handler.wfile.write(ping if reply.endless == "ping" else bytes([next(trickle)]))
        handler.wfile.flush()


def _sse(reply: Reply, model: str) -> bytes:
    if reply.stream_events is not None:
        events = reply.stream_events
    else:
        assert reply.message is not None
        full = dict(reply.message, model=model)
        use = full["usage"]
        start = dict(full, content=[], stop_reason=None, usage=dict(use, output_tokens=1))
        events = [("message_start", {"type": "message_start", "message": start}), ("ping", {"type": "ping"})]
        for index, block in enumerate(full["content"]):
            if block["type"] == "tool_use":
                events.append(
                    (
                        "content_block_start",
                        {
                            "type": "content_block_start",
                            "index": index,
                            "content_block": dict(block, input={}),
                        },
                    )
                )
                raw = reply.partial_json if reply.partial_json is not None else json.dumps(block["input"])
                for i in range(0, len(raw), 40):
                    events.append(
                        (
                            "content_block_delta",
                            {
                                "type": "content_block_delta",
                                "index": index,
                                "delta": {"type": "input_json_delta", "partial_json": raw[i : i + 40]},
                            },
                        )
                    )
            else:
                events.append(
                    (
                        "content_block_start",
                        {
                            "type": "content_block_start",
                            "index": index,
                            "content_block": {"type": "text", "text": ""},
                        },
                    )
                )
                events.append(
                    (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "text_delta", "text": block["text"]},
                        },
                    )
                )
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        events.append(
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": full["stop_reason"], "stop_sequence": None},
                    "usage": {"output_tokens": use["output_tokens"]},
                },
            )
        )
        events.append(("message_stop", {"type": "message_stop"}))
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()


def fake_tokens(body: dict[str, Any], bytes_per_token: float = 4) -> int:
    """What the fake's "tokenizer" counts for a request: UTF-8 bytes / `bytes_per_token`
    (4 unless the server was built with another) of its system prompt, messages and tools
    (the engine estimates bytes / 3, on the safe side)."""
    text = json.dumps([body.get("system"), body.get("messages"), body.get("tools")], ensure_ascii=False)
    return max(1, math.ceil(len(text.encode("utf-8")) / bytes_per_token))


class _Server(ThreadingHTTPServer):
    """The loopback server: a client that went away mid-request (a timeout test, a cut
    stream) is expected, not an error to print over the test run's output."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class FakeAnthropic:
    """The server (see module docstring). `url` is its base URL; `enqueue(*replies)`
    scripts it; `responder(record)`, when given, answers what the script does not;
    `count_tokens` says whether it has the count_tokens endpoint; `requests` records what
    arrived; `stop()` shuts it down."""

    def __init__(
        self,
        responder: Callable[[Recorded], Reply | None] | None = None,
        *,
        count_tokens: bool = True,
        bytes_per_token: float = 4,
    ) -> None:
        self.responder = responder
        self.count_tokens = count_tokens
        self.bytes_per_token = bytes_per_token
        self.replies: list[Reply] = []
        self.requests: list[Recorded] = []
        self.unscripted = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # no 40 ms delayed-ACK stalls between header and body

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                record = Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                if self.path.rstrip("/").endswith("/count_tokens"):
                    with fake._lock:
                        fake.requests.append(record)
                    try:
                        fake._count(self, record)
                    except (BrokenPipeError, ConnectionResetError):
                        pass
                    return
                with fake._lock:
                    fake.requests.append(record)
                    reply = fake.replies.pop(0) if fake.replies else None
                    if reply is None and fake.responder is not None:
                        reply = fake.responder(record)
                    if reply is None:
                        fake.unscripted += 1
                try:
                    fake._answer(self, record, reply)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test): nothing to answer

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(
            target=self.server.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="fake-anthropic",
            daemon=True,
        )

    def start(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self.server.shutdown()
        self.server.server_close()

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    @property
    def messages(self) -> list[Recorded]:
        """Recorded `POST /v1/messages` requests (count_tokens excluded)."""
        return [r for r in self.requests if r.path.rstrip("/").endswith("/v1/messages")]

    @property
    def counts(self) -> list[Recorded]:
        """Recorded count_tokens requests."""
        return [r for r in self.requests if r.path.rstrip("/").endswith("/count_tokens")]

    def _count(self, handler: BaseHTTPRequestHandler, record: Recorded) -> None:
        if not self.count_tokens:
            reply = status(404, "not_found_error", "Not Found", headers={"x-should-retry": "false"})
            self._send(handler, 404, "application/json", json.dumps(reply.body).encode(), reply)
            return
        payload = json.dumps({"input_tokens": fake_tokens(record.body, self.bytes_per_token)}).encode()
        self._send(handler, 200, "application/json", payload, Reply())

    def _answer(self, handler: BaseHTTPRequestHandler, record: Recorded, reply: Reply | None) -> None:
        if reply is None:
            reply = status(
                400,
                "invalid_request_error",
                "fake server: no scripted reply left",
                headers={"x-should-retry": "false"},
            )
        if reply.delay and self._stopping.wait(reply.delay):
            return
        if reply.raw is not None:
            self._send(handler, reply.status, reply.content_type, reply.raw, reply)
            return
        if reply.endless:
            _send_endless(handler, reply, str(record.body.get("model") or "claude-fake"), self._stopping)
            return
        if reply.status != 200 or reply.message is None:
            self._send(
                handler, reply.status, "application/json", json.dumps(reply.body or {}).encode(), reply
            )
            return
        model = str(record.body.get("model") or "claude-fake")
        if record.body.get("stream"):
            self._send(handler, 200, "text/event-stream", _sse(reply, model), reply)
        else:
            full = dict(reply.message, model=model)
            self._send(handler, 200, "application/json", json.dumps(full).encode(), reply)

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, code: int, ctype: str, payload: bytes, reply: Reply) -> None:
        handler.send_response(code)
        handler.send_header("content-type", ctype)
        handler.send_header("request-id", f"req_fake{next(_ids):06d}")
        for name, value in reply.headers.items():
            handler.send_header(name, value)
        handler.send_header("content-length", str(len(payload)))
        if reply.truncate is not None:
            handler.send_header("connection", "close")
        handler.end_headers()
        if reply.truncate is not None:
            cut = len(payload) // 2 if reply.truncate < 0 else reply.truncate
            handler.wfile.write(payload[:cut])
            handler.wfile.flush()
            handler.close_connection = True
            return
        handler.wfile.write(payload)
        handler.wfile.flush()


# --- a model-like responder ------------------------------------------------------------------

_ENTRY_RE = re.compile(r'<entry id="([^"]*)"([^>]*)>\n(.*?)\n</entry>', re.S)
_TOPIC_RE = re.compile(
    r'<topic slug="([^"]*)" name="([^"]*)" written-by="([^"]*)"([^>]*)>(.*?)</topic>', re.S
)
_FACT_RE = re.compile(r'<fact id="(fact:[0-9a-f]{10})">(.*?)</fact>')
_CAP_RE = re.compile(r"units: at most (\d+)")
_WORDS = re.compile(r"[^\W_]{3,}")
_LEAD = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+|^\s*\[?\d{4}-\d{2}-\d{2}\]?[:\s-]*|^\s*#+\s*")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s")
DISTILL = "record_units"
SCREEN = "screen_verdict"


def _words(text: str) -> set[str]:
    return {w.casefold() for w in _WORDS.findall(text)}


def _first_sentence(text: str) -> str:
    for _ in range(3):
        text = _LEAD.sub("", text.strip())
    sentence = _SENTENCE.split(" ".join(text.split()), maxsplit=1)[0]
    return sentence[:300].strip() or text[:300].strip()


def _slugify(text: str) -> str:
    words = [w.casefold() for w in _WORDS.findall(text)][:3]
    return "-".join(words)[:40].strip("-")


@dataclass
class Shown:
    """What a distill request showed the model: entries `(id, text, heading)`, topics
    `(slug, name, written_by, text)` and facts `(fact id, text, topic slug)`, and the cap."""

    entries: list[tuple[str, str, str]]
    topics: list[tuple[str, str, str, str]]
    facts: list[tuple[str, str, str]]
    cap: int


def shown(record: Recorded) -> Shown:
    """Parse a distill request the way a reader of its prompt would."""
    content = record.body["messages"][0]["content"]
    text = content if isinstance(content, str) else json.dumps(content)
    entries = []
    for entry_id, attrs, body in _ENTRY_RE.findall(text):
        heading = re.search(r'context="([^"]*)"', attrs)
        entries.append(
            (html.unescape(entry_id), html.unescape(body), html.unescape(heading[1]) if heading else "")
        )
    topics, facts = [], []
    for slug, name, who, _attrs, inner in _TOPIC_RE.findall(text):
        topics.append((html.unescape(slug), html.unescape(name), who, html.unescape(inner)))
        facts += [(fid, html.unescape(ftext), html.unescape(slug)) for fid, ftext in _FACT_RE.findall(inner)]
    cap = _CAP_RE.search(text)
    return Shown(entries, topics, facts, int(cap[1]) if cap else 50)


@dataclass
class ModelLike:
    """Answers the anthropic engine's requests the way a model would, from what they hold.

    Distill: `units` units per batch (never more than the cap the request states), each
    citing one real entry id of the batch — entries spread over the batch, those of four
    words or more — with the entry's first sentence as its body (so in the entry's
    language). An entry that shares at least half its words with a fact shown in
    `<topics>` corroborates that fact, naming its id; otherwise the unit goes to the shown
    topic (human or gitdream's) sharing the most words with the entry, else to a new topic
    declared in `topics` with a name and a description of its own.
    Screen: "yes", or "no" when the title or body holds one of the words in `refuse`.

    On command: `fail(purpose, kind, times)` answers the next `times` requests of
    `purpose` ("distill" or "screen") with `kind`: "overloaded" (529; the SDK retries, so
    a call needs `anthropic.max_retries + 1` of them to fail), "cut" (the stream breaks
    off), "schema" (a tool input that violates the schema), "text" (no tool call),
    "max_tokens" (cut off), "slow" (the real answer after `delay` seconds), or "ping" /
    "trickle" (a stream that never ends, `endless`).
    `down(purpose)` answers 529 to every request of it until `up(purpose)`.
    `seen` counts requests by purpose; `asked` records each distill request's `Shown`.
    """

    units: int = 5
    refuse: tuple[str, ...] = ()
    delay: float = 0.0
    seen: dict[str, int] = field(default_factory=lambda: {"distill": 0, "screen": 0})
    asked: list[Shown] = field(default_factory=list)
    _failures: dict[str, list[str]] = field(default_factory=lambda: {"distill": [], "screen": []})
    _down: set[str] = field(default_factory=set)

    def fail(self, purpose: str, kind: str, times: int = 1) -> None:
        self._failures[purpose] += [kind] * times

    def down(self, purpose: str) -> None:
        self._down.add(purpose)

    def up(self, purpose: str) -> None:
        self._down.discard(purpose)

    def __call__(self, record: Recorded) -> Reply | None:
        tool = (record.body.get("tool_choice") or {}).get("name")
        purpose = {DISTILL: "distill", SCREEN: "screen"}.get(str(tool))
        if purpose is None:
            return None
        self.seen[purpose] += 1
        if purpose in self._down:
            return overloaded()
        kind = self._failures[purpose].pop(0) if self._failures[purpose] else None
        answer = self._distill(record) if purpose == "distill" else self._screen(record)
        name, tool_input = (DISTILL, answer) if purpose == "distill" else (SCREEN, answer)
        used = {
            "input_tokens": fake_tokens(record.body),
            "output_tokens": max(1, len(json.dumps(answer)) // 4),
        }
        if kind == "overloaded":
            return overloaded()
        if kind == "cut":
            return cut_stream(name, tool_input)
        if kind == "schema":
            bad = {"units": "none"} if purpose == "distill" else {"verdict": "maybe"}
            return tool_use(name, bad, **used)
        if kind == "text":
            return text("I think these are the lessons.", **used)
        if kind == "max_tokens":
            return truncated_tool_use(name, tool_input, **used)
        if kind in ("ping", "trickle"):
            return endless(kind)
        reply = tool_use(name, tool_input, **used)
        if kind == "slow" or self.delay:
            reply.delay = self.delay or 1.0
        return reply

    def _screen(self, record: Recorded) -> dict[str, Any]:
        content = record.body["messages"][0]["content"]
        said = html.unescape(content if isinstance(content, str) else json.dumps(content)).casefold()
        bad = [w for w in self.refuse if w.casefold() in said]
        if bad:
            return {"verdict": "no", "reason": f"it names {bad[0]!r}, which the policy does not allow"}
        return {"verdict": "yes", "reason": "a general lesson without secrets or personal data"}

    def _distill(self, record: Recorded) -> dict[str, Any]:
        ask = shown(record)
        self.asked.append(ask)
        worth = [e for e in ask.entries if len(_words(e[1])) >= 4]
        count = min(self.units, ask.cap, len(worth))
        step = max(1, len(worth) // count) if count else 1
        chosen = worth[::step][:count]
        units, topics = [], {}
        for entry_id, entry_text, heading in chosen:
            body = _first_sentence(entry_text)
            words = _words(entry_text)
            fact = max(ask.facts, key=lambda f: len(_words(f[1]) & words), default=None)
            if fact is not None and len(_words(fact[1]) & words) * 2 >= max(1, len(_words(fact[1]))):
                units.append(self._unit(fact[1], fact[2], "corroborate", [fact[0], entry_id]))
                continue
            topic = max(ask.topics, key=lambda t: len(_words(f"{t[0]} {t[1]} {t[3]}") & words), default=None)
            if topic is not None and len(_words(f"{topic[0]} {topic[1]} {topic[3]}") & words) >= 2:
                units.append(self._unit(body, topic[0], "create", [entry_id]))
                continue
            subject = heading.split(" > ")[-1] if heading else entry_text
            slug = _slugify(_first_sentence(subject)) or f"topic-{len(topics) + 1}"
            name = " ".join(slug.split("-")).capitalize()
            topics[slug] = {
                "slug": slug,
                "name": name,
                "description": f"What the agent learned about {name.lower()}",
            }
            units.append(self._unit(body, slug, "create", [entry_id]))
        return {"topics": list(topics.values()), "units": units}

    @staticmethod
    def _unit(body: str, topic: str, action: str, sources: list[str]) -> dict[str, Any]:
        title = " ".join(body.split()[:6]) or "Lesson"
        return {
            "title": title[:200],
            "body": body[:2000] or title,
            "target": "experience",
            "action": action,
            "topic": topic,
            "sources": sources,
        }
