"""Records exchanged between the core and plugins.

These are the data contracts of the hooks in :mod:`stepkit.hookspecs`: what a
gate run records, what a coder returns, what an approval node asks, what a
stage hook receives, and how a run ended (:class:`RunResult`).  They are plain pydantic models (or a dataclass where a
live object such as the plugin manager has to travel along) so that a plugin
author can build them without knowing the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args

from pydantic import BaseModel, Field, field_validator

from stepkit import gatetable
from stepkit.models import Model, lazy_view
from stepkit.text import one_line, visible

#: A gate's name: a name of the gate table (:mod:`stepkit.gatetable`).
GateName = str
#: The gates' names in run order: the gate table's (kept here, where code imports it from).
GATE_ORDER = gatetable.GATE_ORDER
GateStatus = Literal["pass", "fail", "not_run", "timeout", "error"]

#: Statuses of a gate that ran, or tried to, and did not pass.
FAILED_STATUSES = frozenset({"fail", "timeout", "error"})
#: The fields of a gate in every ``--json`` (fixed: never removed or renamed).
GATE_JSON_FIELDS = (
    "name",
    "status",
    "command",
    "plugin",
    "exit_code",
    "duration_s",
    "log",
    "summary",
    "evidence",
    "changed_files",
)

#: Fields added to each gate of the ``--json`` outputs: the baseline's verdict
#: (:mod:`stepkit.workspace.verdicts`).
GATE_JSON_VERDICT_FIELDS = ("new_failures", "preexisting_failures", "flaky", "order_dependent")
NEW_LABEL = "NEW failures"
PREEXISTING_LABEL = "PRE-EXISTING failures (failed before the step too; not passing)"
FLAKY_LABEL = "FLAKY tests (failed, passed when the suite was re-run; not evidence of a pass)"
ORDER_DEPENDENT_LABEL = "ORDER-DEPENDENT failures (fail in the suite, pass alone; not flaky)"

CoderSentinel = Literal["CODER_COMPLETE", "CODER_REJECTED", "CODER_FAILED"]


class TestsRecord(Model):
    """The per-test results a tests gate keeps (the full list is in ``file``;
    :mod:`stepkit.workspace.testresults` reads and writes it).

    :ivar source: where the ids came from (``junit XML``, ``jest JSON``,
        ``cargo test output`` …).
    :ivar complete: every test that ran is listed (a report, or a runner
        that prints each test); False when only failing ids were found.
    :ivar counts: tests per status (passed, failed, errored, skipped).
    :ivar failing: the failed and errored ids (the first 100).
    :ivar file: the JSON file holding every id with its status.
    """

    __test__ = False  # not a pytest test class

    source: str
    complete: bool = True
    counts: dict[str, int] = Field(default_factory=dict)
    failing: list[str] = Field(default_factory=list)
    file: str | None = None

    def outcomes(self) -> dict[str, str] | None:
        """Every id with its status, from :attr:`file` (None: gone or unreadable)."""
        import json

        if not self.file:
            return None
        try:
            data = json.loads(Path(self.file).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        outcomes = data.get("outcomes") if isinstance(data, dict) else None
        return outcomes if isinstance(outcomes, dict) else None


class FirstError(Model):
    """The first error lines of one failure, under its heading (the test, or
    the file and line)."""

    heading: str
    lines: list[str] = Field(default_factory=list)


class Evidence(Model):
    """What a condenser (``stepkit_condense_output``) found in a gate's output.

    The judges read the fields; ``text`` is the view a model and the handoff
    read (the built-in condensers render it from the fields).  A plain string
    from a third-party condenser becomes ``text``, its documented lines read
    once where it comes in (:func:`stepkit.workspace.evidence.condense`).

    :ivar text: the condensed text.
    :ivar failing: one item per failing test or diagnostic, as listed (its
        id, maybe with its message).
    :ivar tests: the failing tests' ids, ``failed`` or ``errored`` (empty:
        the output names no failing test, a lint's diagnostics say).
    :ivar errors: the first error lines of each failure.
    :ivar summary: the gate's one-line summary (None: the condenser said none).
    """

    text: str = ""
    failing: list[str] = Field(default_factory=list)
    tests: dict[str, Literal["failed", "errored"]] = Field(default_factory=dict)
    errors: list[FirstError] = Field(default_factory=list)
    summary: str | None = None

    def first_error(self) -> str:
        """The first line of the first failure's error (empty: none listed)."""
        return next((line for e in self.errors for line in e.lines if line.strip()), "")


