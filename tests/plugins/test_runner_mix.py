"""mix test (ExUnit) as a declared runner: its failing tests named by id in
the tests gate's evidence and record, re-run by name, its closing lines read.

The recorded output is a real ``mix test`` of Elixir 1.14 (the suite below);
the gate test runs the real ``mix`` when this machine has it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from stepkit.workspace import faults
from stepkit.workspace.gates import run_gate
from stepkit.workspace.testrunners import report_invocation, rerun_invocation
from tests.support.evidence_logs import evidence_pm

SUITE = """defmodule CalcTest do
  use ExUnit.Case

  test "adds" do
    assert 1 + 1 == 3
  end

  test "subtracts" do
    assert 2 - 1 == 1
  end

  describe "math" do
    test "muls" do
      assert 2 * 2 == 5
    end
  end

  @tag :skip
  test "skipped" do
    assert true
  end
end
"""
#: ``mix test`` of SUITE, Elixir 1.14.0 (exit 2).
RECORDED = """Compiling 1 file (.ex)
Generated calc app
*

  1) test adds (CalcTest)
     test/calc_test.exs:4
     Assertion with == failed
     code:  assert 1 + 1 == 3
     left:  2
     right: 3
     stacktrace:
       test/calc_test.exs:5: (test)



  2) test math muls (CalcTest)
     test/calc_test.exs:13
     Assertion with == failed
     code:  assert 2 * 2 == 5
     left:  4
     right: 5
     stacktrace:
       test/calc_test.exs:14: (test)

.
Finished in 0.01 seconds (0.00s async, 0.01s sync)
4 tests, 2 failures, 1 skipped

Randomized with seed 729317
"""
ADDS = "test/calc_test.exs › CalcTest › test adds"
MULS = "test/calc_test.exs › CalcTest › test math muls"


def test_the_failures_of_recorded_output_are_named_by_id_and_rerun_by_name(tmp_path):
    invocation = report_invocation("mix test", tmp_path, tmp_path / "report")
    assert invocation.runner == "mix"
    found = invocation.results(RECORDED, "")
    assert found.outcomes == {ADDS: "failed", MULS: "failed"} and not found.complete
    rerun = rerun_invocation("mix test", tmp_path, tmp_path / "rerun", found.failing)
    assert rerun.command == (
        "mix test test/calc_test.exs --only 'test:test adds' --only 'test:test math muls'"
    )


def test_its_closing_lines_say_whether_a_test_ran():
    assert faults.tests_ran("Finished in 0.01 seconds\n1 test, 0 failures\n")
    assert not faults.tests_ran("Finished in 0.01 seconds\n")
    assert faults.no_tests_reason("There are no tests to run\n", 0) == (
        "mix: there are no tests to run (exit 0)"
    )


def _mix_project(root: Path) -> Path:
    mix = shutil.which("mix")
    if mix is None:
        pytest.skip("mix (Elixir) is not installed on this machine")
    subprocess.run([mix, "new", "calc"], cwd=root, check=True, capture_output=True)
    project = root / "calc"
    (project / "test" / "calc_test.exs").write_text(SUITE)
    return project


def test_a_real_mix_test_gate_names_each_failing_test_and_its_rerun_runs_only_those(tmp_path):
    project = _mix_project(tmp_path)
    env = {**os.environ, "MIX_ENV": "test"}
    result = run_gate(
        "tests", "mix test", "elixir", project, tmp_path / "logs", 300, 300, evidence_pm(), env=env
    )
    assert result.status == "fail"
    # ExUnit runs (and lists) the tests in a random order
    assert result.tests is not None and sorted(result.tests.failing) == [ADDS, MULS]
    assert ADDS in result.evidence and MULS in result.evidence

    rerun = rerun_invocation("mix test", project, tmp_path / "rerun", [MULS])
    again = run_gate(
        "tests",
        "mix test",
        "elixir",
        project,
        tmp_path / "logs",
        300,
        300,
        evidence_pm(),
        env=env,
        invocation=rerun,
    )
    assert again.tests is not None and again.tests.failing == [MULS]
    assert "1 failure" in again.evidence


def test_a_new_skip_tag_in_an_exunit_test_is_a_tamper_flag():
    from stepkit.workspace.scope.tamper import file_flags

    skipped = SUITE.replace('  test "adds"', '  @tag :skip\n  test "adds"')
    flags = file_flags("test/calc_test.exs", "a", "b", SUITE.encode(), skipped.encode())
    assert [(f.kind, f.line()) for f in flags] == [
        ("new_marker", "new ExUnit @tag :skip in test/calc_test.exs (+1)")
    ]
