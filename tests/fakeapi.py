"""A loopback fake of the Messages API, for testing the anthropic engine with the real SDK
over real HTTP (STYLE C.9).

`FakeAnthropic` is an HTTP server on 127.0.0.1 in a thread. It answers `POST /v1/messages`
(and `/v1/messages/count_tokens`) from a per-test script — a queue of replies built by the
helpers below — and records every request (`requests`: path, headers, JSON body). A
request with `"stream": true` gets the reply as server-sent events, exactly as the API
streams it; otherwise as one JSON document. A request that finds the queue empty gets a
400 that the SDK does not retry, and is counted in `unscripted` (the fixture fails the
test on it) — unless the server was built with a `responder`, a function that makes the
reply from the recorded request (the benchmarks use one to answer any number of calls).

Reply helpers: `tool_use`, `text`, `truncated_tool_use` (stop_reason "max_tokens" with
cut-off tool input), `no_stop_reason`, `status` (any HTTP error, e.g. 429 with
`retry-after`), `overloaded` (529), `server_error` (500), `stream_error` (HTTP 200, then an
`error` event mid-stream), `cut_stream` (the connection drops mid-stream), `slow` (a reply
after a delay, for timeouts). Error replies carry `retry-after-ms: 1` unless the test
sets its own retry headers, so the SDK's back-off costs a millisecond, not seconds.
"""

from __future__ import annotations

import itertools
import json
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


def slow(seconds: float, then: Reply) -> Reply:
    """`then`, answered only after `seconds`."""
    then.delay = seconds
    return then


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


class FakeAnthropic:
    """The server (see module docstring). `url` is its base URL; `enqueue(*replies)`
    scripts it; `responder(record)`, when given, answers what the script does not;
    `requests` records what arrived; `stop()` shuts it down."""

    def __init__(self, responder: Callable[[Recorded], Reply] | None = None) -> None:
        self.responder = responder
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

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
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
        if record.path.endswith("/count_tokens") and reply.status == 200:
            payload = json.dumps(
                {"input_tokens": (reply.message or {}).get("usage", {}).get("input_tokens", 0)}
            )
            self._send(handler, 200, "application/json", payload.encode(), reply)
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
