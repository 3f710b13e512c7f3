"""stepkit: execute one step of a phased implementation plan, with the step
protocol enforced as graph edges.

The Python API lives in :mod:`stepkit.api` and the plugin marker in
:mod:`stepkit.hookspecs`; both are imported on first use so that ``import
stepkit`` (every command, ``stepkit status`` included) stays cheap.
"""

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_API = ("run_step", "resume_run", "run_stage", "verify", "detect_gates", "plan_status", "RunResult")


def __getattr__(name: str) -> Any:
    if name in _API:
        return getattr(import_module("stepkit.api"), name)
    if name == "hookimpl":  # plugins write @stepkit.hookimpl
        return import_module("stepkit.hookspecs").hookimpl
    raise AttributeError(f"module 'stepkit' has no attribute {name!r}")


__all__ = [
    "RunResult",
    "__version__",
    "detect_gates",
    "hookimpl",
    "plan_status",
    "resume_run",
    "run_stage",
    "run_step",
    "verify",
]
