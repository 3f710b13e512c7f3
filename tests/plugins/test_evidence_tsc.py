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


def test_colour_codes_splitting_the_error_word_still_parse():
    """tsc --pretty colours "error" and the code apart: the quick check for
    "error TS" must not turn such output away."""
    coloured = (
        "\x1b[96msrc/index.ts\x1b[0m:\x1b[93m3\x1b[0m:\x1b[93m7\x1b[0m - \x1b[91merror\x1b[0m"
        "\x1b[90m TS2322: \x1b[0mType 'string' is not assignable to type 'number'.\n"
    )
    text = parse(command="npm run typecheck", output=coloured)
    assert text is not None and "src/index.ts:3:7: TS2322" in text
