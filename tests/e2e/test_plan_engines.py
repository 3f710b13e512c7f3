"""``stepkit plan`` on the real SDKs: the ``stepkit`` process asks the
Anthropic SDK (or the OpenAI one) for the draft, and the SDK talks over
HTTP to a loopback server speaking the wire format
(:mod:`tests.support.messages_api`, :mod:`tests.support.chat_api`): the
planner's instructions, the spec and the draft's schema go out, the answer
becomes step files, and a draft with problems is asked for once more with
the problems named."""

from __future__ import annotations

import json

import pytest

from stepkit.plugins.stages.plan import PLAN_SYSTEM
from tests.e2e.test_plan_cli import DRAFT, SPEC, chain, spec_project, step, stepkit
from tests.support.messages_api import MessagesAPI


@pytest.fixture
def project(tmp_path):
    return spec_project(tmp_path)


def plan(project, engine: str, **env: str):
    return stepkit(project, "plan", "spec.md", "--engine", engine, **env)


def user_text(body: dict) -> str:
    return "\n".join(
        block["text"]
        for message in body["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "text"
    )


@pytest.mark.slow
def test_the_anthropic_sdk_drafts_the_plan(project):
    with MessagesAPI() as api:
        api.reply_json(DRAFT)
        done = plan(
            project, "anthropic", ANTHROPIC_BASE_URL=api.base_url, ANTHROPIC_API_KEY=api.api_key
        )
    assert done.returncode == 0, done.stderr
    assert [(n, deps) for n, _, deps, _ in chain(project)] == [(1, []), (2, [1]), (3, [1, 2])]
    [request] = api.requests
    assert request.body["system"][0]["text"] == PLAN_SYSTEM
    assert "Slugs for titles" in user_text(request.body)
    schema = request.body["output_config"]["format"]["schema"]
    assert set(schema["properties"]) == {"steps", "notes"}
    assert {tool["name"] for tool in request.body["tools"]} >= {"read_file", "list_dir"}


@pytest.mark.slow  # the default suite asks once more on the scripted engine and a local planner
def test_a_draft_with_problems_is_asked_for_again_with_them(project):
    later = {"steps": [step(1, "Add slugify", [2]), step(2, "Second", [])]}
    with MessagesAPI() as api:
        api.reply_json(later)
        api.reply_json(DRAFT)
        done = plan(
            project, "anthropic", ANTHROPIC_BASE_URL=api.base_url, ANTHROPIC_API_KEY=api.api_key
        )
    assert done.returncode == 0, done.stderr
    first, second = (r.body for r in api.requests)
    assert "Problems with your previous draft" not in user_text(first)
    assert (
        "step 1 (Add slugify): depends on step 2, which is not an earlier step of the draft"
        in user_text(second)
    )
    assert len(chain(project)) == 3


def test_an_openai_compatible_server_drafts_the_plan(project):
    pytest.importorskip("openai", reason="the OpenAI SDK is not installed")
    from tests.support.chat_api import ChatAPI

    with ChatAPI() as api:
        api.reply_json(DRAFT)
        done = plan(
            project,
            "openai:llama3.2",
            OPENAI_BASE_URL=api.base_url,
            OPENAI_API_KEY=api.api_key,
        )
    assert done.returncode == 0, done.stderr
    assert [title for _, title, *_ in chain(project)] == [s["title"] for s in DRAFT["steps"]]
    [request] = api.requests
    assert request["model"] == "llama3.2"
    answer_format = request["response_format"]["json_schema"]
    assert answer_format["strict"] is True
    steps = answer_format["schema"]["$defs"]["DraftStep"]
    assert steps["additionalProperties"] is False
    assert "acceptance_criteria" in steps["required"]
    assert json.dumps(SPEC)[1:40] in json.dumps(request["messages"])
