"""Answers a process asks for once, that it may start asking ahead.

Each answer (a process started and waited for: a Python asked for its site
directories, bubblewrap tried) is computed in a thread of its own the first
time it is asked for, while the asker goes on; every later asker waits for
that one answer, or gets what it raised.  A command starts asking what its
checks will want while it reads its settings, so the wait for the process
is not in its way."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from typing import Any

_ASKED: dict[Hashable, Future[Any]] = {}
_LOCK = threading.Lock()


def asking(key: Hashable, call: Callable[[], Any], name: str) -> Future[Any]:
    """The answer of ``call`` for ``key``: started in a thread named ``name``
    the first time ``key`` is asked for in this process."""
    with _LOCK:
        future = _ASKED.get(key)
        if future is None:
            future = _ASKED[key] = beside(call, name)
    return future


def beside(call: Callable[[], Any], name: str) -> Future[Any]:
    """The answer of ``call``, computed in a thread named ``name`` while the
    caller goes on (every call starts one; nothing is kept)."""
    future: Future[Any] = Future()
    threading.Thread(target=_answer, args=(call, future), name=name, daemon=True).start()
    return future


def _answer(call: Callable[[], Any], future: Future[Any]) -> None:
    try:
        future.set_result(call())
    except BaseException as exc:  # noqa: BLE001 - the asker gets it, as its own call would raise it
        future.set_exception(exc)
