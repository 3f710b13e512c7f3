"""The end-to-end tests' directories hold a space and a non-ASCII letter:
every project, run store, work tree and state directory a whole-step test
makes has them, so a path stepkit joins into a command or an options
variable as text fails a test."""

from __future__ import annotations

from pathlib import Path

import pytest

#: The directory each end-to-end test's ``tmp_path`` is.
SPACED = "spaced dir ä"


@pytest.fixture
def tmp_path(tmp_path: Path) -> Path:
    spaced = tmp_path / SPACED
    spaced.mkdir()
    return spaced


@pytest.fixture(autouse=True)
def _spaced_state_home(monkeypatch, tmp_path: Path) -> None:
    """stepkit's own state directory (trust store, seal key, locks, work trees) too."""
    state = tmp_path.parent / "state home ä"
    state.mkdir()
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
