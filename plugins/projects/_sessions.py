"""tox environments and nox sessions: which a Python project defines, and
whether its test environment does set-up the plain test runner would miss.

tox is read from ``tox.ini``, ``tox.toml`` or ``[tool.tox]`` in
pyproject.toml (native tables or ``legacy_tox_ini``), generative names
(``py3{11,12}``, ``3.1{0-5}-tests``) expanded as tox does; nox from the
``@nox.session`` functions of ``noxfile.py``, parsed (never imported) with
:mod:`ast`.  Nothing is run.
"""

from __future__ import annotations

import ast
import configparser
import itertools
import re
from pathlib import Path
from typing import Any, NamedTuple

from stepkit.lazyregex import lazy_compile
from stepkit.plugins.projects import _shared, machine

#: Names of environments/sessions that run the test suite, in preference order.
TEST_NAMES = ("tests", "test", "unit", "pytest")
#: Names of environments/sessions that type-check, in preference order.
TYPE_CHECK_NAMES = (
    "typecheck",
    "type-check",
    "type_check",
    "types",
    "typing",
    "check-types",
    "mypy",
    "pyright",
)

#: A test command the plain runner runs just as well (pytest, with any options).
_PLAIN_TEST = lazy_compile(
    r"^(?:\{envpython\}\s+-m\s+|python3?\s+-m\s+|coverage\s+run\s+(?:\S+\s+)*?-m\s+)?pytest(?:\s|$)"
)
#: Set-up in a tox env the plain runner does not do: setting -> what it does.
_TOX_SETUP = {
    "extras": "installs extras",
    "setenv": "sets environment variables",
    "set_env": "sets environment variables",
    "changedir": "changes directory",
    "change_dir": "changes directory",
}
_EXTRAS_IN_DEPS = lazy_compile(r"(?:^|\s)(?:-e\s+)?\.(?:\[|\s|$)|\{toxinidir\}")
#: Set-up in a nox session the plain runner does not do, and what it does.
_NOX_SETUP = (
    (lazy_compile(r"session\.env\b|\benv\s*="), "sets environment variables"),
    (lazy_compile(r"session\.chdir\("), "changes directory"),
    (lazy_compile(r"session\.install\([^)]*[\"'](?:-e\s*)?\.(?:\[|[\"'])"), "installs the project"),
)
_NOX_RUN = lazy_compile(r"session\.run\(\s*(?P<args>[^)]*)\)")


class Env(NamedTuple):
    """One tox environment or nox session."""

    #: the command that runs it: ``tox -e py``, ``nox -s tests``.
    command: str
    #: the set-up it does that the plain runner does not (``installs extras``,
    #: ``runs python runtests.py`` …); empty when there is none.
    setup: tuple[str, ...]


def test_env(project_dir: Path) -> Env | None:
    """The tox environment, else the nox session, that runs the tests; None
    when neither tool drives them."""
    return _tox_test_env(project_dir) or _nox_test_session(project_dir)


def type_check_env(project_dir: Path) -> str | None:
    """``tox -e NAME`` / ``nox -s NAME`` for an environment named for a type check."""
    tox = tox_envs(project_dir).settings
    name = next((n for n in TYPE_CHECK_NAMES if n in tox), None)
    if name:
        return f"tox -e {name}"
    nox = nox_sessions(project_dir).sessions
    name = next((n for n in TYPE_CHECK_NAMES if n in nox), None)
    return f"nox -s {name}" if name else None


# -- tox ----------------------------------------------------------------------

#: an env's settings: key -> the value as text (lists joined by newlines).
_Settings = dict[str, str]


class ToxEnvs(NamedTuple):
    """A project's tox environments."""

    #: each environment's own settings by name (``""``: the base every env runs on).
    settings: dict[str, _Settings]
    #: what a bare ``tox`` runs: ``env_list`` (``envlist``), generative names expanded.
    env_list: list[str]

    def names(self) -> list[str]:
        """Every environment the project names: its ``env_list``, then its own sections."""
        return list(dict.fromkeys([*self.env_list, *(n for n in self.settings if n)]))


#: A generative part of a tox env name: ``{11,12}``, ``{0-5}``.
_BRACES = lazy_compile(r"\{([^{}]*)\}")


def expand(name: str) -> list[str]:
    """Every env name a generative one stands for, as tox expands it:
    ``py3{11,12}`` → ``py311``, ``py312``; ``3.1{0-2}-tests`` → ``3.10-tests`` …"""
    parts: list[list[str]] = []
    last = 0
    for found in _BRACES.finditer(name):
        parts += [[name[last : found.start()]], _alternatives(found[1])]
        last = found.end()
    parts.append([name[last:]])
    return ["".join(combination) for combination in itertools.product(*parts)]


