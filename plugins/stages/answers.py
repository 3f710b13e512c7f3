"""The answers of the nodes that read the project and answer (orient, the
edge-case sweep, the built-in reviewer, the handoff writer): each role's
own schema.  A module of their own because the reading nodes' shared output
format (:mod:`stepkit.plugins.stages.readers`) holds every role's schema as
a field while each role's module asks through that format: the schemas
import neither."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    Field,
    PrivateAttr,
    WithJsonSchema,
    create_model,
    field_validator,
    model_validator,
)

from stepkit.protocol.state import StepState
from stepkit.records import (
    Annotation,
    CriterionTests,
    Finding,
    HandoffProse,
    OrientResult,
    OrientSeverity,
    ReviewResult,
    Severity,
    SweepResult,
    finding_severity,
    report_of,
)

# -- orient --------------------------------------------------------------------------


class OrientFinding(BaseModel):
    """One discrepancy between the plan and the code."""

    severity: OrientSeverity = Field(
        description="major: changes scope, approach or interfaces, or affects later steps"
    )
    plan_says: str = Field(description="what the plan assumes")
    code_has: str = Field(description="what the code has instead")
    evidence: str = Field(description="where: path:line")
    correction: str = Field(description="the correction folded into the brief, or the options")

    def finding(self) -> Finding:
        """The discrepancy on the one finding scale (a major one is critical)."""
        return Finding(
            severity=finding_severity(self.severity),
            text=f"plan says: {self.plan_says}; code has: {self.code_has}",
            file=self.evidence,
        )


class OrientAnswer(BaseModel):
    """The built-in orient's engine schema; :func:`orient_result` turns it
    into the protocol's orient output (:class:`~stepkit.records.OrientResult`)."""

    plan_summary: str = Field(description="What the step delivers, 2-5 sentences.")
    implementation_brief: str = Field(description="What the coder must do, corrections folded in.")
    findings: list[OrientFinding] = Field(description="Every discrepancy; [] when there is none.")
    deviation_summary: str = Field(
        description="For a major finding: what differs, why it matters, "
        'the options; "None" otherwise.'
    )
    _given: dict[str, Any] | None = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _or_the_protocol_fields(cls, data: Any, handler: Any) -> OrientAnswer:
        """An answer already in the protocol's fields (a scripted engine's
        file, written for the node's output) is taken as it is."""
        if isinstance(data, dict) and "findings" not in data and "has_major_deviation" in data:
            given = OrientResult.model_validate(data)
            answer = cls.model_construct(
                plan_summary=given.plan_summary,
                findings=[],
                implementation_brief=given.implementation_brief,
                deviation_summary=given.deviation_summary,
            )
            answer._given = given.model_dump()
            return answer
        return handler(data)


# -- the edge-case sweep -------------------------------------------------------------


def sweep_schema(numbers: tuple[int, ...]) -> type[BaseModel]:
    """The sweep's engine schema for a step whose later steps are
    ``numbers``: an annotation can name only one of the later steps listed
    in the request (none: no annotations)."""
    if not numbers:
        return create_model("SweepAnswer", __base__=_SweepFields)
    # models built at run time, of types (a Literal of these numbers) mypy cannot see
    target = create_model(
        "LaterAnnotation",
        __base__=Annotation,
        step=(Literal[numbers], Field(description="a later step listed under Later steps")),  # type: ignore[arg-type]
    )
    return create_model(
        "SweepAnswer",
        __base__=_SweepFields,
        annotations=(
            list[target],  # type: ignore[valid-type]
            Field(description="Edge cases for later steps only; [] when none."),
        ),
    )


class _SweepFields(BaseModel):
    # pydantic takes another model's FieldInfo as the whole definition of a field
    edge_case_report: str = SweepResult.model_fields["edge_case_report"]  # type: ignore[assignment]
    downstream_updates: str = Field(description='Before/after proposals for later steps; "None".')
    needs_independent_review: bool = SweepResult.model_fields["needs_independent_review"]  # type: ignore[assignment]


# -- the built-in reviewer ------------------------------------------------------------


class ReviewFinding(BaseModel):
    """One finding of the built-in reviewer."""

    severity: Severity = Field(
        description="critical blocks the step; should_fix does not; minor is a nit"
    )
    file: str = Field(description="the project-relative file the finding is about")
    criterion: str = Field(description='the Acceptance criterion concerned, or "none"')
    problem: str = Field(description="what is wrong, in one sentence")

    def finding(self) -> Finding:
        """The finding as stepkit keeps it."""
        return Finding(
            severity=self.severity, file=self.file, criterion=self.criterion, text=self.problem
        )


