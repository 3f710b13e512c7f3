"""A loopback server speaking the Anthropic Messages API, for tests.

The real ``anthropic`` SDK talks to it over HTTP on 127.0.0.1, so the code
under test runs unchanged.  Use it through the ``messages_api`` fixture::

    pytest_plugins = ["tests.support.messages_api"]

    def test_x(messages_api):
        messages_api.reply_json({"answer": 1})          # a final JSON answer
        messages_api.reply_tool("read_file", {"path": "a.py"})
        messages_api.error(529, "overloaded_error", headers={"retry-after": "0.2"})
        ...
        assert messages_api.requests[0].body["model"] == "..."

Responses are served in the order queued; ``always=True`` keeps one
serving forever.  When nothing is queued the server answers 400
``invalid_request_error`` ("no response queued"), which the SDK does not
retry, so a missing script fails the test at once.  The fixture sets
``ANTHROPIC_BASE_URL`` and a fake ``ANTHROPIC_API_KEY`` (``messages_api.api_key``).

A request with ``"stream": true`` gets its 200 message as server-sent events
(``message_start`` … ``message_stop``), as the real API streams it; errors
stay JSON.  ``responder`` (request body -> Scripted or None) answers before
the queue: a coding CLI's side requests (titles, summaries) can be answered
without spending the scripted turns.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from tests.support.loopback import LoopbackServer

API_KEY = "sk-ant-test-0123456789abcdefLOOPBACK"


@dataclass
class Recorded:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    raw: bytes
    at: float
    peer: tuple[str, int]  #: the client's address: one connection, one peer


@dataclass
class Scripted:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    always: bool = False
    delay_s: float = 0.0


class MessagesAPI(LoopbackServer):
    """The scripted server: queue responses, read the recorded requests."""

    api_key = API_KEY

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        #: the body of the response each request got, in order (a benchmark bills its output)
        self.served: list[dict[str, Any]] = []
        self._queue: list[Scripted] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        #: answers a request before the queue when it returns a response
        self.responder: Callable[[dict[str, Any]], Scripted | None] | None = None
        super().__init__()

    # -- scripting ---------------------------------------------------------

    def respond(
        self,
        status: int,
        body: dict[str, Any],
        headers: dict[str, str] | None = None,
        always: bool = False,
        delay_s: float = 0.0,
    ) -> None:
        """Queue a raw response; ``delay_s`` makes the server slow (for client timeouts)."""
        with self._lock:
            self._queue.append(Scripted(status, body, headers or {}, always, delay_s))

    def reply(
        self,
        content: list[dict[str, Any]],
        stop_reason: str = "end_turn",
        usage: dict[str, int] | None = None,
        model: str = "claude-test",
        delay_s: float = 0.0,
        thinking: str | None = None,
    ) -> None:
        """Queue a 200 message with these content blocks, after a thinking
        block of ``thinking`` when given (as adaptive thinking replies)."""
        if thinking is not None:
            block = {"type": "thinking", "thinking": thinking, "signature": "c2lnbmF0dXJl"}
            content = [block, *content]
        self.respond(
            200,
            {
                "id": f"msg_{next(self._ids):04d}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": content,
                "stop_reason": stop_reason,
                "stop_sequence": None,
                "usage": usage
                or {
                    "input_tokens": 100,
                    "output_tokens": 20,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                },
            },
            delay_s=delay_s,
        )

    def reply_text(self, text: str, **kwargs: Any) -> None:
        """Queue a message with one text block (e.g. malformed JSON)."""
        self.reply([{"type": "text", "text": text}], **kwargs)

    def reply_json(self, answer: dict[str, Any], **kwargs: Any) -> None:
        """Queue a final structured answer (JSON text, end_turn)."""
        self.reply_text(json.dumps(answer), **kwargs)

    def reply_tool(
        self, name: str, args: dict[str, Any], stop_reason: str = "tool_use", **kwargs: Any
    ) -> str:
        """Queue a tool call; returns its tool_use id."""
        tool_id = f"toolu_{next(self._ids):04d}"
        self.reply(
            [{"type": "tool_use", "id": tool_id, "name": name, "input": args}],
            stop_reason=stop_reason,
            **kwargs,
        )
        return tool_id

    def error(
        self,
        status: int,
        error_type: str,
        message: str = "scripted error",
        headers: dict[str, str] | None = None,
        always: bool = False,
    ) -> None:
        """Queue an API error response."""
        body = {"type": "error", "error": {"type": error_type, "message": message}}
        self.respond(status, body, headers, always)

    # -- recorded ------------------------------------------------------------

    def tool_results(self, index: int = -1) -> list[dict[str, Any]]:
        """The tool_result blocks of the last user message of request ``index``."""
        last = self.requests[index].body["messages"][-1]
        return [
            b for b in last["content"] if isinstance(b, dict) and b.get("type") == "tool_result"
        ]

    def _next(self, body: dict[str, Any]) -> Scripted:
        answer = self.responder(body) if self.responder else None
        if answer is not None:
            return answer
        with self._lock:
            if not self._queue:
                return Scripted(
                    400,
                    {
                        "type": "error",
                        "error": {
                            "type": "invalid_request_error",
                            "message": "messages_api: no response queued",
                        },
                    },
                )
            scripted = self._queue[0]
            if not scripted.always:
                self._queue.pop(0)
            return scripted

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = (
                "HTTP/1.1"  # keep-alive, as the real API: a client reuses its connection
            )

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                api.requests.append(
                    Recorded(
                        path=self.path,
                        headers={k.lower(): v for k, v in self.headers.items()},
                        body=json.loads(raw or b"{}"),
                        raw=raw,
                        at=time.monotonic(),
                        peer=self.client_address[:2],
                    )
                )
                body = api.requests[-1].body
                scripted = api._next(body)
                api.served.append(scripted.body)
                time.sleep(scripted.delay_s)
                streamed = bool(body.get("stream")) and scripted.status == 200
                if streamed:
                    data = b"".join(
                        _sse(kind, event) for kind, event in stream_events(scripted.body)
                    )
                else:
                    data = json.dumps(scripted.body).encode()
                try:
                    self.send_response(scripted.status)
                    self.send_header(
                        "content-type", "text/event-stream" if streamed else "application/json"
                    )
                    self.send_header("content-length", str(len(data)))
                    self.send_header("request-id", f"req_{len(api.requests):04d}")
                    for name, value in scripted.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its timeout): nothing to answer

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


def role_schema(body: dict[str, Any], role: str) -> dict[str, Any]:
    """The answer schema of ``role`` in a reading node's request: its field
    of the shared output format (:mod:`stepkit.plugins.stages.readers`),
    with its ``$defs`` so references inside it still resolve."""
    schema = body["output_config"]["format"]["schema"]
    field = schema["properties"][role]
    ref = next(option["$ref"] for option in field["anyOf"] if "$ref" in option)
    return {**schema["$defs"][ref.rsplit("/", 1)[1]], "$defs": schema["$defs"]}


def stream_events(message: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """A complete message as the Messages API streams it."""
    usage = message.get("usage") or {}
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {
                **message,
                "content": [],
                "stop_reason": None,
                "usage": {**usage, "output_tokens": 1},
            },
        },
    )
    for index, block in enumerate(message.get("content") or []):
        if block.get("type") == "tool_use":
            start, delta = (
                {**block, "input": {}},
                {"type": "input_json_delta", "partial_json": json.dumps(block.get("input") or {})},
            )
        else:
            start, delta = (
                {"type": "text", "text": ""},
                {"type": "text_delta", "text": block.get("text", "")},
            )
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        )
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message.get("stop_reason"), "stop_sequence": None},
            "usage": {"output_tokens": usage.get("output_tokens", 0)},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _sse(kind: str, event: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(event)}\n\n".encode()


@pytest.fixture
def messages_api(monkeypatch: pytest.MonkeyPatch):
    """A running loopback Messages API; the SDK is pointed at it."""
    with MessagesAPI() as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
        yield api
