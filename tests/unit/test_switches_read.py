"""The protocol's environment switches are booleans read once: 1/0 and the
words pydantic reads as booleans; anything else is a usage error."""

from __future__ import annotations

import pytest

from stepkit.errors import UsageError
from stepkit.protocol.switches import read_switches


def test_words_read_as_booleans_and_unset_is_off():
    read = read_switches({"STEP_AUTOAPPROVE": "true", "STEP_SKIP_REVIEW": "0"})
    assert read == {"STEP_AUTOAPPROVE": True, "STEP_SKIP_REVIEW": False, "CODER_AUTOAPPROVE": False}


@pytest.mark.parametrize("value", ["yess", "2", "enabled"])
def test_anything_else_is_refused_naming_the_switch(value):
    with pytest.raises(UsageError, match=f"CODER_AUTOAPPROVE={value!r}: takes 1 or 0"):
        read_switches({"CODER_AUTOAPPROVE": value})
