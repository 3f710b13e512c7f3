"""A stop signal that arrives while the node's thread is between starting a
command and registering it: the command started before the stop, so it gets
the stop's signal and its grace to clean up, as a registered one does, not
the SIGKILL meant for a command started after the stop.  On a loaded
machine the coder could start, and say so, before stepkit's thread had
registered it (tests/e2e/test_signals_term_hup.py's grace test failed that
way about once in eight runs under load)."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from stepkit.engine.interrupts import call_with_timeout, stop_signals
from stepkit.records import StageContext
from stepkit.workspace import process, supervision
from tests.support.coder import make_ctx
from tests.support.e2e import PY, sh

#: cleans up (0.2 s, then a file) on SIGTERM; says it started once its handler is set
TIDY = (
    "import os, signal, sys, time\n"
    "def tidy(signum, frame):\n"
    "    time.sleep(0.2)\n"
    "    open('cleaned_up', 'w').write('yes')\n"
    "    sys.exit(0)\n"
    "signal.signal(signal.SIGTERM, tidy)\n"
    "open('started', 'w').write(str(os.getpid()))\n"
    "while True:\n"
    "    time.sleep(0.01)\n"
)


def test_a_command_registered_after_the_stop_began_still_gets_its_grace(tmp_path, monkeypatch):
    (tmp_path / "tidy.py").write_text(TIDY)
    ctx = make_ctx(tmp_path)
    started = tmp_path / "started"
    real_register = supervision.register

    def late_register(token: str, group: int | None) -> None:
        # the node's thread held up between the command's start and its registration
        # until the command said it started and the stop signal was sent
        while not started.exists():
            threading.Event().wait(0.01)
        os.kill(os.getpid(), signal.SIGTERM)
        threading.Event().wait(0.3)
        real_register(token, group)

    monkeypatch.setattr(supervision, "register", late_register)

    def node(ctx: StageContext) -> object:
        return process.run(f"exec {sh(PY)} tidy.py", cwd=tmp_path, timeout=60)

    with pytest.raises(KeyboardInterrupt), stop_signals():
        call_with_timeout(node, ctx, 60.0, "implement")
    assert (tmp_path / "cleaned_up").read_text() == "yes"
