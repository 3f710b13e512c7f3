"""Validation of the plan repo: per-file field checks and cross-step checks.

Every check returns problems as text; nothing here raises on bad input.  The
field checks return the value to use together with the reason it was bad, so
a step with one bad field still shows up with everything else it declares.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

STATUSES = ("pending", "in-progress", "complete")
#: A handoff's ``result``, exactly (lower case): the one rule ``status``,
#: dependency checks and ``check-handoff`` share.
HANDOFF_RESULTS = ("complete", "partial", "blocked")


class NumberedStep(Protocol):
    """What the cross-step checks read of a step plan
    (:class:`~stepkit.planrepo.model.StepPlan` has it)."""

    @property
    def number(self) -> int: ...

    @property
    def path(self) -> Path: ...

    @property
    def depends_on(self) -> list[int]: ...


def check_status(value: Any) -> tuple[str, str | None]:
    """The status to show and, when it is not one of :data:`STATUSES`, why.

    A missing status means pending; case and surrounding spaces are ignored.
    """
    if value is None:
        return "pending", None
    status = str(value).strip().lower() if isinstance(value, str) else str(value)
    if status in STATUSES:
        return status, None
    return status, f"unknown status {status!r} (expected pending, in-progress or complete)"


def shown(text: str) -> str:
    """``text`` as one printable line (:func:`stepkit.text.one_line`);
    printable text is only re-spaced, without importing the records."""
    if text.isprintable():
        return " ".join(text.split())
    from stepkit.text import one_line

    return one_line(text)


def check_result(value: Any) -> tuple[str | None, str | None]:
    """A handoff's ``result`` as shown (None when absent) and, when it is not
    exactly one of :data:`HANDOFF_RESULTS`, why.  ``Complete`` is not
    ``complete``: a result that is not exact counts as no result anywhere."""
    if value is None:
        return None, None
    text = str(value)
    if text in HANDOFF_RESULTS:
        return text, None
    as_shown = shown(text)
    if as_shown in HANDOFF_RESULTS:  # it only looks valid once its control bytes are gone
        as_shown = shown(repr(text))
    return (
        as_shown,
        f"result {text!r} is not one of complete, partial or blocked (exact, lower case)",
    )


def check_depends_on(value: Any) -> tuple[list[int], str | None]:
    """``depends_on`` as a list of step numbers (a single number is accepted).

    Returns the numbers it could read (duplicates dropped, order kept) and a
    reason when some entry is not a step number.
    """
    if value is None:
        return [], None
    items = value if isinstance(value, list) else [value]
    numbers: list[int] = []
    bad: list[str] = []
    for item in items:
        number = _step_number(item)
        if number is None:
            bad.append(repr(item))
        elif number not in numbers:
            numbers.append(number)
    if bad:
        return numbers, f"depends_on must list step numbers; cannot use {', '.join(bad)}"
    return numbers, None


def check_step_key(value: Any, number: int) -> str | None:
    """A ``step:`` key in the frontmatter must agree with the file name."""
    if value is None or _step_number(value) == number:
        return None
    return f"frontmatter step {value!r} does not match the file name (step {number}): make its step: match"


def _step_number(value: Any) -> int | None:
    """A step number written as a non-negative int or a string of ASCII digits, else None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if value >= 0 else None
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        return int(value)
    return None


def graph_problems(steps: Sequence[NumberedStep], unreadable: set[int]) -> list[str]:
    """Cross-step problems: duplicate numbers, self-dependencies, dependencies
    on missing steps and dependency cycles (each cycle named, e.g.
    ``dependency cycle: 2 -> 5 -> 2``).

    ``unreadable`` holds the numbers of plan files that exist but could not
    be parsed; a dependency on one is not reported as missing (the file already
    has its own problem).
    """
    problems: list[str] = []
    first: dict[int, NumberedStep] = {}
    for step in steps:
        if step.number in first:
            problems.append(
                f"{step.path}: duplicate step number {step.number} (also {first[step.number].path}); "
                "renumber one: its file name and step:"
            )
        else:
            first[step.number] = step
    graph: dict[int, list[int]] = {number: [] for number in first}
    for step in steps:
        for dep in step.depends_on:
            if dep == step.number:
                problems.append(f"{step.path}: step {dep} depends on itself (edit its depends_on)")
            elif dep in first:
                graph[step.number].append(dep)
            elif dep not in unreadable:
                problems.append(
                    f"{step.path}: depends on step {dep}, which does not exist (edit its depends_on)"
                )
    for cycle in find_cycles(graph):
        chain = " -> ".join(str(n) for n in cycle)
        problems.append(f"{first[cycle[0]].path}: dependency cycle: {chain} (edit a depends_on)")
    return problems


def find_cycles(graph: dict[int, list[int]]) -> list[list[int]]:
    """One cycle per strongly connected component with more than one node.

    Each cycle starts and ends at the component's lowest step number and is a
    shortest way around.  Iterative Tarjan, so 10,000 steps in a chain do not
    hit the recursion limit; linear in steps plus dependencies.
    """
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    stack: list[int] = []
    on_stack: set[int] = set()
    cycles: list[list[int]] = []
    for root in sorted(graph):
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(graph[root]))]
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph[nxt])))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        cycles.append(_cycle_through_min(graph, set(component)))
    return sorted(cycles)


def _cycle_through_min(graph: dict[int, list[int]], component: set[int]) -> list[int]:
    """Breadth-first from the lowest node back to itself inside one component."""
    start = min(component)
    came_from: dict[int, int] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(graph[node]):
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if nxt in component and nxt not in came_from:
                came_from[nxt] = node
                queue.append(nxt)
    raise AssertionError("a strongly connected component always has a cycle")
