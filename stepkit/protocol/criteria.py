"""Acceptance criteria tied to the tests stepkit saw pass.

The harness numbers the plan's Acceptance criteria ``C1`` … ``Cn``
(:func:`criterion_ids`) and shows them so to the handoff writer, whose
structured map (``acceptance_criteria`` of :class:`~stepkit.records.HandoffProse`)
names each criterion by its id with the test ids that cover it.  An entry
may name a criterion by its text instead when that text is the plan's after
markup is normalised (:func:`criterion_index`); a prefix names nothing.  The
harness, never the writer, says how each cited test did in the final tests
gate, from its per-test record:

- ``passed``: stepkit saw it pass (not after a re-run);
- ``FLAKY``: it failed, then passed when the suite was re-run — not evidence of a pass;
- ``PRE-EXISTING FAILURE`` / ``FAILED``: it failed;
- ``DID NOT RUN``: the final tests gate has no result for it.

A criterion no entry cites a test for is shown as :data:`NO_TEST_CITED`;
that is not a failure.  :func:`render_criteria` is the part of the
handoff's Evidence this becomes (and the lines the final approval shows);
:func:`criteria_problems` is what the handoff check reports: an entry for no
criterion of the plan, a cited test that did not run or did not pass.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from stepkit.planrepo.sections import list_items, plan_section
from stepkit.records import CriterionTests, GateResult

NO_TEST_CITED = "no test cited"
HEADING = "### Acceptance criteria → tests (checked by stepkit against the final tests gate)"


def plan_criteria(plan_text: str) -> list[str]:
    """The bullets of the plan's ``## Acceptance criteria`` (a line that
    continues a bullet is joined to it)."""
    return list_items((plan_section(plan_text or "", "Acceptance criteria") or "").splitlines())


def statuses_seen(gate: GateResult | None) -> dict[str, str]:
    """Each test id of the final tests gate with how stepkit saw it end
    (``passed``, ``FLAKY``, ``PRE-EXISTING FAILURE``, ``FAILED``, ``SKIPPED``)."""
    if gate is None or gate.status == "not_run" or gate.tests is None:
        return {}
    outcomes = gate.tests.outcomes() or {i: "failed" for i in gate.tests.failing}
    flaky, pre = set(gate.flaky), set(gate.preexisting_failures)
    shown = {"passed": "passed", "skipped": "SKIPPED", "failed": "FAILED", "errored": "FAILED"}
    statuses = {}
    for test_id, status in outcomes.items():
        if test_id in flaky:
            statuses[test_id] = "FLAKY (failed, passed on a re-run: not evidence of a pass)"
        elif test_id in pre:
            statuses[test_id] = "PRE-EXISTING FAILURE"
        else:
            statuses[test_id] = shown.get(status, status.upper())
    return {**_parametrized(statuses), **statuses}


def _parametrized(statuses: Mapping[str, str]) -> dict[str, str]:
    """A parametrized test by its own id (``t.py::test_a`` for ``t.py::test_a[x]``
    and ``[y]``): passed only when every case passed, else the first case's
    status that is not a pass."""
    cases: dict[str, list[str]] = {}
    for test_id, status in statuses.items():
        base, bracket, _ = test_id.partition("[")
        if bracket and test_id.endswith("]"):
            cases.setdefault(base, []).append(status)
    return {
        base: next((s for s in seen if s != "passed"), "passed") for base, seen in cases.items()
    }


def find_test(cited: str, statuses: Mapping[str, str]) -> str | None:
    """The recorded id a cited one names: itself, else the one id that ends
    with it after a ``::`` / `` › `` / ``#`` boundary (``test_mul`` for
    ``tests/test_calc.py::test_mul``)."""
    cited = cited.strip().strip("`")
    if cited in statuses:
        return cited
    ends = [
        i for i in statuses if i.endswith((f"::{cited}", f" › {cited}", f"#{cited}", f"/{cited}"))
    ]
    return ends[0] if len(ends) == 1 else None


#: Where a runner's test id splits into its parts: pytest's ``::``, jest's
#: and vitest's `` › ``, JUnit's ``#``, go's ``/``.
_ID_PARTS = re.compile(r"::| › | > |#|/|\.")


def closest_ids(cited: str, statuses: Mapping[str, str], most: int = 3) -> list[str]:
    """The recorded ids most like ``cited`` (at most ``most``, best first),
    each in the runner's own form: compared whole and by their last part, so
    ``should parse ms`` finds ``ms.test.ts › parse › should parse ms``."""
    from difflib import SequenceMatcher

    wanted = cited.strip().strip("`").lower()
    last = _ID_PARTS.split(wanted)[-1].strip()

    def likeness(test_id: str) -> float:
        lowered = test_id.lower()
        own_last = _ID_PARTS.split(lowered)[-1].strip()
        return max(
            SequenceMatcher(None, wanted, lowered).ratio(),
            SequenceMatcher(None, last, own_last).ratio() if last and own_last else 0.0,
        )

    scored = sorted(((likeness(i), i) for i in statuses), key=lambda pair: (-pair[0], pair[1]))
    return [f"`{test_id}`" for score, test_id in scored[:most] if score >= 0.6]


def _entries(value: Sequence[CriterionTests | Mapping[str, Any]] | None) -> list[CriterionTests]:
    return [
        e if isinstance(e, CriterionTests) else CriterionTests.model_validate(e)
        for e in value or []
    ]


def criterion_ids(criteria: Sequence[str]) -> list[str]:
    """The id of each criterion, in the plan's order: ``C1`` … ``Cn``."""
    return [f"C{number}" for number in range(1, len(criteria) + 1)]


