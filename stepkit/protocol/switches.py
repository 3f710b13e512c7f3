"""The step protocol's environment switches.

They are read once, when a run starts, into its settings
(``settings["switches"]``), which the checkpoint keeps: a resumed run routes
as it started, whatever the resuming shell sets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: ``STEP_AUTOAPPROVE=1`` skips the deviation gate (only that gate);
#: ``STEP_SKIP_REVIEW=1`` never runs the independent review;
#: ``CODER_AUTOAPPROVE=1`` lets the built-in coder skip its own plan approval.
SWITCHES = ("STEP_AUTOAPPROVE", "STEP_SKIP_REVIEW", "CODER_AUTOAPPROVE")


def read_switches(environ: Mapping[str, str]) -> dict[str, bool]:
    """Each switch: on when the environment sets it to ``1``."""
    return {name: environ.get(name) == "1" for name in SWITCHES}


def switch_on(settings: Mapping[str, Any], name: str) -> bool:
    """Whether the run started with switch ``name`` on."""
    return bool((settings.get("switches") or {}).get(name))
