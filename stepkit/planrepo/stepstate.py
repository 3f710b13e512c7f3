"""Where a step stands, the one rule: ``pending``, ``in-progress``,
``paused``, ``interrupted``, ``failed`` or ``complete``, from its plan's
``status``, its handoff in the plan repo and the latest run of it in the
run store.  ``stepkit status``, ``run``, ``run --parallel``, ``ci`` and the
dependency gate all ask here.

A handoff is in the plan repo only once a person approved it (the run keeps
its draft in the run dir until then), so a dependency is met exactly when
that step's handoff says ``result: complete``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stepkit.planrepo.model import PlanRepo, StepPlan

#: What a step's :attr:`Standing.state` can be.
STATES = ("pending", "in-progress", "paused", "interrupted", "failed", "complete")
#: The states of a step still to run (a paused or interrupted one is resumed instead).
TO_DO = ("pending", "in-progress", "failed")
#: The outcomes of a finished run that leave its step failed.
_FAILED = ("STEP_FAILED", "STEP_REJECTED")


@dataclass(frozen=True)
class Standing:
    """Where a step stands and why, in one line."""

    state: str
    why: str


def standing(
    status: str, handoff: Path | str | None, result: str | None, run: Mapping[str, Any] | None
) -> Standing:
    """The one rule: a run that waits (paused or interrupted) first, then
    what the plan repo says is done (the plan's status, or its handoff's
    ``result: complete``), then a failed last run, then the plan's status.

    :param handoff: the step's handoff file in the plan repo (None: none).
    :param run: the step's latest run (:func:`stepkit.engine.pause.last_runs`), or None.
    """
    run = run or {}
    run_id = run.get("run_id")
    if run.get("status") == "paused":
        return Standing(
            "paused", f"run {run_id} waits at {run.get('node')} (stepkit resume {run_id})"
        )
    if run.get("status") == "interrupted":
        return Standing("interrupted", f"run {run_id} was interrupted (stepkit resume {run_id})")
    done = ["status: complete"] if status == "complete" else []
    if handoff is not None and result == "complete":
        done.append(f"handoff {Path(handoff).name} says result: complete")
    if done:
        return Standing("complete", "; ".join(done))
    if run.get("status") == "running":
        return Standing("in-progress", f"run {run_id} is running")
    if run.get("status") == "finished" and run.get("outcome") in _FAILED:
        return Standing("failed", f"run {run_id} ended {run['outcome']}")
    if status == "in-progress":
        return Standing("in-progress", "status: in-progress")
    return Standing("pending", f"status: {status}")


class StepStates:
    """Every step of ``repo`` by :func:`standing`, with ``runs`` (the latest
    run of each step, :func:`stepkit.engine.pause.last_runs`; empty: none)."""

    def __init__(self, repo: PlanRepo, runs: Mapping[int, Mapping[str, Any]] | None = None):
        self.repo = repo
        self.runs = runs or {}

    def of(self, step: StepPlan) -> Standing:
        handoff = self.repo.handoffs.get(step.number)
        return standing(
            step.status,
            handoff.path if handoff else None,
            handoff.result if handoff else None,
            self.runs.get(step.number),
        )

    def to_do(self, step: StepPlan) -> bool:
        """``step`` is still to run (pending, in progress or failed) and is
        the one its number finds (a duplicated number once)."""
        return self.of(step).state in TO_DO and self.repo.step(step.number) is step

    def ready(self) -> list[StepPlan]:
        """The steps that can run now, side by side: :meth:`to_do`, every
        dependency met (nothing :meth:`unsatisfied`), in number order."""
        return [step for step in self.repo.steps if self.to_do(step) and not self.unsatisfied(step)]

    def dependency_met(self, number: int) -> bool:
        """Step ``number`` has a handoff that says ``result: complete``."""
        handoff = self.repo.handoffs.get(number)
        return handoff is not None and handoff.result == "complete"

    def unsatisfied(self, step: StepPlan) -> list[str]:
        """One line per dependency of ``step`` that is not :meth:`dependency_met`."""
        reasons = []
        for dep in step.depends_on:
            if self.dependency_met(dep):
                continue
            handoff = self.repo.handoffs.get(dep)
            plan = self.repo.step(dep)
            name = f"step {dep} ({plan.title})" if plan else f"step {dep}"
            if handoff is None and plan is None:
                missing = "plan unreadable" if self.repo.is_unreadable(dep) else "no such step"
                reasons.append(f"{name}: {missing}, no handoff")
            elif handoff is None:
                reasons.append(f"{name}: no handoff")
            elif handoff.result is None:
                reasons.append(f"{name}: handoff {handoff.path.name} has no result")
            else:
                reasons.append(f"{name}: result is {handoff.result}")
        return reasons