class GateResult(Model):
    """One verification gate as it ran (or did not run): the evidence record.

    ``evidence`` is the condensed output that the model and the handoff get;
    ``log`` is the full output on disk.  ``status`` is decided by the harness
    from the exit code, never by a model.
    """

    name: GateName
    status: GateStatus
    command: str | None = None
    plugin: str | None = None
    exit_code: int | None = None
    duration_s: float = 0.0
    log: str | None = None
    summary: str = ""
    evidence: str = ""
    tree_hash: str | None = None
    started_at: str | None = None
    #: per-test results of a tests gate (None: not a tests gate, or no test ids found)
    tests: TestsRecord | None = None
    #: failures that fail the gate: test ids, or build/lint error lines (the fix loop gets these only)
    new_failures: list[str] = Field(default_factory=list)
    #: failures the tree had before the step too (the baseline); never a pass
    preexisting_failures: list[str] = Field(default_factory=list)
    #: tests that failed and then passed when re-run once: not failures, never evidence of a pass
    flaky: list[str] = Field(default_factory=list)
    #: failing tests that pass alone, each as ``<id> fails after <id>``: failures, never flaky
    order_dependent: list[str] = Field(default_factory=list)
    #: the files the gate changed (those it had no business changing are
    #: restored and still named); None: the runner did not look
    changed_files: list[str] | None = None
    #: records of stepkit's own that judging the gate found forged or edited
    #: (a baseline cache entry: discarded and run again), by name
    store_flags: list[str] = Field(default_factory=list)
    #: the files a fix round's lint ran on, its command narrowed to them
    #: (:mod:`stepkit.workspace.narrowing`); None: the whole command ran
    narrowed_to: list[str] | None = None
    #: what the output's condenser found, typed: the judges read it, never
    #: ``evidence`` (None: no command ran)
    condensed: Evidence | None = None

    @field_validator("name")
    @classmethod
    def _a_gate_of_the_table(cls, value: str) -> str:
        return gatetable.gate(value).name

    @field_validator("summary")
    @classmethod
    def _summary_is_one_line(cls, value: str) -> str:
        return one_line(value)

    @property
    def ran(self) -> bool:
        return self.status not in ("not_run", "error")

    @property
    def failed(self) -> bool:
        """The gate ran, or tried to, and did not pass."""
        return self.status in FAILED_STATUSES

    def status_line(self) -> str:
        """The gate in one line, as every display shows it; a gate without a
        command, or whose command ran no test, is said plainly not to be
        evidence of a pass (its summary says so)."""
        if self.status == "not_run" and self.command is None:
            return (
                f"{self.name}: NOT RUN (no command; this is NOT evidence that {self.name} passed)"
            )
        exit_text = "none" if self.exit_code is None else self.exit_code
        command = one_line(self.command or "")
        word = "NOT RUN" if self.status == "not_run" else self.status.upper()
        line = f"{self.name}: {word} (`{command}`, exit {exit_text}, {self.duration_s:.1f}s)"
        summary = one_line(self.summary)
        summary = (
            summary if self.status == "not_run" else summary[:100]
        )  # the whole "NOT evidence" clause
        line = f"{line} — {summary}" if summary else line
        return line + "".join(f"; {text}" for text in self.verdict_lines())

    def verdict_lines(self) -> list[str]:
        """The failures judged against the baseline, each list by id: new
        ones, pre-existing ones, flaky tests (never called passing) and
        order-dependent failures with the test each fails after."""
        lines = []
        for label, ids in (
            (NEW_LABEL, self.new_failures),
            (PREEXISTING_LABEL, self.preexisting_failures),
            (FLAKY_LABEL, self.flaky),
            (ORDER_DEPENDENT_LABEL, self.order_dependent),
        ):
            if ids:
                lines.append(f"{label} ({len(ids)}): {', '.join(one_line(i) for i in ids)}")
        return lines

    def public(self) -> dict[str, Any]:
        """The gate as the ``--json`` outputs show it (the fixed fields, then the added ones)."""
        return {
            **{key: getattr(self, key) for key in GATE_JSON_FIELDS},
            **{key: list(getattr(self, key)) for key in GATE_JSON_VERDICT_FIELDS},
        }


