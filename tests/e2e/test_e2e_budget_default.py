"""Every run has a model budget: the default one when the user sets none,
said when the run starts with how to raise it, and reaching it ends the run
as STEP_FAILED naming the spend and the setting (the real CLI, the real SDK,
the loopback Messages API)."""

from __future__ import annotations

import re

import pytest

from stepkit.plugins.llm.budget import DEFAULT_MAX_COST_USD
from tests.support.e2e import ORIENT
from tests.support.sdk_e2e import nodes, run_sdk, sdk_env

# whole-step runs over many variants: outside the default suite (tests/conftest.py)
pytestmark = [pytest.mark.slow, pytest.mark.project(reviewer=False)]

pytest_plugins = ["tests.support.messages_api"]

#: one call past the default budget's dollars (input at $2 or more per million), under its tokens
EXPENSIVE = {"input_tokens": 6_000_000, "output_tokens": 10}


def test_a_run_with_no_budget_set_stops_at_the_default_one(project, messages_api):
    messages_api.reply_json(ORIENT, usage=EXPENSIVE)

    result = run_sdk(project, messages_api)

    assert result.code == 1 and result.outcome == "STEP_FAILED", result.stderr + result.stdout
    assert nodes(messages_api) == ["orient"]  # nothing was sent past the budget
    assert (
        f"of max_cost_usd={DEFAULT_MAX_COST_USD:g} (the default budget; raise it with "
        "--set max_cost_usd=…)" in result.output
    )
    assert re.search(
        r"budget exceeded: the run has spent \$12\.\d+ of max_cost_usd=10 ", result.output
    )


def test_the_budget_is_shown_when_the_run_starts(project, messages_api):
    messages_api.reply_json(ORIENT, usage=EXPENSIVE)
    result = project.stepkit(
        "run",
        "--project-dir",
        str(project.root),
        "--engine",
        "anthropic",
        "--coder",
        project.scripted_coder,
        env=sdk_env(project, messages_api),
        json_out=False,
    )
    first = result.stderr.splitlines()[0]
    assert first == (
        "Model budget for this step: $10 and 10,000,000 tokens (the default); "
        "raise it with --set max_cost_usd=… or --set max_tokens=…"
    )
    assert result.stdout.startswith("STEP_FAILED")


def test_a_budget_the_user_sets_replaces_the_default(project, messages_api):
    messages_api.reply_json(ORIENT, usage=EXPENSIVE)
    result = project.stepkit(
        "run",
        "--project-dir",
        str(project.root),
        "--engine",
        "anthropic",
        "--coder",
        project.scripted_coder,
        "--set",
        "max_cost_usd=50",
        env=sdk_env(project, messages_api),
        json_out=False,
    )
    assert result.stderr.splitlines()[0] == (
        "Model budget for this step: $50; raise it with --set max_cost_usd=… or --set max_tokens=…"
    )
    assert "max_cost_usd=10" not in result.stdout and "max_tokens=10000000" not in result.stdout
