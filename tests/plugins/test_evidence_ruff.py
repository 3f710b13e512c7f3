"""The ruff evidence parser, on real ruff 0.x output (full and concise
formats, ``ruff format --check``)."""

from stepkit.plugins.evidence import ruff as parser
from tests.support.evidence_logs import condenser

parse = condenser(parser)

FULL = """\
F401 [*] `os` imported but unused
 --> a.py:1:8
  |
1 | import os
  |        ^^
2 | def f( x ):
  |
help: Remove unused import: `os`

PLR0133 Two constants compared in a comparison, consider replacing `1 == 2`
 --> test_a.py:3:24
  |
3 | def test_bad(): assert 1 == 2, "nope"
  |                        ^

Found 2 errors.
[*] 1 fixable with `--fix`.
"""

CONCISE = """\
a.py:1:1: I001 [*] Import block is un-sorted or un-formatted
a.py:1:8: F401 [*] `os` imported but unused
Found 2 errors.
"""

FORMAT_CHECK = """\
unformatted: File would be reformatted
 --> a.py:2:1
  |
1 | import os
  - def f( x ):
2 + def f(x):
  |

2 files would be reformatted, 1 file already formatted
"""


def test_full_format_diagnostics_with_locations():
    text = parse(command="ruff check", output=FULL)
    assert "a.py:1:8: F401 `os` imported but unused" in text
    assert "test_a.py:3:24: PLR0133 Two constants compared" in text
    assert "help:" not in text
    assert text.endswith("summary: Found 2 errors")


def test_concise_format():
    text = parse(command="uv run ruff check --output-format=concise", output=CONCISE)
    assert "diagnostics (2):" in text
    assert "a.py:1:1: I001 Import block is un-sorted or un-formatted" in text


def test_format_check_names_the_files():
    text = parse(command="ruff format --check", output=FORMAT_CHECK)
    assert "diagnostics (1):\n  a.py: would be reformatted" in text
    assert text.endswith("summary: 2 files would be reformatted, 1 file already formatted")


def test_clean_runs():
    assert parse(command="ruff check", output="All checks passed!\n", exit_code=0).endswith(
        "summary: All checks passed!"
    )
    assert parse(command="ruff format", output="3 files left unchanged\n", exit_code=0).endswith(
        "summary: 3 files left unchanged"
    )


def test_other_output_is_not_claimed():
    assert parse(command="pytest", output="1 passed in 0.1s") is None
