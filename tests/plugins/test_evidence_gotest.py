"""The go test evidence parser."""

from stepkit.plugins.evidence import gotest as parser
from tests.support.evidence_logs import condenser

parse = condenser(parser)

PLAIN = """\
--- FAIL: TestAdd (0.00s)
    add_test.go:10: Add(1, 2) = 4; want 3
--- FAIL: TestSub (0.00s)
    sub_test.go:8: Sub(3, 1) = 1; want 2
FAIL
FAIL\texample.com/calc\t0.002s
ok  \texample.com/calc/util\t0.001s
?   \texample.com/calc/cmd\t[no test files]
FAIL
"""

VERBOSE = """\
=== RUN   TestAdd
    add_test.go:10: Add(1, 2) = 4; want 3
--- FAIL: TestAdd (0.00s)
=== RUN   TestMul
--- PASS: TestMul (0.00s)
FAIL
FAIL\texample.com/calc\t0.002s
"""

BUILD_FAILED = """\
# example.com/calc [example.com/calc.test]
./add.go:5:9: undefined: missing
./add.go:7:2: declared and not used: x
FAIL\texample.com/calc [build failed]
FAIL
"""


def test_failing_tests_with_their_messages_and_packages():
    text = parse(command="go test ./...", output=PLAIN)
    assert "failing tests (2):\n  TestAdd\n  TestSub" in text
    assert "add_test.go:10: Add(1, 2) = 4; want 3" in text
    assert "FAIL\texample.com/calc\t0.002s" in text
    assert text.endswith("summary: 2 failed; packages: 1 ok, 1 failed")


def test_verbose_output_finds_the_message_under_the_run_line():
    text = parse(command="go test -v ./...", output=VERBOSE)
    assert "TestAdd\n    add_test.go:10: Add(1, 2) = 4; want 3" in text
    assert "summary: 1 failed, 1 passed; packages: 0 ok, 1 failed" in text


def test_build_failure_lists_the_compiler_errors():
    text = parse(command="make test", output=BUILD_FAILED)
    assert "./add.go:5:9: undefined: missing" in text
    assert "./add.go:7:2: declared and not used: x" in text
    assert text.endswith("summary: 2 compile errors; packages: 0 ok, 1 failed")


def test_other_output_is_not_claimed():
    assert parse(command="cargo test", output="ok then\nFAIL maybe\n") is None
