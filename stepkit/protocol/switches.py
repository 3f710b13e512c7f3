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
    """Each switch as a boolean (unset or empty: off; ``1``/``0`` and the
    other spellings pydantic reads as a boolean: ``true``, ``no``, ``on``…).

    :raises UsageError: a switch set to anything else, naming it, its value
        and what it takes (a typo never silently leaves a gate on)."""
    from pydantic import TypeAdapter, ValidationError

    from stepkit.errors import UsageError

    as_bool = TypeAdapter(bool)
    switches = {}
    for name in SWITCHES:
        value = environ.get(name, "").strip()
        try:
            switches[name] = as_bool.validate_python(value) if value else False
        except ValidationError:
            raise UsageError(
                f"{name}={value!r}: takes 1 or 0 (or true/false, yes/no, on/off); "
                f"unset it or set {name}=1; nothing was started"
            ) from None
    return switches


def switch_on(settings: Mapping[str, Any], name: str) -> bool:
    """Whether the run started with switch ``name`` on."""
    return bool((settings.get("switches") or {}).get(name))
