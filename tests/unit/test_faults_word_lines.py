"""The lines of a runner's output that hold a word are picked by one search
over the whole output; they must be exactly the lines a per-line, any-case
test picks, whatever the text holds."""

from __future__ import annotations

import random

import pytest

from stepkit.workspace import faults
from stepkit.workspace.runners import builtin_runners


def _per_line(lines: list[str], words: tuple[str, ...]) -> str:
    return "\n".join(line for line in lines if any(word in line.lower() for word in words))


PIECES = (
    "FAILED",
    "fail",
    "Error",
    "ERROR:",
    "ok",
    "OK ",
    "--- ",
    "Ran ",
    "tests",
    "no Tests",
    "0 passed",
    "pass 0",
    "İ",
    "K",
    "Σ",
    "x",
    " ",
    "\t",
    "\r",
    "",
    "errors",
    "skipped",
    "über",
    "\udcff",
)  # a byte that was not UTF-8


@pytest.mark.parametrize(
    "one_pass_chars", [faults._ONE_PASS_CHARS, 0]
)  # 0: RE2 first says whether any is there
def test_picks_the_lines_a_per_line_search_picks(monkeypatch, one_pass_chars):
    monkeypatch.setattr(faults, "_ONE_PASS_CHARS", one_pass_chars)
    rng = random.Random(7)
    for _ in range(300):
        lines = [
            "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 6)))
            for _ in range(rng.randint(0, 30))
        ]
        out = faults._read("\n".join(lines))
        for words in (faults._FAILURE_WORDS, builtin_runners().words):
            assert faults._with_words(out, words) == _per_line(out.lines, words)


def test_a_line_holding_a_word_twice_is_picked_once():
    out = faults._read("fail fail error\nnothing\nERROR\n")
    assert faults._with_words(out, faults._FAILURE_WORDS) == "fail fail error\nERROR"
