"""What the loopback model APIs share: an HTTP server on 127.0.0.1 with a
free port, served on a thread while the ``with`` block lasts."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class LoopbackServer:
    """A threaded HTTP server on loopback; subclasses give the handler.

    :cvar api_root: the path a client's base URL ends in (``/v1`` for the
        OpenAI wire formats).
    """

    api_root = ""

    def __init__(self) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    @property
    def base_url(self) -> str:
        """The URL a client is pointed at."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}{self.api_root}"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
