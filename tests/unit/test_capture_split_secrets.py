"""A secret is masked in the log however the reads cut the output: through
the secret, next to it, many times over; on an ordinary line, and inside a
line that never ends (passed on in pieces past the line limit, cut where no
secret straddles the cut).  The limits are made small so that a short
output crosses them; every secret here reaches far less than the window."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stepkit.workspace import process, redact

#: Each output holds one of these (the text) whose secret (the value) must not reach the log.
SECRETS = {
    "DB_PASSWORD=CorrectHorseBatteryStaple": "CorrectHorseBatteryStaple",
    'db_password: "P@ss-w0rd!Strong#2024"': "P@ss-w0rd!Strong#2024",
    "connecting to postgres://admin:Pg5ecret@db": "Pg5ecret",
    "posting to https://hooks.slack.com/services/T000/B000/XXXX": "T000/B000/XXXX",
    "using ghp_a1B2c3D4e5F6g7H8i9J0a1B2c3D4e5F6g7H8": "a1B2c3D4e5F6g7H8i9J0",
    "Authorization: Bearer abc123def456ghi789": "abc123def456ghi789",
    "sshpass -p hunter2hunter2 ssh host": "hunter2hunter2",
}
FILLER = "worker processed batch size=128 took 0.5s; "


@pytest.fixture(autouse=True)
def _small_limits(monkeypatch):
    monkeypatch.setattr(redact, "LINE_LIMIT", 2048)
    monkeypatch.setattr(redact, "_WINDOW", 512)
    monkeypatch.setattr(redact, "_plain_left", 0)  # the bytes path from the first chunk


def _log(data: bytes, cuts: list[int]) -> str:
    log = io.BytesIO()
    capture = process._Capture(log, 1024, 4096, None)
    at = 0
    for cut in sorted({min(cut, len(data)) for cut in cuts}) + [len(data)]:
        capture.feed(data[at:cut])
        at = cut
    capture.close()
    return log.getvalue().decode("utf-8", "surrogateescape")


@settings(max_examples=60, deadline=None)
@given(
    text=st.sampled_from(sorted(SECRETS)),
    before=st.integers(0, 80),
    after=st.integers(0, 40),
    one_line=st.booleans(),
    cuts=st.lists(st.integers(0, 12_000), max_size=8),
    through=st.integers(0, 200),
)
def test_a_secret_split_across_any_read_is_masked(text, before, after, one_line, cuts, through):
    joint = " " if one_line else "\n"
    output = joint.join([FILLER] * before + [text] + [FILLER] * after)
    if not one_line:
        output += "\n"
    data = output.encode()
    secret_at = data.find(SECRETS[text].encode())
    # one read always ends inside the secret (or just around it)
    cuts = [*cuts, secret_at + through % (len(SECRETS[text]) + 2)]
    log = _log(data, cuts)
    assert SECRETS[text] not in log
    assert redact.MASK in log