def _alternatives(inside: str) -> list[str]:
    found: list[str] = []
    for item in (part.strip() for part in inside.split(",")):
        bounds = re.fullmatch(r"(\d+)-(\d+)", item)
        if bounds and int(bounds[1]) <= int(bounds[2]):
            found += [str(n) for n in range(int(bounds[1]), int(bounds[2]) + 1)]
        else:
            found.append(item)
    return found


def env_names(value: object) -> list[str]:
    """An ``env_list`` (INI text, or a TOML list) as names, generative ones expanded."""
    if isinstance(value, list):
        items = [str(item) for item in value if isinstance(item, str)]
    else:
        # commas inside braces belong to the generative name
        items = re.findall(r"(?:\{[^{}]*\}|[^,\s{}])+", str(value or ""))
    return [name for item in items for name in expand(item.strip()) if name]


def tox_envs(project_dir: Path) -> ToxEnvs:
    """The project's tox environments (none without a tox configuration)."""
    ini = _shared.read_ini(project_dir / "tox.ini")
    if not ini.sections():
        legacy = _shared.table(_shared.read_toml(project_dir / "pyproject.toml"), "tool", "tox")
        if isinstance(legacy.get("legacy_tox_ini"), str):
            ini = configparser.ConfigParser(interpolation=None)
            try:
                ini.read_string(legacy["legacy_tox_ini"])
            except configparser.Error:
                ini = configparser.ConfigParser(interpolation=None)
    if ini.sections():
        settings: dict[str, _Settings] = {}
        for section in ini.sections():
            if section == "testenv" or section.startswith("testenv:"):
                for name in expand(section.removeprefix("testenv").removeprefix(":")):
                    settings[name] = dict(ini[section])
        tox = ini["tox"] if ini.has_section("tox") else {}
        return ToxEnvs(settings, env_names(tox.get("env_list") or tox.get("envlist")))
    native = _shared.read_toml(project_dir / "tox.toml") or _shared.table(
        _shared.read_toml(project_dir / "pyproject.toml"), "tool", "tox"
    )
    envs = {"": _flatten(_shared.table(native, "env_run_base"))} if native else {}
    for name, values in _shared.table(native, "env").items():
        envs[name] = _flatten(values if isinstance(values, dict) else {})
    return ToxEnvs(envs, env_names(native.get("env_list")))


def _flatten(settings: dict[str, Any]) -> _Settings:
    """Native tox settings as text: a list of commands (each a list of words)
    becomes one command a line."""
    flat = {}
    for key, value in settings.items():
        if isinstance(value, list):
            value = "\n".join(
                " ".join(map(str, v)) if isinstance(v, list) else str(v) for v in value
            )
        flat[key] = str(value)
    return flat


#: A tox factor (or ``basepython``) naming an interpreter: ``py311``, ``py3.11``,
#: ``3.11``, ``python3.11``, ``pypy3.10``, ``3.13t``; ``py`` alone is the one tox runs on.
_PYTHON_FACTOR = lazy_compile(
    r"^(?P<impl>py|python|cpython|pypy|graalpy|jython)?(?P<major>[23])(?:\.?(?P<minor>\d+))?"
    r"(?P<threaded>t)?$"
)


def tox_python(name: str, envs: ToxEnvs) -> str | None:
    """The interpreter tox env ``name`` needs, as its factor or ``basepython``
    names it (``py311``, ``3.11``, ``python3.10``); None when it names none
    (``py``, ``lint``): it runs on the Python tox runs on."""
    for factor in name.split("-"):
        if _PYTHON_FACTOR.match(factor):
            return factor
    base = {**envs.settings.get("", {}), **envs.settings.get(name, {})}.get("basepython", "")
    words = base.split()
    return words[0] if words and _PYTHON_FACTOR.match(Path(words[0]).name) else None


def runs_here(python: str) -> bool:
    """The interpreter a tox factor or nox ``python=`` names (``py311``,
    ``3.11``, ``pypy3.10``) is this machine's ``python3``: CPython of its
    version (a major version alone matches any of it; a free-threaded
    ``3.13t`` or another implementation does not)."""
    here = (machine.version("python") or "").split(".")
    spec = _PYTHON_FACTOR.match(Path(python).name)
    if spec is None or len(here) < 2 or spec["threaded"]:
        return False
    if spec["impl"] not in (None, "py", "python", "cpython"):
        return False
    return spec["major"] == here[0] and spec["minor"] in (None, here[1])


