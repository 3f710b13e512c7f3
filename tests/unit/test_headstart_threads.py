"""The head start's thread and the verify's, where they meet
(:mod:`stepkit.workspace.headstart`): each interleaving is forced here by
holding one side at the point where the other one acts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any

from stepkit.workspace import headstart, supervision
from tests.support.e2e import sh
from tests.support.gitrepo import init_repo


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


def _recorded(kind: str, argv: list[str] | str, cwd: Path, **env: str) -> dict[str, Any]:
    """An item as a record keeps it (its environment: what differs from this process's)."""
    return {
        "kind": kind,
        "argv": argv,
        "shell": isinstance(argv, str),
        "cwd": str(cwd),
        "stdin": None,
        "unset": [],
        "set": env,
    }


def _as_spawned(item: dict[str, Any]) -> dict[str, Any]:
    """The same item as the verify offers it (:func:`headstart.take`)."""
    keep = {k: v for k, v in item.items() if k not in ("unset", "set")}
    return {**keep, "env": headstart._env(item)}


def test_the_reads_before_a_gate_start_together(tmp_path: Path) -> None:
    """``git status`` is recorded after ``git ls-files``; the head start
    starts it while ``ls-files`` still runs.  The fake git's ``ls-files``
    says whether a ``status`` met it on a pipe while it ran."""
    meet, bin_dir = tmp_path / "meet", tmp_path / "bin"
    os.mkfifo(meet)
    bin_dir.mkdir()
    (bin_dir / "git").write_text(
        "#!/bin/sh\n"
        'case "$1" in\n'
        f"  status) timeout 5 sh -c 'echo > {sh(meet)}'; echo status ;;\n"
        f"  ls-files) if timeout 5 cat {sh(meet)} >/dev/null; then echo together; "
        "else echo alone; fi ;;\n"
        "esac\n"
    )
    (bin_dir / "git").chmod(0o755)
    path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    items = [
        _recorded("git", ["git", subcommand], tmp_path, PATH=path)
        for subcommand in ("ls-files", "status")
    ]
    started = headstart.HeadStart(items, None, str(tmp_path / "verify" / "last" / "logs"))
    started.start()
    try:
        said = [started.take(_as_spawned(item)) for item in items]
    finally:
        started.close()
    assert [s.result.stdout for s in said if s is not None and s.result] == [
        b"together\n",
        b"status\n",
    ]


def test_the_set_up_waits_until_the_first_gate_runs(tmp_path: Path, monkeypatch) -> None:
    """The set-up's imports would share the interpreter with the head start
    until its first gate is spawned: :func:`headstart.begin` returns once it is."""
    from stepkit.workspace.seal import write_sealed

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(headstart, "_ARGV", None)
    project, lock = tmp_path / "project", tmp_path / "lock"
    project.mkdir()
    lock.touch()
    argv = ["verify", "--project-dir", str(project)]
    record = {
        "key": headstart._key(argv, str(project.resolve())),
        "lock": str(lock),
        "logs": str(tmp_path / "verify" / "last" / "logs"),
        "items": [_recorded("gate", "echo gate", project)],
    }
    write_sealed(headstart.record_file(project.resolve()), json.dumps(record))
    returned: list[bool] = []
    launch = headstart.HeadStart._launch

    def noted(self: headstart.HeadStart, item: dict[str, Any]) -> headstart.Launched | None:
        returned.append(bool(returned))  # whether begin() had returned when the gate started
        return launch(self, item)

    monkeypatch.setattr(headstart.HeadStart, "_launch", noted)
    try:
        assert headstart.begin(argv)
        returned.append(True)
    finally:
        headstart.close()
    assert returned[0] is False, "the set-up went on before the head start's first gate ran"


def test_what_is_read_beside_a_snapshot_that_differs_is_never_adopted(tmp_path: Path) -> None:
    """After a gate that changed the tree, the verify puts files back before
    it looks again: the snapshot is not adopted, nor the read started
    beside it (it saw the tree before the put-backs)."""
    from stepkit.workspace.scope.git import command
    from stepkit.workspace.scope.listing import LISTING

    project = init_repo(tmp_path / "project", {"a.txt": "a\n"})
    listing, status = command(LISTING), command(["status", "--porcelain=v2", "-z"])
    items = [
        _recorded("git", listing, project),
        _recorded("gate", "echo new > b.txt", project),
        _recorded("git", listing, project),
        _recorded("git", status, project),
    ]
    started = headstart.HeadStart(items, None, str(tmp_path / "verify" / "last" / "logs"))
    started.start()
    try:
        taken = [started.take(_as_spawned(item)) for item in items]
    finally:
        started.close()
    assert taken[0] is not None and taken[0].result is not None  # the first look: adopted
    assert taken[1] is not None and taken[1].proc is not None  # the gate: adopted
    assert taken[2:] == [None, None]


def test_a_verify_with_a_thread_still_running_exits_as_usual() -> None:
    """The usual exit waits for a (plugin's) thread that is not a daemon:
    :func:`stepkit.cli._answered` leaves the exit to it then."""
    from stepkit.cli import _answered

    go = threading.Event()
    other = threading.Thread(target=go.wait)
    other.start()
    try:
        assert _answered(3) == 3
    finally:
        go.set()
        other.join()
