"""A loopback server speaking the OpenAI Responses API with streaming, for tests.

Codex CLI talks to it over HTTP on 127.0.0.1 (a custom model provider whose
``base_url`` is :attr:`ResponsesAPI.base_url`), so the real tool runs
unchanged::

    with ResponsesAPI() as api:
        api.reply_call("shell", {"command": ["bash", "-lc", "pytest -q"]})
        api.reply_text("Done.\\nCODER_COMPLETE", usage={"input_tokens": 900, ...})
        api.error(500, "server_error")          # codex retries it
        ...
        assert api.requests[0].body["model"] == "..."

``POST /v1/responses`` is answered in queue order: a 200 as server-sent
events (``response.created``, ``response.output_item.added``/``done`` per
item, ``response.completed`` with the usage), an error as JSON.  When
nothing is queued the server answers 400 so a missing script fails fast.
``GET /v1/models`` lists one model.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.loopback import LoopbackServer

API_KEY = "sk-test-0123456789abcdefLOOPBACK"

DEFAULT_USAGE = {
    "input_tokens": 100,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 20,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 120,
}


@dataclass
class Recorded:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class Scripted:
    status: int
    #: a 200: the output items and usage of the response; an error: its JSON body
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


class ResponsesAPI(LoopbackServer):
    """The scripted server: queue responses, read the recorded requests."""

    api_root = "/v1"
    api_key = API_KEY

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._queue: list[Scripted] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        super().__init__()

    # -- scripting ---------------------------------------------------------

    def reply(
        self,
        output: list[dict[str, Any]],
        usage: dict[str, Any] | None = None,
        delay_s: float = 0.0,
    ) -> None:
        """Queue a completed response with these output items (``delay_s``: a slow server)."""
        with self._lock:
            self._queue.append(
                Scripted(200, {"output": output, "usage": usage or DEFAULT_USAGE}, delay_s=delay_s)
            )

    def reply_text(
        self, text: str, usage: dict[str, Any] | None = None, delay_s: float = 0.0
    ) -> None:
        """Queue an assistant message."""
        self.reply(
            [
                {
                    "type": "message",
                    "id": f"msg_{next(self._ids):04d}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}],
                }
            ],
            usage,
            delay_s,
        )

    def reply_call(
        self, name: str, args: dict[str, Any], usage: dict[str, Any] | None = None
    ) -> str:
        """Queue a function call; returns its call id."""
        call_id = f"call_{next(self._ids):04d}"
        self.reply(
            [
                {
                    "type": "function_call",
                    "id": f"fc_{call_id}",
                    "call_id": call_id,
                    "name": name,
                    "arguments": json.dumps(args),
                    "status": "completed",
                }
            ],
            usage,
        )
        return call_id

    def reply_custom(self, name: str, text: str, usage: dict[str, Any] | None = None) -> str:
        """Queue a freeform tool call (codex's ``apply_patch``); returns its call id."""
        call_id = f"call_{next(self._ids):04d}"
        self.reply(
            [
                {
                    "type": "custom_tool_call",
                    "id": f"ctc_{call_id}",
                    "call_id": call_id,
                    "name": name,
                    "input": text,
                    "status": "completed",
                }
            ],
            usage,
        )
        return call_id

    def error(
        self, status: int, code: str = "server_error", message: str = "scripted error"
    ) -> None:
        """Queue an API error response."""
        with self._lock:
            self._queue.append(
                Scripted(status, {"error": {"type": code, "code": code, "message": message}})
            )

    def _next(self) -> Scripted:
        with self._lock:
            if not self._queue:
                return Scripted(
                    400,
                    {
                        "error": {
                            "type": "invalid_request_error",
                            "message": "openai_api: no response queued",
                        }
                    },
                )
            return self._queue.pop(0)

    def _events(self, scripted: Scripted, model: str) -> bytes:
        response_id = f"resp_{next(self._ids):04d}"
        base = {
            "id": response_id,
            "object": "response",
            "created_at": int(time.time()),
            "model": model,
            "status": "in_progress",
            "output": [],
        }
        events: list[dict[str, Any]] = [{"type": "response.created", "response": base}]
        for index, item in enumerate(scripted.body["output"]):
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": item}
            )
            if item["type"] == "message":
                for part in item["content"]:
                    events.append(
                        {
                            "type": "response.output_text.delta",
                            "output_index": index,
                            "item_id": item["id"],
                            "content_index": 0,
                            "delta": part["text"],
                        }
                    )
            events.append(
                {"type": "response.output_item.done", "output_index": index, "item": item}
            )
        events.append(
            {
                "type": "response.completed",
                "response": {
                    **base,
                    "status": "completed",
                    "output": scripted.body["output"],
                    "usage": scripted.body["usage"],
                },
            }
        )
        return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _send(self, status: int, content_type: str, data: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("content-type", content_type)
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self) -> None:
                api.requests.append(Recorded("GET", self.path, dict(self.headers), {}))
                if self.path.rstrip("/").endswith("/models"):
                    body = {"object": "list", "data": [{"id": "gpt-test", "object": "model"}]}
                    self._send(200, "application/json", json.dumps(body).encode())
                else:
                    self._send(404, "application/json", b'{"error":{"message":"not found"}}')

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:  # e.g. a compressed body
                    body = {}
                api.requests.append(
                    Recorded(
                        "POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body
                    )
                )
                scripted = api._next()
                time.sleep(scripted.delay_s)
                if scripted.status == 200:
                    self._send(
                        200, "text/event-stream", api._events(scripted, str(body.get("model")))
                    )
                else:
                    self._send(
                        scripted.status, "application/json", json.dumps(scripted.body).encode()
                    )

            def log_message(self, *args: Any) -> None:
                pass

        return Handler
