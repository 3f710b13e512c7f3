"""Each LLM node gets the whole story, over the real Anthropic SDK against
the loopback Messages API: the handoff writer every coder round (its task,
its report, the files it changed) and the fix history; the reviewer orient's
brief and findings, NOTES.md and the gate decisions; each in a
``<document>``."""

from __future__ import annotations

import pytest

from tests.support.e2e import GOOD_MUL, HANDOFF, ORIENT, make_project
from tests.support.sdk_e2e import NO_SWEEP_ANNOTATIONS, nodes, run_sdk

pytest_plugins = ["tests.support.messages_api"]


def _request_text(api, node: str, index: int = 0) -> str:
    chosen = [r.body for r, name in zip(api.requests, nodes(api)) if name == node][index]
    return "\n".join(
        block.get("text", "")
        for message in chosen["messages"][:1]
        for block in message["content"]
        if isinstance(block, dict)
    )


@pytest.mark.slow
def test_the_writer_sees_every_round_and_the_reviewer_the_brief_notes_and_decisions(
    tmp_path, messages_api
):
    project = make_project(tmp_path)
    helpers = {f"helpers/h{i}.py": f"X = {i}\n" for i in range(4)}
    project.coder_actions(
        {
            "write": {"calc.py": GOOD_MUL, **helpers},
            "say": "round one: created mul and four helpers",
            "sentinel": "CODER_COMPLETE",
        },
        {
            "write": {"helpers/h0.py": "X = 0.0\n"},
            "say": "round two: h0 holds a float now",
            "sentinel": "CODER_COMPLETE",
        },
    )
    api = messages_api
    api.reply_json({**ORIENT, "staleness_report": "calc.py:1 add exists as the plan says"})
    api.reply_json(NO_SWEEP_ANNOTATIONS)
    api.reply_json({"review_report": "🔴 helpers/h0.py: X must be a float"})
    api.reply_json(NO_SWEEP_ANNOTATIONS)
    api.reply_json({"review_report": "No findings."})
    api.reply_json(HANDOFF)
    result = run_sdk(project, api, "--reviewer", "anthropic")
    assert result.code == 5, result.stderr + result.stdout
    assert nodes(api) == [
        "orient",
        "edge_case_sweep",
        "independent_review",
        "edge_case_sweep",
        "independent_review",
        "write_handoff",
    ]

    handoff = _request_text(api, "write_handoff")
    rounds = handoff.split('<document title="Coder rounds', 1)[1].split("</document>", 1)[0]
    assert "### Round 1\nTask: implement the step" in rounds
    assert "round one: created mul and four helpers" in rounds
    assert (
        "Files changed in this round: calc.py, helpers/h0.py, helpers/h1.py, helpers/h2.py, helpers/h3.py"
        in rounds
    )
    assert "### Round 2\nTask: Fix these critical review findings" in rounds
    assert "round two: h0 holds a float now" in rounds
    assert "Files changed in this round: helpers/h0.py\n" in rounds
    assert (
        '<document title="Fix loop">' in handoff
        and "review" in handoff.split('<document title="Fix loop">')[1]
    )

    review = _request_text(api, "independent_review")
    for title, content in (
        (
            "Implementation brief (what orient asked the coder to do)",
            ORIENT["implementation_brief"],
        ),
        (
            "Orient's findings (the plan checked against the code)",
            "calc.py:1 add exists as the plan says",
        ),
        ("NOTES.md (the project's recorded facts)", "calc is a tiny module."),
        ("Acceptance criteria", "`python check.py` passes."),
        ("Tamper flags raised by the harness (judge each)", "None"),
        ("Diff", "helpers/h3.py"),
    ):
        assert f'<document title="{title}">' in review, title
        assert (
            content in review.split(f'<document title="{title}">', 1)[1].split("</document>", 1)[0]
        ), title
    assert (
        "## Changed files" not in review and "## Gate results" not in review
    )  # no markdown heading frames it
