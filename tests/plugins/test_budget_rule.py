"""The one run-budget rule (plugins/llm/budget.py), driven through the four
paths that start a call that may spend: the Messages API engine (real SDK,
loopback API), a CLI engine (``--engine claude``, a stand-in CLI), the
command coder (a real script) and a coding-CLI preset (``--coder claude``,
the same stand-in).  They agree at the boundary: past a limit nothing
starts; exactly at it, what certainly spends (a model request, a coding
CLI) is refused and a command, which may call no model, still runs; under
it everything runs."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from pydantic import BaseModel

from stepkit.plugins.coders.command import stepkit_implement
from stepkit.plugins.llm.budget import cost_left
from stepkit.plugins.llm.engine import make_engine
from stepkit.records import StageFault, Usage
from tests.support import coder, fake_cli

pytest_plugins = ["tests.support.messages_api"]


class Answer(BaseModel):
    plan_summary: str


GOOD = {"plan_summary": "adds slugify"}
COST_LIMIT, TOKEN_LIMIT = 1.0, 100_000
#: limit -> (its setting, the usage of a run that has spent ``amount`` of it)
LIMITS = {
    "cost": ({"max_cost_usd": COST_LIMIT}, lambda amount: Usage(cost_usd=amount)),
    "tokens": ({"max_tokens": TOKEN_LIMIT}, lambda amount: Usage(input_tokens=int(amount))),
}
#: where the run stands against the limit -> spent as a share of it
SPENT = {"under": 0.1, "at": 1.0, "over": 1.0001}


def ask(ctx) -> None:
    make_engine(None, ctx).structured(
        node="orient",
        system="You orient.",
        prefix="# Step 1",
        prompt="Orient now.",
        schema=Answer,
        tools=None,
        ctx=ctx,
    )


def anthropic_engine(tmp_path: Path, settings: dict, spent: Usage, messages_api) -> bool:
    messages_api.reply_json(GOOD, usage={"input_tokens": 10, "output_tokens": 5})
    ctx = fake_cli.stage_context(tmp_path, "anthropic", {"llm_max_retries": 0, **settings}, spent)
    ask(ctx)
    return bool(messages_api.requests)


def claude_cli_engine(tmp_path: Path, settings: dict, spent: Usage, messages_api) -> bool:
    state = stand_in_claude(tmp_path)
    result = fake_cli.recorded("claude_success.json")[0]
    fake_cli.script(
        state, {"lines": [{**result, "structured_output": GOOD, "result": json.dumps(GOOD)}]}
    )
    ask(fake_cli.stage_context(tmp_path, "claude", settings, spent))
    return bool(fake_cli.calls(state))


def command_coder(tmp_path: Path, settings: dict, spent: Usage, messages_api) -> bool:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    marker = project / "started"
    script = project / "coder.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\necho CODER_COMPLETE\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    ctx = coder.make_ctx(project, coder="command:./coder.sh", settings=settings)
    ctx.usage = spent
    stepkit_implement(ctx)
    return marker.exists()


def claude_preset_coder(tmp_path: Path, settings: dict, spent: Usage, messages_api) -> bool:
    state = stand_in_claude(tmp_path)
    fake_cli.script(
        state,
        {
            "lines": [
                {
                    "type": "result",
                    "subtype": "success",
                    "is_error": False,
                    "result": "done\nCODER_COMPLETE",
                    "total_cost_usd": 0.0,
                }
            ]
        },
    )
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    ctx = coder.make_ctx(project, coder="claude", settings=settings)
    ctx.usage = spent
    stepkit_implement(ctx)
    return bool(fake_cli.calls(state))


def stand_in_claude(tmp_path: Path) -> Path:
    state = tmp_path / "claude-state"
    fake_cli.install(tmp_path / "bin", "claude", state)
    return state


PATHS = {
    "anthropic engine": anthropic_engine,
    "claude CLI engine": claude_cli_engine,
    "claude preset coder": claude_preset_coder,
    "command coder": command_coder,
}
#: what each path does at the limit: only a command may run when nothing is left
RUNS_AT_THE_LIMIT = {"command coder"}


@pytest.fixture
def on_path(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", fake_cli.path_with(tmp_path / "bin"))


@pytest.mark.parametrize("standing", list(SPENT))
@pytest.mark.parametrize("limit", list(LIMITS))
@pytest.mark.parametrize("path", list(PATHS))
def test_every_path_applies_the_one_budget_rule(
    tmp_path, on_path, messages_api, path, limit, standing
):
    settings, usage = LIMITS[limit]
    amount = SPENT[standing] * (COST_LIMIT if limit == "cost" else TOKEN_LIMIT)
    expected = standing == "under" or (standing == "at" and path in RUNS_AT_THE_LIMIT)
    if expected:
        assert PATHS[path](tmp_path, settings, usage(amount), messages_api)
        return
    with pytest.raises(StageFault, match="budget exceeded: the run has "):
        PATHS[path](tmp_path, settings, usage(amount), messages_api)
    assert not (
        messages_api.requests
        or fake_cli.calls(tmp_path / "claude-state")
        or (tmp_path / "project" / "started").exists()
    )


def test_a_request_whose_estimate_passes_what_is_left_is_not_sent(tmp_path, messages_api):
    """The estimate counts: one token under the limit, a request of more than one token is refused."""
    spent = Usage(input_tokens=TOKEN_LIMIT - 1)
    with pytest.raises(
        StageFault,
        match=r"used 99999 tokens of max_tokens=100000 and the next request "
        r"\(~\d+ input tokens\) would pass it \(raise it with --set max_tokens=…\); "
        r"the request was not sent",
    ):
        anthropic_engine(tmp_path, {"max_tokens": TOKEN_LIMIT}, spent, messages_api)
    assert messages_api.requests == []


@pytest.mark.parametrize("spent, left", [(0.25, 0.75), (1.0, 0.0), (1.5, 0.0)])
def test_what_is_left_for_a_cli_of_its_own_cap_never_goes_below_zero(spent, left):
    assert cost_left({"max_cost_usd": COST_LIMIT}, Usage(cost_usd=spent)) == left
    assert cost_left({}, Usage(cost_usd=spent)) is None
