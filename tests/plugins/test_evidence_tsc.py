"""The TypeScript compiler evidence parser."""

from stepkit.plugins.evidence import tsc as parser
from tests.support.evidence_logs import condenser

parse = condenser(parser)

PLAIN = """\
src/index.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.
src/util.ts(9,1): error TS2304: Cannot find name 'missing'.
"""

PRETTY = """\
src/index.ts:3:7 - error TS2322: Type 'string' is not assignable to type 'number'.

3 const n: number = "a";
        ~

Found 1 error in src/index.ts:3
"""


def test_plain_format():
    text = parse(command="npx tsc --noEmit", output=PLAIN)
    assert "src/index.ts:3:7: TS2322 Type 'string' is not assignable to type 'number'." in text
    assert "src/util.ts:9:1: TS2304 Cannot find name 'missing'." in text
    assert text.endswith("summary: 2 errors")


def test_pretty_format_and_summary():
    text = parse(command="npm run typecheck", output=PRETTY)
    assert "type errors (1):\n  src/index.ts:3:7: TS2322" in text
    assert text.endswith("summary: Found 1 error in src/index.ts:3")


def test_other_output_is_not_claimed():
    assert parse(command="mypy", output="Found 2 errors in 1 file\n") is None
