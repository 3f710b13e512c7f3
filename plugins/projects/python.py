"""Python (``pyproject.toml``, ``setup.py``, ``setup.cfg``, ``requirements.txt``,
``Pipfile``, ``tox.ini``, ``noxfile.py``): pytest, ruff (or black), mypy or pyright.

What the project uses is read from its configuration, its declared
dependencies (``[project]`` dependencies and optional dependencies,
``[dependency-groups]``, uv, poetry and pdm dev dependencies,
``requirements*.txt``) and what it runs (task runners, CI workflows,
pre-commit hooks, tox and nox sessions); a tool is never chosen only because
it happens to be installed.

- tests: ``python -m pytest -rfE`` when pytest is configured
  (``[tool.pytest…]``, ``pytest.ini``, ``[pytest]`` in tox.ini,
  ``[tool:pytest]`` in setup.cfg, a root ``conftest.py``), declared, or a
  ``tests``/``test`` directory exists.  ``-rfE`` lists every failing and
  erroring test id with its file, even when the project's ``addopts`` hide
  the summary.  A project whose tests tox or nox drive gets that
  environment instead (``tox -e py``, ``nox -s tests``) when it does set-up
  the plain runner would miss: extras or the project installed into it,
  environment variables, another directory, a command other than pytest.
- format, only on the step's changed ``.py``/``.pyi`` files and only with a
  formatter the project shows it formats with: ``ruff format
  --force-exclude`` when ``[tool.ruff.format]`` (or ``[format]`` in
  ruff.toml) exists, a ``ruff-format`` pre-commit hook is listed, or a task
  runner, tox/nox session or CI step runs ``ruff format`` (or ``hatch fmt``,
  which is ruff's formatter); else ``black``
  when ``[tool.black]`` exists, a black hook is listed or something runs
  black.  A lint-only ``[tool.ruff]`` gets no formatter.
- lint: ``ruff check`` when the project uses ruff.
- build: a type check.  A tox env or nox session named for one (``mypy``,
  ``typecheck``, ``types`` …); else, when mypy is configured or declared,
  what its config names (``files`` → ``mypy``; ``packages``/``modules`` →
  ``mypy -p …``/``-m …``), else the project's package dirs (``src/<pkg>``,
  the packages its build config lists, top-level dirs with an
  ``__init__.py`` — never ``build/``, ``docs/``, ``tests/``); likewise
  ``pyright`` (its ``include``, else the package dirs).  Never ``mypy .``:
  without a target there is no build gate.

A tox or nox command, the plugin's or CI's, runs the one environment of
this machine's Python (:mod:`stepkit.plugins.projects.interpreters`): ``tox
-e py311``, ``nox -s tests-3.11``; when the project has none for it, the
gate is an environment fault naming the envs (:func:`stepkit_gate_fault`).

Where the project uses an environment manager (uv, Poetry, PDM, Pipenv,
Hatch: :mod:`stepkit.plugins.projects.environments`), the tools run from
its environment as modules of its interpreter (``uv run --frozen python -m
ruff check``): a tool the environment lacks stops with "No module named",
an environment fault, never the PATH tool.  tox and nox, which make
environments of their own, run from it only when the project declares
them there.
"""

from __future__ import annotations

import configparser
import fnmatch
import sys
from pathlib import Path
from typing import Any

from stepkit import quoting
from stepkit.hookspecs import hookimpl
from stepkit.plugins.projects import MARKERS, _sessions, _shared, environments, interpreters
from stepkit.plugins.projects._base import ProjectType

_PYTHON_FILES = _shared.changed_files(".py", ".pyi")
_PYTEST_OPTIONS = "-rfE"
_PYTEST = f"python -m pytest {_PYTEST_OPTIONS}"
#: Top-level dirs that are never the project's package, even with an ``__init__.py``.
_NOT_PACKAGES = {
    "build",
    "dist",
    "docs",
    "doc",
    "tests",
    "test",
    "testing",
    "examples",
    "example",
    "benchmarks",
    "venv",
}


