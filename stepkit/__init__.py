"""stepkit: execute one step of a phased implementation plan, with the step
protocol enforced as graph edges.

The Python API lives in :mod:`stepkit.api`; the names below are imported from
it on first use so that ``import stepkit`` stays cheap.
"""

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

from stepkit.hookspecs import hookimpl

_API = ("run_step", "resume_run", "run_stage", "verify", "detect_gates", "plan_status")


def __getattr__(name: str) -> Any:
    if name in _API:
        return getattr(import_module("stepkit.api"), name)
    raise AttributeError(f"module 'stepkit' has no attribute {name!r}")


__all__ = ["__version__", "detect_gates", "hookimpl", "plan_status", "resume_run", "run_stage", "run_step", "verify"]
