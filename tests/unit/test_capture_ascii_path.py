"""The capture of a command's output writes ASCII chunks in which the RE2
prefilter finds nothing straight to the log, as bytes.  That path only saves
time: the log holds exactly what masking the whole output as text gives, for
every case of tests/unit/test_redact.py inside a big ordinary log, cut into
chunks anywhere, a secret split across two chunks included."""

from __future__ import annotations

import io
import random

import pytest

from stepkit.workspace import process, redact
from tests.unit.test_redact_prefilter import LOG, TEXTS


def _captured(data: bytes, cuts: list[int]) -> bytes:
    log = io.BytesIO()
    capture = process._Capture(log, 1024, 4096, None)
    at = 0
    for cut in [*cuts, len(data)]:
        capture.feed(data[at:cut])
        at = cut
    capture.close()
    return log.getvalue()


@pytest.fixture(autouse=True)
def _prefilter_on(monkeypatch):
    monkeypatch.setattr(redact, "_plain_left", 0)


def test_every_case_is_masked_as_text_masks_it_wherever_the_chunks_end():
    rng = random.Random(5)
    bulk = LOG * 60  # several prefilter blocks of ordinary lines on each side
    differ = []
    for text in TEXTS:
        whole = f"{bulk}{text}\n{bulk}"
        expected = redact.redact(whole).encode("utf-8", "surrogateescape")
        data = whole.encode("utf-8", "surrogateescape")
        secret_at = len(bulk.encode())
        inside = [
            secret_at + rng.randint(0, max(0, len(text.encode()) - 1))
        ]  # a cut through the case
        for cuts in (
            inside,
            sorted({rng.randint(1, len(data) - 1) for _ in range(4)}),
            [len(data) // 2],
        ):
            if _captured(data, cuts) != expected:
                differ.append((text[:80], cuts))
    assert differ == []


@pytest.mark.parametrize(
    "secret",
    [
        "DB_PASSWORD=CorrectHorseBatteryStaple",
        "connecting to postgres://admin:Pg5ecret@db",
        "using ghp_a1B2c3D4e5F6g7H8i9J0a1B2c3D4e5F6g7H8",
    ],
)
def test_a_secret_split_across_two_chunks_is_masked(secret):
    data = f"{LOG * 60}{secret}\n{LOG * 60}".encode()
    at = data.index(secret.encode())
    for cut in range(at, at + len(secret)):
        out = _captured(data, [cut])
        assert b"[REDACTED]" in out, cut
        assert out.count(b"\n") == data.count(b"\n")


def test_a_secret_value_of_the_environment_is_masked_on_the_bytes_path(monkeypatch):
    monkeypatch.setenv("DEPLOY_TOKEN", "plainword-7731")
    data = f"{LOG * 60}deploying as plainword-7731 now\n{LOG * 60}".encode()
    assert b"plainword-7731" not in _captured(data, [len(data) // 3])


def test_chunks_the_prefilter_passes_are_not_decoded(monkeypatch):
    """The path is taken: ordinary ASCII lines never reach the text masker."""
    calls = []
    feed = redact.Redactor.feed
    monkeypatch.setattr(
        redact.Redactor, "feed", lambda self, text: calls.append(len(text)) or feed(self, text)
    )
    data = (LOG * 200).encode()
    assert _captured(data, [len(data) // 2]) == data
    assert sum(calls) == 0


@pytest.mark.parametrize("secret", ["DB_PASSWORD=CorrectHorseBatteryStaple", "password: hunter22"])
def test_a_big_piece_scanned_in_two_halves_finds_a_secret_wherever_it_is(secret):
    """Above ``_SPLIT_BYTES`` the prefilter scans two halves cut at a newline:
    a secret on the line before the cut, after it, or at either end is found."""
    lines = LOG.encode() * (redact._SPLIT_BYTES // len(LOG) + 50)
    assert not redact._may_match(lines)
    mid = lines.find(b"\n", len(lines) // 2) + 1
    line_before = lines.rfind(b"\n", 0, mid - 1) + 1
    for at in (0, line_before, mid, len(lines)):
        piece = lines[:at] + secret.encode() + b"\n" + lines[at:]
        assert redact._may_match(piece), at
        assert secret.encode() not in _captured(piece, [len(piece) // 3])