class _Project:
    """What one Python project declares, read once per hook call."""

    def __init__(self, project_dir: Path) -> None:
        self.dir = project_dir
        self.pyproject = _shared.read_toml(project_dir / "pyproject.toml")
        self.tool = _shared.table(self.pyproject, "tool")
        self.setup_cfg = _shared.read_ini(project_dir / "setup.cfg")
        self.tox_ini = _shared.read_ini(project_dir / "tox.ini")
        ini_path = _shared.first_file(project_dir, ("mypy.ini", ".mypy.ini"))
        self.mypy_ini = _shared.read_ini(ini_path) if ini_path else configparser.ConfigParser()
        self.deps = environments.python_dependencies(project_dir, self.pyproject)

    def from_env(self, module: str) -> str:
        """A tool a gate checks with, from the project's environment when a
        manager has one (:func:`environments.python_tool`)."""
        return environments.python_tool(self.dir, module)

    def runner(self, command: str, gate: str) -> str:
        """``command`` (``tox -e py``, ``nox -s tests``), whose tool sets up
        environments of its own, on this machine's interpreter only
        (:func:`interpreters.narrow`): from the project's environment when
        the project declares the tool there, else as PATH gives it."""
        name, _, rest = interpreters.narrow(command, self.dir, gate).command.partition(" ")
        return f"{environments.python_tool(self.dir, name) if name in self.deps else name} {rest}"

    def uses_pytest(self) -> bool:
        return (
            "pytest" in self.tool
            or "pytest" in self.deps
            or _shared.first_file(self.dir, ("pytest.ini", ".pytest.ini", "conftest.py"))
            is not None
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

    def formats_with_ruff(self) -> bool:
        ruff_toml = _shared.first_file(self.dir, ("ruff.toml", ".ruff.toml"))
        return (
            "format" in _shared.table(self.tool, "ruff")
            or (ruff_toml is not None and "format" in _shared.read_toml(ruff_toml))
            or "ruff-format" in _shared.precommit_hooks(self.dir)
            or _shared.runs(self.dir, "ruff format", "hatch fmt")  # hatch fmt is ruff's formatter
        )

    def formats_with_black(self) -> bool:
        return (
            "black" in self.tool
            or bool({"black", "black-jupyter"} & _shared.precommit_hooks(self.dir))
            or _shared.runs(self.dir, "black")
        )

    def mypy_configured(self) -> bool:
        return (
            "mypy" in self.tool
            or self.mypy_ini.has_section("mypy")
            or self.setup_cfg.has_section("mypy")
        )

    def mypy_targets(self) -> str | None:
        """What mypy checks: ``""`` when its config names files, else ``-p``/``-m``
        options or the package dirs; None when there is nothing to name."""
        config = _shared.table(self.tool, "mypy")
        for ini in (self.mypy_ini, self.setup_cfg):
            if ini.has_section("mypy"):
                config = {**dict(ini["mypy"]), **config}
        if config.get("files"):
            return ""
        named = [f"-p {p}" for p in _names(config.get("packages"))]
        named += [f"-m {m}" for m in _names(config.get("modules"))]
        return " ".join(named) or self.package_dirs()

    def pyright_targets(self) -> str | None:
        """What pyright checks: ``""`` when its config has ``include``, else the
        package dirs; None when there is nothing to name."""
        config = {
            **_shared.read_json(self.dir / "pyrightconfig.json", comments=True),
            **_shared.table(self.tool, "pyright"),
        }
        return "" if config.get("include") else self.package_dirs()

    def uses_pyright(self) -> bool:
        return (
            "pyright" in self.tool
            or "pyright" in self.deps
            or (self.dir / "pyrightconfig.json").is_file()
        )

    def package_dirs(self) -> str | None:
        """The project's packages as paths: those its build config lists
        (setuptools, poetry, hatch), else ``src/<pkg>`` and top-level dirs
        with an ``__init__.py``, else the root module named for the project."""
        configured = [
            path for path in _configured_packages(self.tool) if (self.dir / path).exists()
        ]
        found = configured or [
            str(path.relative_to(self.dir))
            for base in (self.dir / "src", self.dir)
            if base.is_dir()
            for path in sorted(base.iterdir())
            if (path / "__init__.py").is_file()
            and path.name not in _NOT_PACKAGES
            and not path.name.startswith(".")
        ]
        name = str(_shared.table(self.pyproject, "project").get("name", "")).replace("-", "_")
        if not found and name and (self.dir / f"{name}.py").is_file():
            found = [f"{name}.py"]
        return quoting.shell(found) or None

    def format_command(self) -> str | None:
        if self.formats_with_ruff():
            return f"{self.from_env('ruff')} format --force-exclude {_PYTHON_FILES}"
        return f"{self.from_env('black')} {_PYTHON_FILES}" if self.formats_with_black() else None

    def lint_command(self) -> str | None:
        return f"{self.from_env('ruff')} check" if self.uses_ruff() else None

    def build_command(self) -> str | None:
        env = _sessions.type_check_env(self.dir)
        if env:
            return self.runner(env, "build")
        for uses, tool, targets in (
            (self.mypy_configured() or "mypy" in self.deps, "mypy", self.mypy_targets),
            (self.uses_pyright(), "pyright", self.pyright_targets),
        ):
            if uses:
                named = targets()
                return None if named is None else f"{self.from_env(tool)} {named}".rstrip()
        return None

    def test_command(self) -> str | None:
        env = _sessions.test_env(self.dir)
        if env is not None and env.setup:
            return self.runner(env.command, "tests")
        pytest = environments.python_tool(self.dir, "pytest", script="python -m pytest")
        return f"{pytest} {_PYTEST_OPTIONS}" if self.uses_pytest() else None

    def notes(self) -> list[str]:
        """Why the tests run through tox or nox rather than pytest, when they do."""
        env = _sessions.test_env(self.dir)
        if env is None or not env.setup:
            return []
        why = "; ".join(env.setup)
        return [
            f"tests: `{env.command}` rather than `{_PYTEST}`: it {why}, which pytest alone would not"
        ]


def _names(value: Any) -> list[str]:
    """A mypy option naming packages or modules (a list, or comma-separated text)."""
    items = value if isinstance(value, list) else str(value or "").split(",")
    return [str(item).strip() for item in items if str(item).strip()]


def _configured_packages(tool: dict[str, Any]) -> list[str]:
    """The package paths the build backend's config lists: ``[tool.setuptools]
    packages`` (top-level ones, under ``package-dir``), poetry's ``packages``,
    hatch's wheel ``packages``."""
    setuptools = _shared.table(tool, "setuptools")
    packages = setuptools.get("packages")  # a list, or a table asking setuptools to find them
    base = str(_shared.table(setuptools, "package-dir").get("", "")).strip("/")
    found = [
        f"{base}/{p}" if base else p
        for p in (packages if isinstance(packages, list) else [])
        if isinstance(p, str) and "." not in p
    ]
    for entry in _shared.table(tool, "poetry").get("packages") or []:
        if (
            isinstance(entry, dict)
            and isinstance(entry.get("include"), str)
            and "*" not in entry["include"]
        ):
            found.append("/".join(filter(None, (entry.get("from"), entry["include"]))))
    wheel = _shared.table(tool, "hatch", "build", "targets", "wheel")
    found += [p for p in wheel.get("packages") or [] if isinstance(p, str)]
    return found


def _read(project_dir: Path) -> _Project:
    """What the project declares (read once one of its markers is there)."""
    return _Project(project_dir)


#: What decides how pytest, ruff, black, mypy and pyright judge, and how they start.
_SURFACE = {
    "tests": ["**/test_*.py", "**/*_test.py", "**/tests/**", "**/test/**"],
    "config": [
        "**/conftest.py",
        # every file pytest 9's own discovery reads its configuration from
        "**/pytest.toml",
        "**/.pytest.toml",
        "**/pytest.ini",
        "**/.pytest.ini",
        "**/tox.ini",
        "**/setup.cfg",
        "noxfile.py",
        "pyproject.toml#tool,project.entry-points",
        "**/pyproject.toml#tool",
        ".coveragerc",
        "**/ruff.toml",
        "**/.ruff.toml",
        "mypy.ini",
        ".mypy.ini",
        ".flake8",
        "pylintrc",
        ".pylintrc",
        "pyrightconfig.json",
        ".pre-commit-config.yaml",
    ],
    "startup": [
        "pytest.py",
        "pytest/**",
        "_pytest/**",
        "py.py",
        "pluggy.py",
        "pluggy/**",
        "ruff.py",
        "black.py",
        "black/**",
        "mypy.py",
        "mypy/**",
        "pyright.py",
        "tox.py",
        "nox.py",
        "coverage.py",
        "**/sitecustomize.py",
        "**/usercustomize.py",
        "**/*.pth",
        "bin/pytest",
        "bin/py.test",
        "bin/python*",
        "bin/ruff",
        "bin/black",
        "bin/mypy",
        "bin/tox",
    ],
}

PYTHON = ProjectType(
    markers=MARKERS[__name__],
    read=_read,
    name="python",
    format=_Project.format_command,
    lint=_Project.lint_command,
    build=_Project.build_command,
    tests=_Project.test_command,
    notes=_Project.notes,
    surface=_SURFACE,
)
globals().update(PYTHON.hookimpls())


@hookimpl
def stepkit_gate_fault(gate: str, command: str, project_dir: Path) -> str | None:
    """A tox or nox command whose every environment needs another Python
    than this machine's: why it cannot run here, and the stepkit.toml line
    that would run it on this one."""
    if PYTHON.seen(project_dir) is None:
        return None
    return interpreters.narrow(command, project_dir, gate).fault or None


#: what Python imports a module from
_IMPORTABLE = (".py", ".pyw", ".pyc", ".so", ".pyd")
#: the runner's own modules and the ones it imports from site-packages
_RUNNER_MODULES = frozenset(
    {
        "pytest",
        "_pytest",
        "py",
        "pluggy",
        "iniconfig",
        "packaging",
        "tomli",
        "exceptiongroup",
        "colorama",
        "pygments",
        "execnet",
        "xdist",
        "pytest_cov",
        "coverage",
        "typing_extensions",
    }
)


@hookimpl
def stepkit_added_file_reach(
    project_dir: Path, path: str, test_file: bool, search_roots: list[str]
) -> str | None:
    """A module the step added among a Python project's tests runs in one
    process with the tests that were there before it (pytest and unittest
    import every test module before the first test runs): its code, at
    import or in a test that runs first, or last and rewrites the session's
    outcome, can change what they report.  A module added where Python
    looks first (the root, which ``python -m`` puts on ``sys.path`` first,
    or a directory on a gate's ``PYTHONPATH``) under the name of a module
    of Python's own library or of the runner's is imported in its place."""
    parent, _, name = path.rpartition("/")
    if PYTHON.seen(project_dir) is None or not name.endswith(_IMPORTABLE):
        return None
    shadowed = _shadowed_module(parent, name, search_roots)
    if shadowed is not None:
        return f"a module where Python looks first, imported in place of {shadowed} (Python's or the test runner's own)"
    if name.endswith(".py") and _collectable(project_dir, path):
        return "a test module, run in one process with the tests that were there before it"
    if not test_file:
        return None
    return "a module among the tests, which a test can import in place of the code under test"


#: pytest's default ``python_files``
_DEFAULT_PYTHON_FILES = ("test_*.py", "*_test.py")


def _collectable(project_dir: Path, path: str) -> bool:
    """pytest collects ``path`` as a test module: its name (or its path, for
    a pattern with a ``/``) matches a ``python_files`` pattern of any pytest
    configuration at the project's root, or pytest's default."""
    name = path.rpartition("/")[2]
    return any(
        fnmatch.fnmatch(path if "/" in pattern else name, pattern)
        for pattern in (*_DEFAULT_PYTHON_FILES, *_python_files(project_dir))
    )


def _python_files(project_dir: Path) -> list[str]:
    """Every ``python_files`` pattern the pytest configuration files at
    ``project_dir`` set (all of them, not only the one pytest picks: a
    file it would skip today is one rename away)."""
    values: list[object] = []
    for name in ("pytest.toml", ".pytest.toml"):
        values.append(
            _shared.table(_shared.read_toml(project_dir / name), "pytest").get("python_files")
        )
    pyproject = _shared.read_toml(project_dir / "pyproject.toml")
    for path in (("tool", "pytest", "ini_options"), ("tool", "pytest")):
        values.append(_shared.table(pyproject, *path).get("python_files"))
    for name, section in (
        ("pytest.ini", "pytest"),
        (".pytest.ini", "pytest"),
        ("tox.ini", "pytest"),
        ("setup.cfg", "tool:pytest"),
    ):
        ini = _shared.read_ini(project_dir / name)
        values.append(ini.get(section, "python_files", fallback=None))
    patterns: list[str] = []
    for value in values:
        if isinstance(value, str):
            patterns += value.split()
        elif isinstance(value, list):
            patterns += [item for item in value if isinstance(item, str)]
    return patterns


def _shadowed_module(parent: str, name: str, search_roots: list[str]) -> str | None:
    """The module of Python's library or of the runner that a file named
    ``name`` in ``parent`` stands in for, when ``parent`` (or, for a
    package's ``__init__``, its parent) is a directory Python searches first."""
    root, module = parent, name.split(".", 1)[0]
    if module == "__init__":
        root, _, module = parent.rpartition("/")
    if root and root not in search_roots:
        return None
    library = (
        module in sys.stdlib_module_names
        and module not in sys.builtin_module_names
        and module != "test"
    )
    return module if library or module in _RUNNER_MODULES else None
