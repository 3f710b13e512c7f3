"""The built-in ``stepkit_ask``: given answers, the terminal prompt, pausing."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from stepkit.engine.answers import Reading, Rejected, Slip, read_answer, slips
from stepkit.plugins import ask
from stepkit.records import Paused, Question

APPROVAL = Question(
    node="gate_user_review",
    kind="approval",
    text="Approve step 1?",
    options=["approve", "revise", "reject", "abort"],
    allow_other=True,
    aliases={"y": "approve", "yes": "approve", "lgtm": "approve"},
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
    return Console(file=io.StringIO(), width=200)


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
    assert "'maybe' is not an option (answer one of yes, no)" in text
    assert "An empty answer is not an option (answer one of yes, no)" in text


def test_prompt_sends_comments_only_once_confirmed_and_refuses_one_word():
    out = console()
    lines = reader("nope", "fix the docstring", "n", "add a test", "y")
    assert ask.prompt(APPROVAL, console=out, read=lines) == "add a test"
    text = out.file.getvalue()
    assert "Options: approve / revise / reject / abort — or comments of two words or more" in text
    assert (
        "'nope' is not an option (answer one of approve, revise, reject, abort, "
        "or comments of two words or more)"
    ) in text
    assert text.count("send these comments to the coder? [y/N]") == 2
    assert "Your comments:\n  fix the docstring\n" in text and "Not sent. Answer one of" in text


def test_prompt_takes_non_empty_input_and_a_yes_word_for_its_option():
    out = console()
    assert ask.prompt(INPUT, console=out, read=reader("", "rename it")) == "rename it"
    assert "An empty answer is not accepted" in out.file.getvalue()
    assert ask.prompt(APPROVAL, console=console(), read=reader("y")) == "y"


def test_end_of_input_at_the_confirmation_pauses_at_the_question():
    with pytest.raises(Paused) as info:
        ask.prompt(APPROVAL, console=console(), read=reader("fix the docstring"))
    assert info.value.question == APPROVAL


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
    assert slips(answer, ["approve", "revise", "reject", "abort"]) == meant


@pytest.mark.parametrize(
    "answer, route",
    [
        ("approve", "approve"),
        ("  APPROVE ", "approve"),
        ("approve.", "approve"),
        ("**Reject**", "reject"),
        ("Y", "approve"),
        ("lgtm!", "approve"),
        ("fix the docstring", "other"),
        ("approve it now", "other"),
    ],
)
def test_an_option_however_typed_an_alias_or_a_sentence_is_read(answer, route):
    assert read_answer(APPROVAL, answer) == Reading(route, answer)


@pytest.mark.parametrize(
    "answer", ["no", "n", "q", "quit", "exit", "nope", "sure", "", "documentation"]
)
def test_any_other_one_word_answer_is_refused_with_the_options(answer):
    with pytest.raises(Rejected) as info:
        read_answer(APPROVAL, answer)
    assert (
        "answer one of approve, revise, reject, abort, or comments of two words" in info.value.note
    )


def test_other_as_takes_what_is_no_option_but_never_a_slip():
    lenient = STRICT.model_copy(update={"other_as": "no", "allow_other": True})
    assert read_answer(lenient, "perhaps later").route == "no"
    with pytest.raises(Slip):
        read_answer(lenient, "yse")


LOOKING = APPROVAL.model_copy(update={"views": {"files": "calc.py  +4 -0", "diff": "+def mul"}})


def test_a_view_word_is_read_as_no_answer_and_an_option_still_is_one():
    assert read_answer(LOOKING, " DIFF. ") == Reading("diff", " DIFF. ", view=True)
    assert not read_answer(LOOKING, "diff").free_text
    assert read_answer(LOOKING, "approve") == Reading("approve", "approve")
    with pytest.raises(Rejected):  # no view on a question without views: one word, refused
        read_answer(APPROVAL, "diff")


def test_a_view_is_printed_where_no_pager_can_write_and_the_question_asked_again(monkeypatch):
    monkeypatch.setenv("PAGER", "cat")
    out = console()  # a console on no file descriptor: the pager cannot write there
    assert ask.prompt(LOOKING, out, reader("files", "diff", "approve")) == "approve"
    text = out.file.getvalue()
    assert "To look first, type: files / diff" in text
    assert text.count("calc.py  +4 -0") == 1 and "+def mul" in text
    assert text.count("Answer one of approve") == 2
