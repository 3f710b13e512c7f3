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

from collections.abc import Callable
from pathlib import Path

from stepkit.plugins.projects import _shared
from stepkit.plugins.projects._base import ProjectType

#: A gate's command from the runners present: the first runner's target for it.
_Gate = Callable[[list[_shared.Targets]], str | None]


def _runners(project_dir: Path) -> list[_shared.Targets]:
    """The targets of each runner present, in the order runners are asked."""
    found = []
    taskfile = _shared.first_file(project_dir, _shared.TASKFILE_NAMES)
    if taskfile:
        found.append(_shared.Targets("task", _shared.taskfile_tasks(taskfile)))
    justfile = _shared.first_file(project_dir, _shared.JUSTFILE_NAMES)
    if justfile:
        found.append(_shared.Targets("just", _shared.justfile_recipes(justfile)))
    makefile = _shared.first_file(project_dir, _shared.MAKEFILE_NAMES)
    if makefile:
        found.append(_shared.Targets("make", _shared.makefile_targets(makefile)))
    return found


def _target(*names: str, make_also: tuple[str, ...] = ()) -> _Gate:
    """The first runner's target among ``names`` (for a Makefile, also ``make_also``)."""

    def command(runners: list[_shared.Targets]) -> str | None:
        for runner in runners:
            found = runner.command(*names, *(make_also if runner.runner == "make" else ()))
            if found:
                return found
        return None

    return command


_FORMAT = _target("format", "fmt")
_LINT = _target("lint")
_BUILD = _target("build", "typecheck", "type-check", "compile")
_TESTS = _target("test", "tests", make_also=("check",))


def _first_runner(runners: list[_shared.Targets]) -> str | None:
    """``task``, ``just`` or ``make``: the first runner that defines a gate target."""
    for runner in runners:
        if any(gate([runner]) for gate in (_FORMAT, _LINT, _BUILD, _TESTS)):
            return runner.runner
    return None


TASK_RUNNERS = ProjectType(
    read=_runners,
    name=_first_runner,
    format=_FORMAT,
    lint=_LINT,
    build=_BUILD,
    tests=_TESTS,
)
globals().update(TASK_RUNNERS.hookimpls())
