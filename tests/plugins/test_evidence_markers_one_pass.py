"""Which parsers may read a big output is found by one RE2 pass over it for
them all: each parser must be told what an ``in`` per marker would tell it,
overlapping markers, case and bytes that were not UTF-8 included."""

from __future__ import annotations

import random

from stepkit.plugins.evidence import _shared

PIECES = (
    *(text for markers in _shared.MARKERS.values() for text in markers.texts),
    " faile",  # a marker but its last letter
    "Test",
    "ok",
    "x",
    "\n",
    "\t",
    "\udcff",  # a byte that was not UTF-8
    "ℹ",
)


def test_one_pass_tells_each_parser_what_in_tells_it(monkeypatch):
    monkeypatch.setattr(_shared, "_ONE_PASS_CHARS", 0)
    rng = random.Random(11)
    for _ in range(500):
        output = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 8)))
        for parser, markers in _shared.MARKERS.items():
            arguments = {"command": "make test", "output": output}
            expected = "\x1b" in output or any(text in output for text in markers.texts)
            assert _shared.may_answer(parser, arguments) == expected, (parser, output)


def test_a_big_output_is_read_once_for_every_parser():
    output = "tests/test_a.py::test_b PASSED\n" * 20_000 + "==== 1 passed in 0.5s ====\n"
    asked = [_shared.may_answer(p, {"command": "make", "output": output}) for p in _shared.MARKERS]
    assert _shared._held_markers.cache_info().currsize == 1
    assert asked == [
        any(text in output for text in markers.texts) for markers in _shared.MARKERS.values()
    ]
