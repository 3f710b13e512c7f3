"""One whole-suite run per coder round in the critical path.

A step that adds a test module and changes code is judged by the earlier
tests without the new module (in the pristine copy) and the new module in
a process of its own, instead of the whole gate followed by the whole
pristine re-check; a hostile module added among the tests is caught all
the same.  A step that changes more of the surface runs the pristine
re-check beside the gate.  The rerun of a failing id runs that id only.

Real pytest suites in tmp git repos, the real CLI, command coders
(tests/support/e2e.py, tests/e2e/test_hostile_coder.py).  The tests command
appends its working directory and its ``PYTEST_ADDOPTS`` to a marker file:
a line that selects nothing is a whole-suite run.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.test_hostile_coder import (
    ADD,
    BROKEN,
    PYTEST,
    TEST_MUL,
    gate_of_tests,
    python_project,
)
from tests.support.e2e import GOOD_MUL, PY, Project, sh

#: an added module that makes the broken add pass the earlier test (pytest imports it first)
PATCHING = "import calc\n\ncalc.add = lambda a, b: a + b\n\n\ndef test_patch():\n    assert True\n"


def counted(project: Project) -> Path:
    """Make the tests command append ``<cwd>\\t<PYTEST_ADDOPTS>`` to a marker file."""
    marker = project.state_dir / "test_runs"
    script = project.state_dir / "counted.sh"
    script.write_text(
        f'#!/bin/sh\nprintf "%s\\t%s\\n" "$(pwd)" "$PYTEST_ADDOPTS" >> "{marker}"\nexec {PYTEST}\n'
    )
    config = project.root / "stepkit.toml"
    config.write_text(
        config.read_text().replace(f'test = "{PYTEST}"', f'test = "{sh("sh", script)}"')
    )
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "counted tests")
    return marker


def runs(marker: Path, project: Project) -> list[str]:
    """Each run: ``project`` or ``copy``, ``whole`` (nothing selected) or ``only``."""
    root = str(project.root.resolve())
    found = []
    for line in marker.read_text().splitlines() if marker.exists() else []:
        where, _, addopts = line.partition("\t")
        whole = not any(w.endswith(".py") or "::" in w or w == "-k" for w in addopts.split())
        found.append(f"{'project' if where == root else 'copy'} {'whole' if whole else 'only'}")
    return found


def test_a_step_that_adds_a_test_module_runs_the_whole_suite_once_after_the_coder(tmp_path):
    project = python_project(tmp_path)
    marker = counted(project)
    project.coder_actions(
        {
            "write": {"calc.py": GOOD_MUL, "tests/unit/test_mul.py": TEST_MUL},
            "sentinel": "CODER_COMPLETE",
        }
    )
    paused = project.run()
    assert paused.code == 5, paused.stdout + paused.stderr
    gate = gate_of_tests(paused.data)
    assert gate["status"] == "pass", gate
    assert "2 passed" in gate["summary"], gate  # the earlier test and the new one
    found = runs(marker, project)
    # the start, measured in its copy while the coder works; then the earlier tests once in
    # the pristine copy and the new module alone in the project
    assert found.count("copy whole") + found.count("project whole") == 2, found
    assert found.count("project only") == 1, found


@pytest.mark.slow
def test_an_added_module_that_hides_a_broken_test_still_fails_the_gate(tmp_path):
    project = python_project(tmp_path)
    project.coder_actions(
        {
            "write": {"calc.py": BROKEN, "tests/unit/test_zz.py": PATCHING},
            "sentinel": "CODER_COMPLETE",
        }
    )
    result = project.run()
    assert result.outcome == "STEP_FAILED", result.stdout + result.stderr
    gate = gate_of_tests(result.data)
    assert gate["status"] == "fail" and ADD in gate["new_failures"], gate


@pytest.mark.slow
def test_a_failing_id_is_rerun_alone_without_the_cache(tmp_path):
    # an earlier test the step breaks: one in a module the step added is never re-run
    project = python_project(tmp_path)
    marker = counted(project)
    project.coder_actions({"write": {"calc.py": BROKEN}, "sentinel": "CODER_COMPLETE"})
    project.run()
    lines = marker.read_text().splitlines()
    reruns = [line for line in lines if ADD in line]
    assert reruns, lines
    assert all("--deselect" not in line and "no:cacheprovider" in line for line in reruns), reruns


@pytest.mark.slow
def test_the_added_module_alone_runs_alone_when_the_command_names_the_test_directory(tmp_path):
    # `pytest tests`: the command's own path would collect the whole suite again beside the new
    # module; the rest of that path is deselected, so the process of its own runs the module only
    project = python_project(tmp_path, test="pytest -q -p no:cacheprovider tests")
    env, summaries = summarised(project)
    project.coder_actions(
        {
            "write": {"calc.py": GOOD_MUL, "tests/unit/test_mul.py": TEST_MUL},
            "sentinel": "CODER_COMPLETE",
        }
    )
    paused = project.run(env=env)
    assert paused.code == 5, paused.stdout + paused.stderr
    gate = gate_of_tests(paused.data)
    assert gate["status"] == "pass" and "2 passed" in gate["summary"], gate
    root = str(project.root.resolve())
    alone = [s for where, addopts, s in summaries() if where == root and "test_mul.py" in addopts]
    assert alone == ["1 passed"], summaries()


def summarised(project: Project) -> tuple[dict[str, str], Callable[[], list[list[str]]]]:
    """A ``pytest`` first on PATH (the environment returned) that runs the
    real one and logs ``<cwd>\t<PYTEST_ADDOPTS>\t<its summary>``; the reader
    of those lines (the summary: what pytest ran, whatever it was asked)."""
    marker = project.state_dir / "test_summaries"
    bin_dir = project.state_dir / "bin"
    bin_dir.mkdir()
    script = bin_dir / "pytest"
    script.write_text(
        f'#!/bin/sh\nout=$({PY} -m pytest "$@" 2>&1)\ncode=$?\nprintf "%s\\n" "$out"\n'
        'summary=$(printf "%s\\n" "$out" | grep -oE "[0-9]+ (passed|failed)" | paste -sd " ")\n'
        f'printf "%s\\t%s\\t%s\\n" "$(pwd)" "$PYTEST_ADDOPTS" "$summary" >> "{marker}"\n'
        "exit $code\n"
    )
    script.chmod(0o755)
    env = project.env(PATH=os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]))

    def read() -> list[list[str]]:
        lines = marker.read_text().splitlines() if marker.exists() else []
        return [line.split("\t") for line in lines]

    return env, read
