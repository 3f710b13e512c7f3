"""Task runners: Taskfile (``task``), justfile (``just``), Makefile (``make``).

A task runner answers a gate only with a target the file really defines, so
``make test`` is chosen only when the Makefile has a ``test`` rule.  Runners
are asked in the order Taskfile, justfile, Makefile, per gate: a Makefile's
``test`` target can answer the tests gate while a justfile's ``lint`` recipe
answers the lint gate.  Target names per gate, in preference order:

- format: ``format``, ``fmt``
- lint: ``lint``
- build: ``build``, ``typecheck``, ``type-check``, ``compile``
- tests: ``test``, ``tests`` (and ``check`` for a Makefile: the GNU
  convention for "run the test suite")
"""

from __future__ import annotations

from pathlib import Path

from stepkit.plugins.projects import _shared

from stepkit.hookspecs import hookimpl

_MAKE_NAMES = {**_shared.TARGET_NAMES, "tests": (*_shared.TARGET_NAMES["tests"], "check")}


def _runners(project_dir: Path) -> list[tuple[str, dict[str, tuple[str, ...]], set[str]]]:
    """(runner command, target names per gate, defined targets) of each runner present."""
    found = []
    taskfile = _shared.first_file(project_dir, _shared.TASKFILE_NAMES)
    if taskfile:
        found.append(("task", _shared.TARGET_NAMES, _shared.taskfile_tasks(taskfile)))
    justfile = _shared.first_file(project_dir, _shared.JUSTFILE_NAMES)
    if justfile:
        found.append(("just", _shared.TARGET_NAMES, _shared.justfile_recipes(justfile)))
    makefile = _shared.first_file(project_dir, _shared.MAKEFILE_NAMES)
    if makefile:
        found.append(("make", _MAKE_NAMES, _shared.makefile_targets(makefile)))
    return found


def _command(project_dir: Path, gate: str) -> str | None:
    for runner, names, targets in _runners(project_dir):
        target = _shared.pick(targets, names[gate])
        if target:
            return f"{runner} {target}"
    return None


@hookimpl
def stepkit_detect_project(project_dir: Path) -> str | None:
    """``task``, ``just`` or ``make``: the first runner that defines a gate target."""
    for runner, names, targets in _runners(project_dir):
        if any(_shared.pick(targets, names[gate]) for gate in _shared.GATES):
            return runner
    return None


@hookimpl
def stepkit_format_command(project_dir: Path) -> str | None:
    return _command(project_dir, "format")


@hookimpl
def stepkit_lint_command(project_dir: Path) -> str | None:
    return _command(project_dir, "lint")


@hookimpl
def stepkit_build_command(project_dir: Path) -> str | None:
    return _command(project_dir, "build")


@hookimpl
def stepkit_test_command(project_dir: Path) -> str | None:
    return _command(project_dir, "tests")
