"""A tamper flag is a :class:`~stepkit.records.TamperFlag` in one list of the
state: a string is refused, the displays show its text, and what a coder
round raises again (a judgment of the tree) or keeps (an event of the run)
is read from its kind."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from stepkit.protocol.glance import flag_sections
from stepkit.protocol.state import StepState
from stepkit.records import TamperFlag, flag_lines

DELETED = TamperFlag.in_changes("deleted_test", "tests/t.py", "deleted test file: tests/t.py")
HOOK = TamperFlag.by("the coder", "git_internals", "git hook .git/hooks/x added: undone")


def test_a_flag_as_a_string_is_refused_by_the_state():
    with pytest.raises(ValidationError):
        StepState(tamper_flags=["deleted test file: tests/t.py"])


def test_the_approval_shows_each_flags_text():
    state = StepState(tamper_flags=[DELETED.model_dump(), HOOK.model_dump()])
    (_heading, _none, items), *_ = flag_sections(state)
    assert items == flag_lines(state.tamper_flags) == [DELETED.text, HOOK.text]


def test_a_coder_round_raises_again_by_kind_not_by_text():
    # the same words, another kind: what a round keeps follows the kind
    event = TamperFlag.by("the coder", "git_internals", DELETED.text)
    assert (DELETED.of_the_tree, event.of_the_tree) == (True, False)
    assert DELETED != event
