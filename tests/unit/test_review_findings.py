"""A review's findings cross the hook border typed: the review stage keeps a
plugin's :class:`~stepkit.records.Finding` list as it came, and route_review
reads their severities, never the report's text; a plugin that gives only
text has its 🔴 lines read once, where its answer comes in."""

from __future__ import annotations

from pathlib import Path

import pluggy

from stepkit.hookspecs import hookimpl
from stepkit.pluginmanager import get_plugin_manager
from stepkit.protocol.nodes.routes import route_review
from stepkit.protocol.stages import run_stage
from stepkit.records import Finding, ReviewResult, report_of
from tests.support.coder import make_ctx

CRITICAL = Finding(severity="critical", file="calc.py", criterion="C1", text="mul adds")


class Reviewer:
    def __init__(self, result: ReviewResult) -> None:
        self.result = result

    @hookimpl(tryfirst=True)
    def stepkit_review(self, ctx):
        return self.result


def reviewed(tmp_path: Path, result: ReviewResult) -> dict:
    """The state after the review stage ran with a plugin answering ``result``."""
    pm: pluggy.PluginManager = get_plugin_manager()
    pm.register(Reviewer(result))
    ctx = make_ctx(tmp_path, pm=pm, state={"review_attempts": 0, "max_review_attempts": 1})
    ctx.node = "review"
    return {**ctx.state, **run_stage("review", ctx).updates}


def test_typed_findings_are_routed_by_their_severity_not_by_the_reports_text(tmp_path):
    # the report's text names no critical finding: only the type says it
    state = reviewed(tmp_path, ReviewResult(review_report="all fine", findings=[CRITICAL]))
    outcome = route_review(make_ctx(tmp_path, state=state))
    assert outcome.route == "🔴 critical findings"
    assert "🔴 critical: calc.py (C1): mul adds" in outcome.updates["fix_instructions"]
    # and a report whose text has a 🔴 line routes nowhere when its findings say otherwise
    minor = Finding(severity="minor", text="naming")
    state = reviewed(tmp_path, ReviewResult(review_report="🔴 not a finding", findings=[minor]))
    assert route_review(make_ctx(tmp_path, state=state)).route == "else"


def test_a_text_only_review_has_its_red_lines_read_once_at_the_border(tmp_path):
    state = reviewed(tmp_path, ReviewResult(review_report="1. 🔴 calc.py: mul adds\n🟡 nit"))
    assert state["review_findings"] == [
        {"severity": "critical", "text": "calc.py: mul adds", "file": "", "criterion": ""}
    ]


def test_the_report_is_the_findings_text():
    assert report_of([CRITICAL, Finding(severity="should_fix", text="naming")]) == (
        "🔴 critical: calc.py (C1): mul adds\n🟡 should fix: naming"
    )
    assert report_of([]) == "No findings."
