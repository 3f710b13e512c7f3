"""A command that registers as its supervision is being stopped (the
child already running, the parent thread not yet through its registration)
is killed then, not left for a stop that already passed it by."""

from __future__ import annotations

import subprocess

from stepkit.workspace import supervision
from tests.support.crash import wait_until_gone


def test_a_command_registered_after_its_supervision_stopped_is_killed():
    child = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        watch = supervision.Supervision()
        with supervision.supervised(watch):
            watch.stop()  # the stop finds no group yet
            supervision.register("late", child.pid)
            supervision.unregister("late")
        child.wait(timeout=60)
        assert not wait_until_gone([child.pid])
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
