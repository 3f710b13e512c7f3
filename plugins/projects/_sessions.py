"""tox environments and nox sessions: which a Python project defines, and
whether its test environment does set-up the plain test runner would miss.

tox is read from ``tox.ini``, ``tox.toml`` or ``[tool.tox]`` in
pyproject.toml (native tables or ``legacy_tox_ini``); nox from the
``@nox.session`` functions of ``noxfile.py``.  Nothing is run.
"""

from __future__ import annotations

import configparser
import re
from pathlib import Path
from typing import Any, NamedTuple

from stepkit.lazyregex import lazy_compile
from stepkit.plugins.projects import _shared

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
_NOX_SESSION = lazy_compile(
    r"^@(?:nox\.)?session\b(?P<decorator>[^\n]*)\n(?:@[^\n]*\n)*def\s+(?P<function>\w+)\s*\(",
    re.MULTILINE,
)


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
    tox = _tox_envs(project_dir)
    name = next((n for n in TYPE_CHECK_NAMES if n in tox), None)
    if name:
        return f"tox -e {name}"
    nox = _nox_sessions(project_dir)
    name = next((n for n in TYPE_CHECK_NAMES if n in nox), None)
    return f"nox -s {name}" if name else None


# -- tox ----------------------------------------------------------------------

#: an env's settings: key -> the value as text (lists joined by newlines).
_Settings = dict[str, str]


def _tox_envs(project_dir: Path) -> dict[str, _Settings]:
    """Each tox environment by name (``""``: the base every env runs on)."""
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
        return {
            section.removeprefix("testenv").removeprefix(":"): dict(ini[section])
            for section in ini.sections()
            if section == "testenv" or section.startswith("testenv:")
        }
    native = _shared.read_toml(project_dir / "tox.toml") or _shared.table(
        _shared.read_toml(project_dir / "pyproject.toml"), "tool", "tox"
    )
    envs = {"": _flatten(_shared.table(native, "env_run_base"))} if native else {}
    for name, settings in _shared.table(native, "env").items():
        envs[name] = _flatten(settings if isinstance(settings, dict) else {})
    return envs


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


def _tox_test_env(project_dir: Path) -> Env | None:
    envs = _tox_envs(project_dir)
    name = next((n for n in TEST_NAMES if n in envs), None)
    if name is None and "" not in envs:
        return None
    settings = {**envs.get("", {}), **envs.get(name or "", {})}
    setup = list(
        dict.fromkeys(does for key, does in _TOX_SETUP.items() if settings.get(key, "").strip())
    )
    if _EXTRAS_IN_DEPS.search(settings.get("deps", "")):
        setup.append("installs the project")
    commands = [line.strip() for line in settings.get("commands", "").splitlines() if line.strip()]
    setup += [f"runs {command}" for command in commands if not _PLAIN_TEST.match(command)]
    return Env(f"tox -e {name or 'py'}", tuple(setup))


# -- nox ----------------------------------------------------------------------


def _nox_sessions(project_dir: Path) -> dict[str, str]:
    """Each nox session by name, with the text of its function."""
    text = _shared.read_text(project_dir / "noxfile.py")
    matches = list(_NOX_SESSION.finditer(text))
    sessions = {}
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        named = re.search(r"name\s*=\s*[\"']([^\"']+)", match.group("decorator"))
        sessions[named.group(1) if named else match.group("function")] = text[match.end() : end]
    return sessions


def _nox_test_session(project_dir: Path) -> Env | None:
    sessions = _nox_sessions(project_dir)
    name = next((n for n in TEST_NAMES if n in sessions), None)
    if name is None:
        return None
    body = sessions[name]
    setup = [does for pattern, does in _NOX_SETUP if pattern.search(body)]
    for run in _NOX_RUN.finditer(body):
        words = " ".join(re.findall(r"[\"']([^\"']*)[\"']", run.group("args")))
        if not _PLAIN_TEST.match(words):
            setup.append(f"runs {words}")
    return Env(f"nox -s {name}", tuple(setup))
