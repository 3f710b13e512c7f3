"""The judges of a gate's kept output give the answers of their per-line
definitions, however they read it (word by word with ``find``, each
distinct line once, from the last line up, rules skipped when the text
every match of theirs holds is nowhere): over every output the suite
records (the string samples of the runner, evidence and fault tests, the
files of tests/fixtures) and over random mixes of their lines."""

from __future__ import annotations

import ast
import random
import re
from pathlib import Path

import pytest

from stepkit.regexneeds import needs
from stepkit.workspace import faults
from stepkit.workspace.runners import builtin_runners

TESTS = Path(__file__).resolve().parents[1]
SOURCES = (
    *sorted((TESTS / "plugins").glob("test_runner_*.py")),
    *sorted((TESTS / "plugins").glob("test_evidence*.py")),
    *sorted((TESTS / "unit").glob("test_faults*.py")),
    TESTS / "support" / "evidence_logs.py",
)


def _strings(path: Path) -> list[str]:
    """The string constants of a test module that look like output (a line break in them)."""
    tree = ast.parse(path.read_text())
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "\n" in node.value
    ]


def _recorded() -> list[str]:
    outputs = [s for path in SOURCES for s in _strings(path)]
    for path in sorted((TESTS / "fixtures").rglob("*")):
        if path.is_file() and path.stat().st_size < 200_000:
            text = path.read_bytes().decode("utf-8", "surrogateescape")
            if "\0" not in text:
                outputs.append(text)
    return outputs


#: Closing lines that hold a run word only in another case than the word's.
OTHER_CASE = (
    "Ran 1 test across 1 file. [12.00ms]\n",
    "Executed 1 test, with 0 failures (0 unexpected) in 0.001 seconds\n",
    "FAILURES!\nTests run: 3, Failures: 1.\n",
)
RECORDED = _recorded() + list(OTHER_CASE)


def _with_words(out: faults._Output, words: tuple[str, ...]) -> list[str]:
    return [line for line in out.lines if any(word in line.lower() for word in words)]


def _runner_failed(out: faults._Output, table) -> bool:
    return any(table.failures.search(line) for line in _with_words(out, faults._FAILURE_WORDS))


def _ran(out: faults._Output, table) -> bool:
    return _runner_failed(out, table) or any(
        table.ran.search(line) for line in _with_words(out, table.words)
    )


def _no_tests_found(out: faults._Output, table) -> list:
    said = "\n".join(_with_words(out, table.words))
    return [rule for rule in table.no_tests if rule[1].search(said)]


def _mixes(rng: random.Random, count: int) -> list[str]:
    """Outputs made of lines of the recorded ones, some repeated, some in upper case."""
    lines = [line for text in RECORDED for line in text.split("\n")]
    mixes = []
    for _ in range(count):
        picked = [rng.choice(lines) for _ in range(rng.randint(1, 60))]
        picked += picked[: rng.randint(0, len(picked))]  # a big output repeats lines
        rng.shuffle(picked)
        mixes.append("\n".join(line.upper() if rng.random() < 0.1 else line for line in picked))
    return mixes


@pytest.mark.parametrize("one_pass_chars", [faults._ONE_PASS_CHARS, 0])  # 0: RE2 first
def test_every_judge_answers_as_its_per_line_definition(monkeypatch, one_pass_chars):
    monkeypatch.setattr(faults, "_ONE_PASS_CHARS", one_pass_chars)
    table = builtin_runners()
    outputs = RECORDED + _mixes(random.Random(41), 400)
    assert len(RECORDED) > 300  # the corpus was found
    seen = {"failed": 0, "ran": 0, "no tests": 0}
    for output in outputs:
        out = faults._read(output)
        failed, ran = _runner_failed(out, table), _ran(out, table)
        assert faults._runner_failed(out, table) == failed, output
        assert faults._ran(out, table) == ran, output
        found = _no_tests_found(out, table)
        maybe = faults._may_match(out, table.no_tests)
        assert [r for r in maybe if r[1].search("\n".join(_with_words(out, table.words)))] == found
        seen["failed"] += failed
        seen["ran"] += ran
        seen["no tests"] += bool(found)
    assert all(seen.values()), seen  # each answer was given both ways


def test_a_pattern_never_matches_a_text_without_what_it_needs():
    table = builtin_runners()
    patterns = [
        *(rule[1] for rule in table.no_tests),
        table.failures,
        table.ran,
        *table.failure_reasons,
        *(pattern for pattern, _cause in table.tools.faults),
    ]
    texts = RECORDED + _mixes(random.Random(3), 200)
    for pattern in patterns:
        wanted = needs(pattern.pattern, pattern.flags)
        for text in texts:
            if pattern.search(text):
                assert not wanted or any(w in text for w in wanted), (pattern.pattern, wanted)


@pytest.mark.parametrize(
    "pattern, flags, wanted",
    [
        (r"^=*\s*no tests ran(?: in [\d.]+s)?\s*=*$", re.MULTILINE, ("no tests ran",)),
        (r"Zero tests ran|^No tests? found", 0, ("Zero tests ran", "No test")),
        (r"ab|c*", 0, ()),  # a branch that needs nothing: nothing is known
        (r"x(?:abc)?y", 0, ("x",)),  # an optional group is not needed
        (r"x(?:abcd)+y", 0, ("abcd",)),
        (r"a(?i:bcdef)g", 0, ("a",)),  # case-insensitive text is not looked for as written
        (r"(?i)abc", 0, ()),
        (r"abc", re.IGNORECASE, ()),
        ("first\\nsecond line", 0, ("second line",)),  # never across lines
        (r"[ab]", 0, ()),
        (r"(", 0, ()),  # not a pattern: nothing
    ],
)
def test_what_a_pattern_needs(pattern, flags, wanted):
    assert needs(pattern, flags) == wanted


def _failure_lines(data: bytes) -> list[bytes]:
    return [
        line
        for line in data.split(b"\n")
        if any(word.encode() in line.lower() for word in faults._FAILURE_WORDS)
        and not re.fullmatch(rb"[A-Za-z0-9+/=]+", line.strip())
    ]


LINE_PIECES = (b"FAILED", b"fail", b"Error", b"eRRor", b"ok", b" ", b"\t", b"\r", b"QUJD+/=")
LINE_PIECES += (b"\xff", b"\xe2\x82", b"\xc3\xa9", b"x", b"")


def test_the_lines_naming_a_failure_are_found_alike_both_ways():
    """By ``find`` per word, or by splitting once (``many``): the same lines,
    those of the per-line definition."""
    rng = random.Random(5)
    datas = [text.encode("utf-8", "surrogateescape") for text in RECORDED]
    for _ in range(2000):
        lines = [
            b"".join(rng.choice(LINE_PIECES) for _ in range(rng.randint(0, 5)))
            for _ in range(rng.randint(0, 12))
        ]
        datas.append(b"\n".join(lines) + rng.choice((b"\n", b"")))
    for data in datas:
        expected = _failure_lines(data)
        assert faults.failure_lines(data) == expected, data
        assert faults.failure_lines(data, many=True) == expected, data
