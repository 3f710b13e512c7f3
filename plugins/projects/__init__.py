"""Project-type plugins: each returns gate commands as data, never runs them.

Each module declares one :class:`~stepkit.plugins.projects._base.ProjectType`
— how it reads a project (None: not of its type), its type name, and the
command of each gate it has an opinion on (``format``, ``lint``, ``build``,
``tests``), by name — and binds the hookimpls the declaration makes:
``stepkit_detect_project`` and ``stepkit_gate_command``, which answers None
for a gate the type does not declare or a project without a command for it.  Shared file readers
live in ``_shared``.

Priority — per gate, the first plugin with an answer wins:

1. ``stepkit.plugins.overrides``: ``FORMAT_CMD``/``LINT_CMD``/``BUILD_CMD``/
   ``TEST_CMD``, then ``[tool.stepkit.commands]`` (``tryfirst``; ``""`` means
   "no command", and stops the search).
2. The project's ``stepconf.py``, then ``[tool.stepkit] plugins``, then
   entry-point plugins (registered after the built-ins, so asked first).
3. ``ci``: the commands the project's CI runs (``ci_files`` reads them),
   for lint, build and tests, with their file and line
   (``stepkit_gate_source``).
4. ``taskrunners``: Taskfile, justfile, Makefile — targets that really exist.
5. Language manifests, in this order: ``rust`` (Cargo.toml), ``go``
   (go.mod), ``deno`` (deno.json), ``node`` (package.json scripts), ``python``
   (pyproject.toml, setup.py …), ``jvm`` (pom.xml, then Gradle), ``dotnet``
   (.sln/.csproj), ``cmake`` (CMakeLists.txt), ``ruby`` (Gemfile), ``elixir``
   (mix.exs), ``php`` (composer.json), ``swift`` (Package.swift), ``zig``
   (build.zig).

pluggy calls the last registered plugin first, so
:data:`stepkit.pluginmanager.DEFAULT_PLUGINS` lists these modules in the
reverse of this order.  The priority is per gate: a Makefile with a ``test``
target but no ``lint`` target in a ruff project gives ``make test`` and
``ruff check``.  ``stepkit detect`` shows, for each gate, the command and the
plugin that chose it, and the notes (``stepkit_detect_notes``) of commands a
plugin passed over.

A format command that takes files names the step's changed files with the
placeholder ``{files}`` / ``{files:.ext,…}`` (``_shared.changed_files``),
which the gate runner fills in; docs/detection.md states every rule.  A
build system no module here supports is named by ``unsupported``.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping
from typing import Any

#: The root files (names, or ``*`` patterns) that make a project one of a
#: type, by the type's module: the one place they are declared.  Its
#: :class:`~stepkit.plugins.projects._base.ProjectType` answers nothing
#: without one of them, so :mod:`stepkit.lazyplugins` does not import the
#: module for a project that has none.
MARKERS: dict[str, tuple[str, ...]] = {
    "stepkit.plugins.projects.zig": ("build.zig",),
    "stepkit.plugins.projects.swift": ("Package.swift",),
    "stepkit.plugins.projects.php": ("composer.json",),
    "stepkit.plugins.projects.elixir": ("mix.exs",),
    "stepkit.plugins.projects.ruby": ("Gemfile", "*.gemspec"),
    "stepkit.plugins.projects.cmake": ("CMakeLists.txt",),
    "stepkit.plugins.projects.dotnet": ("*.sln", "*.slnx", "*.csproj", "*.fsproj", "*.vbproj"),
    "stepkit.plugins.projects.jvm": (
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "settings.gradle",
        "settings.gradle.kts",
    ),
    "stepkit.plugins.projects.python": (
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "requirements.txt",
        "Pipfile",
        "tox.ini",
        "tox.toml",
        "noxfile.py",
    ),
    "stepkit.plugins.projects.node": ("package.json",),
    "stepkit.plugins.projects.deno": ("deno.json", "deno.jsonc"),
    "stepkit.plugins.projects.go": ("go.mod",),
    "stepkit.plugins.projects.rust": ("Cargo.toml",),
}

#: The hooks a project-type module may implement: those its ``ProjectType``
#: binds, and the project-specific answers a type adds beside it.
HOOKS: tuple[str, ...] = (
    "stepkit_detect_project",
    "stepkit_gate_command",
    "stepkit_detect_notes",
    "stepkit_verification_surface",
    "stepkit_added_file_reach",
    "stepkit_dependency_dirs",
    "stepkit_gate_fault",
)


def has_marker(project_dir: os.PathLike[str] | str, markers: tuple[str, ...]) -> bool:
    """Whether one of ``markers`` is in ``project_dir``: a name as a file, a
    ``*`` pattern as any entry."""
    names = None
    for marker in markers:
        if "*" not in marker:
            if os.path.isfile(os.path.join(project_dir, marker)):
                return True
            continue
        if names is None:
            try:
                names = os.listdir(project_dir)
            except OSError:
                names = []
        if fnmatch.filter(names, marker):
            return True
    return False


def may_answer(module: str, arguments: Mapping[str, Any]) -> bool:
    """Whether the project-type module ``module`` can answer a call with these
    arguments: its project dir has one of its :data:`MARKERS` (always, for a
    call without a project dir)."""
    project_dir = arguments.get("project_dir")
    if module not in MARKERS or not isinstance(project_dir, (str, os.PathLike)):
        return True
    return has_marker(project_dir, MARKERS[module])
