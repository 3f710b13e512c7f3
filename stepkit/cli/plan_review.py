"""``stepkit plan`` on a terminal: the drafted steps as a table (number,
title, depends on, criteria), then accept, edit the whole draft as YAML in
``$VISUAL``/``$EDITOR``, drop a step, or quit.  Every change is checked as
the engine's draft was (:meth:`~stepkit.planrepo.drafted.Target.problems`):
a change with problems is not taken, and an edit that has them is kept for
the next edit, never lost."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stepkit.planrepo.draft import PlanDraft
from stepkit.planrepo.drafted import Target

CHOICES = "[a]ccept and write · [e]dit in $EDITOR · [d]rop N · [q]uit"


def review(
    draft: PlanDraft,
    target: Target,
    console: Any = None,
    read: Callable[[str], str] = input,
) -> PlanDraft | None:
    """The draft the person accepts, or None when they quit (or stdin ends)."""
    from rich.console import Console

    console = console or Console(highlight=False)
    edited: str | None = None
    while True:
        console.print(table(draft, target))
        try:
            answer = read(f"{CHOICES}: ").strip().casefold()
        except EOFError:
            return None
        if answer in ("a", "accept"):
            return draft
        if answer in ("q", "quit"):
            return None
        if answer in ("e", "edit"):
            edited = _edit(edited or _as_yaml(draft))
            changed, problems = _parsed(edited, target)
        elif answer.startswith("d") and answer[1:].strip().isdigit():
            changed, problems = _dropped(draft, target, int(answer[1:].strip()))
        else:
            console.print(f"Type one of: {CHOICES}", markup=False)
            continue
        if problems:
            console.print("Not taken:", *(f"  {p}" for p in problems), sep="\n", markup=False)
        else:
            draft, edited = changed, None


def table(draft: PlanDraft, target: Target) -> Any:
    """The draft's steps, numbered as they will be written."""
    from rich.table import Table
    from rich.text import Text

    shown = Table(title=f"Drafted plan: {len(draft.steps)} step(s)", title_justify="left")
    shown.add_column("#", justify="right")
    shown.add_column("Title")
    shown.add_column("Depends on")
    shown.add_column("Criteria", justify="right")
    for file in target.files(draft):
        shown.add_row(
            str(file.number),
            Text(file.title),  # a title is text, never markup
            ", ".join(map(str, file.depends_on)) or "-",
            str(len(file.lists["Acceptance criteria"])),
        )
    return shown


def _dropped(draft: PlanDraft, target: Target, number: int) -> tuple[PlanDraft, list[str]]:
    """The draft without the step written as ``number``; a step that another
    depends on is not dropped."""
    index = number - target.first
    if not 0 <= index < len(draft.steps):
        return draft, [f"there is no drafted step {number}"]
    gone = draft.steps[index]
    needing = [
        file.number
        for file, step in zip(target.files(draft), draft.steps, strict=True)
        if gone.number in step.depends_on
    ]
    if needing:
        return draft, [
            f"step {', '.join(map(str, needing))} depends on step {number}: drop or edit that first"
        ]
    changed = draft.model_copy(update={"steps": [s for s in draft.steps if s is not gone]})
    return changed, target.problems(changed)


def _parsed(text: str, target: Target) -> tuple[PlanDraft, list[str]]:
    """The edited YAML as a draft, and its problems."""
    import yaml
    from pydantic import ValidationError

    from stepkit.errors import describe_validation
    from stepkit.yamltext import load_yaml

    try:
        changed = PlanDraft.model_validate(load_yaml(text))
    except yaml.YAMLError as exc:
        return PlanDraft(steps=[]), [f"the edit is not YAML: {' '.join(str(exc).split())}"]
    except ValidationError as exc:
        return PlanDraft(steps=[]), [f"the edit is not a plan draft: {describe_validation(exc)}"]
    return changed, target.problems(changed)


def _as_yaml(draft: PlanDraft) -> str:
    from stepkit.yamltext import dump_yaml

    return (
        "# The drafted plan. Numbers and depends_on are the draft's own; depends_on_existing\n"
        "# names steps already in the plan. Save and close to check it; nothing is written yet.\n"
        + dump_yaml(draft.model_dump())
    )


def _edit(text: str) -> str:
    """``text`` after the person's editor has had it (as it was if the editor fails)."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.TemporaryDirectory(prefix="stepkit-plan-") as scratch:
        path = Path(scratch) / "draft.yaml"
        path.write_text(text, encoding="utf-8")
        try:
            done = subprocess.run([*shlex.split(editor), str(path)], check=False)
        except OSError as exc:
            print(f"cannot start the editor {editor!r}: {exc.strerror or exc}")
            return text
        if done.returncode != 0:
            print(f"the editor {editor!r} exited {done.returncode}: the draft is as it was")
            return text
        return path.read_text(encoding="utf-8", errors="replace")
