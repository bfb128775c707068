"""One Messages API call, as the anthropic engine makes it (DESIGN §9).

The only module that imports the `anthropic` SDK, and only inside functions, when a
request is about to be made: importing it, building a `MessagesClient` or planning a run
does not load the SDK.

`MessagesClient.call` sends one streamed `POST /v1/messages` with a forced tool call and
the system prompt marked for prompt caching, accumulates the stream strictly, records the
call (purpose, model, input/output/cache tokens, stop reason, latency, error) in `calls`
and counts it in the `Budget`. A call whose HTTP request fails after the SDK's retries,
whose stream reports an error event (HTTP 200), breaks off, or ends without a
`stop_reason`, is a failed call and raises `ApiCallFailed` — never a partial result.
`Budget.check` runs before every request.

Servers that speak the Messages API but lack parts of it:
- no `/v1/messages/count_tokens`: `count` returns None and the engine keeps its local
  estimate (the endpoint is asked once per client; a 404, 405 or 501 means "not there");
- no tools, or no forced `tool_choice`: a request the server rejects for naming them, or
  two answers in a row that do not call the forced tool, raise `ServerCannot`, which names
  the missing capability: gitdream cannot use such a server.

Retries. The SDK retries 408/409/429/5xx/529 and network errors `anthropic.max_retries`
times, sleeping `retry-after-ms`/`retry-after` when the server sends one (it caps that
only at ~50 days) and else 0.5 s × 2^n (at most 8 s, minus up to 25 % jitter). A
middleware (`RetryWaitCap`) adds the sleeps the SDK is about to take and, when they
would pass `anthropic.max_retry_wait_seconds` for one call, stops the call at once
instead of sleeping, so a `retry-after` of minutes cannot hang a scheduled run.

Deadline. `anthropic.timeout_seconds` is the SDK's (httpx's) timeout of each network
operation: a server that keeps a stream alive with `event: ping` (or trickles bytes) but
never finishes resets it with every byte. So each call — `call` and `count`, all of the
SDK's attempts and the waits between them, and the whole response stream — also has a
total wall-clock deadline, `anthropic.call_deadline_seconds`, kept by the `CallDeadline`
middleware: it clamps every attempt's httpx timeouts to the time left, stops the SDK's
retry loop once the time is up, and wraps the response's byte stream so that a chunk
(a ping, a trickled byte) arriving after the deadline ends the read — the stream is
closed and the call fails with `ApiCallFailed`, like any timeout. A read that is waiting
when the deadline passes ends within its clamped timeout; no thread is involved. Not
covered: a server that trickles its response *headers* byte by byte (httpcore reads them
in one loop, with no hook between reads), which nothing in the Messages API does.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gitdream.dream.decode import scrub
from gitdream.engines.budget import Budget, estimate_tokens
from gitdream.errors import EngineError
from gitdream.extras import anthropic_problem

if TYPE_CHECKING:
    from gitdream.config import Config

REQUEST_OVERHEAD_TOKENS = 50
"""Per-request tokens not in any text we send (roles, tool-use framing), estimated."""
NO_COUNT_STATUSES = (404, 405, 501)
"""Statuses meaning "this server has no count_tokens endpoint"."""


def credentials(cfg: Config) -> dict[str, Any]:
    """The credential to build the SDK client with, chosen as the SDK chooses from its
    environment: the API key (`anthropic.api_key`, `ANTHROPIC_API_KEY`) when one is set,
    else the bearer token (`anthropic.auth_token`, `ANTHROPIC_AUTH_TOKEN`); `{}` for
    neither. One of the two only: the SDK refuses both at once."""
    key = cfg.str("anthropic.api_key").strip()
    if key:
        return {"api_key": key}
    token = cfg.str("anthropic.auth_token").strip()
    return {"auth_token": token} if token else {}


def missing_key(cfg: Config) -> EngineError | None:
    """The error to show when neither an API key nor a bearer token is configured (for
    the engine's `check`), or None when one is. Does not import the SDK."""
    if credentials(cfg):
        return None
    return EngineError(
        "the anthropic engine needs an API key, and none is set",
        hint="set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN for a server that takes a bearer token; "
        "any value for a local server that checks none), or use --engine offline",
    )


def request_tokens(system: str, tools: list[dict[str, Any]], messages: list[dict[str, Any]]) -> int:
    """Estimated input tokens of a request (`estimate_tokens` over its texts)."""
    return (
        estimate_tokens(system)
        + estimate_tokens(json.dumps(tools))
        + estimate_tokens(json.dumps(messages, ensure_ascii=False))
        + REQUEST_OVERHEAD_TOKENS
    )


class ApiCallFailed(EngineError):
    """A model call failed: an HTTP error after the SDK's retries, a network error or
    timeout, an error event inside the stream, a broken or incomplete stream, or a
    response without a stop_reason. Nothing of the response is used."""


class ServerCannot(EngineError):
    """The server behind `anthropic.base_url` lacks a capability the engine needs (tools,
    or a forced `tool_choice`): no run can succeed with it, so the run fails at once."""


class RetryWaitExceeded(Exception):
    """Raised by `RetryWaitCap` instead of letting the SDK sleep past the cap. Not an SDK
    error and not chained to one, so the SDK's retry loop lets it through at once."""

    def __init__(self, what: str, wait: float, waited: float, cap: float) -> None:
        super().__init__(what)
        self.what = what
        self.wait = wait
        self.waited = waited
        self.cap = cap


def _retry_after(headers: Any) -> float | None:
    """Seconds the server asks to wait, parsed as the SDK does (`_parse_retry_after_header`
    in anthropic/_base_client.py): `retry-after-ms`, else `retry-after` as seconds, else
    as an HTTP date. None when absent or unparseable."""
    try:
        return float(headers.get("retry-after-ms")) / 1000
    except (TypeError, ValueError):
        pass
    value = headers.get("retry-after")
    try:
        return float(value)
    except (TypeError, ValueError):
        pass
    parsed = email.utils.parsedate_tz(value) if value else None
    if parsed is None:
        return None
    return float(email.utils.mktime_tz(parsed) - time.time())


def _sdk_would_retry(status: int, headers: Any) -> bool:
    """The SDK's retry decision for a response (`_should_retry` in _base_client.py)."""
    flag = headers.get("x-should-retry")
    if flag in ("true", "false"):
        return flag == "true"
    return status in (408, 409, 429) or status >= 500


class RetryWaitCap:
    """SDK middleware capping the total retry sleep of one call at `cap` seconds.

    The SDK calls it once per HTTP attempt, inside its retry loop, with
    `request.retries_taken`. When the attempt failed in a way the SDK will retry, it
    adds the sleep the SDK is about to take — the server's `retry-after(-ms)` when
    positive, else the back-off bound min(0.5 × 2^n, 8) s — and raises
    `RetryWaitExceeded` when the sum would pass `cap`, or `DeadlinePassed` when that sleep
    alone would pass the call's `deadline` (`CallDeadline`: the retry could not start in time).
    """

    def __init__(self, cap: float, max_retries: int, deadline: CallDeadline | None = None) -> None:
        self.cap = cap
        self.max_retries = max_retries
        self.deadline = deadline
        self.waited = 0.0

    def _charge(self, retries_taken: int, asked: float | None, what: str) -> None:
        wait = asked if asked is not None and asked > 0 else min(0.5 * 2.0**retries_taken, 8.0)
        if self.waited + wait > self.cap:
            raise RetryWaitExceeded(what, wait, self.waited, self.cap)
        left = self.deadline.left() if self.deadline is not None else None
        if left is not None and wait >= left:
            # The sleep alone would pass the call's deadline: stop now, not after it.
            assert self.deadline is not None
            raise DeadlinePassed(self.deadline.seconds, f"{what} and the next retry would wait {wait:g} s")
        self.waited += wait

    def __call__(self, request: Any, call_next: Any) -> Any:
        import anthropic  # optional: the anthropic extra may not be installed

        if request.retries_taken == 0:
            self.waited = 0.0
        will_retry = request.retries_taken < self.max_retries
        try:
            response = call_next(request)
        except anthropic.APIConnectionError as exc:
            if will_retry:
                what = "timed out" if isinstance(exc, anthropic.APITimeoutError) else "could not connect"
                self._charge(request.retries_taken, None, what)
            raise
        if will_retry and _sdk_would_retry(response.status_code, response.headers):
            try:
                code = response.status_code
                meaning = {429: " (rate limited)", 529: " (overloaded)"}.get(code, "")
                self._charge(
                    request.retries_taken, _retry_after(response.headers), f"answered {code}{meaning}"
                )
            except RetryWaitExceeded:
                response.http_response.close()
                raise
        return response


DEADLINE_SLACK_SECONDS = 0.05
"""A timeout this close to a call's deadline is the deadline's (its read was clamped)."""


class DeadlinePassed(Exception):
    """Raised by `CallDeadline` when a call's deadline has passed. Not an SDK error and
    not chained to one, so the SDK's retry loop lets it through at once."""

    def __init__(self, seconds: float, why: str = "") -> None:
        super().__init__(f"the call did not finish within {seconds:g} s")
        self.seconds = seconds
        self.why = why
        """What the server last did when it is why the call stopped ("answered 529
        (overloaded) and the next retry would wait 25 s"); "" when the answer never ended."""


class CallDeadline:
    """SDK middleware giving each call a total wall-clock deadline (module docstring).

    `seconds` is `anthropic.call_deadline_seconds`; `timeout` the client's per-operation
    timeout (`anthropic.timeout_seconds`), which an attempt uses when it sets none of its
    own. `start()` before a call sets the deadline `seconds` from now (`time.monotonic`),
    `stop()` after it clears it; with no deadline set it does nothing. Per attempt: raises
    `DeadlinePassed` when no time is left (also instead of a retry after a network error
    or timeout once the time is up), clamps the attempt's connect/read/write/pool timeouts
    to the time left, and wraps the response's byte stream in `_deadline_stream`. The
    deadline is per call, not per attempt: the attempts of one call share it, so a run of
    n calls is bounded by about n × the deadline.
    """

    def __init__(self, seconds: float, timeout: float) -> None:
        self.seconds = seconds
        self.timeout = timeout
        self.at: float | None = None

    def start(self) -> None:
        """Start the deadline of one call."""
        self.at = time.monotonic() + self.seconds

    def stop(self) -> None:
        """Clear the deadline (the call is over)."""
        self.at = None

    def left(self) -> float | None:
        """Seconds left before the deadline (<= 0 once it passed), or None when none is set."""
        return None if self.at is None else self.at - time.monotonic()

    def __call__(self, request: Any, call_next: Any) -> Any:
        import anthropic  # optional: the anthropic extra may not be installed
        import httpx2  # optional: the anthropic extra may not be installed

        left = self.left()
        if left is None:
            return call_next(request)
        if left <= 0:
            raise DeadlinePassed(self.seconds)
        timeout = request.timeout
        if isinstance(timeout, anthropic.NotGiven):
            timeout = self.timeout  # the client's, as the SDK would use it
        if not isinstance(timeout, httpx2.Timeout):
            timeout = httpx2.Timeout(timeout)
        request = request.copy(
            timeout=httpx2.Timeout(
                connect=_at_most(timeout.connect, left),
                read=_at_most(timeout.read, left),
                write=_at_most(timeout.write, left),
                pool=_at_most(timeout.pool, left),
            )
        )
        try:
            response = call_next(request)
        except anthropic.APIConnectionError:
            left = self.left()
            if left is not None and left <= DEADLINE_SLACK_SECONDS:
                raise DeadlinePassed(self.seconds) from None
            raise
        http = response.http_response
        http.stream = _deadline_stream(http.stream, self)
        return response


def _at_most(value: float | None, cap: float) -> float:
    return cap if value is None else min(value, cap)


def _deadline_stream(inner: Any, deadline: CallDeadline) -> Any:
    """`inner` (a response's httpx2.SyncByteStream) as a stream that raises
    `DeadlinePassed` when a chunk arrives after `deadline`'s time is up: pings and
    trickled bytes keep each read short of the per-read timeout, so the deadline is
    checked at every chunk. Closing it closes `inner` (and the connection)."""
    import httpx2  # optional: the anthropic extra may not be installed

    class DeadlineStream(httpx2.SyncByteStream):
        def __iter__(self) -> Iterator[bytes]:
            for chunk in inner:
                left = deadline.left()
                if left is not None and left <= 0:
                    raise DeadlinePassed(deadline.seconds)
                yield chunk

        def close(self) -> None:
            inner.close()

    return DeadlineStream()


@dataclass
class Block:
    type: str
    id: str = ""
    name: str = ""
    text: str = ""
    json: str = ""
    input: Any = None


@dataclass
class Answer:
    """A complete streamed response, accumulated strictly (tool input parsed with
    `json.loads` once the stream is complete, never partially)."""

    model: str = ""
    stop_reason: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    blocks: list[Block] = field(default_factory=list)
    complete: bool = False

    def tool_call(self, name: str) -> Block | None:
        """The answer's first call of tool `name`, or None."""
        return next((b for b in self.blocks if b.type == "tool_use" and b.name == name), None)

    def text(self) -> str:
        """The answer's text blocks joined."""
        return "".join(b.text for b in self.blocks if b.type == "text")

    def ignored_tool(self) -> bool:
        """True for a complete answer that calls no tool at all (a server that does not
        honour a forced `tool_choice` answers so; the Messages API never does)."""
        return self.stop_reason in ("end_turn", "stop_sequence") and not any(
            b.type == "tool_use" for b in self.blocks
        )


_CAPABILITY = re.compile(r"tool_choice|\btools?\b", re.IGNORECASE)


class MessagesClient:
    """Messages API calls for one engine run (module docstring).

    `MessagesClient(cfg, budget)`; `calls` lists every call made (failed ones included);
    `count_supported` is None until `count` was tried, then whether the server has the
    count_tokens endpoint. The SDK client is created at the first request.
    """

    def __init__(self, cfg: Config, budget: Budget) -> None:
        self.cfg = cfg
        self.budget = budget
        self.model = cfg.str("anthropic.model")
        self.calls: list[dict[str, Any]] = []
        self.count_supported: bool | None = None
        self.scale = 1.0
        """Factor from the local token estimate to the server's count (see `count`)."""
        self._ignored_tool = 0
        self._client: Any = None
        self.deadline = CallDeadline(
            cfg.float("anthropic.call_deadline_seconds"), cfg.float("anthropic.timeout_seconds")
        )

    @property
    def base(self) -> str:
        """The server as messages name it: `anthropic.base_url`, or "the Messages API"."""
        return self.cfg.str("anthropic.base_url").strip() or "the Messages API"

    def close(self) -> None:
        """Release the HTTP client (if one was created)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def _ensure(self) -> Any:
        if self._client is None:
            problem = anthropic_problem() or missing_key(self.cfg)
            if problem is not None:
                raise problem
            import anthropic  # optional: the anthropic extra may not be installed

            retries = self.cfg.int("anthropic.max_retries")
            base_url = self.cfg.str("anthropic.base_url").strip() or None
            self._client = anthropic.Anthropic(
                **credentials(self.cfg),
                base_url=base_url,
                max_retries=retries,
                timeout=self.deadline.timeout,
                middleware=[
                    RetryWaitCap(self.cfg.float("anthropic.max_retry_wait_seconds"), retries, self.deadline),
                    self.deadline,
                ],
            )
        return self._client

    def count(
        self, *, system: str, tools: list[dict[str, Any]], tool: str, messages: list[dict[str, Any]]
    ) -> int | None:
        """Input tokens of this request as the server counts them (`count_tokens`), or
        None when the server has no such endpoint (remembered: it is not asked again) or
        the count failed — then the caller keeps its estimate. Not a model call: not in
        `calls`, not against `max_calls_per_run`; no retries."""
        if self.count_supported is False:
            return None
        client = self._ensure()
        import anthropic  # optional: the anthropic extra may not be installed

        self.deadline.start()
        try:
            counted = client.with_options(max_retries=0).messages.count_tokens(
                model=self.model,
                system=[{"type": "text", "text": system}],
                tools=tools,
                tool_choice={"type": "tool", "name": tool},
                messages=messages,
            )
        except anthropic.APIStatusError as exc:
            if exc.status_code in NO_COUNT_STATUSES:
                self.count_supported = False
            return None
        except (anthropic.AnthropicError, ValueError, RetryWaitExceeded, DeadlinePassed):
            return None
        finally:
            self.deadline.stop()
        value = getattr(counted, "input_tokens", None)
        if not isinstance(value, int) or value <= 0:
            self.count_supported = False
            return None
        self.count_supported = True
        return value

    def call(
        self,
        purpose: str,
        *,
        system: str,
        tools: list[dict[str, Any]],
        tool: str,
        messages: list[dict[str, Any]],
        max_tokens: int,
        extra: dict[str, Any] | None = None,
    ) -> Answer:
        """One streamed Messages call with a forced tool. Records it in `calls`; raises
        BudgetExceeded before sending when a budget would be passed, ApiCallFailed when
        the call fails, ServerCannot when the server lacks tools or a forced tool_choice
        (module docstring)."""
        estimated = round(request_tokens(system, tools, messages) * self.scale)
        self.budget.check(purpose, estimated + max_tokens)
        client = self._ensure()
        record: dict[str, Any] = {
            "purpose": purpose,
            "model": self.model,
            "input_tokens": 0,
            "output_tokens": 0,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "stop_reason": None,
            "latency_seconds": 0.0,
            "error": None,
            **(extra or {}),
        }
        answer = Answer()
        started = time.monotonic()
        began = False  # the server answered 200 and the stream started
        self.deadline.start()
        try:
            stream = client.messages.create(
                model=self.model,
                max_tokens=max_tokens,
                system=[{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
                tools=tools,
                tool_choice={"type": "tool", "name": tool},
                messages=messages,
                stream=True,
            )
            began = True
            with stream:
                _accumulate(stream, answer, max_tokens)
        except Exception as exc:
            error = self._translate(exc, tool, began=began)
            if error is None:
                raise  # not an API, network or stream failure: a bug, let it show
            record["error"] = error.message
            raise error from None
        else:
            if answer.stop_reason is None:
                record["error"] = "the response ended without a stop_reason"
                raise ApiCallFailed(
                    f"the Messages API's {purpose} response ended without a stop_reason "
                    f"({'a broken stream' if not answer.complete else 'an incomplete response'}); "
                    "nothing of it was used",
                    hint="run again later; if it persists, check the server behind anthropic.base_url",
                ) from None
            if answer.ignored_tool():
                self._ignored_tool += 1
                if self._ignored_tool >= 2:
                    record["error"] = "the answer did not call the forced tool"
                    raise ServerCannot(
                        f"{self.base} answered twice without calling the tool {tool!r} that the request "
                        'forced (tool_choice {"type": "tool"}): it does not support a forced tool_choice, '
                        "which the anthropic engine needs for structured answers",
                        hint="use a server (or model) with tool use and forced tool_choice, or --engine offline",
                    ) from None
            else:
                self._ignored_tool = 0
            return answer
        finally:
            self.deadline.stop()
            record["latency_seconds"] = round(time.monotonic() - started, 3)
            if answer.model:
                record["model"] = answer.model
            record.update(answer.usage)
            record["stop_reason"] = answer.stop_reason
            self.calls.append(record)
            self.budget.record(record)

    def _translate(self, exc: BaseException, tool: str, *, began: bool = False) -> EngineError | None:
        """The EngineError for an SDK, network or stream failure (the SDK's
        own exception types: APIStatusError, APIConnectionError, APITimeoutError), or None for
        an exception that is none of them. `began`: the server had answered and its stream
        had started, so a connection error is a stream that broke off, not a server out of
        reach. Newer SDK releases (2.17) wrap an error raised while a stream is read, even
        gitdream's own DeadlinePassed, in APIConnectionError: the cause is what happened."""
        import anthropic  # optional: the anthropic extra may not be installed
        import httpx2  # optional: the anthropic extra may not be installed

        if isinstance(exc, anthropic.APIConnectionError) and not isinstance(exc, anthropic.APITimeoutError):
            cause = exc.__cause__
            if isinstance(cause, DeadlinePassed | RetryWaitExceeded | MalformedAnswer):
                return self._translate(cause, tool, began=began)
            if began and isinstance(cause, httpx2.TimeoutException):
                return self._translate(cause, tool, began=began)
            if began and isinstance(cause, httpx2.HTTPError):
                return self._translate(cause, tool, began=began)

        base = self.base
        retries = self.cfg.int("anthropic.max_retries")
        tried = f"after {retries} {'retry' if retries == 1 else 'retries'}"
        if isinstance(exc, RetryWaitExceeded):
            return ApiCallFailed(
                f"{base} {exc.what} and the next retry would wait {exc.wait:g} s, which would pass "
                f"anthropic.max_retry_wait_seconds = {exc.cap:g} (already waited {exc.waited:g} s)",
                hint="run again later; raise anthropic.max_retry_wait_seconds to wait longer within one run",
            )
        if isinstance(exc, DeadlinePassed):
            why = exc.why or "the connection stayed open, but the answer did not complete"
            return ApiCallFailed(
                f"{base} did not finish the call within anthropic.call_deadline_seconds = {exc.seconds:g} s "
                f"({why}); nothing of it was used",
                hint="run again later; for a slow server (a local model) raise anthropic.call_deadline_seconds",
            )
        if isinstance(exc, anthropic.APIStatusError):
            status = exc.status_code
            detail = exc.api_message or (exc.type or "")
            kind = str(exc.type or "")
            if status == 200:
                return ApiCallFailed(
                    f"the response stream from {base} reported an error ({kind or 'error'}: {detail}); "
                    "nothing of it was used",
                    hint="run again later",
                )
            if status == 429:
                return ApiCallFailed(
                    f"{base} answered 429 (rate limited) {tried}: {detail}",
                    hint="run again later; lower the load on this API key, or raise anthropic.max_retries",
                )
            if status == 529 or kind == "overloaded_error":
                return ApiCallFailed(
                    f"{base} answered {status} (overloaded) {tried}: {detail}",
                    hint="the API is overloaded; run again later",
                )
            if status == 401:
                return ApiCallFailed(
                    f"{base} refused the API key (401): {detail}",
                    hint="check ANTHROPIC_API_KEY or anthropic.api_key",
                )
            if status == 403:
                return ApiCallFailed(
                    f"{base} denied the request (403): {detail}",
                    hint="check that the API key may use anthropic.model",
                )
            if status == 404:
                return ApiCallFailed(
                    f"{base} answered 404: {detail}",
                    hint=f"check anthropic.model ({self.model!r}) and anthropic.base_url (a server must serve /v1/messages)",
                )
            capability = _CAPABILITY.search(detail or "")
            if status in (400, 422) and capability is not None:
                missing = "a forced tool_choice" if "choice" in capability.group(0).lower() else "tools"
                return ServerCannot(
                    f"{base} rejected the request ({status}) over {capability.group(0)}: {detail}; it does not "
                    f"support {missing}, which the anthropic engine needs (it forces a call of the tool {tool!r})",
                    hint="use a server (or model) with tool use and forced tool_choice, or --engine offline",
                )
            if status in (400, 413, 422):
                return ApiCallFailed(
                    f"{base} rejected the request ({status}): {detail}",
                    hint="check anthropic.model and anthropic.max_tokens; lower anthropic.max_input_tokens "
                    "if the request is too large",
                )
            return ApiCallFailed(
                f"{base} answered {status} {tried}: {detail}",
                hint="run again later",
            )
        if isinstance(exc, anthropic.APITimeoutError | httpx2.TimeoutException):
            left = self.deadline.left()
            if left is not None and left <= DEADLINE_SLACK_SECONDS:  # a read clamped to the deadline
                return self._translate(DeadlinePassed(self.deadline.seconds), tool)
            return ApiCallFailed(
                f"{base} did not answer within anthropic.timeout_seconds = "
                f"{self.cfg.float('anthropic.timeout_seconds'):g} s ({tried if isinstance(exc, anthropic.APIError) else 'mid-stream'})",
                hint="run again later, or raise anthropic.timeout_seconds",
            )
        if isinstance(exc, anthropic.APIConnectionError):
            cause = exc.__cause__
            return ApiCallFailed(
                f"cannot reach {base} {tried}: {cause or exc.message}",
                hint="check the network, and ANTHROPIC_BASE_URL / anthropic.base_url",
            )
        if isinstance(exc, httpx2.HTTPError):
            return ApiCallFailed(
                f"the response stream from {base} broke off ({type(exc).__name__}: {exc}); nothing of it was used",
                hint="run again later",
            )
        if isinstance(exc, MalformedAnswer):
            return ApiCallFailed(
                f"the response from {base} could not be used: {exc}; nothing of it was used",
                hint="run again later; if it persists, check the server behind anthropic.base_url "
                "(it must speak the Messages API and honour max_tokens)",
            )
        if isinstance(exc, anthropic.AnthropicError | ValueError):
            return ApiCallFailed(
                f"the response from {base} could not be read ({type(exc).__name__}: {exc})",
                hint="run again later; if it persists, check the server behind anthropic.base_url",
            )
        return None


ANSWER_BYTES_PER_TOKEN = 32
"""The most UTF-8 bytes of streamed text or tool-input JSON one output token may carry
(about eight times what a token holds, with room for JSON escapes): an answer longer
than `max_tokens` × this is one no model wrote within `max_tokens`, and is refused."""


class MalformedAnswer(ValueError):
    """A stream whose events do not have the Messages API's shapes, or an answer longer
    than its `max_tokens` allows (`_accumulate`)."""


def _accumulate(stream: Iterable[Any], answer: Answer, max_tokens: int) -> None:
    """Fill `answer` from the stream's events (message_start, content_block_*,
    message_delta, message_stop). Tool input JSON is parsed only when the stream is over.

    Text and JSON deltas are collected as parts and joined once (a long answer costs
    linear time), and reading stops with MalformedAnswer once they pass
    `max_tokens` × ANSWER_BYTES_PER_TOKEN bytes — a server that ignores `max_tokens`
    cannot make a run read for minutes — or when an event lacks the fields its type has.
    """
    limit = max_tokens * ANSWER_BYTES_PER_TOKEN
    size = 0
    parts: list[tuple[list[str], list[str]]] = []  # per block: text deltas, JSON deltas
    started = False
    try:
        for event in stream:
            kind = getattr(event, "type", None)
            if kind == "message_start":
                started = True
                answer.model = str(getattr(event.message, "model", "") or "")
                answer.usage = _usage(event.message.usage, {})
            elif not started:
                continue
            elif kind == "content_block_start":
                block = event.content_block
                answer.blocks.append(
                    Block(
                        type=str(block.type),
                        id=str(getattr(block, "id", "") or ""),
                        name=str(getattr(block, "name", "") or ""),
                        text=str(getattr(block, "text", "") or ""),
                        input=getattr(block, "input", None),
                    )
                )
                parts.append(([], []))
            elif kind == "content_block_delta" and 0 <= event.index < len(answer.blocks):
                delta = event.delta
                is_json = delta.type == "input_json_delta"
                piece = delta.partial_json if is_json else delta.text if delta.type == "text_delta" else None
                if isinstance(piece, str):
                    size += len(piece.encode("utf-8"))
                    if size > limit:
                        raise MalformedAnswer(
                            f"the answer is longer than max_tokens = {max_tokens} allows "
                            f"(over {limit:,} bytes); reading stopped"
                        )
                    parts[event.index][1 if is_json else 0].append(piece)
            elif kind == "message_delta":
                answer.stop_reason = event.delta.stop_reason
                answer.usage = _usage(event.usage, answer.usage)
            elif kind == "message_stop":
                answer.complete = True
    except (AttributeError, TypeError, KeyError, IndexError) as exc:
        raise MalformedAnswer(f"an event of the stream is not shaped as the Messages API's ({exc})") from None
    for block, (texts, jsons) in zip(answer.blocks, parts, strict=True):
        block.text += "".join(texts)
        block.json = "".join(jsons)
    for block in answer.blocks:
        if block.type == "tool_use" and block.json:
            try:
                block.input = json.loads(block.json)
            except ValueError as exc:
                block.input = InvalidJson(str(exc))
        if block.type == "tool_use" and not isinstance(block.input, InvalidJson):
            block.input = _scrubbed(block.input)
        block.text = scrub(block.text)


def _scrubbed(value: Any) -> Any:
    """`value` (parsed JSON) with every string made valid, NUL-free text (`decode.scrub`):
    a model can answer `\\ud800` or `\\u0000`, which no file or note may hold."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list):
        return [_scrubbed(v) for v in value]
    if isinstance(value, dict):
        return {scrub(str(k)): _scrubbed(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class InvalidJson:
    """A tool input that was not valid JSON (`error` says why)."""

    error: str


def _usage(usage: Any, previous: dict[str, int]) -> dict[str, int]:
    """Token counts from a usage object; message_delta counts are cumulative and
    optional (a missing one keeps the message_start value)."""
    merged = dict(previous)
    for name in ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
        value = getattr(usage, name, None)
        if value is not None:
            merged[name] = int(value)
    return merged
