"""The sealing key is made once, whole, however many threads of one process
ask for it first at the same moment: a run seals its checkpoint while the
installed fingerprint, taken beside it, seals the hashes it keeps, and on a
state home that holds no key yet both make one.  Each writer's temporary
file is its own; the first link wins and every caller reads that key.
Every thread's write is held until all have written (their fsync waits for
the others), so the threads overlap wherever the code lets them."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from stepkit.workspace import seal

THREADS = 8


@pytest.mark.parametrize("turn", range(3))
def test_threads_making_the_key_at_once_all_get_the_one_key(tmp_path: Path, monkeypatch, turn):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / f"state-{turn}"))
    start, written = threading.Barrier(THREADS), threading.Barrier(THREADS, timeout=30)
    monkeypatch.setattr(seal.os, "fsync", lambda fd: written.wait())
    keys: list[bytes] = []
    failures: list[BaseException] = []

    def ask() -> None:
        start.wait()
        try:
            keys.append(seal._secret())
        except BaseException as exc:  # noqa: BLE001 - the test reports what a thread raised
            failures.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert failures == []
    home = tmp_path / f"state-{turn}" / "stepkit"
    assert len(set(keys)) == 1 and keys[0] == (home / "secret").read_bytes()
    assert sorted(p.name for p in home.iterdir()) == ["secret"]
