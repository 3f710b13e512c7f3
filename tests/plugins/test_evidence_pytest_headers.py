"""Failing pytest ids with their file when the project's own options hide
the short test summary (``addopts = "-rN"``): read from the FAILURES
section headers and the first location of each traceback.  Real pytest, a
real project in a tmp dir."""

from __future__ import annotations

import subprocess
import sys

import pytest

from stepkit.plugins.evidence import pytest as parser
from tests.support.evidence_logs import condenser

parse = condenser(parser)

TESTS = """\
from helper import check


class TestA:
    def test_m(self):
        check(2)


@pytest.mark.parametrize("n", [1.5])
def test_p(n):
    assert n == 1


@pytest.fixture
def broken():
    raise RuntimeError("no database")


def test_needs_db(broken):
    pass


def test_f():
    assert 1 == 2


def test_ok():
    pass
"""


@pytest.mark.parametrize("tb", ["long", "short"])
def test_ids_come_with_their_file_when_the_short_summary_is_hidden(tmp_path, tb):
    (tmp_path / "tests").mkdir()
    (tmp_path / "helper.py").write_text("def check(x):\n    assert x == 1\n")
    (tmp_path / "tests" / "test_a.py").write_text("import pytest\n" + TESTS)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\naddopts = "-q -rN"\npythonpath = ["."]\n'
    )
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--tb={tb}"],
        check=False,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1 and "short test summary" not in run.stdout  # the project hid it
    text = parse("pytest", run.stdout)
    failing = text.split("first error of each failure:", 1)[0]
    assert failing.splitlines()[1:] == [  # pytest prints the ERRORS block first
        "  ERROR tests/test_a.py::test_needs_db",
        "  FAILED tests/test_a.py::TestA::test_m",
        "  FAILED tests/test_a.py::test_p[1.5]",
        "  FAILED tests/test_a.py::test_f",
    ]
    if tb == "long":
        assert (
            "TestA.test_m  (helper.py:2: AssertionError)" in text
        )  # the crash location stays with its error
    assert text.endswith("summary: 3 failed, 1 passed, 1 error")
