"""The step's start, measured once while the coder works
(:mod:`stepkit.workspace.start_outcomes`), and the three verdicts that read it:

- test-id conservation: a hostile coder breaks ``calc.add`` and makes its
  test not run (deselected, ignored, renamed, skipped, by a file the plan
  names or by the code under test itself): the tests gate fails, naming it;
- no baseline run after a failure: a step whose tests already failed at
  the start runs the tests command once in the scratch copy, before the
  gate, never after it; a failing test in a file the step added is new,
  and a round that fails on such tests alone goes back to the coder
  without waiting for the start's measure;
- commands proven on the start: a tests command that could not run on the
  start and cannot run now is an environment fault, with no fix round;
- a later step that starts from the same files reuses the cached outcomes.

Real pytest suites in tmp git repos, the real CLI, command coders
(tests/support/e2e.py, tests/e2e/test_hostile_coder.py).  Each test command
appends its working directory to a marker file, so the runs in the scratch
copy (under stepkit's state directory) are told from those in the project.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from stepkit.workspace.store import store_dir
from tests.e2e.test_hostile_coder import (
    ADD,
    BROKEN,
    DROP,
    PYPROJECT,
    PYTEST,
    TEST_CALC,
    TEST_MUL,
    gate_of_tests,
    python_project,
)
from tests.support.e2e import GOOD_MUL, PY, WRONG_MUL, Project, sh

CONSERVED = "held at the step's start does not run to a result after it"
#: the code under test skips the test that calls it: no configuration, no test file touched
SKIPPING_ADD = (
    "import sys\n\n\ndef add(a, b):\n    if 'pytest' in sys.modules:\n        import pytest\n\n"
    "        pytest.skip('not on this platform')\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
)
DESELECT = f'addopts = ["--deselect", "{ADD}"]\n'

#: a passing test the step adds, so that the suite still has one that runs
MUL = {"tests/unit/test_mul.py": TEST_MUL}
#: trick -> (calc.py, the files it writes beside it, what the plan's Tasks name).  Before
#: test-id conservation each reached the final approval (the code's own skip with the tests
#: gate NOT RUN; a configuration file the plan names with a flag only), but the renamed test
#: and the added skip, which the pristine re-check caught already
TRICKS: dict[str, tuple[str, dict[str, str], str]] = {
    "calc.add skips its own test": (SKIPPING_ADD, {}, ""),
    "pytest.toml deselects, the plan names pytest.toml": (
        BROKEN,
        {**MUL, "pytest.toml": "[pytest]\n" + DESELECT},
        "Configure pytest in `pytest.toml`.",
    ),
    "-k in addopts, the plan names pyproject.toml": (
        BROKEN,
        {
            **MUL,
            "pyproject.toml": PYPROJECT
            + '\n[tool.pytest.ini_options]\naddopts = ["-k", "not test_add"]\n',
        },
        "Set the pytest options in `pyproject.toml`.",
    ),
    "collect_ignore, the plan names conftest.py": (
        BROKEN,
        {**MUL, "conftest.py": 'collect_ignore = ["tests/unit/test_calc.py"]\n'},
        "Add a `conftest.py`.",
    ),
    "test renamed": (
        BROKEN,
        {"tests/unit/test_calc.py": TEST_CALC.replace("def test_add", "def check_add")},
        "",
    ),
    "skip added to the test": (
        BROKEN,
        {
            "tests/unit/test_calc.py": "import pytest\n\n"
            + TEST_CALC.replace("def test_add", "@pytest.mark.skip\ndef test_add")
        },
        "",
    ),
    # a variant no rule was written for
    "conftest.py drops the item, the plan names conftest.py": (
        BROKEN,
        {**MUL, "tests/conftest.py": DROP},
        "Add `tests/conftest.py`.",
    ),
}
DEFAULT_TRICKS = ("calc.add skips its own test",)


def counted(project: Project, test: str = PYTEST) -> Path:
    """Make the tests command append its working directory to a marker file
    (outside the project, writable by the sandboxed gates); return the file."""
    marker = project.state_dir / "test_runs"
    script = project.state_dir / "counted.sh"
    script.write_text(f'#!/bin/sh\npwd >> "{marker}"\nexec {test}\n')
    config = project.root / "stepkit.toml"
    config.write_text(
        config.read_text().replace(f'test = "{PYTEST}"', f'test = "{sh("sh", script)}"')
    )
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "counted tests")
    return marker


def runs_in(marker: Path, project: Project) -> list[str]:
    """``project`` (a run in the step's tree) or ``copy`` (the scratch copy), in order."""
    if not marker.exists():
        return []
    root = str(project.root.resolve())
    return ["project" if line == root else "copy" for line in marker.read_text().splitlines()]


@pytest.mark.parametrize(
    "trick",
    [t if t in DEFAULT_TRICKS else pytest.param(t, marks=pytest.mark.slow) for t in TRICKS],
)
def test_a_test_that_passed_at_the_start_and_does_not_run_after_fails_the_gate(tmp_path, trick):
    calc, files, tasks = TRICKS[trick]
    project = python_project(tmp_path, tasks=tasks)
    project.coder_actions({"write": {"calc.py": calc, **files}, "sentinel": "CODER_COMPLETE"})
    result = project.run()
    assert result.outcome == "STEP_FAILED", result.stdout + result.stderr
    gate = gate_of_tests(result.data)
    assert gate["status"] == "fail", gate
    assert CONSERVED in gate["summary"] and ADD in gate["summary"], gate
    assert ADD in gate["new_failures"]
    assert project.coder_calls() >= 2  # the fix loop heard it
    assert "is not a fix" in project.coder_prompt(1)


@pytest.mark.slow
def test_a_lost_test_whose_file_the_plan_names_is_a_flag_that_forces_the_review(tmp_path):
    project = python_project(tmp_path, tasks="Update `tests/unit/test_calc.py`.")
    files = TRICKS["skip added to the test"][1]
    project.coder_actions({"write": {"calc.py": GOOD_MUL, **files}, "sentinel": "CODER_COMPLETE"})
    paused = project.run()
    assert paused.code == 5, paused.stdout + paused.stderr
    question = paused.data["pending"]["question"]
    assert CONSERVED in question and ADD in question
    assert "the plan names tests/unit/test_calc.py among the files to change" in question
    assert gate_of_tests(paused.data)["status"] == "not_run"  # its one test skipped: it stands


@pytest.mark.slow
def test_tests_that_failed_at_the_start_cost_no_baseline_run_after_the_failure(tmp_path):
    project = python_project(tmp_path)
    old_bug = "\n\ndef test_old_bug():\n    assert 0.1 + 0.2 == 0.3\n"
    (project.root / "tests/unit/test_old.py").write_text(old_bug)
    project.git("add", "-A")
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "an old bug")
    marker = counted(project)
    project.coder_actions({"write": {"calc.py": GOOD_MUL}, "sentinel": "CODER_COMPLETE"})
    paused = project.run()
    assert paused.code == 5, paused.stdout + paused.stderr
    gate = gate_of_tests(paused.data)
    assert gate["status"] == "pass", gate
    assert gate["preexisting_failures"] == ["tests/unit/test_old.py::test_old_bug"]
    assert "measured while the coder worked" in gate["evidence"]
    # the start once, in the copy (beside the coder: before or beside the gate); the gate and
    # the failing id alone, in the project; no baseline run after the failure
    assert sorted(runs_in(marker, project)) == ["copy", "project", "project"]


