"""Task runners: Taskfile (``task``), justfile (``just``), Makefile (``make``).

A task runner answers a gate only with a target the file really defines, so
``make test`` is chosen only when the Makefile has a ``test`` rule.  Runners
are asked in the order Taskfile, justfile, Makefile, per gate: a Makefile's
``test`` target can answer the tests gate while a justfile's ``lint`` recipe
answers the lint gate.  Target names per gate, in preference order:

- format: ``format``, ``fmt``
- lint: ``lint``
- build: the type-check names first (``typecheck``, ``type-check``,
  ``types``, ``check-types``, ``lint:types``, ``mypy``, ``pyright``), then
  ``build``, ``compile``
- tests: ``test``, ``tests`` (and ``check`` for a Makefile: the GNU
  convention for "run the test suite")

A target whose recipe (with its prerequisites', for make) needs a terminal —
``docker run -it``/``-t``, ``podman run -it``, ``docker exec -it``, ``docker
compose run`` without ``-T`` — is passed over: a gate has no terminal, so it
would fail with "the input device is not a TTY".  So is a tests target
(``test``, ``check``) whose recipe runs no test runner but only a linter, a
type checker or a formatter (``mypy .``): its name proves nothing.  The gate
then goes to the next name, the next runner or the language's own command,
and ``stepkit detect`` shows the target skipped and why.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

from stepkit.plugins.projects import _shared
from stepkit.plugins.projects._base import ProjectType
from stepkit.plugins.projects.gate_tools import checks_only


class _Runner(NamedTuple):
    #: ``task``, ``just`` or ``make``.
    name: str
    #: each target defined, with what running it runs.
    recipes: dict[str, str]


#: Target names per gate, in preference order; ``make`` also tries its extra names.
_NAMES = {
    "format": ("format", "fmt"),
    "lint": ("lint",),
    "build": (
        "typecheck",
        "type-check",
        "types",
        "check-types",
        "lint:types",
        "mypy",
        "pyright",
        "build",
        "compile",
    ),
    "tests": ("test", "tests"),
}
_MAKE_ALSO = {"tests": ("check",)}


def _runners(project_dir: Path) -> list[_Runner]:
    """The targets of each runner present, in the order runners are asked."""
    found = []
    taskfile = _shared.first_file(project_dir, _shared.TASKFILE_NAMES)
    if taskfile:
        found.append(_Runner("task", _shared.taskfile_tasks(taskfile)))
    justfile = _shared.first_file(project_dir, _shared.JUSTFILE_NAMES)
    if justfile:
        found.append(_Runner("just", _shared.justfile_recipes(justfile)))
    makefile = _shared.first_file(project_dir, _shared.MAKEFILE_NAMES)
    if makefile:
        found.append(_Runner("make", _shared.makefile_recipes(makefile)))
    return found


def _candidates(gate: str, runners: list[_Runner]) -> Iterator[tuple[str, str | None]]:
    """Each defined target for ``gate``, in order, as ``(command, why it is
    passed over or None)``."""
    for runner in runners:
        for name in (*_NAMES[gate], *(_MAKE_ALSO.get(gate, ()) if runner.name == "make" else ())):
            if name in runner.recipes:
                yield f"{runner.name} {name}", _passed_over(gate, runner.recipes[name])


def _passed_over(gate: str, recipe: str) -> str | None:
    """Why a target named for ``gate`` cannot be its command: what it runs
    needs a terminal, or (for the tests) it runs no test runner, only a
    linter, a type checker or a formatter."""
    terminal = _shared.needs_terminal(recipe)
    if terminal is not None:
        return f"it runs `{terminal}`, which needs a terminal; a gate has none"
    checker = checks_only(recipe) if gate == "tests" else None
    if checker is not None:
        return f"it runs no test runner, only {checker} tools"
    return None


def _gate(gate: str) -> Callable[[list[_Runner]], str | None]:
    """The gate's command: its first target not passed over."""

    def command(runners: list[_Runner]) -> str | None:
        return next((found for found, why in _candidates(gate, runners) if why is None), None)

    return command


def _notes(runners: list[_Runner]) -> list[str]:
    """A line for each target passed over, and why."""
    return [
        f"{gate}: skipped `{command}`: {why}"
        for gate in _NAMES
        for command, why in _candidates(gate, runners)
        if why is not None
    ]


def _first_runner(runners: list[_Runner]) -> str | None:
    """``task``, ``just`` or ``make``: the first runner that defines a gate target."""
    for runner in runners:
        if any(_gate(gate)([runner]) for gate in _NAMES):
            return runner.name
    return None


#: The targets a gate may run are configuration of how it runs.
_SURFACE = {
    "config": [*_shared.MAKEFILE_NAMES, *_shared.JUSTFILE_NAMES, *_shared.TASKFILE_NAMES, "**/*.mk"]
}

TASK_RUNNERS = ProjectType(
    read=_runners,
    name=_first_runner,
    format=_gate("format"),
    lint=_gate("lint"),
    build=_gate("build"),
    tests=_gate("tests"),
    notes=_notes,
    surface=_SURFACE,
)
globals().update(TASK_RUNNERS.hookimpls())
