"""Approval and input nodes: the question a node asks, and where an answer
takes the run (or why it is not accepted, so the run pauses and asks again)."""

from __future__ import annotations

from typing import Any

from stepkit.graph.nodes import ApprovalNode, AskNode, InputNode
from stepkit.graph.templates import render_template, render_values
from stepkit.records import Paused, Question
from stepkit.text import shown_bytes

#: A one-word answer this many edits or fewer from an option is a slip of that option.
SLIP_DISTANCE = 2


class Rejected(Paused):
    """The answer given does not fit the question: pause and ask again."""

    def __init__(self, question: Question, note: str):
        super().__init__(question)
        self.note = note


class Slip(Rejected):
    """A one-word answer within :data:`SLIP_DISTANCE` edits of an option
    (``aprove``): never taken as free text or as the fallback option."""

    def __init__(self, question: Question, answer: str, meant: list[str]):
        super().__init__(
            question,
            f"{answer!r} is not an option: did you mean {' or '.join(meant)}? "
            f"(options: {', '.join(question.options)})",
        )
        self.meant = meant


def slips(answer: str, options: list[str]) -> list[str]:
    """The options a one-word ``answer`` that is none of them is a slip of."""
    word = answer.strip().casefold()
    if not word or len(word.split()) != 1 or any(word == o.casefold() for o in options):
        return []
    return [o for o in options if _edits(word, o.casefold()) <= SLIP_DISTANCE]


def _edits(a: str, b: str) -> int:
    """Levenshtein distance of ``a`` and ``b``."""
    row = list(range(len(b) + 1))
    for i, char in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, other in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (char != other))
    return row[-1]


def question_for(node: ApprovalNode | InputNode, state: dict[str, Any]) -> Question:
    """The question ``node`` asks, its template filled from ``state``."""
    return Question(
        node=node.id,
        kind=node.kind,
        text=render_template(node.question, state),
        options=node.options if isinstance(node, ApprovalNode) else [],
        allow_other=isinstance(node, ApprovalNode) and bool(node.on_other or node.other_as),
        non_empty=isinstance(node, InputNode) and node.non_empty,
    )


def answer_route(
    node: AskNode, question: Question, answer: str, state: dict[str, Any]
) -> tuple[str, str, dict[str, Any]]:
    """Where ``answer`` takes the run: the target node, the route key the
    checkpoint records, and the state updates: the answer itself (always kept
    as ``<node>_answer``) and the node's ``updates`` for that route, their
    templates filled from ``state`` and the answer.

    :raises Slip: a one-word answer within two edits of an option.
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
    meant = slips(answer, node.options)
    if meant:
        raise Slip(question, answer.strip(), meant)
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
    # a file name that is not UTF-8 is shown as caf\xe9.txt, as in the run's output
    pending = {
        "node": question.node,
        "kind": question.kind,
        "question": shown_bytes(question.text),
        "options": question.options,
        "allow_other": question.allow_other,
        "non_empty": question.non_empty,
    }
    if isinstance(paused, Rejected):
        pending["note"] = paused.note
    if isinstance(paused, Slip):
        pending["slip"] = True
    return pending


def _match(answer: str, options: list[str]) -> str | None:
    wanted = answer.strip().casefold()
    return next((option for option in options if option.casefold() == wanted), None)
