"""Approval and input nodes: the question a node asks, and where an answer
takes the run (or why it is not accepted, so the run pauses and asks again)."""

from __future__ import annotations

from typing import Any

from stepkit.graph.nodes import ApprovalNode, AskNode, InputNode
from stepkit.graph.templates import render_template, render_values
from stepkit.records import Paused, Question


class Rejected(Paused):
    """The answer given does not fit the question: pause and ask again."""

    def __init__(self, question: Question, note: str):
        super().__init__(question)
        self.note = note


def question_for(node: AskNode, state: dict[str, Any]) -> Question:
    """The question ``node`` asks, its template filled from ``state``."""
    approval = isinstance(node, ApprovalNode)
    return Question(
        node=node.id,
        kind=node.kind,
        text=render_template(node.question, state),
        options=node.options if approval else [],
        allow_other=approval and bool(node.on_other or node.other_as),
        non_empty=isinstance(node, InputNode) and node.non_empty,
    )


def answer_route(node: AskNode, question: Question, answer: str,
                 state: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """Where ``answer`` takes the run: the target node, the route key the
    checkpoint records, and the state updates: the answer itself (always kept
    as ``<node>_answer``) and the node's ``updates`` for that route, their
    templates filled from ``state`` and the answer.

    :raises Rejected: the answer fits none of the options (or is empty where
        that is not accepted).
    """
    recorded = {f"{node.id}_answer": answer}

    def updates_for(route: str) -> dict[str, Any]:
        return {**render_values(node.updates.get(route, {}), {**state, **recorded}), **recorded}

    if isinstance(node, InputNode):
        if node.non_empty and not answer.strip():
            raise Rejected(question, "an empty answer is not accepted")
        return node.next, "next", {**updates_for("next"), node.key: answer}
    assert isinstance(node, ApprovalNode)
    choice = _match(answer, node.options) or node.other_as
    if choice is not None:
        return node.routes[choice], choice, updates_for(choice)
    if node.on_other and answer.strip():
        updates = updates_for("other")
        if node.other_key:
            updates[node.other_key] = answer
        return node.on_other, "other", updates
    raise Rejected(question, f"{answer!r} is not one of the options")


def pending_record(paused: Paused) -> dict[str, Any]:
    """The checkpoint's ``pending``: the question the run waits at (and, when
    the last answer was refused, why)."""
    question = paused.question
    pending = {"node": question.node, "kind": question.kind, "question": question.text,
               "options": question.options, "allow_other": question.allow_other,
               "non_empty": question.non_empty}
    if isinstance(paused, Rejected):
        pending["note"] = paused.note
    return pending


def _match(answer: str, options: list[str]) -> str | None:
    wanted = answer.strip().casefold()
    return next((option for option in options if option.casefold() == wanted), None)