@pytest.mark.slow
def test_a_failing_test_in_a_file_the_step_added_is_new_without_a_baseline(tmp_path):
    project = python_project(tmp_path)
    marker = counted(project)
    project.coder_actions(
        {
            "write": {"calc.py": WRONG_MUL, "tests/unit/test_mul.py": TEST_MUL},
            "sentinel": "CODER_COMPLETE",
        }
    )
    result = project.run()
    assert result.outcome == "STEP_FAILED", result.stdout + result.stderr
    gate = gate_of_tests(result.data)
    assert gate["new_failures"] == ["tests/unit/test_mul.py::test_mul"]
    assert gate["preexisting_failures"] == []
    assert "in files the step added: new" in gate["evidence"]
    assert "baseline: the same command" not in gate["evidence"]
    # each round, the earlier tests in the pristine copy (the step added a test module)
    # beside the new module alone in the project: never a baseline run.  No verdict waited
    # for the start's measure (every round failed on the step's own test), so it ran once
    # or, on a loaded machine, was stopped with the step before its command began
    runs = runs_in(marker, project)
    rounds = project.coder_calls()
    assert runs.count("project") == rounds, runs
    assert runs.count("copy") in (rounds, rounds + 1), runs


@pytest.mark.parametrize(
    "beside",
    [
        pytest.param({}, id="the new module alone"),
        # a variant no rule was written for: the step also adds a conftest, so the whole
        # suite runs in the project with the pristine re-check beside it
        pytest.param(
            {"tests/conftest.py": "# the step's own fixtures\n"},
            id="the whole suite, the re-check beside",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_a_round_failing_on_its_own_new_tests_goes_back_without_waiting_for_the_start(
    tmp_path, beside
):
    # the start's measure (the tests command on the start's calc.py, which has no mul) waits on
    # a fifo that only the coder's second round writes to: a first round whose verdict waited
    # for the measure would send nothing back to the coder until the gate's time limit killed it
    project = python_project(tmp_path)
    fifo, released = project.state_dir / "go", project.state_dir / "released"
    os.mkfifo(fifo)
    script = project.state_dir / "held.sh"
    script.write_text(
        f'#!/bin/sh\ngrep -q "def mul" calc.py || {{ read go < "{fifo}"; echo yes >> "{released}"; }}\n'
        f"exec {PYTEST}\n"
    )
    config = project.root / "stepkit.toml"
    config.write_text(
        config.read_text().replace(f'test = "{PYTEST}"', f'test = "{sh("sh", script)}"')
        + "\n[timeouts]\ntests = 30\n"
    )
    project.allow_writes(project.state_dir)
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "held tests")
    project.coder_actions(
        {
            "write": {"calc.py": WRONG_MUL, "tests/unit/test_mul.py": TEST_MUL, **beside},
            "sentinel": "CODER_COMPLETE",
        },
        # written once the measure opens the fifo (its command may not have got that far on a
        # busy machine: a write nobody reads is dropped); at most a minute, where it never does
        {
            "write": {"calc.py": GOOD_MUL},
            "shell": f'timeout 60 sh -c \'echo go > "$0"\' "{fifo}" || true',
            "sentinel": "CODER_COMPLETE",
        },
    )
    paused = project.run()
    assert paused.code == 5, paused.stdout + paused.stderr
    assert project.coder_calls() == 2
    # released by the second round, not killed: the second round's verdict read the measure
    assert released.read_text() == "yes\n"
    gate = gate_of_tests(paused.data)
    assert gate["status"] == "pass", gate


#: how round 1 loses ``calc.add``'s test -> (round 1's actions, round 2's)
LOSING_ROUNDS = {
    "the code skips it": (
        {"write": {"calc.py": SKIPPING_ADD.replace("return a * b", "return a + b")}},
        {"write": {"calc.py": SKIPPING_ADD}},
    ),
    # a variant no rule names: the earlier test file is deleted, add itself left working
    "its file is deleted": (
        {"write": {"calc.py": WRONG_MUL}, "delete": ["tests/unit/test_calc.py"]},
        {"write": {"calc.py": GOOD_MUL}},
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("losing", list(LOSING_ROUNDS))
def test_a_test_lost_in_a_round_that_failed_on_its_own_new_test_is_caught_the_next_round(
    tmp_path, losing
):
    # round 1 fails only on the test it added, so it is not judged for conservation: the test
    # it lost is named by the round that may pass, and the step never completes
    project = python_project(tmp_path)
    first, second = LOSING_ROUNDS[losing]
    project.coder_actions(
        {
            **first,
            "write": {**first["write"], "tests/unit/test_mul.py": TEST_MUL},
            "sentinel": "CODER_COMPLETE",
        },
        {**second, "sentinel": "CODER_COMPLETE"},
    )
    result = project.run()
    assert result.outcome == "STEP_FAILED", result.stdout + result.stderr
    gate = gate_of_tests(result.data)
    assert CONSERVED in gate["summary"] and ADD in gate["summary"], gate
    assert CONSERVED not in project.coder_prompt(1)  # round 1's failure: the new test alone
    assert "is not a fix" in project.coder_prompt(2)


def test_a_tests_command_that_could_not_run_at_the_start_is_an_environment_fault(tmp_path):
    # an interpreter started without its site-packages has no pytest
    project = python_project(tmp_path, test=f"{PY} -S -m pytest -q")
    project.coder_actions({"write": {"calc.py": GOOD_MUL}, "sentinel": "CODER_COMPLETE"})
    result = project.run()
    assert result.outcome == "STEP_FAILED", result.stdout + result.stderr
    gate = gate_of_tests(result.data)
    assert gate["status"] == "error", gate
    assert "could not run on the step's start either" in gate["summary"], gate
    assert "No module named pytest" in gate["summary"]
    assert project.coder_calls() == 1  # no fix round
    assert "Reason: Environment fault: tests" in result.output


@pytest.mark.slow
def test_a_later_step_from_the_same_files_reuses_the_measured_start(tmp_path):
    project = python_project(tmp_path)
    marker = counted(project)
    assert project.run().code == 5
    assert project.resume("approve").outcome == "STEP_COMPLETE"
    first = runs_in(marker, project)
    assert first.count("copy") == 1
    # the same files again, under another commit
    project.git("checkout", "--", "calc.py")
    project.git(
        "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"
    )
    again = project.run("--step", "1", "--rerun")
    assert again.code == 5, again.stdout + again.stderr
    assert runs_in(marker, project)[len(first) :] == ["project"]


#: a test that passes at once in the project and, in the scratch copy of the start (no
#: ignored file there), waits for the file a minute, then says it waited that long
WAITS_IN_THE_COPY = """import time
from pathlib import Path


def test_here():
    waited = time.monotonic() + 60
    while not Path("here.marker").exists() and time.monotonic() < waited:
        time.sleep(0.05)
    if not Path("here.marker").exists():
        Path({ended!r}).write_text("the start's run ended")
"""


def test_a_passing_step_does_not_wait_for_the_starts_whole_run(tmp_path):
    """The start's measure steps aside while the gate's tests run, and a
    gate whose tests all ran to a result is judged from the start's listing:
    the run reaches its approval while the start's run still waits."""
    project = python_project(tmp_path)
    ended = project.state_dir / "start-run-ended"
    (project.root / ".gitignore").write_text("here.marker\n")
    (project.root / "here.marker").write_text("")
    (project.root / "tests/unit/test_here.py").write_text(
        WAITS_IN_THE_COPY.format(ended=str(ended))
    )
    project.git("add", "-A")
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a slow start")
    project.coder_actions({"write": {"calc.py": GOOD_MUL}, "sentinel": "CODER_COMPLETE"})
    paused = project.run()
    assert paused.code == 5, paused.stdout + paused.stderr
    assert gate_of_tests(paused.data)["status"] == "pass"
    assert not ended.exists()  # the verdict never waited for it
    run = store_dir(project.root) / "runs" / paused.data["run_id"]
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    conserved = [e for e in events if e["event"] == "tests_conserved"]
    assert conserved and conserved[-1]["lost"] == [] and conserved[-1]["listed"] == 2, conserved


#: keeps calc.add's test by its id, and has it run nothing: every listed id passes after
EMPTIES_ADD = """import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    for item in items:
        if item.name == "test_add":
            item.obj = lambda *args, **kwargs: None
"""


@pytest.mark.slow
def test_a_test_kept_by_its_id_but_emptied_still_fails_the_gate(tmp_path):
    """A variant the listing was not written for: the start's listed ids all
    pass after the step, so conservation reads no outcome, yet the test that
    calls the broken code ran nothing.  The pristine re-check (the step's
    conftest.py is verification surface) runs it as it was."""
    project = python_project(tmp_path)
    project.coder_actions(
        {"write": {"calc.py": BROKEN, "conftest.py": EMPTIES_ADD}, "sentinel": "CODER_COMPLETE"}
    )
    result = project.run()
    assert result.outcome != "STEP_COMPLETE" and result.code != 5, result.stdout
    gate = gate_of_tests(result.data)
    assert gate["status"] == "fail", gate
    assert ADD in gate["new_failures"], gate
