"""The answer schemas sent to models carry what the model reads (field
descriptions) and nothing written for developers (model docstrings,
pydantic's titles), over the loopback Messages and chat-completions APIs."""

from __future__ import annotations

import json

import pytest

from stepkit.plugins.llm.engine import make_engine
from stepkit.plugins.llm.strict_schema import lean_json_schema, strict_json_schema
from stepkit.plugins.stages.answers import ReviewAnswer
from tests.support import fake_cli

pytest_plugins = ["tests.support.messages_api", "tests.support.chat_api"]


def developer_text(schema) -> list[str]:
    """Every title, and every description that is a model's docstring."""
    found = []

    def walk(node):
        if isinstance(node, dict):
            if "title" in node and not isinstance(node["title"], dict):
                found.append(f"title {node['title']}")
            if "properties" in node and "description" in node:
                found.append(f"docstring {node['description'][:30]}")
            for key, value in node.items():
                if key in ("properties", "$defs"):
                    for sub in value.values():
                        walk(sub)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(schema)
    return found


def test_lean_schemas_keep_field_descriptions_and_fields_named_title():
    from pydantic import BaseModel, Field

    class Note(BaseModel):
        """A docstring for developers."""

        title: str = Field(description="the note's title")

    lean = lean_json_schema(Note)
    assert lean == {
        "properties": {"title": {"description": "the note's title", "type": "string"}},
        "required": ["title"],
        "type": "object",
    }
    assert developer_text(strict_json_schema(ReviewAnswer)) == []
    assert "every finding" in json.dumps(strict_json_schema(ReviewAnswer))
    assert len(json.dumps(lean_json_schema(ReviewAnswer))) < 0.8 * len(
        json.dumps(ReviewAnswer.model_json_schema())
    )


def ask(tmp_path, spec):
    ctx = fake_cli.stage_context(tmp_path, spec, {"llm_max_retries": 0})
    return make_engine(spec, ctx).structured(
        node="independent_review",
        system="Review.",
        prefix="# Step 1",
        prompt="Review now.",
        schema=ReviewAnswer,
        tools=None,
        ctx=ctx,
    )


def test_the_anthropic_engine_sends_a_lean_schema(tmp_path, messages_api):
    messages_api.reply_json({"findings": []})
    ask(tmp_path, "anthropic")
    schema = messages_api.requests[0].body["output_config"]["format"]["schema"]
    assert developer_text(schema) == [] and "every finding" in json.dumps(schema)


def test_the_openai_engine_sends_a_lean_schema(tmp_path, chat_api):
    pytest.importorskip("openai")
    chat_api.reply_json({"findings": []})
    ask(tmp_path, "openai:llama3.2")
    schema = chat_api.requests[0]["response_format"]["json_schema"]["schema"]
    assert developer_text(schema) == [] and "every finding" in json.dumps(schema)
