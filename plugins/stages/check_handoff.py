"""Built-in ``stepkit_check_handoff``: the protocol's schema and the Evidence
agreeing with the recorded gates (see :func:`stepkit.protocol.handoff.check.check_handoff_text`)."""

from __future__ import annotations

from pathlib import Path

from stepkit.hookspecs import hookimpl
from stepkit.protocol.handoff.check import check_handoff_text
from stepkit.records import GateResult


@hookimpl
def stepkit_check_handoff(path: Path, text: str, gates: list[GateResult]) -> list[str]:
    """Return the schema and evidence problems of one handoff file."""
    return check_handoff_text(text, gates)
