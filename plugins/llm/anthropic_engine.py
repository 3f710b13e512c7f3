"""The Anthropic Messages API engine (``--engine anthropic[:MODEL]``).

Design choices:

- **Structured output** is requested with ``output_config.format`` (a JSON
  schema made strict by the SDK's ``transform_schema``), and the final text
  is validated by the pydantic schema.  A forced final "submit" tool was
  rejected: current models (Claude Sonnet 5.5) answer a forced
  ``tool_choice`` with HTTP 400, and forcing a tool would also stop the
  model from using the real tools first.  A reply that does not validate
  (or was cut at ``max_tokens``) is retried once with the error sent back.
- **One SDK client per engine**, built at its first call; the factory
  keeps one engine per run, so every node of a run shares its connections.
- **Retries** are owned here, in one loop, with the SDK's ``max_retries=0``:
  the SDK honours Retry-After but never caps it (a server could park a run
  for hours) and would hide the attempt count the fault note needs.  429,
  408, 409, 5xx (529 included), timeouts and connection errors are retried
  up to ``llm_max_retries`` times, waiting Retry-After (or exponential
  backoff) capped at ``llm_max_retry_wait_s``.
- **Tool calls** run only when the reply stopped with ``tool_use``; a call
  in a reply cut at ``max_tokens`` is answered "not executed" instead.
  Before each request the history is checked: every ``tool_use`` answered
  by exactly one ``tool_result``.  When the turns run out, the model is
  asked once more for its answer with ``tool_choice: none``; only if that
  fails too is it a fault.
- **Context budget**: before each request, when the history passes the
  model's budget (:func:`~stepkit.plugins.llm.pricing.context_budget_tokens`,
  or ``llm_context_budget_tokens``), the oldest tool results are replaced by
  a one-line note until it is at three quarters of it (in one go, so the
  cached prefix changes rarely); the last two turns are kept whole.
- **Prompt caching**, by the API's rules (tools → system → messages; at
  most 4 breakpoints; a prefix shorter than the model's minimum is not
  cached, so no breakpoint is spent on it): the stable ``prefix`` block is
  marked when tools + system + prefix reach the minimum, the last tool
  when the tool definitions alone do (they are shared by every node with
  the same tools); in a tool loop or a thread the request-level marker
  caches the growing history, and the end of the previous request is
  marked too, so a turn that adds more than 20 blocks still finds it.  A
  request whose reply cannot call a tool (tool_choice none, or every tool
  refused: ``Tool.refused``, sent only so that the node shares the others'
  prefix) is expected to be the call's last: it marks the previous
  request's end, to read it, and writes no tail.  A single request without
  tools caches nothing: nothing would read it.
- **Threads**: :meth:`AnthropicEngine.new_thread` gives a conversation that
  several calls continue (the built-in coder's plan, edit and fix rounds):
  each call appends its prompt to the same history, so later rounds see
  the earlier ones and read them from the cache.
- **Effort**: ``effort_<node>`` (low, medium, high, max; by default the
  ``effort`` of the node's stage in :data:`stepkit.protocol.stages.STAGES`) is sent as ``output_config.effort`` with adaptive
  thinking, for models that support it
  (:func:`~stepkit.plugins.llm.pricing.supports_effort`); a 400 that
  refuses them sends the call again without them (an ``llm_effort_dropped``
  event), so a wrong entry in that table never fails a node.
- **Usage and budget**: every call adds to ``ctx.usage`` (taken to be the
  run's usage so far) and emits an ``llm_call`` event; before each call the
  run budget (``max_cost_usd``, ``max_tokens``: all four token kinds) is
  checked against the usage so far plus the request's estimated input, by
  the rule of :mod:`stepkit.plugins.llm.budget`.

Settings read from ``ctx.settings`` (``--set``): ``model_<node>``,
``effort_<node>``, ``llm_max_retries`` (4), ``llm_max_retry_wait_s`` (60),
``llm_timeout_s`` (600), ``llm_max_output_tokens`` (16000),
``llm_context_budget_tokens``, ``max_cost_usd``, ``max_tokens``.
"""

