"""A loopback Anthropic Messages API that answers ``"stream": true``
requests with server-sent events, as Claude Code sends them, for the
opt-in tests that run the real ``claude`` CLI.  Replies are served in the
order queued (the last one is repeated); every request body is kept::

    with SSEMessagesAPI() as api:
        api.reply_tool("StructuredOutput", {"answer": 1})
        api.reply_text("done")
        ... ANTHROPIC_BASE_URL=api.base_url ...
        api.requests[1]["messages"]
"""

from __future__ import annotations

import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

API_KEY = "sk-ant-test-0123456789abcdefLOOPBACK"
USAGE = {"input_tokens": 1200, "output_tokens": 80, "cache_creation_input_tokens": 0,
         "cache_read_input_tokens": 300}


class SSEMessagesAPI:
    """The scripted streaming server."""

    api_key = API_KEY

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._replies: list[list[dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def reply_text(self, text: str) -> None:
        self._replies.append([{"type": "text", "text": text}])

    def reply_tool(self, name: str, args: dict[str, Any]) -> None:
        self._replies.append([{"type": "tool_use", "id": f"toolu_{next(self._ids):04d}", "name": name,
                               "input": args}])

    def tool_results(self, index: int) -> list[dict[str, Any]]:
        """The tool_result blocks of the last message of request ``index``."""
        content = self.requests[index]["messages"][-1]["content"]
        return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]

    def _next(self) -> list[dict[str, Any]]:
        with self._lock:
            return self._replies.pop(0) if len(self._replies) > 1 else self._replies[0]

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
                if "count_tokens" in self.path:
                    return self._json({"input_tokens": 100})
                api.requests.append(body)
                content = api._next()
                stop = "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn"
                message = {"id": f"msg_{next(api._ids):04d}", "type": "message", "role": "assistant",
                           "model": body.get("model", "claude-test"), "content": [], "stop_reason": None,
                           "stop_sequence": None, "usage": {**USAGE, "output_tokens": 1}}
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                self._event("message_start", {"message": message})
                for i, block in enumerate(content):
                    if block["type"] == "text":
                        start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
                    else:
                        start = {**block, "input": {}}
                        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
                    self._event("content_block_start", {"index": i, "content_block": start})
                    self._event("content_block_delta", {"index": i, "delta": delta})
                    self._event("content_block_stop", {"index": i})
                self._event("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None},
                                              "usage": {"output_tokens": USAGE["output_tokens"]}})
                self._event("message_stop", {})
                self.close_connection = True

            def _event(self, name: str, data: dict[str, Any]) -> None:
                self.wfile.write(f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode())
                self.wfile.flush()

            def _json(self, data: dict[str, Any]) -> None:
                raw = json.dumps(data).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler
