"""A checked draft (:mod:`stepkit.planrepo.draft`) as step files: rendered
with every section of the format, read back by the plan repo's own parser
in a scratch copy before anything is written, then written where no file
is (never over one).

The draft's steps are numbered on from ``first`` in the order listed; a
dependency on an earlier step of the draft becomes that step's file number.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from stepkit.errors import UsageError
from stepkit.planrepo.draft import DraftStep, PlanDraft, draft_problems, items
from stepkit.planrepo.model import PlanRepo, StepPlan
from stepkit.planrepo.scaffold import slug, step_numbers, untouched_first_step, yaml_scalar
from stepkit.planrepo.sections import list_items, plan_section

#: the list sections of a step file: heading, the draft's field, what an empty one says
LIST_SECTIONS = (
    ("Context", "context", "None"),
    ("Tasks", "tasks", None),
    ("Acceptance criteria", "acceptance_criteria", None),
    ("Test commands", "test_commands", "None: the full suite runs"),
    ("Edge cases", "edge_cases", "None yet."),
    ("Out of scope", "out_of_scope", "Anything not named under Tasks."),
)


@dataclass(frozen=True)
class Target:
    """Where a draft goes: the plan repo, and the numbers of the steps it
    already has (the draft is numbered on after the highest)."""

    plans_dir: Path
    existing: tuple[int, ...]
    #: ``stepkit init``'s untouched template step, which the draft takes the place of
    template: Path | None = None

    @classmethod
    def of(cls, plans_dir: Path, append: bool = False) -> Target:
        """The plan repo at ``plans_dir`` as it is now (none yet: no steps;
        unless appending, init's untouched template step counts as none)."""
        steps = Path(plans_dir) / "steps"
        template = None if append else untouched_first_step(Path(plans_dir))
        if template is not None:
            return cls(Path(plans_dir), (), template)
        return cls(Path(plans_dir), tuple(sorted(step_numbers(steps))) if steps.is_dir() else ())

    @property
    def first(self) -> int:
        """The number the draft's first step gets."""
        return max(self.existing, default=0) + 1

    def files(self, draft: PlanDraft) -> list[StepFile]:
        """The draft's step files, numbered on from :attr:`first`."""
        return step_files(self.plans_dir, draft, self.first)

    def problems(self, draft: PlanDraft) -> list[str]:
        """Why ``draft`` cannot be written here, one line each ([] when it can):
        the draft's own problems, else those of its files read back."""
        return draft_problems(draft, self.existing) or rendered_problems(
            self.plans_dir, self.files(draft), self.template
        )

    def write(self, draft: PlanDraft) -> list[Path]:
        """Write the draft's step files (see :func:`write_steps`), in place
        of init's untouched template step."""
        if self.template is not None:
            if untouched_first_step(self.plans_dir) != self.template:
                raise UsageError(f"{self.template} changed meanwhile; nothing was written")
            self.template.unlink()
        return write_steps(self.plans_dir, self.files(draft), self.existing)


@dataclass(frozen=True)
class StepFile:
    """One drafted step as the file it becomes, and what that file must read back as."""

    path: Path
    number: int
    title: str
    depends_on: list[int]
    objective: str
    #: each list section's items, by heading
    lists: dict[str, list[str]]

    def text(self) -> str:
        """The file: front matter (status pending), then every section."""
        lines = [
            "---",
            f"step: {self.number}",
            f"title: {yaml_scalar(self.title)}",
            f"depends_on: {self.depends_on}",
            "status: pending",
            "---",
            "",
            "## Objective",
            self.objective,
        ]
        for heading, texts in self.lists.items():
            lines += ["", f"## {heading}", *(f"- {text}" for text in texts)]
        return "\n".join(lines) + "\n"


def step_files(plans_dir: Path, draft: PlanDraft, first: int) -> list[StepFile]:
    """The files of ``draft``'s steps under ``plans_dir/steps``, numbered on from ``first``."""
    numbers = {step.number: first + index for index, step in enumerate(draft.steps)}
    files = []
    for step in draft.steps:
        number = numbers[step.number]
        files.append(
            StepFile(
                path=Path(plans_dir) / "steps" / f"{number:02d}-{slug(step.title)}.md",
                number=number,
                title=" ".join(step.title.split()),
                depends_on=sorted(
                    {numbers[dep] for dep in step.depends_on if dep in numbers}
                    | set(step.depends_on_existing)
                ),
                objective=" ".join(step.objective.split()),
                lists={heading: _section_items(step, field) for heading, field, _ in LIST_SECTIONS},
            )
        )
    return files


def rendered_problems(
    plans_dir: Path, files: list[StepFile], replaced: Path | None = None
) -> list[str]:
    """The problems the plan repo's parser finds once ``files`` join the
    steps under ``plans_dir`` (in a scratch copy, without ``replaced``;
    problems the repo had before do not count), and each new file that does
    not read back as drafted (its title, dependencies or a section)."""
    plans_dir = Path(plans_dir)
    with tempfile.TemporaryDirectory(prefix="stepkit-plan-") as scratch:
        copy = Path(scratch) / "plans"
        (copy / "steps").mkdir(parents=True)
        before: list[str] = []
        if (plans_dir / "steps").is_dir():
            before = PlanRepo.load(plans_dir).problems
            for path in (plans_dir / "steps").iterdir():
                if path.is_file() and path != replaced:
                    shutil.copyfile(path, copy / "steps" / path.name)
        for file in files:
            (copy / "steps" / file.path.name).write_text(file.text(), encoding="utf-8")
        repo = PlanRepo.load(copy)
        problems = [
            shown
            for problem in repo.problems
            if (shown := problem.replace(str(copy), str(plans_dir))) not in before
        ]
        parsed = {step.path.name: step for step in repo.steps}
        for file in files:
            step = parsed.get(file.path.name)
            if step is not None:
                problems += [f"{file.path}: {what}" for what in _differences(step, file)]
    return problems


def write_steps(plans_dir: Path, files: list[StepFile], existing: Collection[int]) -> list[Path]:
    """Write ``files``, none over a file: when one appeared since the draft
    was checked, those already written are taken back.

    :param existing: the step numbers the plan had when the draft was checked.
    :raises UsageError: the plan's steps changed meanwhile (nothing is left written).
    """
    steps_dir = Path(plans_dir) / "steps"
    steps_dir.mkdir(parents=True, exist_ok=True)
    if sorted(step_numbers(steps_dir)) != sorted(existing):
        raise UsageError(f"the steps in {steps_dir} changed meanwhile; nothing was written")
    written: list[Path] = []
    try:
        for file in files:
            with file.path.open("x", encoding="utf-8") as handle:
                written.append(file.path)
                handle.write(file.text())
    except FileExistsError as exc:
        for path in written:
            path.unlink(missing_ok=True)
        raise UsageError(f"{exc.filename} appeared meanwhile; nothing was written") from None
    return written


def _section_items(step: DraftStep, field: str) -> list[str]:
    found = items(getattr(step, field))
    if field == "test_commands":
        found = [cmd if "`" in cmd else f"`{cmd}`" for cmd in found]
    empty = next(default for _, name, default in LIST_SECTIONS if name == field)
    return found or ([empty] if empty else [])


def _differences(step: StepPlan, file: StepFile) -> list[str]:
    """What of ``file`` the parser read otherwise (``step``), one phrase each."""
    found = []
    if step.title != file.title:
        found.append(f"its title reads back as {step.title!r}")
    if step.depends_on != file.depends_on:
        found.append(f"its depends_on reads back as {step.depends_on}")
    if (plan_section(step.body, "Objective") or "") != file.objective:
        found.append("its Objective does not read back as drafted")
    for heading, texts in file.lists.items():
        if list_items((plan_section(step.body, heading) or "").splitlines()) != texts:
            found.append(f"its {heading} does not read back as drafted")
    return found
