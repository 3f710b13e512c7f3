"""The plan repo: step plans, handoffs and NOTES.md.

Reading is lenient: a file that cannot be used becomes one line in
:attr:`PlanRepo.problems` instead of an exception, so ``stepkit status`` can
show everything it could read.  Writing lives in :mod:`stepkit.planrepo.edits`.
"""

from __future__ import annotations

import contextlib
import os
import re
from bisect import bisect_left
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stepkit.errors import PlanError
from stepkit.planrepo.checks import (
    check_depends_on,
    check_result,
    check_status,
    check_step_key,
    graph_problems,
    shown,
)
from stepkit.planrepo.parsecache import ParseCache
from stepkit.planrepo.statuscache import cached_report, keep_report, repo_key

_LEADING_NUMBER = re.compile(r"([0-9]+)[-_. ]*(.*)\Z", re.DOTALL)
#: "execute step 3", "Run the step #3", "implement step 3", "do step 3"
_RUN_STEP = re.compile(
    r"(?<![\w-])(execute|run|implement|do)[ \t]+(?:the[ \t]+)?step[ \t]+#?([0-9]+)\b", re.IGNORECASE
)
#: a prompt that starts with the step ("step 3 please", "Step 3, go"), unless it says
#: what that step is or did ("Step 1 is done; continue")
_LEADING_STEP = re.compile(
    r"\W*step[ \t]+#?([0-9]+)\b(?![ \t]+(?:is|was|has|had|are|were|got)\b)", re.IGNORECASE
)
#: words that, just before the verb, say the step is NOT to be run
_NEGATED = re.compile(r"(?:\bnot|\bnever|\bno|n't)[ \t]+\Z", re.IGNORECASE)


# Plain dataclasses, not pydantic models: the loader checks every field
# itself, and ``stepkit status`` on a large repo never pays for pydantic.
@dataclass(frozen=True)
class StepPlan:
    """One ``steps/NN-<slug>.md`` file."""

    number: int
    slug: str
    title: str
    path: Path
    status: str = "pending"
    depends_on: list[int] = field(default_factory=list)
    body: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Handoff:
    """One ``handoffs/NN-<slug>.md`` file; ``result`` as the file writes it
    (:func:`~stepkit.planrepo.checks.check_result`), None if absent."""

    step: int
    path: Path
    title: str | None = None
    result: str | None = None
    body: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


def resolve_plans_dir(
    project_dir: Path | str, plans_dir: Path | str | None, default: str = "plans"
) -> Path:
    """The plan repo path: ``plans_dir`` (else ``default``) relative to the project dir."""
    return Path(project_dir) / (plans_dir or default)


