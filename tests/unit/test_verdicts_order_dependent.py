"""Flaky means flaky: a failing test is flaky only when it passes as the
suite is re-run the way it failed.  A test that fails in the suite and
passes alone is an ORDER-DEPENDENT failure: it fails the gate and is named
with the test it fails after.  Real pytest suites, ``stepkit verify
--baseline HEAD`` on a real git repo."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from stepkit.cli import main
from tests.support.gitrepo import init_repo

PYTEST = f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider tests"
CALC = "def add(a, b):\n    return a + b\n"
#: the step's calc: state kept between calls, so the second call is wrong
LEAKY_CALC = "_calls = []\n\n\ndef add(a, b):\n    _calls.append((a, b))\n    return a + b if len(_calls) == 1 else a - b\n"
SUITE = "import calc\n\n\ndef test_a():\n    assert calc.add(1, 1) == 2\n\n\ndef test_b():\n    assert calc.add(2, 3) == 5\n"


def verify(capsys, project: Path) -> tuple[int, dict]:
    code = main(["verify", "--project-dir", str(project), "--json", "--baseline", "HEAD"])
    return code, next(
        g for g in json.loads(capsys.readouterr().out)["gates"] if g["name"] == "tests"
    )


def project_with(tmp_path: Path, files: dict[str, str]) -> Path:
    config = f'[commands]\nformat = ""\nlint = ""\nbuild = ""\ntest = "{PYTEST}"\n'.replace(
        "\\", "\\\\"
    )
    return init_repo(
        tmp_path / "repo",
        {
            "stepkit.toml": config,
            ".gitignore": ".stepkit/\n__pycache__/\n",
            "calc.py": CALC,
            "conftest.py": "",
            **files,
        },
    )


def test_a_test_that_fails_after_another_and_passes_alone_fails_the_gate_named_order_dependent(
    tmp_path, capsys
):
    project = project_with(tmp_path, {"tests/test_x.py": SUITE})
    (project / "calc.py").write_text(LEAKY_CALC)
    code, gate = verify(capsys, project)
    assert (code, gate["status"]) == (1, "fail"), gate["evidence"]
    assert gate["flaky"] == []
    assert gate["new_failures"] == ["tests/test_x.py::test_b"]
    assert gate["order_dependent"] == [
        "tests/test_x.py::test_b fails after tests/test_x.py::test_a"
    ]
    assert (
        "order-dependent: tests/test_x.py::test_b fails after tests/test_x.py::test_a"
        in gate["evidence"]
    )


def test_the_test_it_fails_after_is_found_among_many_that_ran_before_it(tmp_path, capsys):
    innocent = "".join(f"\n\ndef test_n{i}():\n    assert True\n" for i in range(6))
    polluter = "import calc\n\n\ndef test_polluter():\n    assert calc.add(1, 1) == 2\n"
    victim = "import calc\n\n\ndef test_victim():\n    assert calc.add(2, 3) == 5\n"
    project = project_with(
        tmp_path,
        {
            "tests/test_1.py": innocent,
            "tests/test_2.py": polluter + innocent,
            "tests/test_3.py": innocent,
            "tests/test_4.py": victim,
        },
    )
    (project / "calc.py").write_text(LEAKY_CALC)
    code, gate = verify(capsys, project)
    assert (code, gate["status"]) == (1, "fail"), gate["evidence"]
    assert gate["order_dependent"] == [
        "tests/test_4.py::test_victim fails after tests/test_2.py::test_polluter"
    ]


def test_a_test_that_passes_when_the_whole_suite_is_re_run_is_flaky(tmp_path, capsys):
    state = tmp_path / "runs"
    flaky = (
        "import pathlib\n\n\ndef test_sometimes():\n"
        f"    counter = pathlib.Path({str(state)!r})\n"
        "    runs = int(counter.read_text()) if counter.exists() else 0\n"
        "    counter.write_text(str(runs + 1))\n    assert runs > 0\n"
    )
    project = project_with(tmp_path, {"tests/test_f.py": flaky, "tests/test_x.py": SUITE})
    code, gate = verify(capsys, project)
    assert (code, gate["status"]) == (0, "pass"), gate["evidence"]
    assert gate["flaky"] == ["tests/test_f.py::test_sometimes"] and gate["order_dependent"] == []
