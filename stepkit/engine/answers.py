"""The one reading of an answer to a question: which option it is, free text,
or refused, with why.  The terminal prompt, ``stepkit resume --answer``,
``--answer NODE=TEXT`` and the engine all read answers here, so an answer
means the same wherever it is typed.

At an approval question an answer is, in order:

- an option, by its exact word: case, surrounding spaces and end punctuation
  aside (``  APPROVE ``, ``approve.``);
- one of the node's ``aliases`` (``y`` for ``approve``);
- one of the question's ``views`` (``diff``): no answer, a request to see
  something (the terminal prompt shows it and asks again; elsewhere it is
  refused);
- with ``other_as``: any other answer is that option (a slip is refused);
- with free text allowed: a sentence of two words or more;
- else refused, naming the options; a word within two edits of an option
  (``aprove``) is refused as a slip of it.
"""

from __future__ import annotations

from dataclasses import dataclass

from stepkit.records import Paused, Question

#: A one-word answer this many edits or fewer from an option is a slip of that option.
SLIP_DISTANCE = 2
#: What an answer may be wrapped in: ``approve.``, ``"approve"``, ``**approve**``.
_WRAPPING = " \t\r\n.,;:!?'\"`*_()[]"


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
            f"({expected(question)})",
        )
        self.meant = meant


@dataclass(frozen=True)
class Reading:
    """What an answer means: ``route`` is the option chosen, ``"other"`` for
    free text, ``"next"`` for an input question; with ``view``, the view
    word asked for (no answer)."""

    route: str
    text: str
    view: bool = False

    @property
    def free_text(self) -> bool:
        return self.route == "other" and not self.view


def read_answer(question: Question, answer: str) -> Reading:
    """The meaning of ``answer`` to ``question``.

    :raises Slip: a one-word answer within two edits of an option.
    :raises Rejected: the answer fits none of the options and is no
        free text the question takes (or is empty where that is refused).
    """
    if question.kind == "input":
        if question.non_empty and not answer.strip():
            raise Rejected(question, "an empty answer is not accepted")
        return Reading("next", answer)
    word = answer.strip(_WRAPPING).casefold()
    choice = next((o for o in question.options if o.casefold() == word), None)
    choice = choice or question.aliases.get(word)
    if choice is not None:
        return Reading(choice, answer)
    view = next((v for v in question.views if v.casefold() == word), None)
    if view is not None:
        return Reading(view, answer, view=True)
    one_word = len(answer.split()) <= 1
    meant = slips(word, question.options) if one_word else []
    if meant:
        raise Slip(question, answer.strip(), meant)
    if question.other_as:
        return Reading(question.other_as, answer)
    if question.allow_other and not one_word:
        return Reading("other", answer)
    shown = repr(answer.strip()) if answer.strip() else "an empty answer"
    raise Rejected(question, f"{shown} is not an option ({expected(question)})")


def expected(question: Question) -> str:
    """What the question takes, in words: ``answer one of a, b, or …``."""
    text = f"answer one of {', '.join(question.options)}"
    if question.allow_other and not question.other_as:
        text += ", or comments of two words or more"
    return text


def slips(answer: str, options: list[str]) -> list[str]:
    """The options a one-word ``answer`` that is none of them is a slip of."""
    word = answer.strip(_WRAPPING).casefold()
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
