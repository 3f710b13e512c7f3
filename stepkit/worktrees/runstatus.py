"""How a run started by ``stepkit run --parallel`` tells its parent where it
stands: an observer that keeps one small JSON file up to date (the run id as
soon as the run exists, the node running now, how the run ended).

The parent names the file with ``run``'s hidden ``--status-file`` option and
reads it to draw the run's progress line; the run id is there even when the
run is killed with SIGKILL before it could print its result.  The file is
replaced atomically, so a reader never sees half of it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stepkit.hookspecs import hookimpl
from stepkit.workspace.files import atomic_write


class StatusFile:
    """A stepkit observer writing the run's state to ``path``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.record: dict[str, Any] = {}

    @hookimpl
    def stepkit_configure(self, config: Any, settings: dict[str, Any]) -> None:
        self._write(project_dir=settings.get("project_dir"))

    @hookimpl
    def stepkit_node_started(
        self, run_id: str, node: str, kind: str, state: dict[str, Any]
    ) -> None:
        self._write(run_id=run_id, node=node, kind=kind, state="running")

    @hookimpl
    def stepkit_run_finished(self, run_id: str, outcome: str, exit_code: int, output: str) -> None:
        self._write(run_id=run_id, state="finished", outcome=outcome, exit_code=exit_code)

    def close(self) -> None:
        """Nothing to let go of (the file is complete after every write)."""

    def _write(self, **fields: Any) -> None:
        self.record.update(fields)
        atomic_write(self.path, json.dumps(self.record))


def read_status(path: Path) -> dict[str, Any]:
    """What the run's :class:`StatusFile` says ({} before its first write)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
