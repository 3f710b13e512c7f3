"""Records keep a byte that is not UTF-8 byte for byte, and people see it escaped."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime

from pydantic import BaseModel

from stepkit.jsontext import dumps, model_from_json, model_json
from stepkit.text import shown_bytes, visible
from stepkit.workspace.redact import redact

HELD = os.fsdecode(b"caf\xe9.txt")


class Record(BaseModel):
    files: dict[str, str]
    names: list[str]
    at: datetime


def test_a_surrogate_in_a_key_or_a_value_survives_a_model_record():
    # pydantic's encoder raises on the value, and silently writes U+FFFD for the key
    record = Record(files={HELD: "1"}, names=[HELD, "plain é"], at=datetime(2026, 1, 2, tzinfo=UTC))
    text = model_json(record, indent=1)
    text.encode("utf-8")  # a valid UTF-8 record
    assert "\ufffd" not in text and "caf\\udce9.txt" in text
    assert model_from_json(Record, text) == record
    assert (
        json.loads(text)["at"]
        == json.loads(record.model_copy(update={"files": {}, "names": []}).model_dump_json())["at"]
    )


def test_a_model_without_surrogates_is_written_by_pydantic_as_before():
    record = Record(files={"a": "1"}, names=["é"], at=datetime(2026, 1, 2, tzinfo=UTC))
    assert model_json(record) == record.model_dump_json()


def test_dumps_reads_back_the_same_string():
    assert json.loads(dumps({HELD: [HELD]})) == {HELD: [HELD]}


def test_a_name_is_shown_as_its_bytes_escapes():
    assert shown_bytes(HELD) == "caf\\xe9.txt"
    assert visible(f"{HELD}\r") == "caf\\xe9.txt\\r"
    assert shown_bytes("\ud800 é") == "\\ud800 é"  # no byte of surrogateescape's: its code


def test_masking_text_that_holds_a_surrogate():
    assert redact(f"{HELD} password=hunter2hunter2") == f"{HELD} password=[REDACTED]"