#: What a tamper flag says was weakened.  The first kinds judge the step's
#: changes (:mod:`stepkit.workspace.scope.tamper`) and the tree the gates
#: judged: a coder round raises them again from its tree, so they are
#: :attr:`TamperFlag.of_the_tree`; the others are events of the run (git's
#: internals undone, the run store touched, a node unconfined), kept to its end.
TamperKind = Literal[
    "deleted_test",
    "deleted_config",
    "new_marker",
    "judge_marks",
    "module_patch",
    "coverage_threshold",
    "loosened_config",
    "lost_tests",
    "pristine",
    "git_internals",
    "untrusted_plugin",
    "trust_store",
    "run_store",
    "hidden_files",
    "site_dirs",
    "users_tree",
    "unconfined",
    "flaky_pass",
    "command_change",
    "legacy",
]
#: The kinds a coder round raises again from its tree (the rest are kept):
#: those before ``git_internals``, the first event of the run.
TREE_KINDS = frozenset(get_args(TamperKind)[: get_args(TamperKind).index("git_internals")])
#: The source of a flag found in the step's changes (its diff against the snapshot).
CHANGES = "the step's changes"
#: The source of a flag stepkit raised about its own records or the run's setting.
STEPKIT = "stepkit"


class TamperFlag(Model):
    """A sign that verification was weakened: what kind of weakening, who or
    what raised it (:data:`CHANGES`, a node such as ``the coder`` or ``the
    tests gate``, or :data:`STEPKIT`), the path it is about (empty: none
    named) and the text every display shows (:meth:`line`).  Made by one
    constructor per source: :meth:`in_changes`, :meth:`by`, :meth:`of_stepkit`."""

    kind: TamperKind
    source: str
    path: str = ""
    text: str

    @classmethod
    def in_changes(cls, kind: TamperKind, path: str, text: str) -> TamperFlag:
        """A flag the step's changes raise about the file ``path``."""
        return cls(kind=kind, source=CHANGES, path=path, text=text)

    @classmethod
    def by(cls, who: str, kind: TamperKind, text: str, path: str = "") -> TamperFlag:
        """A flag about what ``who`` (a node running the coder's code) did."""
        return cls(kind=kind, source=who, path=path, text=text)

    @classmethod
    def of_stepkit(cls, kind: TamperKind, text: str, path: str = "") -> TamperFlag:
        """A flag stepkit raises about its own records or how the run ran."""
        return cls(kind=kind, source=STEPKIT, path=path, text=text)

    @property
    def of_the_tree(self) -> bool:
        """The flag judges the tree, so a coder round raises it again from its own."""
        return self.kind in TREE_KINDS

    def line(self) -> str:
        """The flag as the handoff, the approval, the reviewer and ``--json`` show it."""
        return self.text


def dumped(flags: list[TamperFlag]) -> list[dict[str, Any]]:
    """The flags as the run state keeps them (plain JSON data)."""
    return [flag.model_dump() for flag in flags]


def flag_lines(flags: list[TamperFlag]) -> list[str]:
    """The flags' text, in order (what a display lists)."""
    return [flag.line() for flag in flags]


class CoderResult(Model):
    """What a coder (built-in or an external CLI) handed back.

    ``crashed`` means the coder died (killed by a signal, could not start, or
    timed out): the run fails at once and the coder is never re-run.
    ``sentinel`` is None when the output carried none (route_coder_result
    turns that into a failure with "no recognizable sentinel");
    ``sentinel_inferred`` says the output carried none and the coder plugin
    read ``sentinel`` from the exit code (or the tool's own error report).
    ``usage``: the tokens and cost the coder reported (an external CLI's
    own count; None when it reported none); ``cost_usd`` is its cost.
    """

    sentinel: CoderSentinel | None = None
    #: what followed the sentinel on its line (``CODER_FAILED: tests still red``)
    sentinel_reason: str | None = None
    sentinel_inferred: bool = False
    crashed: bool = False
    text: str = ""
    exit_code: int | None = None
    changed_files: list[str] = Field(default_factory=list)
    cost_usd: float | None = None
    usage: Usage | None = None
    session_id: str | None = None
    gates: list[GateResult] = Field(default_factory=list)
    log: str | None = None


