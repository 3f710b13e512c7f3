"""The cargo evidence parser: cargo test failures and compiler diagnostics."""

import pytest

from stepkit.plugins.evidence import cargo as parser
from tests.support.evidence_logs import condenser

parse = condenser(parser)

TEST_OUTPUT = """\
   Compiling crate_x v0.1.0 (/tmp/samples/rs)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.69s
     Running unittests src/lib.rs (/tmp/samples/target/debug/deps/crate_x-32b4756aacfda311)

running 3 tests
test tests::bad ... FAILED
test tests::boom ... FAILED
test tests::ok ... ok

failures:

---- tests::bad stdout ----

thread 'tests::bad' (7707) panicked at src/lib.rs:6:24:
assertion `left == right` failed
  left: 3
 right: 4
stack backtrace:
   0: __rustc::rust_begin_unwind
             at /rustc/5980761/library/std/src/panicking.rs:689:5
note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.

---- tests::boom stdout ----

thread 'tests::boom' (7708) panicked at src/lib.rs:7:25:
kaboom
stack backtrace:
   0: __rustc::rust_begin_unwind

failures:
    tests::bad
    tests::boom

test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.10s

error: test failed, to rerun pass `--lib`
"""

BUILD_OUTPUT = """\
   Compiling crate_x v0.1.0 (/tmp/samples/rs)
warning: unused variable: `unused`
 --> src/lib.rs:1:41
  |
1 | pub fn add(a: i32, b: i32) -> i32 { let unused = 1; a + "b" }
  |                                         ^^^^^^ help: prefix it with an underscore: `_unused`
  |
error[E0277]: cannot add `&str` to `i32`
 --> src/lib.rs:1:55
  |
1 | pub fn add(a: i32, b: i32) -> i32 { let unused = 1; a + "b" }
  |                                                       ^ no implementation for `i32 + &str`
  |
  = help: the trait `Add<&str>` is not implemented for `i32`

error[E0425]: cannot find function `missing` in this scope
 --> src/lib.rs:2:20
  |
2 | pub fn g() -> u8 { missing() }
  |                    ^^^^^^^ not found in this scope

Some errors have detailed explanations: E0277, E0425.
For more information about an error, try `rustc --explain E0277`.
warning: `crate_x` (lib) generated 1 warning
error: could not compile `crate_x` (lib) due to 2 previous errors; 1 warning emitted
"""


def test_failing_tests_with_their_panic():
    text = parse(command="cargo test", output=TEST_OUTPUT)
    assert "failing tests (2):\n  tests::bad\n  tests::boom" in text
    assert "panicked at src/lib.rs:6:24" in text
    assert "assertion `left == right` failed" in text and "right: 4" in text
    assert "kaboom" in text
    assert "rust_begin_unwind" not in text
    assert "test result: FAILED. 1 passed; 2 failed" in text
    assert text.endswith("summary: 2 failed, 1 passed")


def test_compile_errors_with_their_location():
    text = parse(command="cargo build", output=BUILD_OUTPUT)
    assert "error[E0277]: cannot add `&str` to `i32`  (src/lib.rs:1:55)" in text
    assert "error[E0425]: cannot find function `missing` in this scope  (src/lib.rs:2:20)" in text
    assert "warning: unused variable: `unused`  (src/lib.rs:1:41)" in text
    assert text.endswith(
        "summary: could not compile `crate_x` (lib) due to 2 previous errors; 1 warning emitted"
    )


def test_clippy_output_is_recognised_by_its_shape():
    output = "    Checking x v0.1.0 (/p)\nerror: this looks like a bug\n --> src/main.rs:3:5\n"
    text = parse(command="make lint", output=output + "   Compiling y v0.1.0\n")
    assert "error: this looks like a bug  (src/main.rs:3:5)" in text


def test_other_output_is_not_claimed():
    assert parse(command="pytest", output="3 passed in 0.1s") is None


@pytest.mark.parametrize("output", ["", "random text\n"])
def test_cargo_command_without_cargo_output_falls_through(output):
    assert parse(command="cargo test", output=output) is None


def test_coloured_output_is_recognised_by_its_shape():
    """cargo colours "Compiling" apart from its padding: the quick check for
    cargo's words must not turn such output away."""
    coloured = "\x1b[1m\x1b[32m   Compiling\x1b[0m y v0.1.0\n\x1b[1m\x1b[31merror\x1b[0m: this looks like a bug\n"
    text = parse(command="make lint", output=coloured)
    assert text is not None and "error: this looks like a bug" in text