def numbered_criteria(criteria: Sequence[str]) -> str:
    """The criteria as the handoff writer is shown them, one ``Cn: text`` line each."""
    return "\n".join(f"{cid}: {text}" for cid, text in zip(criterion_ids(criteria), criteria))


def normalised(text: str) -> str:
    """A criterion's text without markup: no backticks or emphasis
    asterisks, whitespace collapsed, no trailing period."""
    return " ".join(re.sub(r"[`*]", "", text).split()).rstrip(".").rstrip()


def criterion_index(name: str, criteria: Sequence[str]) -> int | None:
    """The index of the criterion ``name`` names: its id (``C2``, any case),
    else the one criterion whose :func:`normalised` text equals it."""
    name = name.strip()
    ids = [cid.lower() for cid in criterion_ids(criteria)]
    if name.lower() in ids:
        return ids.index(name.lower())
    key = normalised(name)
    same = [at for at, text in enumerate(criteria) if key and normalised(text) == key]
    return same[0] if len(same) == 1 else None


def _cited_per_criterion(criteria: Sequence[str], entries: list[CriterionTests]) -> list[list[str]]:
    """The tests the entries cite for each criterion (entries naming the same one are joined)."""
    cited: list[list[str]] = [[] for _ in criteria]
    for entry in entries:
        at = criterion_index(entry.criterion, criteria)
        if at is not None:
            cited[at] += [t for t in entry.tests if t not in cited[at]]
    return cited


def criteria_rows(
    criteria: list[str], entries: Sequence[Any] | None, gate: GateResult | None
) -> list[str]:
    """One line per plan criterion (no bullet: a template renders a list as
    bullets): its id and text, then the tests cited for it and how each ended
    in the final tests gate, or :data:`NO_TEST_CITED`."""
    statuses = statuses_seen(gate)
    rows = []
    for cid, criterion, tests in zip(
        criterion_ids(criteria), criteria, _cited_per_criterion(criteria, _entries(entries))
    ):
        if not tests:
            rows.append(f"{cid}: {criterion} — {NO_TEST_CITED}")
            continue
        cited = []
        for test_id in tests:
            found = find_test(test_id, statuses)
            cited.append(f"`{found or test_id}`: {statuses[found] if found else 'DID NOT RUN'}")
        rows.append(f"{cid}: {criterion} — " + "; ".join(cited))
    return rows


def render_criteria(
    criteria: list[str], entries: Sequence[Any] | None, gate: GateResult | None
) -> str:
    """The Evidence part: :data:`HEADING` and :func:`criteria_rows` (empty
    when the plan has no Acceptance criteria)."""
    if not criteria:
        return ""
    return "\n".join([HEADING, "", *(f"- {row}" for row in criteria_rows(criteria, entries, gate))])


def criteria_problems(
    criteria: list[str], entries: Sequence[Any] | None, gate: GateResult | None
) -> list[str]:
    """What the handoff check reports about the criteria map (one line each)."""
    statuses = statuses_seen(gate)
    parsed = _entries(entries)
    problems = []
    for cid, criterion, tests in zip(
        criterion_ids(criteria), criteria, _cited_per_criterion(criteria, parsed)
    ):
        for test_id in tests:
            found = find_test(test_id, statuses)
            if found is None:
                close = closest_ids(test_id, statuses)
                hint = f"; the closest ids that ran: {', '.join(close)}" if close else ""
                problems.append(
                    f"acceptance criterion {cid} ({criterion!r}) cites test {test_id!r}, which did "
                    f"not run in the final tests gate{hint}"
                )
            elif statuses[found] != "passed":
                problems.append(
                    f"acceptance criterion {cid} ({criterion!r}) cites test {found!r}, which did "
                    f"not pass in the final tests gate ({statuses[found]})"
                )
    for entry in parsed:
        if criterion_index(entry.criterion, criteria) is None:
            problems.append(
                f"acceptance_criteria names {entry.criterion!r}, which is not one of the plan's "
                f"Acceptance criteria (cite them by id: {', '.join(criterion_ids(criteria)) or 'none'})"
            )
    return problems


_CITED = re.compile(r"`(?P<id>[^`]+)`: (?P<status>[^;]+)")


def rendered_criteria_problems(evidence: str) -> list[str]:
    """:func:`criteria_problems` read back from the part stepkit rendered into
    a handoff's Evidence (for a handoff checked outside its run, when the
    records are not at hand; the Evidence's digest vouches for the part)."""
    lines = evidence.splitlines()
    if HEADING not in lines:
        return []
    problems = []
    for line in lines[lines.index(HEADING) + 1 :]:
        if not line.strip():
            continue
        if not line.startswith("- "):
            break
        row, _, rest = line[2:].rpartition(" — ")
        cid, _, criterion = row.partition(": ")
        for cited in _CITED.finditer(rest):
            status = cited["status"].strip()
            if status == "DID NOT RUN":
                problems.append(
                    f"acceptance criterion {cid} ({criterion!r}) cites test {cited['id']!r}, which "
                    "did not run in the final tests gate"
                )
            elif status != "passed":
                problems.append(
                    f"acceptance criterion {cid} ({criterion!r}) cites test {cited['id']!r}, which "
                    f"did not pass in the final tests gate ({status})"
                )
    return problems


def final_tests_gate(gates: Sequence[GateResult | Mapping[str, Any]]) -> GateResult | None:
    """The tests gate among the recorded gates (None: it never ran)."""
    for gate in gates:
        result = gate if isinstance(gate, GateResult) else GateResult.model_validate(gate)
        if result.name == "tests":
            return result
    return None