#: The one severity scale of a finding: ``critical`` blocks the step (the
#: review sends it back to the coder), ``should_fix`` is a real problem that
#: does not, ``minor`` is a nit.
Severity = Literal["critical", "should_fix", "minor"]
#: How a finding's severity is written at the start of its line.
SEVERITY_TAGS: dict[str, str] = {
    "critical": "🔴 critical",
    "should_fix": "🟡 should fix",
    "minor": "🟢 minor",
}


#: A discrepancy orient found between the plan and the code: ``major``
#: changes the step's scope (the deviation gate asks), ``minor`` is folded
#: into the brief.
OrientSeverity = Literal["minor", "major"]
#: An edge case the sweep listed: ``handled`` by the step, or ``punted`` to a later one.
SweepVerdict = Literal["handled", "punted"]

#: Orient's and the sweep's scales on the one finding scale: a major
#: deviation blocks the step until the user decides; a punted edge case is a
#: real problem the step does not fix; a minor deviation (corrected in the
#: brief) or a handled edge case is a note.
_ON_THE_FINDING_SCALE: dict[str, Severity] = {
    "major": "critical",
    "minor": "minor",
    "punted": "should_fix",
    "handled": "minor",
}


def finding_severity(severity: OrientSeverity | SweepVerdict) -> Severity:
    """Where an orient finding's severity or a sweep's verdict on an edge
    case stands on the one :data:`Severity` scale (what routes compare)."""
    return _ON_THE_FINDING_SCALE[severity]


class Finding(Model):
    """One finding of a review: its severity, the file and the acceptance
    criterion it is about (empty: not said), and what is wrong."""

    severity: Severity
    text: str
    file: str = ""
    criterion: str = ""

    def line(self) -> str:
        """The finding in one line, its severity tag first (a report's line)."""
        where = (
            f"{one_line(self.file)} ({one_line(self.criterion) or 'none'}): " if self.file else ""
        )
        return f"{SEVERITY_TAGS[self.severity]}: {where}{one_line(self.text)}"


def report_of(findings: list[Finding]) -> str:
    """The review report the findings make: one line each, or ``No findings.``"""
    return "\n".join(finding.line() for finding in findings) or "No findings."


def marked_findings(report: str) -> list[Finding]:
    """The critical findings of a review given as text only: the lines that
    START with 🔴 once list markers (``-``, ``*``, ``+``, ``1.``, ``1)``) and
    blanks are set aside, so "No 🔴 critical findings." is none (the hook's
    contract for a text report; the built-in reviewer reads its reviewers'
    text itself and answers with typed findings).  A line written as a
    finding's own line (``🔴 critical: …``) keeps its text once."""
    from stepkit.planrepo.sections import strip_list_markers

    tag = SEVERITY_TAGS["critical"]
    mark = tag.split()[0]
    marked = (strip_list_markers(line).strip() for line in report.splitlines())
    return [
        Finding(
            severity="critical",
            text=line.removeprefix(tag).removeprefix(mark).lstrip(": "),
        )
        for line in marked
        if line.startswith(mark)
    ]


class ReviewResult(Model):
    """An independent review.  ``fault`` is set when the reviewer did not run
    properly; then ``review_report`` is never treated as findings.

    ``findings`` are the review's findings, typed; a plugin that gives only
    the text (None) has the lines of ``review_report`` that start with 🔴
    taken as its critical findings, once, where its answer comes in."""

    review_report: str = ""
    fault: str | None = None
    findings: list[Finding] | None = None


class OrientResult(Model):
    """What ``stepkit_orient`` returns (field names fixed by the protocol);
    also the schema the built-in LLM stage asks the engine for."""

    plan_summary: str = Field(description="What the step delivers, 2-5 sentences.")
    implementation_brief: str = Field(description="What the coder must do, corrections folded in.")
    staleness_report: str = Field(
        description='Bullets tagged [minor]/[major]; exactly "clean" if none.'
    )
    has_major_deviation: bool = Field(description="True only when a [major] item exists.")
    deviation_summary: str = Field(
        description='What differs, why it matters, options; "None" if none.'
    )


class Annotation(Model):
    """An edge case to add to a LATER step's Edge cases section."""

    step: int = Field(description="The later step's number.")
    edge_case: str = Field(description="One sentence.")


class SweepResult(Model):
    """What ``stepkit_sweep`` returns (the built-in sweep builds its engine
    schema per call from these fields)."""

    edge_case_report: str = Field(description='Bullets starting "handled:" or "punted:".')
    downstream_updates: str | list[str] = Field(
        description='Before/after proposals for later steps; "None".'
    )
    needs_independent_review: bool = Field(description="5+ files changed or a boundary crossed.")
    annotations: list[Annotation] = Field(
        default_factory=list, description="Edge cases for later steps only."
    )


