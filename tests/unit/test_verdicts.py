"""Judging a failing gate: re-run, baseline, new vs pre-existing, the three
modes, and the evidence the fix loop gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from stepkit.records import GateResult
from stepkit.workspace.baseline import ref_tree
from stepkit.workspace.testresults import TestResults
from stepkit.workspace.verdicts import Judge, evidence_for_fix
from tests.support.gitrepo import init_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "repo", {"a.py": "import os\n"})


def _gate(
    tmp_path: Path, name: str, output: str, status: str = "fail", failing: dict | None = None
) -> GateResult:
    log = tmp_path / f"{name}-{len(list(tmp_path.glob('*.log')))}.log"
    log.write_text(output)
    tests = None
    if failing is not None:
        results = TestResults(source="junit XML")
        for test_id, outcome in failing.items():
            results.add(test_id, outcome)
        tests = results.record(log.with_suffix(".tests.json"))
    return GateResult(
        name=name,
        status=status,
        command=f"{name} .",
        exit_code=1 if status == "fail" else 0,
        log=str(log),
        summary="it failed",
        evidence=output,
        tests=tests,
    )


class Runs:
    """The judge's runner: what the re-run and the baseline report."""

    def __init__(
        self,
        tmp_path: Path,
        rerun: dict | None,
        base_output: str = "",
        base: dict | None = None,
        project: Path | None = None,
        again: dict | None = None,
    ):
        self.tmp, self.rerun, self.base_output, self.base = tmp_path, rerun, base_output, base
        #: the whole command re-run in the project (default: as the re-run alone went)
        self.project, self.again = project, again
        self.calls: list[str] = []
        self.rerun_ids: list[list[str]] = []

    def __call__(self, name, ids, where, log_dir, suite):
        if ids is not None:
            self.calls.append("rerun")
            self.rerun_ids.append(list(ids))
            return None if self.rerun is None else _gate(self.tmp, name, "", failing=self.rerun)
        if where == self.project:
            self.calls.append("again")
            return _gate(
                self.tmp, name, "", failing=self.again if self.again is not None else self.rerun
            )
        self.calls.append("baseline")
        status = (
            "fail"
            if self.base_output or (self.base and any(v != "passed" for v in self.base.values()))
            else "pass"
        )
        return _gate(self.tmp, name, self.base_output, status, failing=self.base)


def test_lint_errors_are_compared_without_line_numbers(tmp_path, repo):
    runs = Runs(tmp_path, None, base_output="a.py:3:1: F401 unused import os\n")
    judge = Judge("new-failures", repo, tmp_path, ref_tree(repo, "HEAD"), runs)
    moved = _gate(tmp_path, "lint", "a.py:9:1: F401 unused import os\n")
    judged = judge.judge(moved)
    assert judged.status == "pass" and judged.preexisting_failures == [
        "a.py: F401 unused import os"
    ]
    assert runs.calls == ["baseline"]  # lint is never re-run

    both = _gate(tmp_path, "lint", "a.py:9:1: F401 unused import os\nb.py:1:1: E999 bad\n")
    judged = judge.judge(both)
    assert judged.status == "fail" and judged.new_failures == ["b.py: E999 bad"]
    assert runs.calls == ["baseline"] and judge.baselines[-1].cached  # one baseline per tree
    assert "PRE-EXISTING failures" in judged.evidence and "NEW failures (1)" in judged.status_line()


def test_a_flaky_test_is_not_a_failure_and_the_rest_meets_the_baseline(tmp_path, repo):
    runs = Runs(
        tmp_path,
        rerun={"t.py::flaky": "passed", "t.py::old": "failed"},
        base={"t.py::old": "failed", "t.py::ok": "passed"},
        project=repo,
    )
    judge = Judge("new-failures", repo, tmp_path, ref_tree(repo, "HEAD"), runs)
    gate = _gate(
        tmp_path,
        "tests",
        "",
        failing={"t.py::flaky": "failed", "t.py::old": "failed", "t.py::ok": "passed"},
    )
    judged = judge.judge(gate)
    assert (judged.status, judged.flaky, judged.preexisting_failures, judged.new_failures) == (
        "pass",
        ["t.py::flaky"],
        ["t.py::old"],
        [],
    )
    assert runs.calls == [
        "rerun",
        "again",
        "baseline",
    ]  # alone, then the whole command: it passed both times
    assert judged.exit_code == 1  # the command's own exit code is kept


