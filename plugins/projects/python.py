"""Python (``pyproject.toml``, ``setup.py``, ``setup.cfg``, ``requirements.txt``,
``Pipfile``): pytest, ruff (or black), mypy or pyright.

What the project uses is read from its configuration and its declared
dependencies (``[project]`` dependencies and optional dependencies,
``[dependency-groups]``, uv, poetry and pdm dev dependencies,
``requirements*.txt``); a tool is never chosen only because it happens to be
installed.

- tests: ``python -m pytest`` when pytest is configured (``[tool.pytest…]``,
  ``pytest.ini``, ``[pytest]`` in tox.ini, ``[tool:pytest]`` in setup.cfg, a
  root ``conftest.py``), declared, or a ``tests``/``test`` directory exists.
- format: ``black .`` when black is configured or declared, else ``ruff
  format`` when the project uses ruff (``[tool.ruff]``, ``ruff.toml``,
  ``.ruff.toml`` or a declared dependency).
- lint: ``ruff check`` when the project uses ruff.
- build: a type check — ``mypy`` when mypy is configured or declared (with
  ``.`` as the target unless its config sets ``files``), else ``pyright``
  when pyright is; no build gate otherwise.

Commands run through the project's runner when its lockfile says so: ``uv
run`` (``uv.lock``), ``poetry run`` (``poetry.lock``), ``pdm run``
(``pdm.lock``).
"""

from __future__ import annotations

import configparser
import re
from pathlib import Path
from typing import Any

from stepkit.plugins.projects import _shared
from stepkit.plugins.projects._base import ProjectType

_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "Pipfile")
_RUNNERS = (("uv.lock", "uv run "), ("poetry.lock", "poetry run "), ("pdm.lock", "pdm run "))
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


class _Project:
    """What one Python project declares, read once per hook call."""

    def __init__(self, project_dir: Path) -> None:
        self.dir = project_dir
        self.pyproject = _shared.read_toml(project_dir / "pyproject.toml")
        self.tool = _shared.table(self.pyproject, "tool")
        self.setup_cfg = _shared.read_ini(project_dir / "setup.cfg")
        self.tox_ini = _shared.read_ini(project_dir / "tox.ini")
        self.deps = _declared_dependencies(project_dir, self.pyproject)
        self.prefix = _shared.which_lockfile(project_dir, _RUNNERS) or ""

    def uses_pytest(self) -> bool:
        return (
            "pytest" in self.tool
            or "pytest" in self.deps
            or _shared.first_file(self.dir, ("pytest.ini", ".pytest.ini", "conftest.py")) is not None
            or self.tox_ini.has_section("pytest")
            or self.setup_cfg.has_section("tool:pytest")
            or (self.dir / "tests").is_dir()
            or (self.dir / "test").is_dir()
        )

    def uses_ruff(self) -> bool:
        return (
            "ruff" in self.tool
            or "ruff" in self.deps
            or _shared.first_file(self.dir, ("ruff.toml", ".ruff.toml")) is not None
        )

    def uses_black(self) -> bool:
        return "black" in self.tool or "black" in self.deps

    def mypy_command(self) -> str | None:
        ini_path = _shared.first_file(self.dir, ("mypy.ini", ".mypy.ini"))
        ini = _shared.read_ini(ini_path) if ini_path else configparser.ConfigParser()
        configured = "mypy" in self.tool or ini.has_section("mypy") or self.setup_cfg.has_section("mypy")
        if not configured and "mypy" not in self.deps:
            return None
        has_files = (
            "files" in _shared.table(self.tool, "mypy")
            or ini.has_option("mypy", "files")
            or self.setup_cfg.has_option("mypy", "files")
        )
        return "mypy" if has_files else "mypy ."

    def uses_pyright(self) -> bool:
        return (
            "pyright" in self.tool
            or "pyright" in self.deps
            or (self.dir / "pyrightconfig.json").is_file()
        )

    def format_command(self) -> str | None:
        if self.uses_black():
            return f"{self.prefix}black ."
        return f"{self.prefix}ruff format" if self.uses_ruff() else None

    def lint_command(self) -> str | None:
        return f"{self.prefix}ruff check" if self.uses_ruff() else None

    def build_command(self) -> str | None:
        mypy = self.mypy_command()
        if mypy:
            return f"{self.prefix}{mypy}"
        return f"{self.prefix}pyright" if self.uses_pyright() else None

    def test_command(self) -> str | None:
        return f"{self.prefix}python -m pytest" if self.uses_pytest() else None


def _declared_dependencies(project_dir: Path, pyproject: dict[str, Any]) -> set[str]:
    """Normalised names of every dependency the project declares, dev ones included."""
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
    names = set(_shared.table(poetry, "dependencies")) | set(_shared.table(poetry, "dev-dependencies"))
    for group in _shared.table(poetry, "group").values():
        names |= set(_shared.table(group, "dependencies") if isinstance(group, dict) else {})
    for path in sorted(project_dir.glob("requirements*.txt")):
        specs += _shared.read_text(path).splitlines()
    for spec in specs:
        match = _REQUIREMENT_NAME.match(spec) if isinstance(spec, str) else None
        if match:
            names.add(match.group(1))
    return {re.sub(r"[-_.]+", "-", name).lower() for name in names}


def _read(project_dir: Path) -> _Project | None:
    """What the project declares; None when this is not a Python project."""
    if _shared.first_file(project_dir, _MARKERS) is None:
        return None
    return _Project(project_dir)


PYTHON = ProjectType(
    read=_read,
    name="python",
    format=_Project.format_command,
    lint=_Project.lint_command,
    build=_Project.build_command,
    tests=_Project.test_command,
)
globals().update(PYTHON.hookimpls())
