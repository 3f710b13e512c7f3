"""The OpenAI-compatible engine (``--engine openai:MODEL``): any server that
speaks the chat-completions API (OpenAI, OpenRouter, a local Ollama, vLLM
or llama.cpp server) through the official ``openai`` SDK, an optional extra
(``pip install 'stepkit[openai]'``) imported only when this engine is used.

Where it talks to: ``base_url`` of the project's ``[engines.openai]`` table,
else ``OPENAI_BASE_URL``, else OpenAI.  The key: the variable named by
``api_key_env`` there (default ``OPENAI_API_KEY``); a server named by a base
URL that needs none (Ollama, llama.cpp) gets a placeholder.  The model:
``--set model_<node>=``, ``[models] <node>``, the spec's ``MODEL``,
``[engines.openai] model``, ``[models] default``; there is no default model.

- **Structured output**: ``response_format`` with the answer's strict JSON
  schema (:mod:`stepkit.plugins.llm.strict_schema`), the reply validated by
  the pydantic schema; an invalid or cut-off reply is sent back once.
- **Tools**: the stage's tools as functions, run only after a reply that
  finished with ``tool_calls``; arguments that are not a JSON object come
  back to the model as a tool error.
- **Retries** are the SDK's (``llm_max_retries``, default 4; Retry-After
  honoured), with ``llm_timeout_s`` per request (default 600).
- **Threads**: :meth:`OpenAIEngine.new_thread` gives a conversation that
  later calls continue (the built-in coder's rounds of a step): the first
  call sends the system message and the prefix, later calls add their
  prompt after the earlier turns.
- **Usage**: ``prompt_tokens`` (cached ones as cache reads) and
  ``completion_tokens`` per call, one ``llm_call`` event each; the cost is
  estimated from the token counts (:mod:`stepkit.plugins.llm.pricing`), so
  ``max_cost_usd`` and ``max_tokens`` apply.
"""

from __future__ import annotations

import importlib.util
import json
import os
import time
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from stepkit.errors import UsageError
from stepkit.plugins.llm import budget
from stepkit.plugins.llm.helpers import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT_S,
    Thread,
    correction,
    fault_note,
    node_model,
    parse_answer,
    record,
    setting,
)
from stepkit.plugins.llm.pricing import estimate_cost
from stepkit.plugins.llm.strict_schema import strict_json_schema
from stepkit.plugins.llm.tools import Tool
from stepkit.records import StageContext, StageFault, Usage
from stepkit.workspace.redact import redact

M = TypeVar("M", bound=BaseModel)
#: The key a server that needs none is sent (the SDK insists on one).
NO_KEY = "not-needed"


class OpenAIEngine:
    """Structured answers from a chat-completions server, with a bounded tool loop."""

    def __init__(self, model: str | None, project_dir: Path):
        """:raises UsageError: no model is named anywhere (spec, ``[engines.openai]``, ``[models]``)."""
        from stepkit.config import load_config

        config = load_config(project_dir)
        self.table: dict[str, Any] = (getattr(config, "engines", None) or {}).get("openai") or {}
        self.model = model or self.table.get("model")
        if not (self.model or config.models):
            raise UsageError("--engine openai:MODEL needs a model (or [engines.openai] model)")
        self.base_url = self.table.get("base_url") or os.environ.get("OPENAI_BASE_URL") or None
        self.key_env = str(self.table.get("api_key_env") or "OPENAI_API_KEY")
        self.client: Any = None  # the SDK client, built at the first call

    def setup_problem(self) -> str | None:
        """Why no call could be made: the SDK is not installed (found, not
        imported: importing it takes longer than the run's start), or no key
        for OpenAI itself."""
        if importlib.util.find_spec("openai") is None:
            return "--engine openai needs the OpenAI SDK: pip install 'stepkit[openai]'"
        if self._api_key() is None:
            return (
                f"--engine openai: no API key: set {self.key_env}, or point OPENAI_BASE_URL "
                "(or [engines.openai] base_url) at a server that needs none"
            )
        return None

    def _api_key(self) -> str | None:
        return os.environ.get(self.key_env) or (NO_KEY if self.base_url else None)

    def structured(
        self,
        *,
        node: str,
        system: str,
        prompt: str,
        schema: type[M],
        tools: list[Tool] | None,
        ctx: StageContext,
        max_turns: int = 20,
        prefix: str | None = None,
        thread: Thread | None = None,
    ) -> M:
        """See :meth:`stepkit.plugins.llm.engine.Engine.structured`.

        :param thread: continue this conversation (from :meth:`new_thread`):
            its turns come first and this call's are added to it; ``system``
            and ``prefix`` are sent only by the call that opens it."""
        model = node_model(node, ctx, self.model)
        if not model:
            raise StageFault(
                fault_note(
                    node,
                    "openai",
                    None,
                    "no model: use --engine openai:MODEL or set [engines.openai] model",
                )
            )
        if self.client is None:
            self.client = self._new_client(ctx, node, model)
        chat = _Chat(self.client, node, model, schema, tools or [], ctx)
        if thread is not None and thread.messages:
            chat.messages = thread.messages  # the thread grows with this call's turns
            chat.messages.append({"role": "user", "content": redact(prompt)})
        else:
            user = f"{prefix}\n\n{prompt}" if prefix else prompt
            chat.messages = [
                {"role": "system", "content": redact(system)},
                {"role": "user", "content": redact(user)},
            ]
            if thread is not None:
                thread.messages[:] = chat.messages
                chat.messages = thread.messages
        return chat.run(max_turns)

    def new_thread(self) -> Thread:
        """A new conversation for :meth:`structured` calls to continue."""
        return Thread()

    def _new_client(self, ctx: StageContext, node: str, model: str) -> Any:
        if (problem := self.setup_problem()) is not None:
            raise StageFault(fault_note(node, "openai", model, problem))
        import openai

        return openai.OpenAI(
            api_key=self._api_key(),
            base_url=self.base_url,
            max_retries=setting(ctx.settings, "llm_max_retries", int, DEFAULT_MAX_RETRIES),
            timeout=setting(ctx.settings, "llm_timeout_s", float, DEFAULT_TIMEOUT_S),
        )


