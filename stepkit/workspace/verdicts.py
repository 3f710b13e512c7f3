"""Test-level verdicts: a failing gate judged against a re-run and the baseline.

When a gate fails, :class:`Judge` names what failed
(:func:`~stepkit.workspace.baseline.failure_keys`) and re-runs the failing
test ids alone on the same tree, but for those in a test file the step
added: they are new failures, never re-run (a flaky test the step wrote is
the step's to fix).  One that passes alone is re-run the way it
failed, the whole command: passing there too it is **flaky** (not a failure,
never evidence of a pass); failing again it is an **order-dependent
failure** — it fails in the suite and passes alone — which stays a failure,
named with the test it fails after (found by re-running halves of the tests
that ran before it, in their order).  The judge then runs the gate's command on the earlier
tree (:mod:`~stepkit.workspace.baseline`, once per tree and cached) and
splits the rest into **new** and **pre-existing** failures.  The mode is the
project's ``baseline`` setting:

- ``new-failures`` (default): the gate passes when no failure is new;
- ``strict``: the failures are classified and listed, but the gate's status
  stays what its exit code says (today's rule);
- ``off``: nothing is re-run, no baseline runs.

A gate whose failures cannot be named (it crashed before any test, its
output is one no rule reads) is left failing.  Every pre-existing and flaky
failure is listed by id in the gate's evidence and summary; the fix loop
gets the evidence with them taken out (:func:`evidence_for_fix`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from stepkit.gatetable import gate
from stepkit.records import (
    FLAKY_LABEL,
    NEW_LABEL,
    ORDER_DEPENDENT_LABEL,
    PREEXISTING_LABEL,
    GateName,
    GateResult,
)
from stepkit.text import first_of
from stepkit.workspace.baseline import (
    BaselineRecord,
    BaselineUnavailable,
    BaseTree,
    cached_record,
    could_not_run,
    failure_keys,
    log_text_of,
    split_failures,
    test_results_of,
)
from stepkit.workspace.start_outcomes import added_by_step, measured, start_record

BaselineMode = Literal["new-failures", "strict", "off"]
#: Opens and closes the verdict block stepkit puts before a judged gate's evidence.
VERDICT_OPEN = "[stepkit verdict"
VERDICT_CLOSE = "[end of stepkit verdict]"

#: Runs a gate's command: (gate, the test ids to select or None for all,
#: project dir, log dir, every id of the suite in its order or None) → the
#: result (None: those ids cannot be selected).  Selected ids run in the
#: suite's order; knowing the suite, a runner may select exactly them.
RunGate = Callable[[GateName, list[str] | None, Path, Path, list[str] | None], "GateResult | None"]
#: Said of a failing gate whose failures have no name to compare.
UNNAMED = (
    "the failures could not be named (no failing test id or error line in the output): "
    "nothing was re-run or compared, the gate fails"
)
#: The most selected runs spent finding the test an order-dependent failure fails after.
BISECT_RUNS = 8
#: The most order-dependent failures whose culprit is looked for (the others are named without it).
BISECT_TESTS = 3


class Judge:
    """Judges the failing gates of one runner (one baseline per gate and tree).

    :param mode: the ``baseline`` setting.
    :param base: the earlier tree, or a function giving it (None: no
        baseline can be had, e.g. outside a run without ``--baseline``).
    :param run: runs a gate's command (all tests, or just some ids) in a
        directory, with its logs in another.
    :param log_dir: where the re-runs' logs go.
    """

    def __init__(
        self,
        mode: BaselineMode,
        project_dir: Path,
        log_dir: Path,
        base: BaseTree | Callable[[], BaseTree | None] | None,
        run: RunGate,
    ):
        self.mode, self.project_dir, self.log_dir = mode, Path(project_dir), Path(log_dir)
        self._base, self.run = base, run
        #: every test command the judge ran (re-runs and baselines run, not cached)
        self.extra_runs: list[str] = []
        self.baselines: list[BaselineRecord] = []

    def base(self) -> BaseTree | None:
        if callable(self._base):
            self._base = self._base()
        return self._base

    def judge(self, result: GateResult) -> GateResult:
        """``result`` with its failures classified (unchanged when it did not
        fail, when the mode is ``off``, or for a gate whose failure does not
        fail the step: the formatter)."""
        if (
            self.mode == "off"
            or result.status not in ("fail", "error")
            or not gate(result.name).fails_step
        ):
            return result
        tests, output = test_results_of(result), log_text_of(result)
        if could_not_run(result.name, result.status, result.summary, tests, output) is not None:
            return self._cannot_run(result)
        keys = failure_keys(result.name, result.status, tests, output, [self.project_dir])
        if keys is None:
            return _with_block(result, [UNNAMED])
        # a failing test in a file the step added cannot have failed before the
        # step, and one that fails only sometimes is the step's to fix all the same
        base = self.base() if result.name == "tests" else None
        added = added_by_step(self.project_dir, base, keys) if base is not None else set()
        flaky: list[str] = []
        order_dependent: list[str] = []
        if result.name == "tests" and any(k not in added for k in keys):
            flaky, order_dependent = self._flaky(result, [k for k in keys if k not in added])
        remaining = [k for k in keys if k not in flaky]
        notes: list[str] = []
        before: list[str] | None = None
        judged_before = len(self.baselines)
        if added:
            notes.append(
                f"{len(added)} failing test(s) in files the step added: new, whatever the start did"
            )
        if any(k not in added for k in remaining):
            before, note = self._baseline(result)
            notes.append(note)
        new, preexisting = split_failures([k for k in remaining if k not in added], before)
        new = [k for k in remaining if k in added or k in new]
        passes = self.mode == "new-failures" and not new
        status = "pass" if passes else result.status
        store_flags = [
            flag for record in self.baselines[judged_before:] for flag in record.store_flags
        ]
        notes += store_flags
        judged = result.model_copy(
            update={
                "status": status,
                "new_failures": new,
                "preexisting_failures": preexisting,
                "flaky": flaky,
                "order_dependent": order_dependent,
                "store_flags": store_flags,
                "summary": _summary(result, status, new, preexisting, flaky, order_dependent),
            }
        )
        rule = (
            "the gate passes when no failure is new"
            if self.mode == "new-failures"
            else "strict: any failure fails the gate"
        )
        return _with_block(judged, [f"baseline = {self.mode} ({rule})", *notes])

    def _cannot_run(self, result: GateResult) -> GateResult:
        """A gate whose command could not run now: an environment fault
        when it could not run on the step's start either (as measured
        there, never run again for this), else left as it is."""
        base = self.base()
        job = measured(self.project_dir, base) if base is not None else None
        start = job.record(result.name, result.command) if job is not None else None
        if start is None and base is not None and result.command is not None:
            start = cached_record(self.project_dir, base, result.name, result.command)[0]
        if start is not None and start.could_not_run is not None:
            verdict = (
                f"this command cannot run here (it could not run on {start.label} either): "
                f"{start.could_not_run}; set the {result.name} command ([commands] in stepkit.toml)"
            )
            fault = result.model_copy(update={"status": "error", "summary": verdict})
            return _with_block(fault, [verdict])
        if result.status == "error":
            return result
        notes = [UNNAMED]
        if start is not None:
            notes.append(f"on {start.label} the same command ran ({start.status}: {start.summary})")
        return _with_block(result, notes)

    def _flaky(self, result: GateResult, keys: list[str]) -> tuple[list[str], list[str]]:
        """(the failing ids that are flaky, the order-dependent failures as
        ``<id> fails after <id>``): each failing id is re-run alone; one
        that passes alone is re-run with the whole command, the way it
        failed.  Runners whose tests cannot be selected re-run nothing."""
        order = list(_outcomes(result))
        alone = self.run(result.name, keys, self.project_dir, self.log_dir, order or None)
        if alone is None:  # the runner's tests cannot be selected: nothing is re-run
            return [], []
        self.extra_runs.append(f"re-run of {len(keys)} failing test(s) alone")
        passed_alone = [k for k in keys if _outcomes(alone).get(k) == "passed"]
        if not passed_alone:
            return [], []
        again = self.run(result.name, None, self.project_dir, self.log_dir, None)
        assert again is not None  # the whole command can always run
        self.extra_runs.append(
            f"re-run of the whole command for {len(passed_alone)} test(s) that passed alone"
        )
        outcomes = _outcomes(again)
        flaky = [k for k in passed_alone if outcomes.get(k) == "passed"]
        dependent = [k for k in passed_alone if outcomes.get(k) in ("failed", "errored")]
        described = [
            self._fails_after(result.name, k, order)
            if n < BISECT_TESTS
            else f"{k} fails after some of the tests that ran before it"
            for n, k in enumerate(dependent)
        ]
        return flaky, described

    def _fails_after(self, gate: GateName, victim: str, order: list[str]) -> str:
        """``<victim> fails after <id>``: the test that ran before ``victim``
        in the suite and makes it fail, found by re-running halves of those
        that ran before it (each in the suite's order) with it; when no
        single one is found, the tests it may fail after are named."""
        candidates = order[: order.index(victim)] if victim in order else []
        confirmed = False
        for _ in range(BISECT_RUNS):
            if not candidates or (len(candidates) == 1 and confirmed):
                break
            half = candidates[: max(1, len(candidates) // 2)]
            run = self.run(gate, [*half, victim], self.project_dir, self.log_dir, order)
            if run is None:
                break
            self.extra_runs.append(
                f"re-run of {victim} after {len(half)} test(s) that ran before it"
            )
            ran = list(_outcomes(run))
            before = set(ran[: ran.index(victim)]) if victim in ran else set()
            outcome = _outcomes(run).get(victim)
            if outcome in ("failed", "errored"):
                narrowed = [c for c in candidates if c in before]
                confirmed = True
            elif outcome == "passed":
                narrowed = [c for c in candidates if c not in before]
                confirmed = False
            else:
                break
            if (
                not narrowed
                or len(narrowed) == len(candidates)
                and not (len(narrowed) == 1 and confirmed)
            ):
                break
            candidates = narrowed
        if len(candidates) == 1 and confirmed:
            return f"{victim} fails after {candidates[0]}"
        if not candidates:
            return f"{victim} fails in the suite and passes alone"
        return f"{victim} fails after one or more of {first_of(candidates, 3)}"

    def _baseline(self, result: GateResult) -> tuple[list[str] | None, str]:
        """What failed on the earlier tree (None: unknown), and a line saying how it was found."""
        base = self.base()
        if base is None:
            return (
                None,
                "no baseline: the tree before the step is not known, so every failure counts as new",
            )
        assert result.command is not None

        def run(where: Path, log_dir: Path):
            gate = self.run(result.name, None, where, log_dir, None)
            assert gate is not None  # the whole command can always run
            self.extra_runs.append(f"baseline run of {result.name} on {base.label}")
            return gate.status, gate.summary, gate.log, log_text_of(gate), test_results_of(gate)

        try:
            record = start_record(self.project_dir, base, result.name, result.command, run)
        except BaselineUnavailable as exc:
            return None, f"no baseline: {exc}; every failure counts as new"
        self.baselines.append(record)
        how = (
            "measured while the coder worked"
            if record.concurrent
            else "cached"
            if record.cached
            else "ran"
        )
        where = f" (log: {record.log})" if record.log else ""
        if record.status not in ("pass", "fail"):
            return None, (
                f"no baseline: on {base.label} the command ended {record.status} "
                f"({record.summary}); every failure counts as new{where}"
            )
        return record.failures, (
            f"baseline: the same command on {base.label} ({how}, {record.status}: "
            f"{record.summary}){where}"
        )


def evidence_for_fix(gate: GateResult) -> str:
    """The gate's evidence as the fix loop gets it: the new failures named
    first, and no line about a pre-existing or flaky failure; each
    order-dependent failure named with the test it fails after."""
    text = _without_block(gate.evidence)
    hidden = [*gate.preexisting_failures, *gate.flaky]
    lines = text.split("\n")
    head: list[str] = []
    if hidden:
        lines = [
            line for line in _drop_sections(lines, hidden) if not any(h in line for h in hidden)
        ]
        head = [
            f"Fix these failures only ({len(gate.new_failures)}):",
            *(f"- {k}" for k in gate.new_failures),
        ]
    if gate.order_dependent:
        head += [
            "Order-dependent failures (each passes alone: state leaks from a test that ran before it):",
            *(f"- order-dependent: {d}" for d in gate.order_dependent),
        ]
    return "\n".join([*head, "", *lines]) if head else text


def _drop_sections(lines: list[str], hidden: list[str]) -> list[str]:
    """Without each per-failure error section (a two-space heading and its
    deeper lines) whose heading names a hidden failure's test."""
    names = {h.rsplit("::", 1)[-1].rsplit(" › ", 1)[-1] for h in hidden}
    kept, dropping = [], False
    for line in lines:
        if line.startswith("  ") and not line.startswith("   "):
            head = line.strip()
            dropping = any(head == n or head.startswith((f"{n} ", f"{n}  (")) for n in names)
        elif not line.startswith("    "):
            dropping = False
        if not dropping:
            kept.append(line)
    return kept


def _summary(
    result: GateResult,
    status: str,
    new: list[str],
    pre: list[str],
    flaky: list[str],
    order_dependent: list[str],
) -> str:
    parts = [f"{len(new)} new failure{'s' if len(new) != 1 else ''}"]
    if pre:
        parts.append(f"{len(pre)} pre-existing")
    if flaky:
        parts.append(f"{len(flaky)} flaky")
    if order_dependent:
        parts.append(f"{len(order_dependent)} order-dependent")
    return f"{', '.join(parts)} ({result.summary})" if result.summary else ", ".join(parts)


def _with_block(result: GateResult, notes: list[str]) -> GateResult:
    """``result`` with the verdict block before its evidence."""
    lines = [f"{VERDICT_OPEN}: {result.name} {result.status.upper()}]", *notes]
    for label, ids in (
        (NEW_LABEL, result.new_failures),
        (PREEXISTING_LABEL, result.preexisting_failures),
        (FLAKY_LABEL, result.flaky),
    ):
        if ids:
            lines.append(f"{label} ({len(ids)}):")
            lines.extend(f"  {k}" for k in ids)
    if result.order_dependent:
        lines.append(f"{ORDER_DEPENDENT_LABEL} ({len(result.order_dependent)}):")
        lines.extend(f"  order-dependent: {d}" for d in result.order_dependent)
    lines.append(VERDICT_CLOSE)
    return result.model_copy(
        update={"evidence": "\n".join(lines) + "\n" + _without_block(result.evidence)}
    )


def _without_block(evidence: str) -> str:
    if evidence.startswith(VERDICT_OPEN) and VERDICT_CLOSE in evidence:
        return evidence.split(VERDICT_CLOSE, 1)[1].lstrip("\n")
    return evidence


def _outcomes(result: GateResult) -> dict[str, str]:
    """Every test id the run reported, in run order, with its status (empty: none known)."""
    return (result.tests.outcomes() if result.tests is not None else None) or {}
