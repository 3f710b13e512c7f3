"""The environment managers a project runs its tools through, in one table:
what shows that the project uses one (a lockfile git tracks, a manifest,
a table of its configuration) and the words that run a tool from that
environment.

- Python: uv (``uv.lock``) ``uv run --frozen``, Poetry (``poetry.lock``)
  ``poetry run``, PDM (``pdm.lock``) ``pdm run``, Pipenv (``Pipfile.lock``)
  ``pipenv run``, Hatch (``hatch.toml`` or ``[tool.hatch.envs]``) ``hatch
  run``.  ``--frozen``: no gate rewrites uv's lockfile; the others' ``run``
  never writes one.
- Node: pnpm ``pnpm exec``, yarn ``yarn``, bun ``bunx``, npm ``npx --no --``
  (never downloading a package the project did not install).
- Ruby: a ``Gemfile``, ``bundle exec``.

PHP's tools run from ``vendor/bin`` and Cargo runs its own subcommands: a
tool missing there cannot start (exit 127), which is already an
environment fault.

Every one of the Python runners puts its environment's ``bin`` first on
PATH but falls back to the rest of PATH for a command the environment
lacks: ``uv run mypy`` without mypy in the environment silently runs
another mypy, which cannot see the project's packages.  So a Python tool
is run as a module of the environment's own interpreter (``uv run --frozen
python -m mypy``), which runs that environment's mypy or stops with "No
module named mypy": an environment fault naming the missing dependency
(:mod:`stepkit.workspace.faults`), never the PATH tool.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, NamedTuple

from stepkit.lazyregex import lazy_compile
from stepkit.plugins.projects import _shared

_REQUIREMENT_NAME = lazy_compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


class Manager(NamedTuple):
    """One environment manager, as one project shows it."""

    #: ``uv``, ``poetry``, ``pnpm``, ``bundler`` …
    name: str
    #: ``python``, ``node`` or ``ruby``.
    ecosystem: str
    #: the file that shows the project uses it; ``file#table.keys`` for a table in that file.
    shown_by: str
    #: the words that run a tool from its environment, ending in a space (``uv run --frozen ``).
    runs: str


#: Per ecosystem, in the order they are tried: the first the project shows is its manager.
MANAGERS: tuple[Manager, ...] = (
    Manager("uv", "python", "uv.lock", "uv run --frozen "),
    Manager("poetry", "python", "poetry.lock", "poetry run "),
    Manager("pdm", "python", "pdm.lock", "pdm run "),
    Manager("pipenv", "python", "Pipfile.lock", "pipenv run "),
    Manager("hatch", "python", "hatch.toml", "hatch run "),
    Manager("hatch", "python", "pyproject.toml#tool.hatch.envs", "hatch run "),
    Manager("pnpm", "node", "pnpm-lock.yaml", "pnpm exec "),
    Manager("yarn", "node", "yarn.lock", "yarn "),
    Manager("bun", "node", "bun.lock", "bunx "),
    Manager("bun", "node", "bun.lockb", "bunx "),
    Manager("npm", "node", "package-lock.json", "npx --no -- "),
    Manager("npm", "node", "npm-shrinkwrap.json", "npx --no -- "),
    Manager("bundler", "ruby", "Gemfile", "bundle exec "),
)

#: Manifests: the project's own files, never left behind by a tool, so they count untracked too.
_MANIFESTS = frozenset({"Gemfile"})


def manager(project_dir: Path, ecosystem: str) -> Manager | None:
    """The first manager of ``ecosystem`` the project shows: its lockfile is
    the project's (:func:`_shared.which_lockfile`: git tracks it, or the
    project is not in git), its manifest exists, or its table is set."""
    for entry in MANAGERS:
        if entry.ecosystem != ecosystem:
            continue
        name, _, keys = entry.shown_by.partition("#")
        if keys:
            if _shared.table(_shared.read_toml(project_dir / name), *keys.split(".")):
                return entry
        elif name in _MANIFESTS:
            if (project_dir / name).is_file():
                return entry
        elif _shared.is_tracked(project_dir, name):
            return entry
    return None


def by_name(name: str) -> Manager:
    """The (first) table entry of the manager called ``name``."""
    return next(entry for entry in MANAGERS if entry.name == name)


def python_tool(project_dir: Path, module: str, script: str | None = None) -> str:
    """The words that run the Python tool ``module`` for the project: from
    its manager's environment as a module of that environment's interpreter
    (``uv run --frozen python -m ruff``), else the tool as PATH (and the
    project's tool directories) give it (``script``, default ``module``)."""
    found = manager(project_dir, "python")
    return f"{found.runs}python -m {module}" if found else (script or module)


def python_dependencies(project_dir: Path, pyproject: dict[str, Any] | None = None) -> set[str]:
    """Normalised names of every dependency the project declares, dev ones included."""
    if pyproject is None:
        pyproject = _shared.read_toml(project_dir / "pyproject.toml")
    specs: list[Any] = []
    project = _shared.table(pyproject, "project")
    specs += project.get("dependencies") or []
    for group in _shared.table(project, "optional-dependencies").values():
        specs += group or []
    for group in _shared.table(pyproject, "dependency-groups").values():
        specs += group or []
    tool = _shared.table(pyproject, "tool")
    specs += _shared.table(tool, "uv").get("dev-dependencies") or []
    for group in _shared.table(tool, "pdm", "dev-dependencies").values():
        specs += group or []
    poetry = _shared.table(tool, "poetry")
    names = set(_shared.table(poetry, "dependencies")) | set(
        _shared.table(poetry, "dev-dependencies")
    )
    for group in _shared.table(poetry, "group").values():
        names |= set(_shared.table(group, "dependencies") if isinstance(group, dict) else {})
    for path in sorted(project_dir.glob("requirements*.txt")):
        specs += _shared.read_text(path).splitlines()
    for spec in specs:
        match = _REQUIREMENT_NAME.match(spec) if isinstance(spec, str) else None
        if match:
            names.add(match.group(1))
    return {re.sub(r"[-_.]+", "-", name).lower() for name in names}
