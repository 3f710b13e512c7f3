"""pytest lists the step's start: every id its report names, read from a
real ``--collect-only`` run, and nothing when the listing is not whole.
The tests gate's verdict reads the list where every listed test ran to a
result after the step (:func:`conserved_by_listing`); any test that did not
leaves the verdict to the start's outcomes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from stepkit.config import Config
from stepkit.workspace.gates import run_gate
from stepkit.workspace.start_outcomes import conserved_by_listing
from stepkit.workspace.testlisting import list_tests

COMMAND = f"{sys.executable} -m pytest tests"

TESTS = {
    "tests/test_calc.py": (
        "import pytest\n\n"
        "@pytest.mark.parametrize('n', [1, 2, 'ma\\u00f1ana'])\n"
        "def test_n(n):\n    assert n\n\n"
        "class TestGroup:\n    def test_in_class(self):\n        assert True\n"
    ),
    "tests/deeper/test_more.py": "def test_more():\n    assert True\n",
}


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "project"
    for rel, text in {**TESTS, **files}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.fixture(autouse=True)
def _no_outer_options(monkeypatch):
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)


def listed(root: Path) -> list[str] | None:
    return list_tests(None, root, COMMAND, root.parent / "logs", Config())


def gate(root: Path):
    return run_gate("tests", COMMAND, None, root, root.parent / "gate-logs", 120, 120, None)


def test_the_listing_names_every_id_the_report_names(tmp_path):
    root = project(tmp_path, {})
    ids = listed(root)
    result = gate(root)
    assert result.status == "pass", result.summary
    assert ids is not None and len(ids) == 5
    assert set(ids) == set(result.tests.outcomes())
    assert conserved_by_listing(ids, result)


def test_a_listed_test_that_does_not_run_after_leaves_the_verdict_to_the_outcomes(tmp_path):
    root = project(tmp_path, {})
    ids = listed(root)
    (root / "tests/deeper/test_more.py").write_text(
        "import pytest\n\n@pytest.mark.skip\ndef test_more():\n    assert True\n"
    )
    result = gate(root)
    assert result.status == "pass"
    assert not conserved_by_listing(ids, result)
    (root / "tests/deeper/test_more.py").unlink()
    assert not conserved_by_listing(ids, gate(root))


@pytest.mark.parametrize(
    "files",
    [
        # the project's own -q: pytest prints a count per file, no ids
        {"pytest.ini": "[pytest]\naddopts = -q\n"},
        # a module that cannot be collected
        {"tests/test_broken.py": "import not_a_module_anywhere\n"},
        # a plugin's own line that looks like an id, on the terminal
        {
            "tests/conftest.py": (
                "def pytest_collection_finish(session):\n"
                "    reporter = session.config.pluginmanager.get_plugin('terminalreporter')\n"
                "    reporter.write_line('tests/test_calc.py::test_forged')\n"
            )
        },
    ],
    ids=["own -q", "collection error", "printed id"],
)
def test_a_listing_that_is_not_whole_lists_nothing(tmp_path, files):
    assert listed(project(tmp_path, files)) is None


@pytest.mark.parametrize("flags", ["-q", "-v", "-qq", "--verbose -q -q"])
def test_the_commands_own_verbosity_still_lists_every_id(tmp_path, flags):
    root = project(tmp_path, {})
    ids = list_tests(None, root, f"{COMMAND} {flags}", root.parent / "logs", Config())
    assert ids is not None and len(ids) == 5, ids


def test_no_list_tells_nothing(tmp_path):
    result = gate(project(tmp_path, {}))
    assert not conserved_by_listing(None, result)
