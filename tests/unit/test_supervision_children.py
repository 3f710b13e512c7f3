"""This process's children, as :mod:`stepkit.workspace.supervision` lists
them, are the ones ``/proc`` names it the parent of: those started from any
thread, and orphans adopted while it is the subreaper."""

import os
import shlex
import subprocess
import sys
import threading

import pytest

from stepkit.workspace import supervision

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc")


def _by_parent() -> set[int]:
    """Every process whose /proc stat names this process as its parent."""
    me = str(os.getpid())
    found = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if fields[1].decode() == me:
                found.add(int(name))
    return found


def test_children_started_from_every_thread_and_adopted_orphans_are_listed(tmp_path):
    children = [subprocess.Popen(["sleep", "30"])]
    started, listed_all = threading.Event(), threading.Event()

    def from_a_thread():
        # a child's parent is the thread that started it, while that thread lives
        children.append(subprocess.Popen(["sleep", "30"]))
        started.set()
        listed_all.wait()

    thread = threading.Thread(target=from_a_thread)
    thread.start()
    started.wait()
    pid_file = tmp_path / "orphan"
    with supervision.SUBREAPER:
        # its parent exits at once: the sleep is handed to this process
        subprocess.run(
            ["sh", "-c", f"sleep 30 & echo $! > {shlex.quote(str(pid_file))}"], check=True
        )
        orphan = int(pid_file.read_text())
        try:
            listed = set(supervision._children())
            assert {child.pid for child in children} | {orphan} <= listed
            assert listed == _by_parent()
        finally:
            listed_all.set()
            thread.join()
            os.kill(orphan, 9)
            os.waitpid(orphan, 0)
    for child in children:
        child.kill()
        child.wait()
    assert set(supervision._children()) == _by_parent()


def test_without_the_kernels_children_files_the_stat_of_every_process_is_read(monkeypatch):
    child = subprocess.Popen(["sleep", "30"])
    try:
        fast = set(supervision._children())
        monkeypatch.setattr(supervision, "_listed_children", lambda: None)
        assert child.pid in fast
        assert set(supervision._children()) == fast
    finally:
        child.kill()
        child.wait()
