"""The built-in ``stepkit_ask``: given answers, the terminal prompt, pausing."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from stepkit.plugins import ask
from stepkit.records import Paused, Question

APPROVAL = Question(
    node="gate_user_review",
    kind="approval",
    text="Approve step 1?",
    options=["approve", "revise"],
    allow_other=True,
)
STRICT = Question(
    node="gate_blocked", kind="approval", text="Proceed anyway?", options=["yes", "no"]
)
INPUT = Question(node="get_revision", kind="input", text="What should change?", non_empty=True)


def reader(*lines: str):
    pending = list(lines)

    def read() -> str:
        if not pending:
            raise EOFError
        return pending.pop(0)

    return read


def console() -> Console:
    return Console(file=io.StringIO(), width=100)


def test_a_given_answer_is_used_for_its_node_only():
    settings = {"answers": {"gate_user_review": "approve"}}
    assert ask.stepkit_ask(question=APPROVAL, settings=settings) == "approve"
    with pytest.raises(Paused) as info:
        ask.stepkit_ask(question=STRICT, settings=settings)
    assert info.value.question == STRICT


def test_a_given_answer_is_returned_as_given_for_the_engine_to_check():
    assert ask.stepkit_ask(question=INPUT, settings={"answers": {"get_revision": "  "}}) == "  "


def test_no_terminal_pauses_and_the_environment_never_answers(monkeypatch):
    monkeypatch.setenv("STEP_AUTOAPPROVE", "1")
    monkeypatch.setattr(ask, "_stdin_is_terminal", lambda: False)
    with pytest.raises(Paused):
        ask.stepkit_ask(question=APPROVAL, settings={})


def test_on_a_terminal_the_question_is_asked(monkeypatch):
    monkeypatch.setattr(ask, "_stdin_is_terminal", lambda: True)
    monkeypatch.setattr(ask, "prompt", lambda question: f"asked {question.node}")
    assert ask.stepkit_ask(question=APPROVAL, settings={}) == "asked gate_user_review"
    with pytest.raises(Paused):  # a caller can force the pause on a terminal
        ask.stepkit_ask(question=APPROVAL, settings={"interactive": False})


def test_prompt_shows_the_options_and_insists_on_a_valid_answer():
    out = console()
    assert ask.prompt(STRICT, console=out, read=reader("maybe", "", "YES")) == "YES"
    text = out.file.getvalue()
    assert "gate_blocked" in text and "Proceed anyway?" in text and "Options: yes / no" in text
    assert text.count("Please answer one of: yes, no") == 2


def test_prompt_takes_free_text_where_allowed_and_non_empty_input():
    assert (
        ask.prompt(APPROVAL, console=console(), read=reader("add a docstring")) == "add a docstring"
    )
    out = console()
    assert ask.prompt(INPUT, console=out, read=reader("", "rename it")) == "rename it"
    assert "An answer is needed." in out.file.getvalue()


def test_end_of_input_at_the_prompt_pauses():
    with pytest.raises(Paused):
        ask.prompt(INPUT, console=console(), read=reader())


@pytest.mark.parametrize(
    "answer, meant",
    [
        ("aprove", ["approve"]),
        ("aprov", ["approve"]),
        ("revsie", ["revise"]),
        ("APROVE", ["approve"]),
        ("approve", []),
        ("approve it now", []),
        ("fix the docstring", []),
        ("", []),
        ("documentation", []),
    ],
)
def test_a_one_word_answer_within_two_edits_of_an_option_is_a_slip(answer, meant):
    from stepkit.engine.asking import slips

    assert slips(answer, ["approve", "revise", "reject", "abort"]) == meant
