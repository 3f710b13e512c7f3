"""A git submodule that is not checked out is the checkout's set-up, not the
code: a gate failing for want of its files is an environment fault naming
``git submodule update --init``.  Real git repositories with a real
(``file://``) submodule, cloned without it, as CI's checkout and a plain
``git clone`` leave it; real pytest and a real C compiler."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from stepkit.cli import main
from tests.support.gitrepo import git, init_repo

PY = shlex.quote(sys.executable)
READS_CASES = (
    "from pathlib import Path\n\n\n"
    "def test_cases():\n"
    "    assert Path('tests/cases/one.txt').read_text() == 'one\\n'\n"
)


def verify(capsys, project: Path, **commands: str) -> dict:
    """``stepkit verify --json`` on ``project`` with these gate commands (the others empty)."""
    table = {"format": "", "lint": "", "build": "", "test": "", **commands}
    (project / "stepkit.toml").write_text(
        "[commands]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in table.items())
    )
    main(["verify", "--project-dir", str(project), "--json"])
    return {g["name"]: g for g in json.loads(capsys.readouterr().out)["gates"]}


def clone_without_submodule(tmp_path: Path, files: dict[str, str], at: str) -> Path:
    """A clone (no ``--recurse-submodules``) of a repo holding ``files`` and,
    at ``at``, a submodule with ``one.txt`` and ``lib.h``."""
    lib = init_repo(tmp_path / "lib", {"one.txt": "one\n", "lib.h": "#define ONE 1\n"})
    origin = init_repo(tmp_path / "origin", files)
    git(origin, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), at)
    git(origin, "commit", "-qm", "a submodule")
    git(tmp_path, "clone", "-q", str(origin), "clone")
    return tmp_path / "clone"


def init_submodules(project: Path) -> None:
    git(project, "-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init")


def assert_submodule_fault(gate: dict, declared: str) -> None:
    assert gate["status"] == "error", gate
    assert f"the git submodule {declared} is not checked out" in gate["summary"], gate
    assert "git submodule update --init" in gate["summary"]
    assert "an environment fault, not a failure of the code" in gate["evidence"]


def test_tests_failing_for_an_uninitialised_submodule_are_an_environment_fault(tmp_path, capsys):
    project = clone_without_submodule(tmp_path, {"tests/test_cases.py": READS_CASES}, "tests/cases")
    assert (project / "tests/cases").is_dir() and not any((project / "tests/cases").iterdir())
    command = f"{PY} -m pytest -q -p no:cacheprovider tests"
    assert_submodule_fault(verify(capsys, project, test=command)["tests"], "tests/cases")
    init_submodules(project)
    assert verify(capsys, project, test=command)["tests"]["status"] == "pass"


def test_a_build_missing_a_header_of_a_removed_submodule_dir_is_an_environment_fault(
    tmp_path, capsys
):
    """The variant: the build gate, a C compiler's own words, the project a
    subdirectory of the repository, the submodule's directory absent."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    main_c = '#include "../vendor/lib/lib.h"\nint main(void) { return ONE - 1; }\n'
    clone = clone_without_submodule(tmp_path, {"app/main.c": main_c}, "vendor/lib")
    (clone / "vendor/lib").rmdir()
    gate = verify(capsys, clone / "app", build="cc -c main.c -o /dev/null")["build"]
    assert_submodule_fault(gate, "vendor/lib")


def test_a_failure_not_naming_the_missing_submodule_stays_a_failure(tmp_path, capsys):
    wrong = "def test_wrong():\n    assert 1 == 2\n"
    project = clone_without_submodule(tmp_path, {"tests/test_wrong.py": wrong}, "tests/cases")
    gate = verify(capsys, project, test=f"{PY} -m pytest -q -p no:cacheprovider tests")["tests"]
    assert gate["status"] == "fail", gate
