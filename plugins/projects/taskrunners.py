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


def commands(project_dir: Path) -> dict[str, str]:
    """Per gate, the first runner's target for it (``make test``); a gate no
    runner defines a target for is missing."""
    found: dict[str, str] = {}
    for runner, names, targets in _runners(project_dir):
        for gate, command in _shared.runner_commands(targets, names, runner).items():
            found.setdefault(gate, command)
    return found


def _detect(project_dir: Path) -> str | None:
    """``task``, ``just`` or ``make``: the first runner that defines a gate target."""
    for runner, names, targets in _runners(project_dir):
        if _shared.runner_commands(targets, names, runner):
            return runner
    return None


(stepkit_detect_project, stepkit_format_command, stepkit_lint_command,
 stepkit_build_command, stepkit_test_command) = _shared.gate_hooks(_detect, commands)
