"""Failure signatures: the same failure twice is no progress; noise is not a change.

Gates are built the way the runner builds them: the raw output condensed by
the built-in evidence parsers, whose lists the signature reads."""

from __future__ import annotations

import pytest

from stepkit.pluginmanager import DEFAULT_PLUGINS, get_plugin_manager
from stepkit.protocol.fixloop import is_stalled
from stepkit.records import GateResult
from stepkit.workspace.evidence import condense
from stepkit.workspace.stall import failure_signature


@pytest.fixture(scope="module")
def parsers():
    return get_plugin_manager(builtins=[m for m in DEFAULT_PLUGINS if ".evidence." in m])


@pytest.fixture
def gate(parsers):
    def make(
        output: str, command: str = "pytest -q", name: str = "tests", status: str = "fail"
    ) -> GateResult:
        found = condense(parsers, name, command, output, 1, None)
        return GateResult(
            name=name,
            status=status,
            command=command,
            exit_code=1,
            evidence=found.text,
            condensed=found,
        )

    return make


PYTEST_RUN_1 = """\
_____________________________ test_greet ______________________________
/tmp/pytest-of-ci/pytest-17/test_x0/project/tests/test_greet.py:12: in test_greet
    assert greet("Ann") == "Hello, Ann!"
E   AssertionError: assert 'Hi Ann' == 'Hello, Ann!'
FAILED tests/test_greet.py::test_greet - AssertionError: assert 'Hi Ann' == 'Hello, Ann!'
1 failed, 4 passed in 0.31s
"""
PYTEST_RUN_2 = (
    PYTEST_RUN_1.replace("pytest-17/test_x0", "pytest-18/test_x1")
    .replace(":12:", ":14:")
    .replace("0.31s", "1.07s")
    .replace("4 passed", "5 passed")
)


def test_noise_does_not_change_the_signature(gate):
    first, second = failure_signature(gate(PYTEST_RUN_1)), failure_signature(gate(PYTEST_RUN_2))
    assert first == second
    assert first == (
        "tests | FAILED tests/test_greet.py::test_greet - "
        "AssertionError: assert 'Hi Ann' == 'Hello, Ann!' | "
    )
    assert is_stalled(first, second)


def test_a_different_value_or_test_or_gate_is_progress(gate):
    base = failure_signature(gate(PYTEST_RUN_1))
    other_value = failure_signature(gate(PYTEST_RUN_1.replace("'Hi Ann'", "'Hello Ann'")))
    other_test = failure_signature(
        gate(PYTEST_RUN_1.replace("::test_greet -", "::test_farewell -"))
    )
    other_gate = failure_signature(gate(PYTEST_RUN_1, name="build"))
    assert len({base, other_value, other_test, other_gate}) == 4
    assert not is_stalled(base, other_value)


def test_a_python_traceback_names_the_exception_not_the_banner(gate):
    text = (
        'Traceback (most recent call last):\n  File "/tmp/tmpab12cd34/check.py", line 3, in <module>\n'
        "    assert value == 'Hello, Ann!'\nAssertionError: greet returned 'attempt 1'\n"
    )
    assert failure_signature(gate(text, "python check.py")).endswith(
        "| AssertionError: greet returned 'attempt 1'"
    )


def test_the_first_error_comes_from_the_parsers_error_section(gate):
    cargo = (
        "test greet::tests::hello ... FAILED\n\nfailures:\n\n---- greet::tests::hello stdout ----\n"
        "thread 'greet::tests::hello' panicked at src/lib.rs:9:5:\nassertion failed: left == right\n\n"
        "failures:\n    greet::tests::hello\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored\n"
    )
    assert (
        failure_signature(gate(cargo, "cargo test"))
        == "tests | greet::tests::hello | panicked at src/lib.rs:N"
    )


def test_ids_of_other_tools(gate):
    go = "--- FAIL: TestGreet (0.00s)\n    greet_test.go:9: got Hi\nFAIL\nFAIL\texample.com/g\t0.004s\n"
    ruff = "src/app.py:1:8: F401 [*] `os` imported but unused\nFound 1 error.\n"
    assert (
        failure_signature(gate(go, "go test ./..."))
        == "tests | TestGreet | greet_test.go:N: got Hi"
    )
    assert failure_signature(gate(ruff, "ruff check .", "lint")).startswith(
        "lint | src/app.py:N: F401"
    )


def test_addresses_and_timestamps_are_normalised():
    one = "2026-11-30T13:55:01Z panic: nil map at 0x7f3a9c001234 (pid 4242)"
    two = "2026-12-01T09:00:00Z panic: nil map at 0x7f11aa00ff00 (pid 977)"
    assert failure_signature(one) == failure_signature(two)
    assert failure_signature(one).startswith(" |  | ")


def test_passing_and_not_run_gates_have_no_signature(gate):
    assert failure_signature(gate("ok", status="pass")) == ""
    assert failure_signature(gate("", status="not_run")) == ""
    assert not is_stalled("", "")
    assert not is_stalled(None, "tests | x | y")


def test_a_timeout_says_so(gate):
    signature = failure_signature(gate("collected 3 items\n", status="timeout"))
    assert signature == "tests |  | timed out"