class PlanRepo:
    """A loaded plan repo.  Build it with :meth:`PlanRepo.load`."""

    def __init__(
        self,
        plans_dir: Path,
        steps: list[StepPlan],
        handoffs: dict[int, Handoff],
        problems: list[str],
        unreadable: dict[int, Path],
    ) -> None:
        self.plans_dir = plans_dir
        self.steps = steps
        self.handoffs = handoffs
        self.problems = problems
        self._by_number: dict[int, StepPlan] = {}
        for step in steps:
            self._by_number.setdefault(step.number, step)
        self._handoff_numbers = sorted(handoffs)
        self._unreadable = unreadable

    @property
    def steps_dir(self) -> Path:
        return self.plans_dir / "steps"

    @property
    def handoffs_dir(self) -> Path:
        return self.plans_dir / "handoffs"

    @property
    def notes_path(self) -> Path:
        return self.plans_dir / "NOTES.md"

    @property
    def notes_text(self) -> str:
        """NOTES.md as text ("" when it does not exist or cannot be read)."""
        try:
            return self.notes_path.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            return ""

    @classmethod
    def load(cls, plans_dir: Path | str, cache: Path | None = None) -> PlanRepo:
        """Read every step plan and handoff under ``plans_dir``.

        Raises :class:`PlanError` only when there is no plan repo at all (no
        such directory, or no ``steps/`` inside it); every problem with a
        single file is listed in :attr:`problems` instead.

        :param cache: a file keeping what each file parsed to, keyed by its
            metadata (:class:`~stepkit.planrepo.parsecache.ParseCache`),
            beside which the whole repo's status report is kept
            (:mod:`stepkit.planrepo.statuscache`); None reads every file.
            When nothing changed since that report was kept, the repo is
            read only when something other than the report is asked of it.
        """
        plans_dir = Path(plans_dir)
        if cache is None:
            return cls._load(plans_dir, None)
        key = repo_key(plans_dir) if plans_dir.joinpath("steps").is_dir() else None
        report_path = cache.with_name(f"{cache.stem}-status.json")
        report = cached_report(report_path, key[0]) if key is not None else None
        if report is not None:
            return _ReportedRepo(plans_dir, report, lambda: cls._cached_load(plans_dir, cache))
        repo = cls._cached_load(plans_dir, cache)
        if key is not None and key[1]:
            repo.keep_report = lambda report: keep_report(report_path, key[0], report)
        return repo

    @classmethod
    def _cached_load(cls, plans_dir: Path, cache: Path) -> PlanRepo:
        parsed = ParseCache(cache)
        repo = cls._load(plans_dir, parsed)
        parsed.save()
        return repo

    @classmethod
    def _load(cls, plans_dir: Path, cache: ParseCache | None) -> PlanRepo:
        steps_dir = plans_dir / "steps"
        if not steps_dir.is_dir():
            raise PlanError(
                f"no plan repo at {plans_dir} (expected {steps_dir}/): stepkit init writes one, "
                "--plans-dir names another"
            )
        problems: list[str] = []
        steps: list[StepPlan] = []
        unreadable: dict[int, Path] = {}
        stats: dict[str, os.stat_result] | None = {} if cache is not None else None
        for number, slug, path in _numbered_files(steps_dir, problems, stats):
            document = _read_document(path, problems, cache, stats)
            if document is None:
                unreadable.setdefault(number, path)
                continue
            metadata, body = document
            steps.append(_step_plan(number, slug, path, metadata, body, problems))
        steps.sort(key=lambda s: (s.number, s.path.name))
        problems.extend(graph_problems(steps, set(unreadable)))
        handoffs = _load_handoffs(plans_dir / "handoffs", steps, problems, cache, stats)
        return cls(plans_dir, steps, handoffs, problems, unreadable)

    #: the status report made from this repo: kept for the next load when set
    #: (:func:`stepkit.planrepo.status.status_report` calls it)
    keep_report: Any = None
    #: the status report kept from an earlier load of the unchanged repo (None: made afresh)
    cached_report: dict[str, Any] | None = None

    def step(self, number: int) -> StepPlan | None:
        """The plan of step ``number`` (the first by file name if it is duplicated)."""
        return self._by_number.get(number)

    def resolve(self, requested: str = "next", prompt: str = "") -> StepPlan:
        """The step a run works on (:meth:`choose` without the reason)."""
        return self.choose(requested, prompt)[0]

    def choose(self, requested: str = "next", prompt: str = "") -> tuple[StepPlan, str]:
        """The step a run works on and why: ``requested`` (a number, or
        ``next``); for ``next``, the step the prompt names
        (:func:`step_from_prompt`), else :meth:`next_step`.

        :raises PlanError: no such step, its file cannot be read, ``requested``
            is not a step number, or no step is left to run (one line).
        """
        why = "--step"
        if requested == "next":
            from_prompt = step_from_prompt(prompt)
            if from_prompt is not None:
                requested, why = str(from_prompt), f"named in the prompt ({prompt.strip()!r})"
        if requested == "next":
            step = self.next_step()
            self._refuse_unreadable(below=step.number if step else None)
            if step is None:
                raise PlanError(
                    f"no in-progress or pending step in {self.steps_dir}: stepkit new adds one, "
                    "--step N --rerun runs a complete one again"
                )
            return (
                step,
                f"the first {step.status} step (no step given{' in the prompt' if prompt else ''})",
            )
        if not requested.isdigit():
            raise PlanError(
                f"step {requested!r} is not a step number or 'next' (--step 1, --step next)"
            )
        number = int(requested)
        self._refuse_unreadable(only=number)
        step = self.step(number)
        if step is None:
            raise PlanError(
                f"step {requested} not found in {self.steps_dir} (stepkit status lists the steps)"
            )
        return step, why

    def _refuse_unreadable(self, *, only: int | None = None, below: int | None = None) -> None:
        """Raise for a step file that could not be read and may be the one
        wanted: step ``only``, or (choosing the next step) any step numbered
        ``below`` the one chosen, or any at all when none was."""
        for number, path in sorted(self._unreadable.items()):
            if (number == only) if only is not None else (below is None or number < below):
                problem = next(
                    (p for p in self.problems if p.startswith(f"{path}:")), f"{path}: unreadable"
                )
                raise PlanError(f"step {number}'s plan cannot be read: {problem}")

    def next_step(self) -> StepPlan | None:
        """The first in-progress step by number, else the first pending one."""
        for wanted in ("in-progress", "pending"):
            for step in self.steps:
                if step.status == wanted:
                    return step
        return None

    def is_unreadable(self, number: int) -> bool:
        """A plan file of step ``number`` exists but could not be read."""
        return number in self._unreadable

    def previous_handoff(self, step: StepPlan) -> Handoff | None:
        """The highest-numbered handoff below ``step``."""
        below = bisect_left(self._handoff_numbers, step.number)
        return self.handoffs[self._handoff_numbers[below - 1]] if below else None

    def handoff_path(self, step: StepPlan) -> Path:
        """Where ``step``'s handoff belongs: ``handoffs/`` + the plan's basename."""
        return self.handoffs_dir / step.path.name


class _ReportedRepo(PlanRepo):
    """A plan repo unchanged since its status report was kept: the report is
    at hand, and the files are read (``load``) only when something else is
    asked of it."""

    def __init__(self, plans_dir: Path, report: dict[str, Any], load: Any) -> None:
        self.plans_dir = plans_dir
        self.cached_report = report
        self._read = load

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_read":
            raise AttributeError(name)
        loaded = self._read()
        # everything the loaded repo holds, whatever PlanRepo comes to keep; the kept report stays
        vars(self).update(
            {key: value for key, value in vars(loaded).items() if key != "cached_report"}
        )
        return object.__getattribute__(self, name)


