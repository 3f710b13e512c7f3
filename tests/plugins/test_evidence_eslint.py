"""The eslint evidence parser (stylish and compact formats)."""

from stepkit.plugins.evidence import eslint as parser
from tests.support.evidence_logs import condenser

parse = condenser(parser)

STYLISH = """\

/home/dev/app/src/index.js
  1:7   error    'unused' is assigned a value but never used  no-unused-vars
  4:3   warning  Unexpected console statement                 no-console

/home/dev/app/src/util.js
  10:1  error  Parsing error: Unexpected token }

✖ 3 problems (2 errors, 1 warning)
  0 errors and 1 warning potentially fixable with the `--fix` option.
"""

COMPACT = "/app/src/a.js: line 2, col 5, Error - 'x' is not defined. (no-undef)\n\n1 problem\n"


def test_stylish_errors_with_file_and_rule():
    text = parse(command="npx eslint .", output=STYLISH)
    assert "errors (2):" in text
    assert (
        "/home/dev/app/src/index.js:1:7: 'unused' is assigned a value but never used (no-unused-vars)"
        in text
    )
    assert "/home/dev/app/src/util.js:10:1: Parsing error: Unexpected token }" in text
    assert (
        "warnings (1):\n  /home/dev/app/src/index.js:4:3: Unexpected console statement (no-console)"
        in text
    )
    assert text.endswith("summary: 3 problems (2 errors, 1 warning)")


def test_compact_format():
    text = parse(command="eslint -f compact .", output=COMPACT)
    assert "/app/src/a.js:2:5: 'x' is not defined. (no-undef)" in text


def test_other_output_is_not_claimed():
    assert parse(command="pytest", output="1 passed in 0.1s") is None
