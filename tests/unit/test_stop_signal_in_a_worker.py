"""A stop signal the kernel hands to a worker thread (any thread that does
not block it may take a process's signal) still stops the node: the main
thread, waiting on the node, runs the noted handler within its next check."""

from __future__ import annotations

import signal
import threading

import pytest

from stepkit.engine.interrupts import StopSignal, call_with_timeout, stop_signals
from stepkit.records import StageContext
from tests.support.coder import make_ctx
from tests.support.waiting import SAFETY_S


def test_a_stop_signal_taken_by_the_nodes_thread_stops_the_node(tmp_path):
    ctx = make_ctx(tmp_path)
    released = threading.Event()
    ended: dict[str, bool] = {}

    def node(ctx: StageContext) -> None:
        signal.pthread_kill(threading.get_ident(), signal.SIGTERM)  # this thread takes it
        # released by the test once the stop reached the main thread; on its own only after SAFETY_S
        ended["on_its_own"] = not released.wait(SAFETY_S)

    with stop_signals(), pytest.raises(StopSignal):
        call_with_timeout(node, ctx, SAFETY_S * 2, "implement")
    released.set()
    worker = next(t for t in threading.enumerate() if t.name == "stepkit-implement")
    worker.join(SAFETY_S)
    assert ended == {"on_its_own": False}  # the stop came while the node still waited
