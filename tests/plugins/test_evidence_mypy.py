"""The type-checker evidence parser (mypy and pyright)."""

from stepkit.plugins.evidence import mypy as parser
from tests.support.evidence_logs import condenser

parse = condenser(parser)

MYPY = """\
src/app.py:3: error: Incompatible types in assignment (expression has type "str", variable has type "int")  [assignment]
src/app.py:7: note: Revealed type is "builtins.int"
src/util.py:12: error: Missing return statement  [return]
Found 2 errors in 2 files (checked 5 source files)
"""

PYRIGHT = """\
/home/dev/proj/src/app.py
  /home/dev/proj/src/app.py:3:9 - error: Type "Literal['a']" is not assignable to declared type "int"
    "Literal['a']" is not assignable to "int" (reportAssignmentType)
  /home/dev/proj/src/app.py:5:1 - warning: Import "foo" could not be resolved (reportMissingImports)
1 error, 1 warning, 0 informations
"""


def test_mypy_errors_and_summary():
    text = parse(command="mypy src", output=MYPY)
    assert "type errors (2):" in text
    assert 'src/app.py:3: Incompatible types in assignment (expression has type "str"' in text
    assert "src/util.py:12: Missing return statement  [return]" in text
    assert "note:" not in text
    assert text.endswith("summary: Found 2 errors in 2 files (checked 5 source files)")


def test_mypy_success():
    text = parse(
        command="mypy .", output="Success: no issues found in 5 source files\n", exit_code=0
    )
    assert text.endswith("summary: Success: no issues found in 5 source files")


def test_pyright_errors_and_summary():
    text = parse(command="pyright", output=PYRIGHT)
    assert "/home/dev/proj/src/app.py:3:9: Type \"Literal['a']\" is not assignable" in text
    assert "could not be resolved" not in text
    assert text.endswith("summary: 1 error, 1 warning, 0 informations")


def test_other_output_is_not_claimed():
    assert parse(command="make", output="main.c:3:5: error: expected ';'\n") is None
