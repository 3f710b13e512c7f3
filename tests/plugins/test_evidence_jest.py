"""The jest / vitest evidence parser."""

from stepkit.plugins.evidence import jest as parser
from tests.support.evidence_logs import condenser

parse = condenser(parser)

JEST = """\
 FAIL  src/sum.test.js
  sum
    ✕ adds 1 + 2 to equal 3 (3 ms)

  ● sum › adds 1 + 2 to equal 3

    expect(received).toBe(expected) // Object.is equality

    Expected: 4
    Received: 3

      3 | test('adds 1 + 2 to equal 3', () => {
    > 4 |   expect(sum(1, 2)).toBe(4);
        |                     ^

      at Object.toBe (src/sum.test.js:4:21)

 FAIL  src/broken.test.js
  ● Test suite failed to run

    Cannot find module './missing' from 'src/broken.test.js'

 PASS  src/other.test.js

Test Suites: 2 failed, 1 passed, 3 total
Tests:       1 failed, 5 passed, 6 total
Snapshots:   0 total
Time:        0.512 s
Ran all test suites.
"""

VITEST = """\
 RUN  v1.6.0 /home/dev/app

 ❯ src/sum.test.ts  (2 tests | 1 failed) 5ms
   × sum > adds two numbers
     → expected 3 to be 4 // Object.is equality
 ✓ src/other.test.ts  (1 test) 1ms

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  src/sum.test.ts > sum > adds two numbers
AssertionError: expected 3 to be 4 // Object.is equality

 ❯ src/sum.test.ts:5:22

⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[1/1]⎯

 Test Files  1 failed | 1 passed (2)
      Tests  1 failed | 2 passed (3)
   Start at  12:00:00
   Duration  312ms
"""


def test_jest_failures_suite_errors_and_summary():
    text = parse(command="npm test", output=JEST)
    assert "src/sum.test.js › sum › adds 1 + 2 to equal 3" in text
    assert "src/broken.test.js › Test suite failed to run" in text
    assert "Cannot find module './missing' from 'src/broken.test.js'" in text
    assert "expect(received).toBe(expected) // Object.is equality" in text
    assert "Expected: 4" in text and "Received: 3" in text
    assert "Tests:       1 failed, 5 passed, 6 total" in text
    assert text.endswith("summary: 1 failed, 5 passed, 6 total")


def test_vitest_failures_and_summary():
    text = parse(command="npx vitest run", output=VITEST)
    assert "failing tests (1):\n  src/sum.test.ts > sum > adds two numbers" in text
    assert "AssertionError: expected 3 to be 4 // Object.is equality" in text
    assert text.endswith("summary: 1 failed | 2 passed (3)")


def test_other_output_is_not_claimed():
    assert parse(command="pytest", output="1 failed in 0.1s") is None