class _Chat:
    """One structured call: the message history and its tool loop."""

    def __init__(
        self,
        client: Any,
        node: str,
        model: str,
        schema: type[M],
        tools: list[Tool],
        ctx: StageContext,
    ):
        self.client, self.node, self.model, self.schema, self.ctx = client, node, model, schema, ctx
        self.tools = {tool.name: tool for tool in tools}
        self.messages: list[dict[str, Any]] = []
        self.calls = 0

    def note(self, what: str) -> str:
        return fault_note(self.node, "openai", self.model, what)

    def run(self, max_turns: int) -> Any:
        corrected = False
        for _ in range(max_turns):
            choice = self._send()
            message = choice.message
            calls = message.tool_calls or []
            self.messages.append(_assistant(message))
            if calls and choice.finish_reason in ("tool_calls", "stop"):
                self.messages.extend(self._answer(call) for call in calls)
                continue
            if getattr(message, "refusal", None):
                raise StageFault(self.note(f"the model refused: {message.refusal}"))
            answer, problem = parse_answer(
                message.content or "",
                self.schema,
                cut_at="the output limit" if choice.finish_reason == "length" else None,
            )
            if answer is not None:
                return answer
            if corrected:
                raise StageFault(self.note(f"the answer was invalid twice: {problem}"))
            corrected = True
            self.messages.append({"role": "user", "content": correction(problem, self.schema)})
        raise StageFault(self.note(f"no answer after {max_turns} model turns (tool loop bound)"))

    def _send(self) -> Any:
        import openai

        budget.check(
            self.ctx.settings, self.ctx.usage, refused="the request was not sent", note=self.note
        )
        params: dict[str, Any] = {
            "model": self.model,
            "messages": self.messages,
            "response_format": {
                "type": "json_schema",
                "json_schema": {
                    "name": self.schema.__name__,
                    "schema": strict_json_schema(self.schema),
                    "strict": True,
                },
            },
        }
        if self.tools:
            params["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.input_schema,
                    },
                }
                for t in self.tools.values()
            ]
        started = time.monotonic()
        try:
            response = self.client.chat.completions.create(**params)
        except openai.APIStatusError as exc:
            raise StageFault(
                self.note(f"the API call failed: HTTP {exc.status_code} ({_api_message(exc)})")
            ) from None
        except openai.APITimeoutError:
            raise StageFault(self.note("the API call timed out")) from None
        except openai.APIConnectionError as exc:
            raise StageFault(self.note(f"cannot reach {self.client.base_url}: {exc}")) from None
        except openai.OpenAIError as exc:
            raise StageFault(self.note(f"{type(exc).__name__}: {exc}")) from None
        if not response.choices:
            raise StageFault(self.note("the server answered with no choices"))
        choice = response.choices[0]
        self._record(response.usage, choice.finish_reason, time.monotonic() - started)
        return choice

    def _answer(self, call: Any) -> dict[str, Any]:
        """The tool message answering one tool call."""
        tool = self.tools.get(call.function.name)
        try:
            args = json.loads(call.function.arguments or "{}")
        except ValueError:
            args = None
        if tool is None:
            text = f"error: no tool named {call.function.name!r}"
        elif not isinstance(args, dict):
            text = "error: the arguments are not a JSON object; send the call again"
        else:
            text, is_error = tool.call(args)  # clipped and redacted by the tool
            self.ctx.emit(
                "llm_tool", node=self.node, tool=tool.name, is_error=is_error, chars=len(text)
            )
        return {"role": "tool", "tool_call_id": call.id, "content": text}

    def _record(self, u: Any, finish_reason: str | None, duration: float) -> None:
        prompt = getattr(u, "prompt_tokens", 0) or 0
        details = getattr(u, "prompt_tokens_details", None)
        cached = getattr(details, "cached_tokens", 0) or 0
        usage = Usage(
            input_tokens=max(prompt - cached, 0),
            cache_read_tokens=cached,
            output_tokens=getattr(u, "completion_tokens", 0) or 0,
        )
        usage.cost_usd = estimate_cost(self.model, usage)
        self.calls += 1
        record(
            self.ctx,
            usage,
            node=self.node,
            engine="openai",
            model=self.model,
            call=self.calls,
            stop_reason=finish_reason,
            duration_s=round(duration, 3),
        )


def _assistant(message: Any) -> dict[str, Any]:
    """The assistant message as the history sends it back."""
    entry: dict[str, Any] = {"role": "assistant", "content": message.content}
    if message.tool_calls:
        entry["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.function.name, "arguments": c.function.arguments},
            }
            for c in message.tool_calls
        ]
    return entry


def _api_message(exc: Any) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error", body) if isinstance(body.get("error", body), dict) else {}
    return redact(str(error.get("message") or exc.message))
