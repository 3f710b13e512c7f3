"""The edge-coverage check (tests/support/edge_coverage.py) in real pytest
sessions: the edges recorded by tests spread over two xdist workers (the
default distribution) are merged, and an edge no test took fails the
session, named, with or without workers, unless the marked module did not
run whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.edge_coverage import graph_edges

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]

CONFTEST = """
from tests.support.edge_coverage import EdgeCoverage


def pytest_configure(config):
    config.addinivalue_line("markers", "covers_every_edge: the edges of the step-runner graph")
    config.pluginmanager.register(EdgeCoverage(), "edge-coverage")
"""

#: one test per edge, each recording its edge as a run that took it would
ROUTES = """
import pytest

from tests.support import edge_coverage

pytestmark = pytest.mark.covers_every_edge


@pytest.mark.parametrize("edge", {edges!r})
def test_a_route(edge):
    edge_coverage.record({{(*edge, "label")}})
"""


@pytest.fixture
def session(pytester, monkeypatch):
    """Runs a session over a routes module whose tests take ``edges``."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    pytester.makeconftest(CONFTEST)

    def run(edges: list[tuple[str, str]], *args: str, workers: int = 2):
        pytester.makepyfile(test_routes=ROUTES.format(edges=edges))
        return pytester.runpytest_subprocess("-p", "xdist", "-n", str(workers), *args)

    return run


def test_edges_taken_on_different_workers_are_merged(session):
    result = session(sorted(graph_edges()))
    result.assert_outcomes(passed=len(graph_edges()))
    assert result.ret == 0
    assert "edge coverage" not in result.stdout.str()


@pytest.mark.parametrize("workers", [2, 0])  # 0: one process, no xdist worker
def test_an_edge_no_test_took_fails_the_session_and_is_named(session, workers):
    untaken, *taken = sorted(graph_edges())
    result = session(taken, workers=workers)
    result.assert_outcomes(passed=len(taken))
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert f'traversed: [["{untaken[0]}", "{untaken[1]}"]]' in result.stdout.str()


def test_a_module_that_did_not_run_whole_is_not_judged(session):
    taken = sorted(graph_edges())[1:]
    result = session(taken, "-k", "not edge0")  # one test of the module left out
    result.assert_outcomes(passed=len(taken) - 1)
    assert result.ret == 0
