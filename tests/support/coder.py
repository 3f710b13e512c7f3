"""Helpers shared by the coder, reviewer and scope-guard tests."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from stepkit.config import Config
from stepkit.records import StageContext
from stepkit.workspace.store import store_dir

PLAN_TEXT = """---
step: 3
title: Add greeting
---
## Objective
Add greet().

## Acceptance criteria
- greet("Ann") returns "Hello, Ann!"

## Out of scope
Localisation.
"""


def make_ctx(
    project: Path,
    *,
    coder: str | None = None,
    reviewer: str | None = None,
    timeout: float = 60,
    state: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
    pm: Any = None,
    ask: Any = None,
    events: list | None = None,
) -> StageContext:
    """A stage context for one run in ``project`` (plans in ``project/plans``)."""
    config = Config()
    config.timeouts.coder = timeout
    config.timeouts.reviewer = timeout
    run_dir = store_dir(project) / "runs" / "r1"
    run_dir.mkdir(parents=True, exist_ok=True)
    base_state = {
        "step": 3,
        "title": "Add greeting",
        "plan_text": PLAN_TEXT,
        "implementation_brief": "Put greet() in greet.py.",
    }

    def emit(kind: str, **fields: Any) -> None:
        if events is not None:
            events.append((kind, fields))

    return StageContext(
        node="implement",
        project_dir=project,
        plans_dir=project / "plans",
        state={**base_state, **(state or {})},
        settings={"coder": coder, "reviewer": reviewer, **(settings or {})},
        config=config,
        pm=pm if pm is not None else _builtin_plugins(),
        run_dir=run_dir,
        emit=emit,
        ask=ask,
    )


def _builtin_plugins() -> Any:
    """The built-in plugins, as a run has them (a coder's prompt names the gates they detect)."""
    from stepkit.pluginmanager import get_plugin_manager

    return get_plugin_manager()


def process_gone(pid: int, within_s: float = 5.0) -> bool:
    """True once ``pid`` no longer runs (absent, or a zombie nobody reaped yet)."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except (FileNotFoundError, ProcessLookupError):
            return True
        if stat.rsplit(")", 1)[1].split()[0] in ("Z", "X"):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