def test_a_test_the_step_added_is_its_own_never_re_run_as_a_flake_nor_baselined(tmp_path, repo):
    """A failing test in a file the step added could not have failed before
    it, and a flaky test the step wrote is the step's to fix: no re-run
    stands between the failure and the fix loop.  A pre-existing test that
    passes when re-run is still flaky."""
    (repo / "t_new.py").write_text("def test_new(): ...\n")
    runs = Runs(
        tmp_path,
        rerun={"t.py::flaky": "passed", "t_new.py::test_new": "passed"},
        base={"t.py::flaky": "passed"},
        project=repo,
    )
    judge = Judge("new-failures", repo, tmp_path, ref_tree(repo, "HEAD"), runs)
    only_added = _gate(tmp_path, "tests", "", failing={"t_new.py::test_new": "failed"})
    judged = judge.judge(only_added)
    assert (judged.status, judged.new_failures, judged.flaky) == (
        "fail",
        ["t_new.py::test_new"],
        [],
    )
    assert runs.calls == [] and judge.extra_runs == []

    both = {"t_new.py::test_new": "failed", "t.py::flaky": "failed"}
    judged = judge.judge(_gate(tmp_path, "tests", "", failing=both))
    assert (judged.status, judged.new_failures, judged.flaky) == (
        "fail",
        ["t_new.py::test_new"],
        ["t.py::flaky"],
    )
    assert runs.rerun_ids == [["t.py::flaky"]] and runs.calls == ["rerun", "again"]


@pytest.mark.parametrize("mode", ["strict", "off"])
def test_strict_lists_but_keeps_the_failure_and_off_does_nothing(tmp_path, repo, mode):
    runs = Runs(tmp_path, rerun={"t.py::old": "failed"}, base={"t.py::old": "failed"})
    judge = Judge(mode, repo, tmp_path, ref_tree(repo, "HEAD"), runs)
    judged = judge.judge(_gate(tmp_path, "tests", "", failing={"t.py::old": "failed"}))
    assert judged.status == "fail"
    if mode == "strict":
        assert judged.preexisting_failures == ["t.py::old"] and runs.calls == ["rerun", "baseline"]
    else:
        assert judged.preexisting_failures == [] and runs.calls == []


def test_unnamed_failures_and_no_baseline_leave_the_gate_failing(tmp_path, repo):
    runs = Runs(tmp_path, rerun=None)
    judge = Judge("new-failures", repo, tmp_path, None, runs)
    crashed = judge.judge(_gate(tmp_path, "tests", "Segmentation fault\n", failing={}))
    assert (
        crashed.status == "fail" and "could not be named" in crashed.evidence and runs.calls == []
    )
    unknown_base = judge.judge(_gate(tmp_path, "tests", "", failing={"t.py::a": "failed"}))
    assert unknown_base.status == "fail" and unknown_base.new_failures == ["t.py::a"]
    assert "no baseline" in unknown_base.evidence


def test_the_fix_loop_hears_only_the_new_failures():
    evidence = (
        "$ pytest\nexit code: 1\nfailing tests (2):\n  FAILED tests/t.py::test_new - assert 1\n"
        "  FAILED tests/t.py::test_old - assert 2\nfirst error of each failure:\n"
        "  test_new  (tests/t.py:3: AssertionError)\n    E  assert 1\n"
        "  test_old  (tests/t.py:7: AssertionError)\n    E  assert 2\nsummary: 2 failed"
    )
    gate = GateResult(
        name="tests",
        status="fail",
        evidence=evidence,
        new_failures=["tests/t.py::test_new"],
        preexisting_failures=["tests/t.py::test_old"],
    )
    text = evidence_for_fix(gate)
    assert "test_old" not in text and "assert 2" not in text
    assert text.startswith("Fix these failures only (1):\n- tests/t.py::test_new")
    assert "E  assert 1" in text
