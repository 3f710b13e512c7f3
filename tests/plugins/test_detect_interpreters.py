"""tox and nox gates run the one environment of this machine's Python, not
the interpreter matrix; a matrix with none for it is an environment fault
naming the envs and the stepkit.toml line that would run one here.

The configurations are abridged and retyped by hand after real projects'
(pluggy's tox.ini, attrs's factor envs, platformdirs's tox.toml,
packaging's noxfile), on a machine fixed at Python 3.11."""

from __future__ import annotations

import pytest

from stepkit.api import detect_gates
from stepkit.plugins.projects import machine
from stepkit.plugins.projects.interpreters import narrow
from tests.support.gitrepo import write_files

#: pluggy's shape: generative envs for each CPython, PyPy, and envs named for a check.
PLUGGY_TOX = """\
[tox]
envlist=docs,py{39,310,311,312,313,py3},py{39}-pytest{main}

[testenv]
commands=
  {env:_PLUGGY_TOX_CMD:pytest} {posargs}
  coverage: coverage report -m
setenv=
  _PLUGGY_TOX_CMD=pytest
  coverage: _PLUGGY_TOX_CMD=coverage run -m pytest
extras=testing
deps=
  coverage: coverage
  pytestmain: git+https://github.com/pytest-dev/pytest.git@main

[testenv:docs]
deps = -r docs/requirements.txt
commands = sphinx-build -W -b html {toxinidir}/docs {toxinidir}/build/html-dist {posargs:}
"""

#: attrs's shape: a matrix of factor envs, each Python with a tests and a mypy env.
ATTRS_TOX = """\
[tox]
env_list =
    lint-{ruff,pre-commit},
    3.1{0-3}-tests,
    3.1{0-3}-mypy,
    pypy3.11-tests,

[testenv]
package = wheel
extras = tests
commands =
    tests: pytest {posargs:-n auto}
    mypy: mypy tests/typing_example.py

[testenv:lint-{ruff,pre-commit}]
skip_install = true
commands = pre-commit run --all-files
"""

#: platformdirs's shape: tox 4's TOML, env names that are bare versions.
PLATFORMDIRS_TOX_TOML = """\
env_list = [ "3.14", "3.13", "3.12", "3.11", "3.10", "pypy3.11", "type" ]
skip_missing_interpreters = true

[env_run_base]
package = "wheel"
dependency_groups = [ "test" ]
set_env.COVERAGE_FILE = "{work_dir}{/}.coverage.{env_name}"
commands = [ [ "pytest", "--durations", "10", "tests" ] ]

[env.type]
dependency_groups = [ "type" ]
commands = [ [ "ty", "check", "." ] ]
"""

#: packaging's shape: a session parametrised over Pythons, a lint pinned to one.
PACKAGING_NOXFILE = """\
import nox

nox.options.sessions = ["lint", "tests"]


@nox.session(python=["3.10", "3.11", "3.12", "pypy3.11"])
def tests(session: nox.Session) -> None:
    session.install("-e.[test]")
    session.run("python", "-m", "pytest", *session.posargs)


@nox.session(python="3.10")
def lint(session: nox.Session) -> None:
    session.install("pre-commit")
    session.run("pre-commit", "run", "--all-files", *session.posargs)


@nox.session(python=[*PYTHON_VERSIONS, "3.13t"], name="tests-all")
def every_python(session: nox.Session) -> None:
    session.run("python", "-m", "pytest")
"""


@pytest.fixture(autouse=True)
def python_311(monkeypatch):
    monkeypatch.setattr(machine, "version", {"python": "3.11.7"}.get)


def project(tmp_path, files):
    write_files(tmp_path, files)
    return tmp_path


def gates(path):
    return {g["name"]: (g["command"], g["fault"]) for g in detect_gates(path)["gates"]}


@pytest.mark.parametrize(
    ("files", "tests"),
    [
        ({"tox.ini": PLUGGY_TOX, "setup.py": ""}, "tox -e py311"),
        ({"tox.ini": ATTRS_TOX, "setup.py": ""}, "tox -e 3.11-tests"),
        ({"tox.toml": PLATFORMDIRS_TOX_TOML, "pyproject.toml": "[project]\n"}, "tox -e 3.11"),
        (
            {
                "pyproject.toml": "[tool.tox]\nlegacy_tox_ini = '''\n"
                + PLUGGY_TOX.replace("py{39,310,311", "py3{9,10,11")
                + "'''\n"
            },
            "tox -e py311",
        ),
        ({"noxfile.py": PACKAGING_NOXFILE, "setup.py": ""}, "nox -s tests-3.11"),
    ],
    ids=["pluggy-tox.ini", "attrs-factors", "platformdirs-tox.toml", "legacy_tox_ini", "nox"],
)
def test_the_tests_gate_runs_the_env_of_this_machines_python(tmp_path, files, tests):
    assert gates(project(tmp_path, {**files, "tests/test_a.py": ""}))["tests"] == (tests, None)


