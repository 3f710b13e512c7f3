"""The pytest evidence parser, on real pytest output (generated runs: test_evidence_condense)."""

from stepkit.plugins.evidence import pytest as parser
from tests.support.evidence_logs import condenser

parse = condenser(parser)

VERBOSE = """\
============================= test session starts ==============================
platform linux -- Python 3.11.7, pytest-9.2.0, pluggy-1.7.0 -- /work/venv/bin/python3
rootdir: /tmp/samples/py
collecting ... collected 5 items

test_a.py::test_ok PASSED                                                [ 20%]
test_a.py::test_bad FAILED                                               [ 40%]
test_a.py::TestK::test_m FAILED                                          [ 60%]
test_a.py::test_p[1] PASSED                                              [ 80%]
test_a.py::test_p[2] FAILED                                              [100%]

=================================== FAILURES ===================================
___________________________________ test_bad ___________________________________

>   def test_bad(): assert 1 == 2, "nope"
                    ^^^^^^^^^^^^^^^^^^^^^
E   AssertionError: nope
E   assert 1 == 2

test_a.py:5: AssertionError
_________________________________ TestK.test_m _________________________________

self = <test_a.TestK object at 0x7f0683ae1dd0>

    def test_m(self):
>       raise ValueError("boom")
E       ValueError: boom

test_a.py:8: ValueError
__________________________________ test_p[2] ___________________________________

n = 2

    @pytest.mark.parametrize("n", [1, 2])
>   def test_p(n): assert n == 1
                   ^^^^^^^^^^^^^
E   assert 2 == 1

test_a.py:10: AssertionError
=========================== short test summary info ============================
FAILED test_a.py::test_bad - AssertionError: nope
FAILED test_a.py::TestK::test_m - ValueError: boom
FAILED test_a.py::test_p[2] - assert 2 == 1
========================= 3 failed, 2 passed in 0.03s ==========================
"""

COLLECTION_ERROR = """\
============================= test session starts ==============================
collected 3 items / 1 error

==================================== ERRORS ====================================
____________________ ERROR collecting tests/test_broken.py _____________________
ImportError while importing test module '/p/tests/test_broken.py'.
E   ModuleNotFoundError: No module named 'missing_dep'
=========================== short test summary info ============================
ERROR tests/test_broken.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
=============================== 1 error in 0.12s ===============================
"""


def test_failing_ids_first_errors_and_summary():
    text = parse(command="python -m pytest -v", output=VERBOSE)
    for test_id in ("test_a.py::test_bad", "test_a.py::TestK::test_m", "test_a.py::test_p[2]"):
        assert f"FAILED {test_id}" in text
    assert "E   AssertionError: nope" in text
    assert "E       ValueError: boom" in text
    assert "(test_a.py:8: ValueError)" in text
    assert "PASSED" not in text
    assert text.endswith("summary: 3 failed, 2 passed")


def test_quiet_output_without_the_command_name_is_recognised_by_its_summary():
    output = "..F.\n=== short test summary info ===\nFAILED t.py::test_x - assert 0\n1 failed, 3 passed in 0.02s\n"
    text = parse(command="make test", output=output)
    assert "FAILED t.py::test_x - assert 0" in text
    assert text.endswith("summary: 1 failed, 3 passed")


def test_collection_error_is_reported_with_its_cause():
    text = parse(command="pytest", output=COLLECTION_ERROR)
    assert "ERROR tests/test_broken.py" in text
    assert "ModuleNotFoundError: No module named 'missing_dep'" in text
    assert "summary: 1 error; Interrupted: 1 error during collection" in text


def test_verbose_lines_give_the_ids_when_there_is_no_short_summary():
    output = "t.py::test_a PASSED  [ 50%]\nt.py::test_b FAILED  [100%]\n=== 1 failed, 1 passed in 0.1s ===\n"
    text = parse(command="pytest -rN -v", output=output)
    assert "FAILED t.py::test_b" in text and "test_a" not in text


def test_other_output_is_not_claimed():
    assert parse(command="cargo test", output="test result: ok. 3 passed; 0 failed") is None
    # pytest that never reached its tests: the generic view is better
    usage = "ERROR: usage: pytest [options]\npytest: error: unrecognized arguments: --bogus\n"
    assert parse(command="pytest --bogus", output=usage) is None
