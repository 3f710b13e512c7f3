"""A project whose path holds a space (or a quote, a ``$``, a non-ASCII
letter) runs its gates like any: every path stepkit puts into a command or
into a variable a tool parses (pytest's junit report in ``PYTEST_ADDOPTS``,
node's reporter in ``NODE_OPTIONS``) is quoted for that tool.  Real CLI,
real pytest and node, a real git repository, the scripted engine and coder.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.e2e import GOOD_MUL, PY, Project, Result, make_project

MUL_TEST = "import calc\n\n\ndef test_mul():\n    assert calc.mul(2, 3) == 6\n"
NODE_TEST = """const test = require("node:test");
const assert = require("node:assert");
test("adds", () => assert.strictEqual(1 + 1, 2));
"""


def project_in(parent: Path, test_command: str, files: dict[str, str]) -> Project:
    """The e2e project in ``parent`` (a path with odd characters) whose
    tests gate is ``test_command`` over ``files``."""
    parent.mkdir(parents=True)
    project = make_project(parent, reviewer=False)
    config = project.root / "stepkit.toml"
    config.write_text(config.read_text().replace(f'test = "{PY} check.py"', test_command))
    for rel, text in files.items():
        (project.root / rel).parent.mkdir(parents=True, exist_ok=True)
        (project.root / rel).write_text(text)
    project.git("add", "-A")
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a test suite")
    project.coder_actions(
        {
            "write": {"calc.py": GOOD_MUL, "tests/test_mul.py": MUL_TEST},
            "sentinel": "CODER_COMPLETE",
        }
    )
    return project


def report_of(result: Result, report: str) -> str:
    """The text of the runner's ``report`` the tests gate of a run or verify
    wrote where stepkit asked for it (beside the gate's log), once it passed."""
    assert result.data, result.stdout + result.stderr
    gate = next(g for g in result.data["gates"] if g["name"] == "tests")
    assert gate["status"] == "pass", gate
    written = Path(gate["log"]).with_suffix(".report") / report
    assert written.is_file(), gate
    return written.read_text()


def pytest_project(parent: Path) -> Project:
    return project_in(
        parent,
        f'test = "{PY} -m pytest -q -p no:cacheprovider tests"',
        {
            "tests/test_calc.py": "import calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n"
        },
    )


@pytest.mark.slow
def test_run_and_verify_of_a_pytest_project_in_a_path_with_a_space(tmp_path):
    parent = tmp_path / "my proj"
    project = pytest_project(parent)

    paused = project.run()
    assert paused.code == 5, paused.stdout + paused.stderr
    assert 'name="test_mul"' in report_of(paused, "pytest-junit.xml")
    assert project.coder_calls() == 1  # no fix round spent on code that was right
    done = project.resume("approve")
    assert done.outcome == "STEP_COMPLETE", done.stdout + done.stderr

    verified = project.stepkit("verify", "--project-dir", str(project.root))
    assert verified.code == 0, verified.stdout + verified.stderr
    assert 'name="test_mul"' in report_of(verified, "pytest-junit.xml")
    # pytest wrote no report beside the project under the path's first word
    assert sorted(p.name for p in tmp_path.iterdir()) == ["my proj"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ['it\'s $HOME `x` \\ "q"', "tab\there ä"])
def test_verify_of_a_pytest_project_in_a_path_with_quotes_and_dollars(tmp_path, name):
    project = pytest_project(tmp_path / name)
    verified = project.stepkit("verify", "--project-dir", str(project.root))
    assert verified.code == 0, verified.stdout + verified.stderr
    assert 'name="test_add"' in report_of(verified, "pytest-junit.xml")
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_test_reports_every_test_from_a_path_with_a_space_and_a_quote(tmp_path):
    project = project_in(
        tmp_path / 'node "proj" x',
        'test = "node --test"',
        {"test/add.test.js": NODE_TEST},
    )
    verified = project.stepkit("verify", "--project-dir", str(project.root))
    assert verified.code == 0, verified.stdout + verified.stderr
    assert '"name":"adds"' in report_of(verified, "node-test.jsonl")
