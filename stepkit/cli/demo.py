"""``stepkit demo``: run step 1 of the bundled example project, for real.

The example (a small Python package with a three-step plan) is copied to a
temporary directory and made a git repository; step 1 then runs through the
whole step-runner graph with the scripted engine (offline answers for the
LLM nodes), a command coder that makes the real change, real ruff and pytest
gates and a real handoff, and stops at the final approval gate: answered on a
TTY, otherwise paused with the resume command printed.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from importlib.resources import files
from pathlib import Path

from stepkit import quoting
from stepkit.errors import UsageError
from stepkit.workspace.scope import git
from stepkit.workspace.store import STORE_NAME


def prepare_demo_project(parent: Path | None = None) -> Path:
    """Copy the example project into a fresh directory and commit it to git
    (when git is installed)."""
    source = Path(str(files("stepkit") / "examples" / "demo"))
    base = Path(tempfile.mkdtemp(prefix="stepkit-demo-", dir=parent))
    project = base / "textkit"
    shutil.copytree(source, project, ignore=shutil.ignore_patterns("__pycache__", STORE_NAME))
    git.commit_all(
        project, "textkit before step 1", name="stepkit demo", email="demo@stepkit.invalid"
    )
    return project


def demo_run_args(project: Path) -> argparse.Namespace:
    """The arguments of the ``stepkit run`` the demo performs, parsed by the
    real ``run`` parser (so every option it has gets its default)."""
    from stepkit.cli import build_parser

    coder = "command:" + quoting.shell([sys.executable, "tools/demo_coder.py"])
    engine = f"scripted:{project / 'tools' / 'demo_answers.yaml'}"
    args = build_parser().parse_args(
        [
            "run",
            "Execute step 1",
            "--step",
            "1",
            "--project-dir",
            str(project),
            "--engine",
            engine,
            "--coder",
            coder,
        ]
    )
    args.pm = None
    return args


def run(args: argparse.Namespace) -> int:
    from stepkit.cli import run as run_command

    if shutil.which("ruff") is None and not (Path(sys.executable).parent / "ruff").exists():
        raise UsageError(
            "the demo's gates need ruff and pytest: install stepkit with its dev extras (pip install -e '.[dev]')"
        )
    project = prepare_demo_project()
    # the demo project's own environment is the one stepkit is installed in:
    # its gates find ruff and pytest there as any project's gates find its .venv
    (project / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    # on stderr: stdout's first line is always the outcome
    print(f"Demo project: {project}", file=sys.stderr)
    print(
        "Running step 1 (scripted engine, command coder, real ruff/pytest gates)…\n",
        file=sys.stderr,
        flush=True,
    )
    from stepkit.config import load_config
    from stepkit.pluginmanager import get_plugin_manager

    args = demo_run_args(project)
    # the plugin manager a `stepkit run` in the project builds: its progress display shows the run
    args.pm = get_plugin_manager(project, load_config(project), [])
    return run_command.run(args)
