"""Which steps of a plan ``stepkit run --parallel`` may start now.

A step is ready when it is still to do
(:meth:`~stepkit.planrepo.stepstate.StepStates.to_do`) and every
dependency is complete on the user's branch (its handoff says ``result:
complete``, :meth:`~stepkit.planrepo.stepstate.StepStates.unsatisfied`).  With
``stack``, a dependency may instead be complete on a branch that this same
invocation finished: the step then starts from that branch, so one branch
must hold every such dependency (a branch started from another holds that
one's steps too).  A step whose plan is incomplete
(:func:`~stepkit.planrepo.quality.step_findings`) is never ready, unless
``allow_incomplete`` (``--allow-incomplete-plan``): ``stepkit run`` would
refuse it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stepkit.planrepo.model import PlanRepo, StepPlan
from stepkit.planrepo.quality import step_findings
from stepkit.planrepo.stepstate import StepStates


@dataclass(frozen=True)
class Finished:
    """A branch this invocation finished with STEP_COMPLETE, and every step
    complete on it (its own and those of the branch it started from)."""

    branch: str
    steps: frozenset[int]


@dataclass(frozen=True)
class Ready:
    """A step to start, and the branch to start it from (None: the user's HEAD)."""

    step: StepPlan
    base: Finished | None = None


@dataclass
class Schedule:
    """What one invocation has started and finished, asked :meth:`ready` each
    time a run ends."""

    repo: PlanRepo
    stack: bool = False
    #: steps already under way elsewhere (a run in a work tree, a branch not
    #: merged yet), each with why: never started here
    elsewhere: dict[int, str] = field(default_factory=dict)
    started: set[int] = field(default_factory=set)
    finished: list[Finished] = field(default_factory=list)
    #: the latest run of each step in the user's run store (:func:`stepkit.engine.pause.last_runs`)
    runs: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)
    #: start a step whose plan is incomplete all the same
    allow_incomplete: bool = False

    @property
    def states(self) -> StepStates:
        return StepStates(self.repo, self.runs)

    def ready(self) -> list[Ready]:
        """The steps ready now and not started yet, by number."""
        found = []
        states = self.states
        for step in self.repo.steps:
            if (
                step.number in self.started
                or step.number in self.elsewhere
                or not states.to_do(step)
                or self._incomplete(step)
            ):
                continue
            missing = self._missing(step)
            if not missing:  # as StepStates.ready has it
                found.append(Ready(step))
                continue
            base = self._holding(missing) if self.stack else None
            if base is not None:
                found.append(Ready(step, base))
        return found

    def start(self, ready: Ready) -> None:
        self.started.add(ready.step.number)

    def complete(self, ready: Ready, branch: str) -> None:
        """``ready``'s run ended STEP_COMPLETE on ``branch``."""
        inherited = ready.base.steps if ready.base else frozenset()
        self.finished.append(Finished(branch, inherited | {ready.step.number}))

    def waiting(self) -> list[tuple[StepPlan, str]]:
        """The steps to do that were not started, each with why (under way
        elsewhere, or its unmet dependencies on the user's branch)."""
        states = self.states
        return [
            (step, self.elsewhere.get(step.number) or self._incomplete(step) or self._unmet(step))
            for step in self.repo.steps
            if step.number not in self.started and states.to_do(step)
        ]

    def _incomplete(self, step: StepPlan) -> str:
        """Why ``step`` is not started for its plan ('': it may be)."""
        if self.allow_incomplete:
            return ""
        findings = step_findings(self.repo, step)
        return f"its plan is incomplete: {'; '.join(findings)}" if findings else ""

    def _unmet(self, step: StepPlan) -> str:
        reasons = self.states.unsatisfied(step)
        return f"waits for {'; '.join(reasons)}" if reasons else "ready, not started"

    def _missing(self, step: StepPlan) -> set[int]:
        """The dependencies of ``step`` not complete on the user's branch."""
        states = self.states
        return {dep for dep in step.depends_on if not states.dependency_met(dep)}

    def _holding(self, steps: set[int]) -> Finished | None:
        """The first branch finished here that holds every one of ``steps``."""
        return next((branch for branch in self.finished if steps <= branch.steps), None)