def _numbered_files(
    directory: Path, problems: list[str], stats: dict[str, os.stat_result] | None = None
) -> list[tuple[int, str, Path]]:
    """``(number, slug, path)`` of every visible ``*.md`` file in ``directory``;
    given ``stats``, each file's metadata goes there by ``str(path)`` (read with the listing).

    A dangling symlink counts as a file, so that it is reported as unreadable.
    """
    try:
        entries = sorted(
            (e.name, e.is_file() or (e.is_symlink() and not os.path.exists(e.path)), e)
            for e in os.scandir(directory)
        )
    except OSError as exc:
        raise PlanError(f"cannot read {directory}: {exc.strerror or exc}") from None
    found = []
    for name, is_file, entry in entries:
        if name.startswith(".") or not name.lower().endswith(".md") or not is_file:
            continue
        path = directory / name
        match = _LEADING_NUMBER.match(name[:-3])
        if match is None:
            problems.append(
                f"{path}: file name does not start with a step number (expected NN-<slug>.md)"
            )
            continue
        if stats is not None:
            with contextlib.suppress(OSError):
                stats[str(path)] = entry.stat()
        found.append((int(match.group(1)), match.group(2) or name[:-3], path))
    return found


def _read_document(
    path: Path,
    problems: list[str],
    cache: ParseCache | None = None,
    stats: dict[str, os.stat_result] | None = None,
) -> tuple[dict[str, Any], str] | None:
    """Parse one file (or take it from ``cache``, by its metadata in ``stats``),
    or record why it cannot be used and return None."""
    status = stats.get(str(path)) if stats is not None else None
    if cache is not None and status is not None and (kept := cache.get(path, status)) is not None:
        return kept
    try:
        data = path.read_bytes()
    except OSError as exc:
        problems.append(f"{path}: unreadable: {exc.strerror or exc}")
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        problems.append(f"{path}: not UTF-8 (byte 0x{data[exc.start]:02x} on line {line})")
        return None
    from stepkit.planrepo.document import (  # YAML, for a file not cached
        DocumentError,
        parse_document,
    )

    try:
        document = parse_document(text)
    except DocumentError as exc:
        problems.append(f"{path}: {exc}")
        return None
    if cache is not None and status is not None:
        cache.put(path, status, document)
    return document


def _step_plan(
    number: int, slug: str, path: Path, metadata: dict[str, Any], body: str, problems: list[str]
) -> StepPlan:
    status, status_problem = check_status(metadata.get("status"))
    depends_on, deps_problem = check_depends_on(metadata.get("depends_on"))
    step_problem = check_step_key(metadata.get("step"), number)
    problems.extend(f"{path}: {p}" for p in (status_problem, deps_problem, step_problem) if p)
    title = metadata.get("title")
    title = shown(str(title)) if title is not None else ""
    return StepPlan(
        number=number,
        slug=slug,
        title=title or slug,
        status=status,
        depends_on=depends_on,
        path=path,
        body=body,
        metadata=metadata,
    )


def _load_handoffs(
    directory: Path,
    steps: list[StepPlan],
    problems: list[str],
    cache: ParseCache | None = None,
    stats: dict[str, os.stat_result] | None = None,
) -> dict[int, Handoff]:
    """Handoffs by step number; for duplicates, the one named like the plan wins."""
    if not directory.is_dir():
        return {}
    plan_names = {step.number: step.path.name for step in steps}
    handoffs: dict[int, Handoff] = {}
    for number, _slug, path in _numbered_files(directory, problems, stats):
        document = _read_document(path, problems, cache, stats)
        if document is None:
            continue
        metadata, body = document
        result, result_problem = check_result(metadata.get("result"))
        if result_problem:
            problems.append(f"{path}: {result_problem}")
        title = metadata.get("title")
        handoff = Handoff(
            step=number,
            title=None if title is None else str(title),
            result=result,
            path=path,
            body=body,
            metadata=metadata,
        )
        if number in handoffs:
            kept = handoffs[number]
            problems.append(f"{path}: duplicate handoff for step {number} (also {kept.path})")
            if path.name != plan_names.get(number) or kept.path.name == plan_names.get(number):
                continue
        handoffs[number] = handoff
    return handoffs


def step_from_prompt(text: str) -> int | None:
    """The step a prompt asks to run, or None: only explicit wording selects
    one (execute / run / implement / do step N, "the" allowed before "step",
    or a prompt that starts with it: "step 3 please").

    A prompt that only mentions a step ("Step 1 is done; continue"), says not
    to run it ("do not run step 1") or writes "steps 3" names no step.
    """
    for match in _RUN_STEP.finditer(text or ""):
        if not _NEGATED.search(text[: match.start()]):
            return int(match.group(2))
    leading = _LEADING_STEP.match(text or "")
    return int(leading.group(1)) if leading else None