@pytest.mark.parametrize(
    ("files", "command", "narrowed"),
    [
        # a whole env_list: the envs of other Pythons are left out, the rest kept
        # (py39-pytestmain is pinned to 3.9 by its factor)
        ({"tox.ini": PLUGGY_TOX}, "tox", "tox -e docs,py311"),
        # a list of Pythons CI runs in one job
        ({"tox.ini": PLUGGY_TOX}, "tox -e py310,py311,py312", "tox -e py311"),
        ({"tox.ini": PLUGGY_TOX}, "tox run -e py3{10,11} -- -x", "tox run -e py311 -- -x"),
        (
            {"tox.ini": ATTRS_TOX},
            "uv run --only-group tox tox run -f tests",
            "uv run --only-group tox tox run -e 3.11-tests",
        ),
        # already one env, or none for an interpreter: kept as CI chose it
        ({"tox.ini": PLUGGY_TOX}, "tox -e py", None),
        ({"tox.ini": ATTRS_TOX}, "uv run --only-group tox tox run -f lint", None),
        ({"tox.ini": ATTRS_TOX}, "tox run -e 3.11-tests", None),
        ({"tox.ini": PLUGGY_TOX}, "tox -e $TOX_ENV", None),
        ({"tox.ini": PLUGGY_TOX}, "tox -m tests", None),
        # nox: a parametrised session narrowed, the default sessions read
        ({"noxfile.py": PACKAGING_NOXFILE}, "pipx run nox -s tests", "pipx run nox -s tests-3.11"),
        ({"noxfile.py": PACKAGING_NOXFILE}, "nox", "nox -s tests-3.11"),
        ({"noxfile.py": PACKAGING_NOXFILE}, "nox -s tests-3.11", None),
        ({"noxfile.py": PACKAGING_NOXFILE}, "nox -s tests --force-python 3.11", None),
        # a python= that is no literal is not guessed
        ({"noxfile.py": PACKAGING_NOXFILE}, "nox -s tests-all", None),
    ],
)
def test_a_command_runs_only_this_machines_interpreter(tmp_path, files, command, narrowed):
    found = narrow(command, project(tmp_path, files), "tests")
    assert found == (narrowed or command, "")


def test_the_ci_line_running_the_whole_tox_matrix_is_narrowed(tmp_path):
    ci = "jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: tox\n"
    path = project(
        tmp_path, {"tox.ini": PLUGGY_TOX, "setup.py": "", ".github/workflows/ci.yml": ci}
    )
    data = detect_gates(path)
    tests = next(g for g in data["gates"] if g["name"] == "tests")
    assert (tests["command"], tests["source"], tests["fault"]) == (
        "tox -e docs,py311",
        ".github/workflows/ci.yml:5",
        None,
    )


@pytest.mark.parametrize(
    ("files", "gate", "fault"),
    [
        (
            {"tox.ini": "[tox]\nenv_list = py3{12,13}\n[testenv]\nextras = test\n"},
            "tests",
            (
                "no tox environment it runs (py312) is for this machine's Python 3.11; "
                "the project's: py312 (3.12), py313 (3.13). Install one of those Pythons, or set "
                'the gate\'s command in stepkit.toml: [commands] test = "tox -e py311"'
            ),
        ),
        (
            {"tox.toml": 'env_list = ["3.12", "3.13"]\n[env_run_base]\nset_env.A = "1"\n'},
            "tests",
            (
                "no tox environment it runs (3.12) is for this machine's Python 3.11; "
                "the project's: 3.12 (3.12), 3.13 (3.13). Install one of those Pythons, or set "
                'the gate\'s command in stepkit.toml: [commands] test = "tox -e 3.11"'
            ),
        ),
    ],
    ids=["tox.ini", "tox.toml"],
)
def test_a_matrix_without_this_machines_python_is_an_environment_fault(
    tmp_path, files, gate, fault
):
    found = gates(project(tmp_path, {**files, "setup.py": "", "tests/test_a.py": ""}))
    assert found[gate][1] == fault


def test_a_nox_session_pinned_to_another_python_is_a_fault_with_a_line_that_runs_it_here(
    tmp_path,
):
    ci = (
        "jobs:\n  lint:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: pipx run nox -s lint -- --show-diff-on-failure\n"
    )
    path = project(tmp_path, {"noxfile.py": PACKAGING_NOXFILE, ".github/workflows/lint.yml": ci})
    command, fault = gates(path)["lint"]
    assert command == "pipx run nox -s lint -- --show-diff-on-failure"
    assert fault == (
        "no nox session it runs (lint) is for this machine's Python 3.11; the project's: "
        "tests (3.10, 3.11, 3.12, pypy3.11), lint (3.10). Install one of those Pythons, or set "
        "the gate's command in stepkit.toml: "
        '[commands] lint = "pipx run nox -s lint --force-python 3.11 -- --show-diff-on-failure"'
    )