class CriterionTests(Model):
    """One entry of the handoff's acceptance-criteria map: a criterion of the
    plan, by the id stepkit numbered it with (``C1`` …; its exact text is
    read too), and the test ids that cover it (none: no test is cited).
    stepkit, not the writer, says whether it saw each of them pass."""

    criterion: str = Field(
        description="The criterion's id as numbered in the prompt (C1, C2, ...)."
    )
    tests: list[str] = Field(
        default_factory=list,
        description=(
            "Ids of the tests that check it, as the tests gate recorded them "
            "(e.g. tests/test_calc.py::test_mul); [] when no automated test covers it."
        ),
    )


class HandoffProse(Model):
    """What ``stepkit_write_handoff`` returns: the prose; the harness renders
    the file and its Evidence.  The built-in writer's engine schema extends it,
    every field required."""

    step_summary: str = Field(description="One line for the final approval prompt.")
    result: Literal["complete", "partial", "blocked"] = "complete"
    summary: str = ""
    completed: str = ""
    not_completed: str = ""
    deviations: str = ""
    downstream_plan_updates: str = ""
    edge_cases_discovered: str = ""
    notes_for_next_step: str = ""
    notes_facts: list[str] = Field(
        default_factory=list, description="Durable step-independent facts for NOTES.md."
    )
    acceptance_criteria: list[CriterionTests] = Field(
        default_factory=list,
        description=(
            "Every bullet of the plan's Acceptance criteria with the test ids that cover it."
        ),
    )

    @field_validator("step_summary")
    @classmethod
    def _summary_is_one_line(cls, value: str) -> str:
        return one_line(visible(value))  # a model's "\r" is shown, never obeyed


class Question(Model):
    """What an approval or input node asks a human.

    ``kind`` is ``approval`` (pick an option, or free text when
    ``allow_other``) or ``input`` (free text; ``non_empty`` enforced).
    :func:`stepkit.engine.answers.read_answer` reads every answer to it.
    """

    node: str
    kind: Literal["approval", "input"]
    text: str
    options: list[str] = Field(default_factory=list)
    allow_other: bool = False
    non_empty: bool = False
    #: other words for an option: word (casefolded) → option
    aliases: dict[str, str] = Field(default_factory=dict)
    #: any answer that is no option and no slip counts as this option
    other_as: str | None = None
    #: words that show a text and ask again (never an answer): word → the
    #: text (empty where a pause kept only the words)
    views: dict[str, str] = Field(default_factory=dict)


class Usage(Model):
    """Model usage; summed per node and per run."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0

    @property
    def total_tokens(self) -> int:
        """Every token counted against a ``max_tokens`` budget."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
        )

    def add(self, other: Usage) -> Usage:
        """This usage plus ``other``."""
        return self._combine(other, 1)

    def since(self, before: Usage) -> Usage:
        """What was spent from ``before`` to this usage."""
        return self._combine(before, -1)

    def _combine(self, other: Usage, sign: int) -> Usage:
        values = {
            name: getattr(self, name) + sign * getattr(other, name) for name in Usage.model_fields
        }
        values["cost_usd"] = round(values["cost_usd"], 6)
        return Usage(**values)


class Outcome(Model):
    """What a script or stage node returns to the graph driver: the route label
    to take (a key of the node's ``routes``; None = its ``next``) and the
    state updates to merge."""

    route: str | None = None
    updates: dict[str, Any] = Field(default_factory=dict)


