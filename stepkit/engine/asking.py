"""Approval and input nodes: the question a node asks, and where an answer
takes the run (or why it is not accepted, so the run pauses and asks again)."""

from __future__ import annotations

from typing import Any

from stepkit.engine.answers import Rejected, Slip, expected, read_answer
from stepkit.graph.nodes import ApprovalNode, AskNode, InputNode
from stepkit.graph.templates import render_template, render_values
from stepkit.records import Paused, Question
from stepkit.text import shown_bytes


def question_for(node: ApprovalNode | InputNode, state: dict[str, Any]) -> Question:
    """The question ``node`` asks, its template filled from ``state``."""
    approval = node if isinstance(node, ApprovalNode) else None
    return Question(
        node=node.id,
        kind=node.kind,
        text=render_template(node.question, state),
        options=approval.options if approval else [],
        allow_other=bool(approval and (approval.on_other or approval.other_as)),
        non_empty=isinstance(node, InputNode) and node.non_empty,
        aliases=approval.alias_words() if approval else {},
        other_as=approval.other_as if approval else None,
        views={w: render_template(t, state) for w, t in approval.views.items()} if approval else {},
    )


def answer_route(
    node: AskNode, question: Question, answer: str, state: dict[str, Any]
) -> tuple[str, str, dict[str, Any]]:
    """Where ``answer`` takes the run: the target node, the route key the
    checkpoint records, and the state updates: the answer itself (always kept
    as ``<node>_answer``) and the node's ``updates`` for that route, their
    templates filled from ``state`` and the answer.

    :raises Slip: a one-word answer within two edits of an option.
    :raises Rejected: the answer fits none of the options (see
        :func:`~stepkit.engine.answers.read_answer`).
    """
    recorded = {f"{node.id}_answer": answer}

    def updates_for(route: str) -> dict[str, Any]:
        return {**render_values(node.updates.get(route, {}), {**state, **recorded}), **recorded}

    reading = read_answer(question, answer)
    if isinstance(node, InputNode):
        return node.next, "next", {**updates_for("next"), node.key: answer}
    assert isinstance(node, ApprovalNode)
    if reading.view:
        raise Rejected(question, f"{answer.strip()!r} is not an answer ({expected(question)})")
    if not reading.free_text:
        return node.routes[reading.route], reading.route, updates_for(reading.route)
    assert node.on_other is not None  # free text is read only where the node routes it
    updates = updates_for("other")
    if node.other_key:
        updates[node.other_key] = answer
    return node.on_other, "other", updates


def pending_question(pending: dict[str, Any]) -> Question:
    """The question a checkpoint's ``pending`` record waits on."""
    return Question.model_validate(
        {
            **{k: v for k, v in pending.items() if k in Question.model_fields},
            "text": pending["question"],
            "views": dict.fromkeys(pending.get("views") or [], ""),
        }
    )


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
        "aliases": question.aliases,
        "other_as": question.other_as,
        "views": list(question.views),  # the words: the texts are shown again when asked again
    }
    if isinstance(paused, Rejected):
        pending["note"] = paused.note
    if isinstance(paused, Slip):
        pending["slip"] = True
    return pending