def _tox_test_env(project_dir: Path) -> Env | None:
    envs = tox_envs(project_dir)
    name = next((n for n in TEST_NAMES if n in envs.settings), None) or _tox_python_env(envs)
    if name is None and "" not in envs.settings:
        return None
    settings = {**envs.settings.get("", {}), **envs.settings.get(name or "", {})}
    setup = list(
        dict.fromkeys(does for key, does in _TOX_SETUP.items() if settings.get(key, "").strip())
    )
    if _EXTRAS_IN_DEPS.search(settings.get("deps", "")):
        setup.append("installs the project")
    commands = [line.strip() for line in settings.get("commands", "").splitlines() if line.strip()]
    setup += [f"runs {command}" for command in commands if not _PLAIN_TEST.match(command)]
    return Env(f"tox -e {name or 'py'}", tuple(setup))


def _tox_python_env(envs: ToxEnvs) -> str | None:
    """The env of the project's interpreter matrix that runs the tests on
    this machine's Python: one named only for it (``py311``, ``3.11``),
    else one of it named for the tests too (``py311-tests``), else its
    first; the matrix's first env when none runs here (the gate then reports
    that as an environment fault); None without a matrix."""
    pinned = [name for name in envs.names() if tox_python(name, envs) is not None]
    here = [name for name in pinned if runs_here(tox_python(name, envs) or "")]
    if not here:
        return pinned[0] if pinned else None
    alone = [name for name in here if "-" not in name]
    tests = [name for name in here if set(name.split("-")) & set(TEST_NAMES)]
    return (alone or tests or here)[0]


# -- nox ----------------------------------------------------------------------


class NoxSession(NamedTuple):
    """One ``@nox.session`` function."""

    #: the function's source text.
    body: str
    #: the interpreters its ``python=`` names (``()``: none, it runs on nox's own);
    #: None when ``python=`` is not a literal stepkit can read.
    pythons: tuple[str, ...] | None
    #: a bare ``nox`` runs it (``default=False`` says no).
    default: bool


class Noxfile(NamedTuple):
    sessions: dict[str, NoxSession]
    #: ``nox.options.sessions``: what a bare ``nox`` runs; None when not set.
    default_sessions: list[str] | None


def nox_sessions(project_dir: Path) -> Noxfile:
    """The sessions of the project's ``noxfile.py``, read from its syntax tree."""
    text = _shared.read_text(project_dir / "noxfile.py")
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return Noxfile({}, None)
    sessions: dict[str, NoxSession] = {}
    default_sessions: list[str] | None = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            ast.unparse(target) == "nox.options.sessions" for target in node.targets
        ):
            default_sessions = _strings(node.value)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for decorator in node.decorator_list:
            call = decorator if isinstance(decorator, ast.Call) else None
            if ast.unparse(call.func if call else decorator) not in ("nox.session", "session"):
                continue
            options = {k.arg: k.value for k in (call.keywords if call else []) if k.arg}
            named = options.get("name")
            name = named.value if isinstance(named, ast.Constant) else node.name
            python = options.get("python", options.get("py"))
            default = options.get("default")
            sessions[str(name)] = NoxSession(
                ast.get_source_segment(text, node) or "",
                () if python is None else _pythons(python),
                not (isinstance(default, ast.Constant) and default.value is False),
            )
    return Noxfile(sessions, default_sessions)


def _strings(node: ast.expr) -> list[str] | None:
    """A literal list or tuple of strings; None for anything else."""
    if not isinstance(node, (ast.List, ast.Tuple)):
        return None
    items = [
        item.value
        for item in node.elts
        if isinstance(item, ast.Constant) and isinstance(item.value, str)
    ]
    return items if len(items) == len(node.elts) else None


def _pythons(node: ast.expr) -> tuple[str, ...] | None:
    """A session's ``python=``: a version, a list of them, or none (``None``/``False``)."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            return (node.value,)
        return () if node.value in (None, False) else None
    listed = _strings(node)
    return tuple(listed) if listed is not None else None


def _nox_test_session(project_dir: Path) -> Env | None:
    sessions = nox_sessions(project_dir).sessions
    name = next((n for n in TEST_NAMES if n in sessions), None)
    if name is None:
        return None
    body = sessions[name].body
    setup = [does for pattern, does in _NOX_SETUP if pattern.search(body)]
    for run in _NOX_RUN.finditer(body):
        words = " ".join(re.findall(r"[\"']([^\"']*)[\"']", run.group("args")))
        if not _PLAIN_TEST.match(words):
            setup.append(f"runs {words}")
    return Env(f"nox -s {name}", tuple(setup))