class RunResult(Model):
    """How a run (or a resumed run) ended: ``outcome`` (a sentinel or
    ``PAUSED``), ``exit_code``, ``run_id``, ``output`` (first line the
    sentinel), the final ``state``, when paused ``pending`` (the question),
    the run's directory, and ``report``: the graph's own fields of the
    ``--json`` object (the step-runner's: :mod:`stepkit.protocol.result`),
    which the API fills, so nothing here reads a step-protocol key."""

    outcome: str
    exit_code: int
    run_id: str
    output: str
    state: dict[str, Any]
    pending: dict[str, Any] | None = None
    run_dir: str = ""
    report: dict[str, Any] = Field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` object of ``stepkit run`` / ``stepkit resume`` (keys only ever added)."""
        obj: dict[str, Any] = {
            "outcome": self.outcome,
            "exit_code": self.exit_code,
            "run_id": self.run_id,
            **self.report,
            "output": self.output,
            "run_dir": self.run_dir,
        }
        if self.pending:
            pending = self.pending
            obj["pending"] = {
                "node": pending.get("node"),
                "question": pending.get("question"),
                "options": pending.get("options") or [],
            }
        return obj


class Paused(Exception):
    """Raised by a ``stepkit_ask`` implementation to pause the run at an
    approval or input node until ``stepkit resume --answer`` supplies the
    answer."""

    def __init__(self, question: Question):
        super().__init__(question.text)
        self.question = question


class StageFault(Exception):
    """A stage could not produce its result (engine error, invalid output twice,
    budget exceeded, a read-only node that wrote).  The graph routes it along
    the node's fault edge; ``note`` is the one-paragraph explanation."""

    def __init__(self, note: str, updates: dict[str, Any] | None = None):
        super().__init__(note)
        self.note = note
        #: state updates to keep even though the node faulted (e.g. the text
        #: of a crashed coder, which lands in ``coder_result``).
        self.updates = updates or {}


_View = TypeVar("_View", bound=BaseModel)


@dataclass
class StageContext:
    """Everything a stage hook needs to do its job for one node of one run.

    :ivar node: the graph node id calling the stage (``orient``, ``implement`` …).
    :ivar project_dir: the project being changed (absolute).
    :ivar plans_dir: the plan repo (absolute).
    :ivar state: the run state (read it; return updates instead of mutating).
    :ivar settings: run settings: ``engine``, ``coder``, ``reviewer`` specs,
        budgets and the ``--set`` values.
    :ivar config: the project's stepkit configuration.
    :ivar pm: the plugin manager of this run (to call other hooks).
    :ivar run_dir: the run's directory in the run store (None outside a run).
    :ivar adhoc_dir: outside a run, where the stage keeps its logs and what
        restores displace (the run store's ad-hoc directory, which the
        caller takes from :func:`stepkit.workspace.store.adhoc_dir`).
    :ivar emit: record an event in the run's ``events.jsonl`` (kind, **fields).
    :ivar ask: ask a human a :class:`Question` through ``stepkit_ask``.
    :ivar engines: outside a run, the engines built for this context, by
        spec: every call made with it asks the same engine (a scripted
        list goes on, one SDK client); a run keeps its engines itself.
    """

    node: str
    project_dir: Path
    plans_dir: Path
    state: dict[str, Any]
    settings: dict[str, Any]
    config: Any
    pm: Any
    run_dir: Path | None = None
    emit: Callable[..., None] = field(default=lambda kind, **fields: None)
    ask: Callable[[Question], str] | None = None
    usage: Usage = field(default_factory=lambda: Usage())
    adhoc_dir: Path | None = None
    engines: dict[str | None, Any] = field(default_factory=dict, repr=False, compare=False)
    #: each model's view, with the state it was read from
    _views: dict[type[BaseModel], tuple[dict[str, Any], Any]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def typed(self, model: type[_View]) -> _View:
        """The run state read as ``model`` (the keys it declares; others are
        left out): made on the first call for each model and kept while
        :attr:`state` is the same mapping, each field validated the first
        time it is read (:func:`~stepkit.models.lazy_view`), so a node pays
        for the fields it reads, once.  The view is read only: a node still
        returns its updates in an :class:`Outcome`."""
        kept = self._views.get(model)
        if kept is None or kept[0] is not self.state:
            kept = self._views[model] = (self.state, lazy_view(model, self.state))
        view: _View = kept[1]
        return view

    def work_dir(self) -> Path:
        """Where this stage keeps what it writes: the run's directory, or
        outside a run :attr:`adhoc_dir`.

        :raises ValueError: the context has neither (it was built by hand
            without saying where its files go).
        """
        base = self.run_dir or self.adhoc_dir
        if base is None:
            raise ValueError(
                "this StageContext has neither a run_dir nor an adhoc_dir to keep its files in"
            )
        return Path(base)

    def log_dir(self) -> Path:
        """Directory for full logs of this stage (``logs`` of :meth:`work_dir`), created."""
        path = self.work_dir() / "logs"
        path.mkdir(parents=True, exist_ok=True)
        return path
