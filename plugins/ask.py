"""The built-in ``stepkit_ask``: answers approval and input nodes.

In order: an answer given for this node (``--answer NODE=TEXT`` on ``run``
for the pre-answerable gates, ``stepkit resume --answer``) is used; else, when
stdin is a terminal, the question is asked there (on stderr, so ``--json``
output stays clean); else the run pauses.  ``settings["interactive"] =
False`` forces the pause even on a terminal.  No environment variable is
read: the final approval gate is never answered by the environment.

trylast, so a plugin (a chat bridge, a web UI) answers first.
"""

from __future__ import annotations

import sys
from typing import Any

from stepkit.engine.answers import Rejected, expected, read_answer
from stepkit.hookspecs import hookimpl
from stepkit.records import Paused, Question


@hookimpl(trylast=True)
def stepkit_ask(question: Question, settings: dict[str, Any]) -> str | None:
    """A given answer, else a terminal prompt, else :class:`Paused`."""
    given = (settings.get("answers") or {}).get(question.node)
    if given is not None:
        return str(given)  # the engine checks it against the question
    if settings.get("interactive", True) and _stdin_is_terminal():
        return prompt(question)
    raise Paused(question)


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except ValueError:  # stdin closed
        return False


def prompt(question: Question, console: Any = None, read: Any = None) -> str:
    """Ask on the terminal until the answer is acceptable; EOF pauses the run.

    Answers are read as everywhere else (:func:`~stepkit.engine.answers.read_answer`);
    comments are shown back and sent only when confirmed; a view word
    (``diff``, ``files``) shows its text through the pager and asks again.

    :param console: a rich console (default: stderr).
    :param read: reads one line (default: ``console.input``).
    """
    from rich.markup import escape

    from stepkit import shown

    console = console or shown.console(highlight=False)
    read = read or (lambda: console.input("[bold]> [/]"))
    console.print()
    console.rule(f"[bold]{escape(question.node)}[/]", align="left")
    console.print(_styled(console, question.text))
    if question.options:
        free = " — or comments of two words or more" if question.allow_other else ""
        options = " / ".join(f"[bold cyan]{escape(option)}[/]" for option in question.options)
        if question.views:
            views = " / ".join(f"[bold]{escape(view)}[/]" for view in question.views)
            console.print(f"To look first, type: {views}")
        console.print(f"Options: {options}{free}")
    else:
        console.print("Type your answer and press Enter.")
    while True:
        answer = _line(question, read)
        try:
            reading = read_answer(question, answer)
        except Rejected as refused:
            console.print(escape(_sentence(refused.note)))
            continue
        if reading.view:
            page(question.views[reading.route], console)
            console.print(escape(f"{_sentence(expected(question))}."))
            continue
        if not reading.free_text or _confirmed(question, answer, console, read):
            return answer
        console.print(escape(f"Not sent. {_sentence(expected(question))}."))


#: The yes/no of "send these comments?", read as any answer is.
_SEND = Question(
    node="send_comments",
    kind="approval",
    text="send these comments to the coder?",
    options=["yes", "no"],
    aliases={"y": "yes", "n": "no"},
    other_as="no",
)


def _confirmed(question: Question, comments: str, console: Any, read: Any) -> bool:
    """Show ``comments`` back and ask whether to send them (default: no);
    EOF pauses at ``question``."""
    from rich.markup import escape

    console.print(f"Your comments:\n  {escape(comments)}")
    console.print("send these comments to the coder? \\[y/N]")
    try:
        return read_answer(_SEND, _line(question, read)).route == "yes"
    except Rejected:  # a slip of yes or no: not a yes
        return False


def page(text: str, console: Any) -> None:
    """``text`` through the user's pager ($PAGER, else ``less -RFX``: one
    screen or less is printed and less quits), printed when there is none."""
    import os
    import shutil
    import subprocess

    text = text if text.endswith("\n") else text + "\n"
    pager = os.environ.get("PAGER") or ("less -RFX" if shutil.which("less") else "")
    if pager.strip():
        try:
            # the pager writes where the question is asked: stdout may be --json's
            done = subprocess.run(
                pager, shell=True, input=text, text=True, stdout=console.file, check=False
            )
        except OSError:
            done = None
        if done is not None and done.returncode != 127:  # 127: the shell found no such pager
            return
    console.print(text, markup=False, highlight=False, end="")


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _line(question: Question, read: Any) -> str:
    try:
        return read().strip()
    except EOFError:
        raise Paused(question) from None


def _styled(console: Any, text: str) -> Any:
    from stepkit.plugins.observers.progress import STATUS_STYLE

    styled = console.render_str(text, markup=False)  # the console's, which makes it visible
    for status, style in STATUS_STYLE.items():  # gate statuses coloured as the live view does
        styled.highlight_regex(rf"\b{status.upper().replace('_', ' ')}\b", style)
    return styled
