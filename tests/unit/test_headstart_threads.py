"""The head start's thread and the verify's, where they meet
(:mod:`stepkit.workspace.headstart`): each interleaving is forced here by
holding one side at the point where the other one acts."""

from __future__ import annotations

import os
import signal
import subprocess

from stepkit.workspace import headstart, supervision


def _started(argv: str) -> headstart.Launched:
    """A gate the head start started, as its thread leaves one (its output read, registered)."""
    launched = headstart.Launched({"kind": "gate", "argv": argv})
    launched.token = supervision.new_token()
    launched.since = supervision.mark()
    launched.proc = subprocess.Popen(
        argv, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    launched.group = launched.proc.pid
    supervision.register(launched.token, launched.group)
    launched.reader = headstart.Feed(launched.proc.stdout)
    launched.reader.start()
    return launched


def test_a_gate_found_gone_while_it_is_being_stopped_is_stopped_once(monkeypatch) -> None:
    """Cancelling kills the gate's group and reaps it; the head start's
    thread, woken by the leader's exit, finds the group empty and forgets it
    (``group = None``) while the cancelling thread is still reaping."""
    reap = os.waitpid

    def reaped_then_found_empty(pid: int, options: int) -> tuple[int, int]:
        done = reap(pid, options)
        if pid < 0:  # the group's other members: the leader is reaped, the group empty now
            launched.group = None  # what _finish_gate does then
        return done

    with supervision.SUBREAPER:  # as the head start is: the killed shell's child is handed to it
        launched = _started("sleep 60 & wait")
        group = launched.group
        monkeypatch.setattr(os, "waitpid", reaped_then_found_empty)
        headstart.HeadStart([], None, "")._stop(launched)
    assert launched.proc is not None and launched.proc.returncode == -signal.SIGKILL
    assert group not in supervision.live_groups()
