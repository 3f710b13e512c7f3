"""A loopback OpenAI Responses API answering with server-sent events, as
Codex sends its requests, for the opt-in tests that run the real ``codex``
CLI.  Replies are served in the order queued (the last one is repeated);
every request body is kept.  :func:`codex_home` writes a Codex home whose
``config.toml`` points Codex at the server."""

from __future__ import annotations

import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

API_KEY = "sk-test-0123456789abcdefLOOPBACK"
USAGE = {"input_tokens": 1500, "input_tokens_details": {"cached_tokens": 400}, "output_tokens": 90,
         "output_tokens_details": {"reasoning_tokens": 30}, "total_tokens": 1590}


class SSEResponsesAPI:
    """The scripted streaming server."""

    api_key = API_KEY

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._replies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def reply_text(self, text: str) -> None:
        """Queue a final assistant message."""
        self._replies.append({"type": "message", "role": "assistant", "status": "completed",
                              "content": [{"type": "output_text", "text": text, "annotations": []}]})

    def reply_json(self, answer: dict[str, Any]) -> None:
        self.reply_text(json.dumps(answer))

    def _next(self) -> dict[str, Any]:
        with self._lock:
            return self._replies.pop(0) if len(self._replies) > 1 else self._replies[0]

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # the model list Codex refreshes
                raw = json.dumps({"object": "list", "data": [], "models": []}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_POST(self) -> None:
                api.requests.append(json.loads(self.rfile.read(int(self.headers.get("content-length") or 0))
                                               or b"{}"))
                n = next(api._ids)
                item = {**api._next(), "id": f"msg_{n}"}
                response = {"id": f"resp_{n}", "object": "response", "status": "in_progress", "output": []}
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                self._event({"type": "response.created", "response": response})
                self._event({"type": "response.output_item.added", "output_index": 0,
                             "item": {**item, "content": [], "status": "in_progress"}})
                self._event({"type": "response.output_item.done", "output_index": 0, "item": item})
                self._event({"type": "response.completed", "response": {
                    **response, "status": "completed", "output": [item], "usage": USAGE}})
                self.close_connection = True

            def _event(self, data: dict[str, Any]) -> None:
                self.wfile.write(f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


def codex_home(path: Path, api: SSEResponsesAPI, model: str = "gpt-5.5") -> Path:
    """A Codex home whose ``config.toml`` makes the server its model provider
    (its key read from ``OPENAI_API_KEY``)."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.toml").write_text(
        f'model_provider = "loopback"\nmodel = "{model}"\n\n[model_providers.loopback]\n'
        f'name = "loopback"\nbase_url = "{api.base_url}"\nenv_key = "OPENAI_API_KEY"\n'
        'wire_api = "responses"\n')
    return path
