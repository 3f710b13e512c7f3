"""Every edge of the step-runner graph is traversed by the modules marked
``covers_every_edge`` (tests/e2e/test_e2e_routes.py): a check of the whole
session, safe under any xdist distribution.

Each process (an xdist worker, or the one process without xdist) keeps the
edges its end-to-end runs traversed (:func:`record`, called by
:meth:`tests.support.e2e.Project.record_edges`), keyed by the module of the
test that ran them, and whether it collected every test of a marked module
(a ``-k`` or ``-m`` that leaves some out makes the check moot: the edges the
left-out tests traverse are missing for want of running them).  A worker
hands both to the controller in ``workeroutput``; the controller merges
them as workers finish, and at the session's end fails the session, naming
the edges, when a marked module ran whole and some edge was never taken.
"""

from __future__ import annotations

import json
import os
from collections import Counter

import pytest

MARK = "covers_every_edge"
Edge = tuple[str, str, str]

#: (module, from, to, label) of every edge the runs of this process traversed
_TRAVERSED: set[tuple[str, str, str, str]] = set()


def record(edges: set[Edge]) -> None:
    """Keep ``edges`` (from, to, label), traversed by the test running now."""
    module = os.environ.get("PYTEST_CURRENT_TEST", "").split("::")[0]
    _TRAVERSED.update((module, a, b, label) for a, b, label in edges)


def graph_edges() -> set[tuple[str, str]]:
    """Every (from, to) edge of the step-runner graph."""
    from stepkit.protocol.graphs import load_protocol_graph

    graph = load_protocol_graph()
    return {(n.id, target) for n in graph.nodes.values() for target in n.targets()}


def _marked_modules(items) -> Counter[str]:
    """How many of ``items`` each module marked ``covers_every_edge`` holds."""
    return Counter(item.nodeid.split("::")[0] for item in items if item.get_closest_marker(MARK))


class EdgeCoverage:
    """The plugin: registered once per process by tests/conftest.py."""

    def __init__(self) -> None:
        self.collected: Counter[str] = Counter()  # marked module → its tests, before deselection
        self.whole: set[str] = set()  # the marked modules every test of which runs
        self.traversed: set[tuple[str, str, str, str]] = set()  # merged from the workers
        self.report: str | None = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items):
        self.collected = _marked_modules(items)

    def pytest_collection_finish(self, session):
        kept = _marked_modules(session.items)
        self.whole = {module for module, n in self.collected.items() if kept[module] == n}

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session):
        workeroutput = getattr(session.config, "workeroutput", None)
        if workeroutput is not None:  # an xdist worker: the controller judges
            workeroutput[MARK] = json.dumps(
                {"whole": sorted(self.whole), "traversed": sorted(_TRAVERSED)}
            )
            return
        self.traversed |= _TRAVERSED
        missing = self.missing()
        if missing:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
            self.report = (
                f"edges no end-to-end test of {', '.join(sorted(self.whole))} "
                f"traversed: {json.dumps(missing)}"
            )

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):
        """A worker finished: merge what it saw."""
        seen = json.loads(getattr(node, "workeroutput", {}).get(MARK, "{}"))
        self.whole |= set(seen.get("whole", []))
        self.traversed |= {tuple(edge) for edge in seen.get("traversed", [])}

    def missing(self) -> list[tuple[str, str]]:
        """The graph's edges no run of a whole marked module took."""
        if not self.whole:
            return []
        seen = {(a, b) for module, a, b, _ in self.traversed if module in self.whole}
        return sorted(graph_edges() - seen)

    def pytest_terminal_summary(self, terminalreporter):
        if self.report:
            terminalreporter.write_sep("=", "step-runner edge coverage", red=True)
            terminalreporter.write_line(self.report)
