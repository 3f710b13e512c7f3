"""The step-runner's state: every key its nodes read or write, with its type
and how it accumulates (``APPEND`` fields get a node's new items added; every
other field is replaced).  ``step_runner.yaml`` names it (``state:``), so the
graph validator holds the YAML to it and the engine refuses a node update or
a resumed checkpoint that does not fit (:mod:`stepkit.graph.state`).

Values in the run state stay plain JSON data; :func:`step_state` gives the
typed view (``step_state(ctx).gates`` are :class:`GateResult` objects), which
nodes and the built-in plugins read, once per node call.  The plain state
(``ctx.state``) stays the mapping that hooks hand third-party plugins.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import ConfigDict, Field

from stepkit.graph.state import APPEND, RunState, typed
from stepkit.models import Model, lazy_view
from stepkit.protocol.fixloop import STEP_FIX_BUDGET
from stepkit.records import (
    Annotation,
    CoderResult,
    CriterionTests,
    Finding,
    GateResult,
    StageContext,
)


class LaterStep(Model):
    """A later step of the plan, as resolve_step found it (the sweep
    annotates its Edge cases; the handoff and the commit hint name it)."""

    step: int
    title: str = ""
    path: str = ""
    #: the step's Edge cases section as it stood at the step's start
    edge_cases: str = ""


class CoderRound(Model):
    """One coder round of ``coder_round_log``, for the handoff writer."""

    round: int
    #: what the round was asked: the step, or the fix instructions
    task: str = ""
    #: the coder's report, clipped
    report: str = ""
    #: the files whose bytes differ from after the round before
    changed_files: list[str] = Field(default_factory=list)
    #: each changed file's content id (``absent`` for a deleted one), for the next round
    file_ids: dict[str, str] = Field(default_factory=dict)


class StepState(RunState):
    """The state of a run of the step-runner graph."""

    model_config = ConfigDict(extra="forbid")

    # -- budgets and counters (initial_state; the budgets are --set tunables)
    max_fix_attempts: int = STEP_FIX_BUDGET
    max_review_attempts: int = 1
    fix_attempts: int = 0
    review_attempts: int = 0
    handoff_checks: int = 0

    # -- resolve_step
    step: int | None = None
    title: str = ""
    plan_path: str = ""
    plan_text: str = ""
    handoff_path: str = ""
    previous_handoff: str = ""
    notes: str = ""
    unsatisfied: list[str] = Field(default_factory=list)
    later_steps: list[LaterStep] = Field(default_factory=list)
    #: where a --rerun moved the step's previous handoff (set by the API)
    kept_handoff: str = ""
    #: why this step was chosen: named by --step or the prompt, or the next one (set by the API)
    step_choice: str = ""
    #: what the step's plan lacks, run with --allow-incomplete-plan (set by the API)
    incomplete_plan: list[str] = Field(default_factory=list)

    # -- orient and its gate
    plan_summary: str = ""
    implementation_brief: str = ""
    staleness_report: str = ""
    has_major_deviation: bool = False
    deviation_summary: str = ""
    orient_plugin: str | None = None
    deviation_autoapproved: bool = False
    user_guidance: str = ""
    rejected_at: str = ""

    # -- implement
    #: what the coder handed back (None until it ran)
    coder_result: CoderResult | None = None
    coder_plugin: str | None = None
    changed_files: list[str] = Field(default_factory=list)
    diff: str = ""
    tamper_flags: list[str] = Field(default_factory=list)
    scope_snapshot_digest: str | None = None
    coder_rounds: list[str] = Field(default_factory=list)
    coder_tree: str = ""
    coder_round_log: list[CoderRound] = Field(default_factory=list)
    scope_deviations: Annotated[list[str], APPEND] = Field(default_factory=list)
    run_store_flags: Annotated[list[str], APPEND] = Field(default_factory=list)
    #: harness flags of each coder round and gate (git internals undone, untrusted plugins)
    round_flags: Annotated[list[str], APPEND] = Field(default_factory=list)

    # -- the gates and the fix loop
    gates: list[GateResult] = Field(default_factory=list)
    gate_history: Annotated[list[GateResult], APPEND] = Field(default_factory=list)
    format_changed_tree: bool = False
    gates_edited_plan_repo: list[str] = Field(default_factory=list)
    #: ``{path: content id}`` of the tree the last passing tests gate verified
    verified_tree: dict[str, str] = Field(default_factory=dict)
    #: the step's changes to the verification surface, each with its diff's log
    surface_changes: list[str] = Field(default_factory=list)
    #: the files that changed after the gates verified the tree (the gates ran again)
    tree_changes: list[str] = Field(default_factory=list)
    fix_instructions: str = ""
    fix_history: Annotated[list[str], APPEND] = Field(default_factory=list)
    last_failure_signature: str = ""

    # -- sweep and review
    edge_case_report: str = ""
    downstream_updates: str | list[str] = ""
    needs_independent_review: bool = False
    applied_annotations: Annotated[list[Annotation], APPEND] = Field(default_factory=list)
    refused_annotations: list[Annotation] = Field(default_factory=list)
    sweep_plugin: str | None = None
    review_skipped: str = ""
    review_report: str = ""
    #: the review's findings, typed (the report is their text)
    review_findings: list[Finding] = Field(default_factory=list)
    review_plugin: str | None = None
    unresolved_critical: list[str] = Field(default_factory=list)

    # -- the handoff and the final gate
    step_summary: str = ""
    handoff_result: str | None = None
    #: the handoff as written, in the run dir: only the final approval puts it at handoff_path
    handoff_draft: str = ""
    handoff_plugin: str | None = None
    #: the criteria map: each criterion of the plan with the tests the writer cited
    acceptance_criteria: list[CriterionTests] = Field(default_factory=list)
    criteria_report: list[str] = Field(default_factory=list)
    handoff_feedback: list[str] = Field(default_factory=list)
    #: the final approval's parts: glance, files, handoff (:mod:`stepkit.protocol.glance`)
    review: dict[str, str] = Field(default_factory=dict)
    approved: bool = False
    revision_choice: str = ""

    @classmethod
    def upgraded(cls, state: dict[str, Any], written_in: int) -> dict[str, Any]:
        """A state written before a review's findings were typed gets them
        from its review report's 🔴 lines (the text routing read then); one
        written before evidence was typed gets each gate's from its evidence
        text, read once as the judges read it then."""
        if written_in < FINDINGS_FORMAT and "review_findings" not in state:
            from stepkit.records import marked_findings

            findings = marked_findings(lazy_view(cls, state).review_report)
            state = {**state, "review_findings": [f.model_dump() for f in findings]}
        if written_in < EVIDENCE_FORMAT:
            gates = lazy_view(cls, state).gates
            if any(gate.condensed is None and gate.log is not None for gate in gates):
                state = {**state, "gates": [_with_condensed(gate).model_dump() for gate in gates]}
        return state


def _with_condensed(gate: GateResult) -> GateResult:
    """A gate record written before evidence was typed, with what its
    evidence text lists read once (as the judges read it then); a gate that
    never ran its command had none."""
    if gate.condensed is not None or gate.log is None:
        return gate
    from stepkit.workspace.evidence import read_plain

    return gate.model_copy(update={"condensed": read_plain(gate.evidence)})


#: The checkpoint format whose states first held a review's typed findings.
FINDINGS_FORMAT = 3
#: The checkpoint format whose gate records first held their typed evidence.
EVIDENCE_FORMAT = 4


def step_state(state: Mapping[str, Any] | StageContext) -> StepState:
    """The typed view of a step-runner run's state: a node's (built once per
    node call, :meth:`StageContext.typed`) or a checkpoint's."""
    if isinstance(state, StageContext):
        return state.typed(StepState)
    return typed(StepState, state)
