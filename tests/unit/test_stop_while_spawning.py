"""A stop signal that arrives while the node's thread is between starting a
command and registering it: the command started before the stop, so it gets
the stop's signal and its grace to clean up, as a registered one does, not
the SIGKILL meant for a command started after the stop.  On a loaded
machine the coder could start, and say so, before stepkit's thread had
registered it (tests/e2e/test_signals_term_hup.py's grace test failed that
way about once in eight runs under load), and before the main thread had
even come back from starting the node's thread."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from stepkit.engine.interrupts import call_with_timeout, stop_signals
from stepkit.records import StageContext
from stepkit.workspace import process, supervision
from tests.support.coder import make_ctx
from tests.support.e2e import PY, sh

#: cleans up (0.2 s, then a file) on SIGTERM; says it started once its handler
#: is set; ends by itself once its parent (this test's process) is gone
TIDY = (
    "import os, signal, sys, time\n"
    "def tidy(signum, frame):\n"
    "    time.sleep(0.2)\n"
    "    open('cleaned_up', 'w').write('yes')\n"
    "    sys.exit(0)\n"
    "signal.signal(signal.SIGTERM, tidy)\n"
    "parent = os.getppid()\n"
    "open('started', 'w').write(str(os.getpid()))\n"
    "while os.getppid() == parent:\n"
    "    time.sleep(0.01)\n"
)
#: a bound on each wait below, so that a failure ends the test instead of hanging it
_BOUND_S = 60.0


class _Watched:
    """``SPAWNING``, noting when the main thread asks for it: a stop signal's
    handling takes it before it sets ``stopping`` (the stop is taken), and
    the main thread takes it nowhere before that."""

    def __init__(self, lock: threading.RLock, asked: threading.Event) -> None:
        self.lock = lock
        self.asked = asked

    def __enter__(self) -> None:
        if threading.current_thread() is threading.main_thread():
            self.asked.set()
        self.lock.__enter__()

    def __exit__(self, *exc: object) -> None:
        self.lock.__exit__(*exc)


def _stop_while_registering(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, send: Callable[[], None]
) -> None:
    """Run a node whose command is held between its start and its
    registration: once the command has started, ``send`` sends the stop
    signal, and the registration waits until the stop is taken."""
    (tmp_path / "tidy.py").write_text(TIDY)
    ctx = make_ctx(tmp_path)
    started = tmp_path / "started"
    taken = threading.Event()
    real_register = supervision.register

    def late_register(token: str, group: int | None) -> None:
        while not started.exists():  # the command set its handler
            threading.Event().wait(0.01)
        send()
        taken.wait(_BOUND_S)
        real_register(token, group)

    monkeypatch.setattr(supervision, "SPAWNING", _Watched(supervision.SPAWNING, taken))
    monkeypatch.setattr(supervision, "register", late_register)

    def node(ctx: StageContext) -> object:
        return process.run(f"exec {sh(PY)} tidy.py", cwd=tmp_path, timeout=_BOUND_S)

    try:
        with pytest.raises(KeyboardInterrupt), stop_signals():
            call_with_timeout(node, ctx, _BOUND_S, "implement")
    finally:
        taken.set()  # a stop that never took SPAWNING: let the node's thread go on
    assert (tmp_path / "cleaned_up").read_text() == "yes"


def test_a_command_registered_after_the_stop_began_still_gets_its_grace(tmp_path, monkeypatch):
    _stop_while_registering(tmp_path, monkeypatch, lambda: os.kill(os.getpid(), signal.SIGTERM))


def _slow_to_return(monkeypatch: pytest.MonkeyPatch, then: Callable[[], None]) -> None:
    """The main thread, having started the node's thread, does not come back
    (a loaded machine did not run it) until a stop signal's handler raises
    there; ``then`` runs first, in the main thread."""
    real_thread = threading.Thread

    class SlowToReturn(real_thread):
        def start(self) -> None:
            super().start()
            if self.name == "stepkit-implement":
                then()
                threading.Event().wait(_BOUND_S)  # never set: only the handler ends it

    monkeypatch.setattr(threading, "Thread", SlowToReturn)


def test_a_stop_while_the_node_thread_is_being_started_still_gives_the_grace(tmp_path, monkeypatch):
    _slow_to_return(monkeypatch, lambda: None)
    main = threading.main_thread().ident
    assert main is not None
    _stop_while_registering(
        tmp_path, monkeypatch, lambda: signal.pthread_kill(main, signal.SIGTERM)
    )


def test_a_command_the_node_would_start_after_such_a_stop_is_refused(tmp_path, monkeypatch):
    (tmp_path / "tidy.py").write_text(TIDY)
    _slow_to_return(monkeypatch, lambda: os.kill(os.getpid(), signal.SIGTERM))
    results: list[process.ProcessResult] = []
    give_up, ended = threading.Event(), threading.Event()

    def node(ctx: StageContext) -> None:
        watch = supervision.current()
        assert watch is not None
        try:
            # the command comes after the stop was taken; set before give_up, if ever
            while not watch.stopping and not give_up.is_set():
                give_up.wait(0.01)
            if watch.stopping:
                results.append(
                    process.run(f"exec {sh(PY)} tidy.py", cwd=tmp_path, timeout=_BOUND_S)
                )
        finally:
            ended.set()

    try:
        with pytest.raises(KeyboardInterrupt), stop_signals():
            call_with_timeout(node, make_ctx(tmp_path), _BOUND_S, "implement")
    finally:
        give_up.set()  # a stop that was never taken: the node stops waiting for it
    assert ended.wait(_BOUND_S)
    assert [result.start_error for result in results] == [process.STOPPING]
    assert not (tmp_path / "started").exists()
