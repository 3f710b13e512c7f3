"""The scripts a gate command runs are on the verification surface; the
files it only reads as arguments are the code it judges; the directories it
puts on an interpreter's search path are where a module can stand in for
the runner's own.  Real files in a tmp project."""

from __future__ import annotations

import pytest

from stepkit.workspace.surface import command_files, search_roots
from tests.support.gitrepo import write_files

FILES = (
    "scripts/test",
    "ci/run.sh",
    "tools/check.py",
    "calc.py",
    "bin/lint",
    "backend/scripts/test",
)


@pytest.fixture
def project(tmp_path):
    write_files(tmp_path, dict.fromkeys(FILES, "#\n"))
    return tmp_path


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("sh scripts/test", ["scripts/test"]),
        ("./scripts/test -q", ["scripts/test"]),
        ("FOO=1 bash -e ci/run.sh --fast", ["ci/run.sh"]),
        ("/usr/bin/python3.11 -u tools/check.py calc.py", ["tools/check.py"]),
        ("make lint && bin/lint src", ["bin/lint"]),
        ("python -m py_compile calc.py", []),  # the code the build checks, not a script it runs
        ("python -c 'import calc'", []),
        ("node -e 'require(\"./calc.py\")' scripts/test", []),
        ("sh ../outside.sh", []),  # not the project's
        (
            "cd backend && sh scripts/test",
            ["backend/scripts/test"],
        ),  # a CI step's working-directory
        ("cd backend && ./scripts/test; cd .. && bin/lint", ["backend/scripts/test", "bin/lint"]),
        ("sh 'unbalanced", []),
    ],
)
def test_the_scripts_a_command_runs(project, command, expected):
    (project.parent / "outside.sh").write_text("#\n")
    assert command_files(project, [command]) == expected


def test_every_command_counts_once(project):
    assert command_files(project, ["sh scripts/test", "sh scripts/test -x", "bash ci/run.sh"]) == [
        "ci/run.sh",
        "scripts/test",
    ]


@pytest.mark.parametrize(
    ("command", "roots"),
    [
        ("PYTHONPATH=src python -m pytest", ["src"]),
        ("env PYTHONPATH=lib:src/extra pytest -q", ["lib", "src/extra"]),
        ("export PYTHONPATH=./src && pytest", ["src"]),
        ("NODE_PATH=lib node --test", ["lib"]),
        ("PYTHONPATH=. pytest", []),  # the root: searched first by python -m anyway
        ("PYTHONPATH=$PWD/src pytest", []),  # not known before the shell expands it
        ("PYTHONPATH=/usr/lib/python3/dist-packages pytest", []),  # outside the project
        (
            "pytest --pythonpath=src",
            [],
        ),  # pytest puts it there after it started: no shadow of pytest's own
    ],
)
def test_the_directories_a_command_puts_on_a_search_path(tmp_path, command, roots):
    assert search_roots(tmp_path, [command]) == roots