from __future__ import annotations

import email.utils
import json
import os
import random
import time
from collections import Counter
from typing import Any, TypeVar

from pydantic import BaseModel

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
from stepkit.plugins.llm.pricing import (
    context_budget_tokens,
    estimate_cost,
    min_cacheable_tokens,
    supports_effort,
)
from stepkit.plugins.llm.strict_schema import lean_json_schema
from stepkit.plugins.llm.tools import Tool
from stepkit.records import StageContext, StageFault, Usage
from stepkit.tunables import EFFORTS
from stepkit.workspace.redact import redact

DEFAULT_MODEL = "claude-sonnet-5-5"
_EPHEMERAL = {"type": "ephemeral"}
_RETRY_STATUS = frozenset({408, 409, 429})
M = TypeVar("M", bound=BaseModel)
CHARS_PER_TOKEN = 4  # the estimate used for budgets and cache thresholds
LOOKBACK_BLOCKS = 20  # how far back the API looks for a cached prefix
TRIMMED = (
    "[tool result trimmed to keep the conversation within its context budget; "
    "call the tool again if you need it]"
)
FINAL_TURN = (
    "You have used all your turns for tools. Answer now, without tools, with the JSON "
    "object the schema asks for, from what you have found so far."
)


class AnthropicEngine:
    """Structured answers from the Messages API, with a bounded tool loop."""

    def __init__(self, model: str | None = None):
        self.model = model
        self.client: Any = None  # the SDK client, built at the first call

    def setup_problem(self) -> str | None:
        """Why no call could be made, said before any is: the SDK resolves no
        credentials (``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``, a
        profile, an ``Authorization`` header in ``ANTHROPIC_CUSTOM_HEADERS``).

        A key or a token in the environment is credentials as the SDK reads
        them: it is not imported to say so (over a second, before every run
        and resume with this engine); a call that finds them wrong says so."""
        if os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN"):
            return None
        import anthropic

        try:
            client = anthropic.Anthropic(max_retries=0)
        except anthropic.AnthropicError as exc:
            return f"--engine anthropic: cannot set up the Anthropic client: {redact(str(exc))}"
        headers = {k.lower() for k in client.default_headers}
        if getattr(client, "credentials", None) is not None or headers & {
            "x-api-key",
            "authorization",
        }:
            return None
        return (
            "--engine anthropic: no credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), "
            "or choose another --engine"
        )

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
            its history comes first and this call's turns are added to it;
            ``prefix`` is sent only by the call that opens it.  The calls
            of a thread should share ``system`` and ``tools`` (what the
            cached prefix is made of).
        """
        model = resolve_model(node, ctx, self.model)
        messages = thread.messages if thread is not None else []
        conversation = _Conversation(
            node, model, schema, tools or [], ctx, messages, keep_caching=thread is not None
        )
        if self.client is None:
            self.client = conversation.new_client()
        return conversation.run(self.client, system, prefix, prompt, max_turns)

    def new_thread(self) -> Thread:
        """A new conversation for :meth:`structured` calls to continue."""
        return Thread()


def resolve_effort(node: str, ctx: StageContext, model: str) -> str | None:
    """The effort for ``node``: ``--set effort_<node>=``, else
    the default of the stage the node runs; None when the model does not support it."""
    from stepkit.protocol.stages import stage_of

    stage = stage_of(ctx)
    effort = ctx.settings.get(f"effort_{node}") or (stage.effort if stage else None)
    if not effort or not supports_effort(model):
        return None
    if effort not in EFFORTS:
        raise StageFault(f"setting effort_{node}={effort!r} is not one of {', '.join(EFFORTS)}")
    return str(effort)


def resolve_model(node: str, ctx: StageContext, spec_model: str | None) -> str:
    """The model for ``node`` (:func:`~stepkit.plugins.llm.helpers.node_model`),
    :data:`DEFAULT_MODEL` when nothing names one."""
    return str(node_model(node, ctx, spec_model, DEFAULT_MODEL))


class _Conversation:
    """One structured call: the message history and its tool loop."""

    def __init__(
        self,
        node: str,
        model: str,
        schema: type[M],
        tools: list[Tool],
        ctx: StageContext,
        messages: list[dict[str, Any]],
        keep_caching: bool = False,
    ):
        self.node, self.model, self.schema, self.ctx = node, model, schema, ctx
        self.tools = {tool.name: tool for tool in tools}
        self.messages = messages
        self.thread = keep_caching
        # the stable prefix is marked where a later request may read it: this
        # call's own next turn, a thread's next call, or another node sending the
        # same tools, system and prefix (tools it may not use are sent refused)
        self.keep_caching = keep_caching or bool(tools)
        self.may_call = any(not tool.refused for tool in tools)
        self.calls = 0
        self.sent_blocks = 0  # blocks up to the end of the last request that cached its end
        self.prefix_marked = False
        self.final_asked = False

    def new_client(self) -> Any:
        """An SDK client without its own retries (:meth:`_send` retries)."""
        import anthropic

        try:
            return anthropic.Anthropic(max_retries=0)
        except anthropic.AnthropicError as exc:
            raise StageFault(self._note(f"cannot set up the Anthropic client: {exc}")) from None

    def run(self, client: Any, system: str, prefix: str | None, prompt: str, max_turns: int) -> Any:
        import anthropic

        params = self._params(system, anthropic.transform_schema(lean_json_schema(self.schema)))
        if self.messages:  # a thread goes on: this call's task comes after the earlier turns
            self.messages.append(
                {"role": "user", "content": [{"type": "text", "text": redact(prompt)}]}
            )
            self.sent_blocks = _blocks(self.messages[:-1])
        else:
            first: list[dict[str, Any]] = []
            if prefix:
                first.append({"type": "text", "text": redact(prefix)})
                stable = _tokens(params.get("tools"), params["system"], first)
                self.prefix_marked = self.keep_caching and stable >= min_cacheable_tokens(
                    self.model
                )
            first.append({"type": "text", "text": redact(prompt)})
            self.messages.append({"role": "user", "content": first})
        return self._loop(client, params, max_turns)

    def _loop(self, client: Any, params: dict[str, Any], max_turns: int) -> Any:
        corrected = False
        turn = 0
        while True:
            turn += 1
            final = turn > max_turns
            if final:
                self._ask_without_tools(params, max_turns)
            response = self._send(client, params)
            self.messages.append(
                {
                    "role": "assistant",
                    "content": [
                        block.to_dict(mode="json", exclude_none=True) for block in response.content
                    ],
                }
            )
            calls = [block for block in response.content if block.type == "tool_use"]
            if calls and not final:
                self.messages.append(
                    {
                        "role": "user",
                        "content": [self._answer(call, response.stop_reason) for call in calls],
                    }
                )
                continue
            if (calls or response.stop_reason == "pause_turn") and final:
                raise StageFault(
                    self._note(
                        f"no answer after {max_turns} model turns and a final "
                        "turn without tools (tool loop bound)"
                    )
                )
            if response.stop_reason == "pause_turn":
                continue
            if response.stop_reason not in ("end_turn", "stop_sequence", "max_tokens"):
                raise StageFault(
                    self._note(
                        f"the model stopped with {response.stop_reason!r} instead of answering"
                    )
                )
            answer, problem = self._validate(response)
            if answer is not None:
                return answer
            if corrected:
                raise StageFault(self._note(f"the answer was invalid twice: {problem}"))
            corrected = True
            self.messages.append(
                {
                    "role": "user",
                    "content": [{"type": "text", "text": correction(problem, self.schema)}],
                }
            )
            if final:
                turn -= 1  # the correction is one more answer turn, still without tools

    def _ask_without_tools(self, params: dict[str, Any], max_turns: int) -> None:
        """The turns ran out: ask for the answer, tools off (once per call)."""
        if self.final_asked:
            return
        self.final_asked = True
        self.ctx.emit("llm_final_turn", node=self.node, model=self.model, turns=max_turns)
        note = {"type": "text", "text": FINAL_TURN}
        last = self.messages[-1]
        if last["role"] == "user":
            last["content"] = [*last["content"], note]
        else:
            self.messages.append({"role": "user", "content": [note]})
        if params.get("tools"):
            params["tool_choice"] = {"type": "none"}

    def _params(self, system: str, json_schema: dict[str, Any]) -> dict[str, Any]:
        output: dict[str, Any] = {"format": {"type": "json_schema", "schema": json_schema}}
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": setting(self.ctx.settings, "llm_max_output_tokens", int, 16000),
            "system": [{"type": "text", "text": redact(system)}],
            "output_config": output,
        }
        effort = resolve_effort(self.node, self.ctx, self.model)
        if effort:
            output["effort"] = effort
            params["thinking"] = {"type": "adaptive"}
        if self.tools:
            defs = [tool.to_param() for tool in self.tools.values()]
            if _tokens(defs) >= min_cacheable_tokens(self.model):
                defs[-1] = {**defs[-1], "cache_control": _EPHEMERAL}
            params["tools"] = defs
        return params

    def _request(self, params: dict[str, Any]) -> dict[str, Any]:
        """The request as sent: the history with this request's cache markers
        (the history itself carries none, so markers never pile up)."""
        messages = [
            {**m, "content": list(m["content"]) if isinstance(m["content"], list) else m["content"]}
            for m in self.messages
        ]
        if self.prefix_marked:
            first = messages[0]["content"]
            first[0] = {**first[0], "cache_control": _EPHEMERAL}
        request = {**params, "messages": messages}
        if self._read_later(params):
            request["cache_control"] = _EPHEMERAL  # the growing history, up to its last block
            total = _blocks(messages)
            if self.sent_blocks and total - self.sent_blocks >= LOOKBACK_BLOCKS - 1:
                _mark_block(messages, self.sent_blocks - 1)  # where the previous request ended
            self.sent_blocks = total
        elif self.sent_blocks:  # expected to be the last: it reads the history, writes no tail
            _mark_block(messages, self.sent_blocks - 1)
        return request

    def _read_later(self, params: dict[str, Any]) -> bool:
        """May a later request read this one's end?  A thread's next call
        does; in a single call, only a reply that may call a tool (an
        allowed tool, tool_choice not none) brings another request."""
        if self.thread:
            return True
        return self.may_call and params.get("tool_choice") != {"type": "none"}

    def _answer(self, call: Any, stop_reason: str | None) -> dict[str, Any]:
        """The tool_result for one tool_use block (run only after a clean tool_use stop)."""
        tool = self.tools.get(call.name)
        if stop_reason != "tool_use":
            text, is_error = (
                (
                    f"error: not executed: your reply stopped with {stop_reason!r} "
                    "before it was complete; send the call again."
                ),
                True,
            )
        elif tool is None:
            text, is_error = f"error: no tool named {call.name!r}", True
        else:
            text, is_error = tool.call(call.input)  # clipped and redacted by the tool
            self.ctx.emit(
                "llm_tool", node=self.node, tool=call.name, is_error=is_error, chars=len(text)
            )
        result = {"type": "tool_result", "tool_use_id": call.id, "content": text}
        if is_error:
            result["is_error"] = True
        return result

    def _validate(self, response: Any) -> tuple[Any, str]:
        text = "".join(block.text for block in response.content if block.type == "text")
        return parse_answer(
            text, self.schema, cut_at="max_tokens" if response.stop_reason == "max_tokens" else None
        )

    def _send(self, client: Any, params: dict[str, Any]) -> Any:
        """One request, with the budget and history checks and the retry loop."""
        import anthropic

        check_history(self.messages, self.node)
        self._trim_to_budget()
        request = self._request(params)
        self._check_budget(request)
        max_retries = setting(self.ctx.settings, "llm_max_retries", int, DEFAULT_MAX_RETRIES)
        max_wait = setting(self.ctx.settings, "llm_max_retry_wait_s", float, 60.0)
        timeout = setting(self.ctx.settings, "llm_timeout_s", float, DEFAULT_TIMEOUT_S)
        attempt = 0
        while True:
            attempt += 1
            started = time.monotonic()
            retry_after: float | None = None
            try:
                response = client.messages.create(**request, timeout=timeout)
            except anthropic.APIStatusError as exc:
                failure = f"HTTP {exc.status_code} {exc.type or type(exc).__name__}"
                if exc.api_message:
                    failure += f" ({exc.api_message})"
                retryable = exc.status_code in _RETRY_STATUS or exc.status_code >= 500
                if exc.response.headers.get("x-should-retry") == "false":
                    retryable = False
                retry_after = _retry_after(exc.response.headers)
                if exc.status_code == 400 and self._without_effort(
                    params, request, exc.api_message
                ):
                    attempt -= (
                        1  # the model refused the effort settings: the same call without them
                    )
                    continue
            except anthropic.APITimeoutError:
                failure, retryable = "request timed out", True
            except anthropic.APIConnectionError as exc:
                failure, retryable = f"connection error ({exc})", True
            except (anthropic.AnthropicError, TypeError) as exc:
                # TypeError: the SDK found no credentials (no ANTHROPIC_API_KEY)
                failure, retryable = f"{type(exc).__name__}: {exc}", False
            else:
                self._record(response, attempt, time.monotonic() - started)
                return response
            if not retryable or attempt > max_retries:
                raise StageFault(
                    self._note(
                        f"the Anthropic API call failed after {attempt} attempt(s): {failure}"
                    )
                )
            wait = min(retry_after if retry_after is not None else _backoff(attempt), max_wait)
            self.ctx.emit(
                "llm_retry",
                node=self.node,
                model=self.model,
                attempt=attempt,
                error=redact(failure)[:300],
                wait_s=round(wait, 3),
            )
            time.sleep(wait)

    def _without_effort(
        self, params: dict[str, Any], request: dict[str, Any], message: str | None
    ) -> bool:
        """A 400 about thinking or effort, on a request that set them: drop
        them for the rest of this call (the model does not take them) and
        say so; False when that is not the refusal."""
        text = (message or "").lower()
        if "thinking" not in params or not ("thinking" in text or "effort" in text):
            return False
        for target in (params, request):
            target.pop("thinking", None)
            target["output_config"] = {
                k: v for k, v in target["output_config"].items() if k != "effort"
            }
        self.ctx.emit(
            "llm_effort_dropped",
            node=self.node,
            model=self.model,
            error=redact(message or "")[:300],
        )
        return True

    def _record(self, response: Any, attempts: int, duration: float) -> None:
        u = response.usage
        usage = Usage(
            input_tokens=u.input_tokens or 0,
            output_tokens=u.output_tokens or 0,
            cache_read_tokens=u.cache_read_input_tokens or 0,
            cache_write_tokens=u.cache_creation_input_tokens or 0,
        )
        usage.cost_usd = estimate_cost(self.model, usage)
        self.calls += 1
        record(
            self.ctx,
            usage,
            node=self.node,
            engine="anthropic",
            model=self.model,
            call=self.calls,
            attempts=attempts,
            stop_reason=response.stop_reason,
            duration_s=round(duration, 3),
        )

    def _check_budget(self, request: dict[str, Any]) -> None:
        """The run budget (:mod:`stepkit.plugins.llm.budget`), the whole request
        estimated as fresh input (about 4 characters per token)."""
        estimate = Usage(
            input_tokens=_tokens(request.get("system"), request.get("tools"), request["messages"])
        )
        estimate.cost_usd = estimate_cost(self.model, estimate)
        budget.check(
            self.ctx.settings,
            self.ctx.usage,
            refused="the request was not sent",
            estimate=estimate,
            note=self._note,
        )

    def _trim_to_budget(self) -> None:
        """Old tool results out, oldest first, when the history passes the
        context budget; the last two turns stay whole."""
        limit = setting(
            self.ctx.settings, "llm_context_budget_tokens", int, None
        ) or context_budget_tokens(self.model)
        used = _tokens(self.messages)
        if used <= limit:
            return
        trimmed = 0
        for message in self.messages[:-4]:
            if used <= limit * 3 // 4:
                break
            if message["role"] != "user" or not isinstance(message["content"], list):
                continue
            for block in message["content"]:
                if block.get("type") == "tool_result" and block.get("content") != TRIMMED:
                    used -= _tokens(block.get("content")) - _tokens(TRIMMED)
                    block["content"] = TRIMMED
                    trimmed += 1
        self.ctx.emit(
            "llm_trimmed",
            node=self.node,
            model=self.model,
            tool_results=trimmed,
            estimated_tokens=used,
            budget=limit,
        )

    def _note(self, what: str) -> str:
        return fault_note(self.node, "anthropic", self.model, what)


def check_history(messages: list[dict[str, Any]], node: str) -> None:
    """Every tool_use must be answered by exactly one tool_result in the next
    user message, and no tool_result may answer anything else.

    :raises StageFault: "history invariant broken" with what is wrong.
    """
    pending: Counter[str] = Counter()
    for index, message in enumerate(messages):
        blocks = message["content"] if isinstance(message["content"], list) else []
        if message["role"] == "assistant":
            if pending:
                break
            pending = Counter(b["id"] for b in blocks if b.get("type") == "tool_use")
            continue
        answered = Counter(b["tool_use_id"] for b in blocks if b.get("type") == "tool_result")
        if answered != pending:
            raise StageFault(
                fault_note(
                    node,
                    "anthropic",
                    None,
                    f"history invariant broken at message {index}: "
                    f"tool_use ids {sorted(pending)} answered by tool_result ids "
                    f"{sorted(answered)}",
                )
            )
        pending = Counter()
    if pending:
        raise StageFault(
            fault_note(
                node,
                "anthropic",
                None,
                f"history invariant broken: tool_use ids {sorted(pending)} have no tool_result",
            )
        )


def _tokens(*parts: Any) -> int:
    """Estimated tokens of JSON-able request parts (about 4 characters each)."""
    return len(json.dumps(parts, ensure_ascii=False)) // CHARS_PER_TOKEN


def _blocks(messages: list[dict[str, Any]]) -> int:
    return sum(len(m["content"]) if isinstance(m["content"], list) else 1 for m in messages)


def _mark_block(messages: list[dict[str, Any]], index: int) -> None:
    """Put a cache marker on the ``index``-th content block of ``messages``."""
    for message in messages:
        content = message["content"]
        count = len(content) if isinstance(content, list) else 1
        if index < count:
            if isinstance(content, list):
                content[index] = {**content[index], "cache_control": _EPHEMERAL}
            return
        index -= count


def _retry_after(headers: Any) -> float | None:
    """Seconds asked for by ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(float(value) * scale, 0.0)
        except ValueError:
            parsed = email.utils.parsedate_tz(value)
            if parsed is not None:
                return max(email.utils.mktime_tz(parsed) - time.time(), 0.0)
    return None


def _backoff(attempt: int) -> float:
    return 0.5 * 2 ** (attempt - 1) * random.uniform(0.75, 1.0)
