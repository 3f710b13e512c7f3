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
    TamperFlag,
    TamperKind,
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
    #: every tamper flag of the run: the step's changes' (raised again each
    #: coder round), the gates' judgments of the tree, the run's events (kept)
    tamper_flags: list[TamperFlag] = Field(default_factory=list)
    scope_snapshot_digest: str | None = None
    coder_rounds: list[str] = Field(default_factory=list)
    coder_tree: str = ""
    coder_round_log: list[CoderRound] = Field(default_factory=list)
    scope_deviations: Annotated[list[str], APPEND] = Field(default_factory=list)

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

    @classmethod
    def reshaped(cls, state: dict[str, Any], written_in: int) -> dict[str, Any]:
        """A state written when tamper flags were strings in three lists gets
        them typed, in one list, before it is checked."""
        return _with_typed_flags(state) if written_in < FLAGS_FORMAT else state


def _with_typed_flags(state: dict[str, Any]) -> dict[str, Any]:
    """A state written when a tamper flag was a string, kept in three lists
    (``tamper_flags``; ``round_flags`` and ``run_store_flags``, the events a
    coder round kept), with one list of :class:`TamperFlag`: each text read
    once (:func:`kept_flag`); a flag of the events' lists whose text names no
    kind is ``legacy``, which every later round keeps."""
    state = dict(state)
    lists = [state.pop(key, []) for key in ("tamper_flags", "run_store_flags", "round_flags")]
    if not all(isinstance(flags, list) for flags in lists):
        return {**state, "tamper_flags": lists[0]}  # the check refuses it
    flags = [flag for flags in lists for flag in flags]
    # a string once: the events' lists repeat what tamper_flags holds
    unique = [
        flag for n, flag in enumerate(flags) if not isinstance(flag, str) or flag not in flags[:n]
    ]
    state["tamper_flags"] = [
        kept_flag(flag).model_dump() if isinstance(flag, str) else flag for flag in unique
    ]
    return state


#: The start of a flag's text as stepkit wrote it before flags were typed, by kind.
_LEGACY_STARTS: tuple[tuple[str, TamperKind], ...] = (
    ("deleted test file: ", "deleted_test"),
    ("deleted lint/coverage config: ", "deleted_config"),
    ("new module-level patch of ", "module_patch"),
    ("reads the judge's marks in ", "judge_marks"),
    ("coverage threshold ", "coverage_threshold"),
    ("loosened lint/coverage config in ", "loosened_config"),
    ("new ", "new_marker"),
    ("git ", "git_internals"),
    ("local plugin ", "untrusted_plugin"),
    ("the coder touched stepkit's plugin trust store", "trust_store"),
    ("the coder touched stepkit's run store", "run_store"),
    ("the step-start scope snapshot", "run_store"),
    ("the record stepkit keeps of the trees", "run_store"),
    ("files git ignores were added or changed", "hidden_files"),
    ("the site directories of the gates' Pythons", "site_dirs"),
    ("your own work tree changed", "users_tree"),
    ("the coder ran unconfined", "unconfined"),
    ("flaky tests let the tests gate through", "flaky_pass"),
)
_CHANGE_KINDS = {"deleted_test", "deleted_config", "module_patch", "judge_marks"}
_CHANGE_KINDS |= {"coverage_threshold", "loosened_config", "new_marker"}


def kept_flag(value: str | dict[str, Any]) -> TamperFlag:
    """A tamper flag as a checkpoint or a sealed record kept it: typed, or
    a string from before flags were typed, its kind read from the start of
    its text (``legacy`` when none fits; the text is kept byte for byte)."""
    if not isinstance(value, str):
        return TamperFlag.model_validate(value)
    gate, _, rest = value.partition(" gate: ")
    if rest.startswith("git ") and gate.startswith("the ") and " " not in gate[4:]:
        return TamperFlag.by(f"{gate} gate", "git_internals", value)
    if "that held at the step's start" in value:
        return TamperFlag.of_stepkit("lost_tests", value)
    kind: TamperKind = next((k for start, k in _LEGACY_STARTS if value.startswith(start)), "legacy")
    if kind in _CHANGE_KINDS:
        return TamperFlag.in_changes(kind, "", value)
    return TamperFlag.of_stepkit(kind, value)


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
#: The checkpoint format whose states first held typed tamper flags, in one list.
FLAGS_FORMAT = 5


def step_state(state: Mapping[str, Any] | StageContext) -> StepState:
    """The typed view of a step-runner run's state: a node's (built once per
    node call, :meth:`StageContext.typed`) or a checkpoint's."""
    if isinstance(state, StageContext):
        return state.typed(StepState)
    return typed(StepState, state)
