"""The unittest evidence parser, on real ``python -m unittest`` output."""

from stepkit.plugins.evidence import unittest as parser
from tests.support.evidence_logs import condenser

parse = condenser(parser)

OUTPUT = """\
EF.
======================================================================
ERROR: test_err (ut_test.T.test_err)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/samples/py/ut_test.py", line 5, in test_err
    def test_err(self): raise KeyError("k")
                        ^^^^^^^^^^^^^^^^^^^
KeyError: 'k'

======================================================================
FAIL: test_fail (ut_test.T.test_fail)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/samples/py/ut_test.py", line 4, in test_fail
    def test_fail(self): self.assertEqual([1, 2], [1, 3])
AssertionError: Lists differ: [1, 2] != [1, 3]

First differing element 1:
2
3

----------------------------------------------------------------------
Ran 3 tests in 0.000s

FAILED (failures=1, errors=1)
"""


def test_each_failure_with_its_exception_line_and_the_summary():
    text = parse(command="python -m unittest", output=OUTPUT)
    assert "ERROR test_err (ut_test.T.test_err)" in text
    assert "FAIL test_fail (ut_test.T.test_fail)" in text
    assert "KeyError: 'k'" in text
    assert "AssertionError: Lists differ: [1, 2] != [1, 3]" in text
    assert 'File "/tmp/samples/py/ut_test.py", line 4, in test_fail' in text
    assert "First differing element" not in text
    assert "Ran 3 tests in 0.000s" in text
    assert text.endswith("summary: FAILED (failures=1, errors=1): 3 tests")


def test_a_passing_run():
    text = parse(
        command="make test",
        output="...\n" + "-" * 70 + "\nRan 3 tests in 0.01s\n\nOK\n",
        exit_code=0,
    )
    assert text.endswith("summary: OK: 3 tests")


def test_other_output_is_not_claimed():
    assert parse(command="pytest", output="1 failed, 2 passed in 0.1s") is None
