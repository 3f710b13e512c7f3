"""A loopback server speaking the OpenAI chat-completions API, for tests of
``--engine openai``: the real ``openai`` SDK talks to it over HTTP on
127.0.0.1.  Use it through the ``chat_api`` fixture::

    pytest_plugins = ["tests.support.chat_api"]

    def test_x(chat_api):
        chat_api.reply_tool("read_file", {"path": "a.py"})   # a tool call
        chat_api.reply_json({"answer": 1})                   # a final JSON answer
        chat_api.error(500, "overloaded")
        assert chat_api.requests[0]["model"] == "..."

Responses are served in the order queued; when nothing is queued the
server answers 400, which the SDK does not retry.  The fixture sets
``OPENAI_BASE_URL`` and a fake ``OPENAI_API_KEY``.
"""

from __future__ import annotations

import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from tests.support.loopback import LoopbackServer

API_KEY = "sk-test-0123456789abcdefLOOPBACK"


class ChatAPI(LoopbackServer):
    """The scripted server: queue responses, read the recorded request bodies."""

    api_root = "/v1"
    api_key = API_KEY

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._queue: list[tuple[int, dict[str, Any], dict[str, str]]] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        super().__init__()

    def respond(
        self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        """Queue a raw response."""
        with self._lock:
            self._queue.append((status, body, headers or {}))

    def reply(
        self,
        message: dict[str, Any],
        finish_reason: str = "stop",
        usage: dict[str, Any] | None = None,
    ) -> None:
        """Queue a 200 completion with this assistant message."""
        self.respond(
            200,
            {
                "id": f"chatcmpl-{next(self._ids)}",
                "object": "chat.completion",
                "created": 0,
                "model": "loopback",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": finish_reason,
                        "message": {"role": "assistant", **message},
                    }
                ],
                "usage": usage
                or {
                    "prompt_tokens": 1000,
                    "completion_tokens": 50,
                    "total_tokens": 1050,
                    "prompt_tokens_details": {"cached_tokens": 200},
                },
            },
        )

    def reply_json(self, answer: dict[str, Any], **kwargs: Any) -> None:
        """Queue a final structured answer."""
        self.reply({"content": json.dumps(answer)}, **kwargs)

    def reply_text(self, text: str, **kwargs: Any) -> None:
        self.reply({"content": text}, **kwargs)

    def reply_tool(self, name: str, args: dict[str, Any] | str) -> str:
        """Queue one tool call (``args`` a string: sent as it is); returns its id."""
        call_id = f"call_{next(self._ids)}"
        arguments = args if isinstance(args, str) else json.dumps(args)
        self.reply(
            {
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": arguments},
                    }
                ],
            },
            finish_reason="tool_calls",
        )
        return call_id

    def error(self, status: int, message: str) -> None:
        self.respond(
            status,
            {"error": {"message": message, "type": "server_error", "code": None}},
            {"x-should-retry": "false"},
        )

    def tool_messages(self, index: int = -1) -> list[dict[str, Any]]:
        """The tool messages of request ``index``."""
        return [m for m in self.requests[index]["messages"] if m["role"] == "tool"]

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                api.requests.append(json.loads(raw or b"{}"))
                api.headers.append({k.lower(): v for k, v in self.headers.items()})
                with api._lock:
                    status, body, headers = (
                        api._queue.pop(0)
                        if api._queue
                        else (400, {"error": {"message": "chat_api: no response queued"}}, {})
                    )
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


@pytest.fixture
def chat_api(monkeypatch: pytest.MonkeyPatch):
    """A running loopback chat-completions API; the SDK is pointed at it."""
    with ChatAPI() as api:
        monkeypatch.setenv("OPENAI_BASE_URL", api.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
        yield api
