"""The RE2 prefilter of secret masking only saves time: every text is masked
exactly as running every shape on all of it masks it.

The corpus is every text of tests/unit/test_redact.py's cases, and the same
texts with their letters' case flipped, inside ordinary log lines, and cut
into pieces fed one by one, so a shape whose prefilter regex is narrower
than the shape shows up as a difference."""

from __future__ import annotations

import random

import pytest

from stepkit.workspace import redact
from tests.unit import test_redact


class _EveryShape:
    """A prefilter that says every shape may match anywhere."""

    def Match(self, text):
        return list(range(len(redact._SHAPES)))


def _texts() -> list[str]:
    found: list[str] = []
    for name in dir(test_redact):
        value = getattr(test_redact, name)
        for mark in getattr(value, "pytestmark", []):
            if mark.name == "parametrize":
                for case in mark.args[1]:
                    found += [
                        c
                        for c in (case if isinstance(case, tuple) else (case,))
                        if isinstance(c, str)
                    ]
        if isinstance(value, (list, tuple, dict)) and name.isupper():
            found += [v for v in value if isinstance(v, str)]
        if isinstance(value, str) and name.isupper():
            found.append(value)
    return found


TEXTS = _texts()
LOG = (
    "2024-05-01 12:00:01,123 INFO worker.py:88 processed id=42 took=0.5s\n"
    "tests/test_api.py::test_token_refresh PASSED [ 12%]\n"
)


def _variants(text: str, rng: random.Random) -> list[str]:
    flipped = "".join(c.swapcase() if rng.random() < 0.5 else c for c in text)
    return [text, text.upper(), flipped, f"{LOG * 40}{text}\n{LOG * 40}"]


def _brute_force(monkeypatch, text: str) -> str:
    with monkeypatch.context() as m:
        m.setattr(redact, "_prefilter", lambda: _EveryShape())
        return redact.redact(text)


def _in_pieces(text: str, rng: random.Random) -> str:
    redactor, out, at = redact.Redactor(), [], 0
    while at < len(text):
        step = rng.randint(1, 5000)
        out.append(redactor.feed(text[at : at + step]))
        at += step
    return "".join(out) + redactor.close()


@pytest.fixture(autouse=True)
def _prefilter_on(monkeypatch):
    """The prefilter from the first character (a process masks its first
    ``PLAIN_CHARS`` of streams and ``TEXT_PLAIN_CHARS`` of whole texts with
    every shape, which is what it is compared with)."""
    monkeypatch.setattr(redact, "_plain_left", 0)
    monkeypatch.setattr(redact, "_text_left", 0)


def test_the_first_characters_a_process_masks_are_masked_as_the_prefilter_masks_them(monkeypatch):
    rng = random.Random(7)
    variants = [variant for text in TEXTS for variant in _variants(text, rng)]
    with_prefilter = [redact.redact(variant) for variant in variants]
    monkeypatch.setattr(redact, "_plain_left", 10**12)
    monkeypatch.setattr(redact, "_text_left", 10**12)
    monkeypatch.setattr(redact, "_prefilter_set", None)
    built = []
    monkeypatch.setattr(redact, "_prefilter", lambda: built.append(1))
    assert [redact.redact(variant) for variant in variants] == with_prefilter
    assert built == []  # every shape ran, the RE2 set was never asked for


def test_the_corpus_is_the_cases_of_test_redact():
    assert len(TEXTS) > 100


@pytest.mark.parametrize("seed", range(2))
def test_the_prefilter_masks_exactly_what_every_shape_masks(monkeypatch, seed):
    rng = random.Random(seed)
    differ = []
    for text in TEXTS:
        for variant in _variants(text, rng):
            expected = _brute_force(monkeypatch, variant)
            if redact.redact(variant) != expected or _in_pieces(variant, rng) != expected:
                differ.append(variant[-200:])
    assert differ == []
