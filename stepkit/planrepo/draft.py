"""A drafted plan (``stepkit plan``): the steps an engine proposes from a
spec, as the model it answers in, and the checks a draft must pass before
any file is written.

Numbers and dependencies in a draft are the draft's own (``1``, ``2`` …,
in the order listed); :mod:`stepkit.planrepo.drafted` maps them onto the
file numbers the steps get.  A dependency on a step already in the plan
(``stepkit plan --append``) is in ``depends_on_existing``.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from pydantic import BaseModel, Field

#: a file a task names: a backticked path with a ``/`` or an extension
#: (`src/app.py`, `pyproject.toml`, `tests/`), the form the template asks for
_NAMED_FILE = re.compile(r"`[^`\s()]*[\w-](?:/|\.[A-Za-z0-9]{1,10})[^`\s()]*`")


class DraftStep(BaseModel):
    """One drafted step: its place in the draft and every section of a step file."""

    number: int = Field(description="This step's number in the draft: 1, 2, 3 ... in order.")
    title: str = Field(description="A short imperative title, e.g. 'Add the --json flag'.")
    objective: str = Field(
        default="", description="One or two sentences: what is true when this step is done."
    )
    context: list[str] = Field(
        default_factory=list,
        description="What the coder must know: existing files, symbols, patterns to follow.",
    )
    tasks: list[str] = Field(
        default_factory=list,
        description="The concrete changes, one each, naming the file created or changed in "
        "backticks, e.g. 'Add `slug()` to `src/app/text.py`.'",
    )
    acceptance_criteria: list[str] = Field(
        default_factory=list,
        description="One checkable behaviour each, that a test can show.",
    )
    test_commands: list[str] = Field(
        default_factory=list,
        description="Commands that check this step, e.g. 'pytest tests/test_text.py'.",
    )
    edge_cases: list[str] = Field(
        default_factory=list, description="Cases to handle or decide in this step."
    )
    out_of_scope: list[str] = Field(
        default_factory=list, description="What this step must not do (later steps' work)."
    )
    depends_on: list[int] = Field(
        default_factory=list,
        description="Numbers of EARLIER steps of this draft that must be done first.",
    )
    depends_on_existing: list[int] = Field(
        default_factory=list,
        description="Numbers of steps already in the plan (listed as existing) this one "
        "needs; [] when none are listed.",
    )

    def label(self) -> str:
        """How a problem names the step: ``step 2 (Add the CLI)``."""
        return f"step {self.number} ({' '.join(self.title.split()) or 'untitled'})"


class PlanDraft(BaseModel):
    """A drafted plan: its steps in order, and the spec's durable facts."""

    steps: list[DraftStep] = Field(description="The steps, smallest useful changes, in order.")
    notes: list[str] = Field(
        default_factory=list,
        description="Durable facts the spec states that every step should know (how tests "
        "run, conventions, constraints); [] when it states none.",
    )


def items(texts: list[str]) -> list[str]:
    """``texts`` as one-line items, blank ones dropped."""
    return [line for line in (" ".join(text.split()) for text in texts) if line]


def names_a_file(task: str) -> bool:
    """Whether ``task`` names a file as the template asks: a backticked path."""
    return _NAMED_FILE.search(task) is not None


def draft_problems(draft: PlanDraft, existing: Collection[int]) -> list[str]:
    """What is wrong with ``draft``, one line each ([] when it can be written).

    :param existing: the numbers of the steps already in the plan that a
        step may depend on (``--append``); empty for a new plan.
    """
    problems: list[str] = []
    if not draft.steps:
        return ["the draft has no steps"]
    earlier: set[int] = set()
    for step in draft.steps:
        where = step.label()
        if step.number < 1:
            problems.append(f"{where}: its number must be 1 or more")
        if step.number in earlier:
            problems.append(f"{where}: step number {step.number} appears twice in the draft")
        if not " ".join(step.title.split()):
            problems.append(f"{where}: no title")
        if not " ".join(step.objective.split()):
            problems.append(f"{where}: no objective")
        if not items(step.acceptance_criteria):
            problems.append(f"{where}: no acceptance criteria")
        if not any(names_a_file(task) for task in items(step.tasks)):
            problems.append(f"{where}: no task names a file (write each file in backticks)")
        for dep in step.depends_on:
            if dep == step.number:
                problems.append(f"{where}: depends on itself")
            elif dep not in earlier:
                problems.append(
                    f"{where}: depends on step {dep}, which is not an earlier step of the draft"
                )
        for dep in step.depends_on_existing:
            if dep not in existing:
                have = ", ".join(map(str, sorted(existing))) or "none"
                problems.append(
                    f"{where}: depends on existing step {dep}, which the plan does not have "
                    f"(existing steps: {have})"
                )
        earlier.add(step.number)
    return problems