class ReviewAnswer(BaseModel):
    """The built-in reviewer's structured answer; stepkit renders it as the
    node's ``review_report`` (a fixed field name)."""

    findings: list[ReviewFinding] = Field(description="every finding; [] when there is none")
    _report: str | None = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _or_a_text_report(cls, data: Any, handler: Any) -> ReviewAnswer:
        """A report already written as text (a scripted engine's
        ``review_report``) is taken as a text reviewer's."""
        if (
            isinstance(data, dict)
            and "findings" not in data
            and isinstance(data.get("review_report"), str)
        ):
            answer = cls.model_construct(findings=[])
            answer._report = data["review_report"].strip()
            return answer
        return handler(data)

    def result(self) -> ReviewResult:
        """The review: the typed findings and the report they make; a report
        given as text is passed on as text (its critical findings are read
        where a review comes in)."""
        if self._report is not None:
            return ReviewResult(review_report=self._report)
        findings = [finding.finding() for finding in self.findings]
        return ReviewResult(review_report=report_of(findings), findings=findings)


# -- the handoff writer ----------------------------------------------------------------


def _written(value: str) -> str:
    if not value.strip():
        raise ValueError('must not be empty: write "None" when there is nothing')
    return value


_Prose = Annotated[str, AfterValidator(_written)]


class HandoffAnswer(HandoffProse):
    """The built-in writer's engine schema: every prose field and the
    verdict are required (no defaults), so an answer that drops a section
    or ``result`` is refused at the model boundary and asked for again."""

    step_summary: _Prose = Field(description="One line for the final approval prompt.")
    result: Literal["complete", "partial", "blocked"] = Field(
        description="complete only when the Tasks are done and every gate that ran passed"
    )
    summary: _Prose = Field(description="What the step did, 2-4 sentences.")
    completed: _Prose = Field(description="Bullets against the plan's Tasks and criteria.")
    not_completed: _Prose = Field(description='What remains; "None" when nothing.')
    deviations: _Prose = Field(
        description="Staleness items, gate decisions, fix history, review fixes."
    )
    downstream_plan_updates: _Prose = Field(description="The sweep's proposals and annotations.")
    edge_cases_discovered: _Prose = Field(description="From the sweep report: handled vs punted.")
    notes_for_next_step: _Prose = Field(description="Directives the next step must act on.")
    notes_facts: list[str] = Field(
        description="Durable step-independent facts for NOTES.md; [] if none."
    )
    acceptance_criteria: list[CriterionTests] = Field(
        description="Each Acceptance-criteria bullet with the ids of the tests that cover it ([]: none)."
    )

    #: fields added after a release, with the safe default an answer written
    #: before them gets (a scripted answers file of the previous format)
    ADDED_AFTER_RELEASE: ClassVar[dict[str, Any]] = {"notes_facts": [], "acceptance_criteria": []}


def handoff_schema(criteria: Sequence[str]) -> type[HandoffAnswer]:
    """:class:`HandoffAnswer` for one step: each entry of its criteria map
    names a criterion by an id of this step's (an enum of ``C1`` … ``Cn``;
    no entry at all when the plan has no criteria).  An entry naming a
    criterion by its exact text is read as its id
    (:func:`~stepkit.protocol.criteria.criterion_index`)."""
    from stepkit.protocol.criteria import criterion_ids, criterion_index

    ids = criterion_ids(criteria)
    if not ids:
        return create_model(
            "HandoffAnswer",
            __base__=HandoffAnswer,
            acceptance_criteria=(
                list[CriterionTests],
                Field(max_length=0, description="[]: the plan has no Acceptance criteria."),
            ),
        )

    def as_id(value: Any) -> Any:
        at = criterion_index(value, criteria) if isinstance(value, str) else None
        return value if at is None else ids[at]

    # models built at run time, of types (a Literal of these ids) mypy cannot see
    entry = create_model(
        "CitedCriterion",
        __base__=CriterionTests,
        criterion=(  # type: ignore[arg-type]
            Annotated[  # type: ignore[maybe-unrecognized-str-typeform]
                Literal[tuple(ids)],
                WithJsonSchema(
                    {  # an enum even of one id (never "const")
                        "type": "string",
                        "enum": ids,
                        "description": "The criterion's id (C1, C2, ...).",
                    }
                ),
            ],
            ...,
        ),
        __validators__={"_by_id": field_validator("criterion", mode="before")(as_id)},
    )
    return create_model(
        "HandoffAnswer",
        __base__=HandoffAnswer,
        acceptance_criteria=(
            list[entry],  # type: ignore[valid-type]
            Field(
                description="Per criterion id, the ids of the tests that cover it ([] or no entry: none)."
            ),
        ),
    )


def step_criteria(state: StepState) -> list[str]:
    """The ids of the step's Acceptance criteria (``C1`` … ``Cn``)."""
    from stepkit.protocol.criteria import plan_criteria

    return plan_criteria(state.plan_text)
