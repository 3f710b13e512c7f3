"""Helpers shared by the coder, reviewer and scope-guard tests."""

from __future__ import annotations

import os
import subprocess
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


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd`` with a fixed identity; return stdout."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout


def init_repo(path: Path, files: dict[str, str]) -> Path:
    """A git repo at ``path`` with ``files`` committed."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    write_files(path, files)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def write_files(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


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
