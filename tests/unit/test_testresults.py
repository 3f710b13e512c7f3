"""Per-test results from each runner's report or per-test text, and the
commands that ask for a report or select the failing ids."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from stepkit.plugins.runners import cargo, dotnet, go, jest, pytest
from stepkit.records import Evidence
from stepkit.workspace import testresults as tr
from stepkit.workspace.testrunners import report_invocation, rerun_invocation

SUITE = """import pytest
def test_ok(): pass
def test_bad(): assert 0
class TestC:
    def test_m(self): pass
@pytest.mark.parametrize("x", [1, 2])
def test_p(x): assert x == 1
@pytest.mark.skip
def test_s(): pass
"""


def _run(command: str, cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(
        command,
        check=False,
        shell=True,
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
    )
    return proc.stdout + proc.stderr


def test_pytest_node_ids_from_junit_and_a_rerun_of_the_failing_ids_only(tmp_path):
    project = tmp_path / "p"
    (project / "tests" / "pkg").mkdir(parents=True)
    (project / "tests" / "pkg" / "test_a.py").write_text(SUITE)
    command = f"{sys.executable} -m pytest -q -p no:cacheprovider"
    inv = report_invocation(command, project, tmp_path / "report")
    assert inv.command == command and "--junitxml=" in inv.env["PYTEST_ADDOPTS"]
    results = inv.results(_run(inv.command, project, inv.env), "")
    base = "tests/pkg/test_a.py::"
    assert results.outcomes == {
        f"{base}test_ok": "passed",
        f"{base}test_bad": "failed",
        f"{base}TestC::test_m": "passed",
        f"{base}test_p[1]": "passed",
        f"{base}test_p[2]": "failed",
        f"{base}test_s": "skipped",
    }
    record = results.record(tmp_path / "tests.json")
    assert record.counts == {"passed": 3, "failed": 2, "errored": 0, "skipped": 1}
    assert record.failing == [f"{base}test_bad", f"{base}test_p[2]"]
    assert record.outcomes() == results.outcomes

    rerun = rerun_invocation(command, project, tmp_path / "rerun", results.failing)
    again = rerun.results(_run(rerun.command, project, rerun.env), "")
    assert again.outcomes == {f"{base}test_bad": "failed", f"{base}test_p[2]": "failed"}


def test_each_read_of_a_pytest_report_looks_for_its_modules_afresh(tmp_path):
    # a module is looked for once per report, not once per process: one a later round adds is seen
    project = tmp_path / "p"
    (project / "tests").mkdir(parents=True)
    report = tmp_path / "junit.xml"
    report.write_text(
        '<testsuite><testcase classname="tests.test_new.TestC" name="test_a"/>'
        '<testcase classname="tests.test_new.TestC" name="test_b"><failure/></testcase>'
        "</testsuite>"
    )
    before = tr.read_junit([report], project, pytest.node_ids())
    assert before.outcomes == {
        "tests::test_new::TestC::test_a": "passed",
        "tests::test_new::TestC::test_b": "failed",
    }
    (project / "tests" / "test_new.py").write_text("")
    after = tr.read_junit([report], project, pytest.node_ids())
    assert after.outcomes == {
        "tests/test_new.py::TestC::test_a": "passed",
        "tests/test_new.py::TestC::test_b": "failed",
    }


def test_a_module_run_alone_runs_alone_when_the_command_names_its_own_test_paths(tmp_path):
    # `pytest tests extra` would collect both paths whole beside the module named; a sibling
    # whose name starts like the module's (test_b.py, test_b_more.py) is not taken with it
    project = tmp_path / "p"
    for rel in ("tests/unit/test_b.py", "tests/unit/test_b_more.py", "tests/other/test_c.py"):
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text("def test_ok(): pass\ndef test_bad(): assert 0\n")
    (project / "extra").mkdir()
    (project / "extra" / "test_d.py").write_text("def test_ok(): pass\n")
    command = f"{sys.executable} -m pytest -q -p no:cacheprovider tests extra"
    alone = rerun_invocation(command, project, tmp_path / "alone", ["tests/unit/test_b.py"])
    ran = alone.results(_run(alone.command, project, alone.env), "")
    base = "tests/unit/test_b.py::"
    assert ran.outcomes == {f"{base}test_ok": "passed", f"{base}test_bad": "failed"}


def test_jest_and_vitest_json_ids_are_file_describe_name(tmp_path):
    report = tmp_path / "r.json"
    report.write_text(
        json.dumps(
            {
                "testResults": [
                    {
                        "name": str(tmp_path / "src" / "a.test.js"),
                        "status": "failed",
                        "assertionResults": [
                            {"ancestorTitles": ["math"], "title": "adds", "status": "passed"},
                            {"ancestorTitles": ["math"], "title": "muls", "status": "failed"},
                            {"ancestorTitles": [], "title": "later", "status": "todo"},
                        ],
                    },
                    {
                        "name": str(tmp_path / "src" / "broken.test.js"),
                        "status": "failed",
                        "assertionResults": [],
                    },
                ]
            }
        )
    )
    results = jest.read_json(report, tmp_path)
    assert results.outcomes == {
        "src/a.test.js › math › adds": "passed",
        "src/a.test.js › math › muls": "failed",
        "src/a.test.js › later": "skipped",
        "src/broken.test.js": "errored",
    }
    assert jest.parts("src/a.test.js › math › muls") == ("src/a.test.js", "math muls")


def test_go_ids_carry_their_package_from_json_and_from_text():
    events = [
        {"Action": "run", "Package": "ex.com/m", "Test": "TestA"},
        {"Action": "pass", "Package": "ex.com/m", "Test": "TestA"},
        {"Action": "fail", "Package": "ex.com/m/sub", "Test": "TestB"},
        {"Action": "fail", "Package": "ex.com/m/sub"},
    ]
    assert go.read_json("\n".join(json.dumps(e) for e in events)).outcomes == {
        "ex.com/m::TestA": "passed",
        "ex.com/m/sub::TestB": "failed",
    }
    text = "--- FAIL: TestB (0.00s)\n    b_test.go:5: no\nFAIL\nFAIL\tex.com/m/sub\t0.01s\nok  \tex.com/m\t0.01s\n"
    results = go.read_text(text, verbose=False)
    assert results.outcomes == {"ex.com/m/sub::TestB": "failed"} and not results.complete


def test_libtest_trx_and_the_evidence_fallback(tmp_path):
    text = "running 3 tests\ntest a::one ... ok\ntest a::two ... FAILED\ntest b ... ignored\n"
    assert cargo.read_libtest(text).outcomes == {
        "a::one": "passed",
        "a::two": "failed",
        "b": "skipped",
    }
    terse = (
        "running 2 tests\n. 1/2\nt::old --- FAILED\n\nfailures:\n\n---- t::old stdout ----\n"
        "thread 't::old' panicked at src/lib.rs:16:9:\n\nfailures:\n    t::old\n    t::other\n\n"
        "test result: FAILED. 0 passed; 2 failed\n"
    )
    found = cargo.read_libtest(terse)
    assert found.outcomes == {"t::old": "failed", "t::other": "failed"} and not found.complete
    trx = tmp_path / "r.trx"
    trx.write_text(
        '<TestRun xmlns="http://microsoft.com/schemas/VisualStudio/TeamTest/2010"><Results>'
        '<UnitTestResult testName="N.C.Ok" outcome="Passed"/>'
        '<UnitTestResult testName="N.C.Bad" outcome="Failed"/></Results></TestRun>'
    )
    assert dotnet.read_trx([trx]).outcomes == {"N.C.Ok": "passed", "N.C.Bad": "failed"}
    # the evidence's typed tests, whatever its text lists
    evidence = Evidence(
        text="failing tests (1):\n  FAILED t.py::c - assert 0",
        tests={"t.py::a": "failed", "t.py::b": "errored"},
    )
    found = tr.failing_of(evidence)
    assert found.outcomes == {"t.py::a": "failed", "t.py::b": "errored"} and not found.complete
    assert tr.failing_of(Evidence(text="failing tests (1):\n  FAILED t.py::c")) is None


def test_report_flags_go_on_the_runner_also_behind_npm_test(tmp_path):
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": "vitest run"}}))
    inv = report_invocation("npm test", tmp_path, tmp_path / "rep")
    assert inv.runner == "vitest" and inv.command.startswith(
        "npm test -- --reporter=default --reporter=json"
    )
    assert report_invocation("npx jest --ci", tmp_path, tmp_path / "rep").command.endswith(
        f"--json --outputFile={tmp_path / 'rep' / 'jest.json'}"
    )
    assert report_invocation(
        "ctest --test-dir build", tmp_path, tmp_path / "rep"
    ).command.startswith("ctest --test-dir build --output-junit ")
    # a piped command, or a runner that is not the last command, is left as it is
    assert (
        report_invocation("npx jest | tee out", tmp_path, tmp_path / "rep").command
        == "npx jest | tee out"
    )
    assert (
        report_invocation("jest && echo done", tmp_path, tmp_path / "rep").command
        == "jest && echo done"
    )


def test_rerun_selections_per_runner(tmp_path):
    cargo = rerun_invocation("cargo test -q", tmp_path, tmp_path / "r", ["a::one", "two"])
    assert cargo.command == "cargo test -q -- --exact --format=pretty a::one two"
    cargo = rerun_invocation("cargo test -- --nocapture", tmp_path, tmp_path / "r", ["x"])
    assert cargo.command == "cargo test -- --nocapture --exact --format=pretty x"
    go = rerun_invocation(
        "go test ./...", tmp_path, tmp_path / "r", ["ex.com/m::TestA", "ex.com/m::TestB/sub"]
    )
    assert go.command == "go test -json -count=1 -run '^(TestA|TestB)$' ex.com/m"
    jest = rerun_invocation("npx jest", tmp_path, tmp_path / "r", ["src/a.test.js › math › muls"])
    assert jest.command.endswith("-t '^(?:math\\ muls)$' src/a.test.js")
    maven = rerun_invocation(
        "mvn -q test", tmp_path, tmp_path / "r", ["a.B#one", "a.B#two", "a.C#x"]
    )
    assert "'-Dtest=a.B#one+two,a.C#x'" in maven.command
    assert rerun_invocation("make check", tmp_path, tmp_path / "r", ["thing"]) is None
