"""The pristine re-check's one excuse for a copy that runs no test: the
step's own run ran only tests in files the step added (a project's first
tests).  Anything else stays a failure."""

from __future__ import annotations


def test_a_copy_that_runs_no_test_where_earlier_tests_ran_stays_a_failure(tmp_path):
    from stepkit.records import GateResult, TestsRecord
    from stepkit.workspace.pristine import _nothing_earlier

    record = tmp_path / "t.json"
    record.write_text(
        '{"outcomes": {"tests/test_old.py::test_add": "passed", "tests/test_new.py::test_mul": "passed"}}'
    )
    original = GateResult(
        name="tests", status="pass", tests=TestsRecord(source="junit XML", file=str(record))
    )
    copy = GateResult(name="tests", status="not_run")
    assert not _nothing_earlier(copy, original, {"tests/test_new.py"})
    assert _nothing_earlier(copy, original, {"tests/test_new.py", "tests/test_old.py"})
    assert not _nothing_earlier(copy.model_copy(update={"status": "fail"}), original, {"x"})
