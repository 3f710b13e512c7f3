"""The Claude Code engine (``--engine claude[:MODEL]``): each structured
answer is one headless Claude Code call, so a Claude subscription runs the
LLM nodes with no API key (headless use draws on the plan's Agent SDK
credit; with ``ANTHROPIC_API_KEY`` set, Claude Code bills the API instead).

One call::

    claude -p --output-format json --json-schema SCHEMA --append-system-prompt SYSTEM
           --tools T --allowedTools T --permission-mode MODE --max-turns N
           [--model M] [--max-budget-usd D] --strict-mcp-config --no-session-persistence

with the prefix and the prompt on stdin.  The answer is the result's
``structured_output`` (Claude Code makes the model call its StructuredOutput
tool with SCHEMA), validated again by the stage's pydantic schema.

- **Threads** (:meth:`ClaudeCodeEngine.new_thread`, the built-in coder's
  rounds): Claude Code keeps the conversation in its session, so a thread
  is the session id of the result (``session_id``).  The call that opens it
  is saved (no ``--no-session-persistence``); every later one is
  ``claude -p --resume SESSION_ID …`` with only its prompt on stdin: the
  earlier rounds, their prefix included, are in the session.  The flags of
  the call (tools, permission mode, schema, system prompt) are given again
  each time: the CLI takes them per process, resumed or not.  A session
  the CLI no longer has (its store cleared) is said in its words, naming
  the id: the call is made again as a new session with the whole material
  (an ``llm_session_lost`` event).

- **Access**: a read-only node (orient, sweep, handoff, the reviewer, the
  built-in coder's plan) gets Read, Grep and Glob in ``plan`` permission
  mode; a node that writes (the built-in coder's edits) gets Edit, Write and
  Bash as well in ``acceptEdits`` mode; a node without tools gets none.
  The stages' own checks (orient must not write …) apply as with any engine.
- **Usage**: tokens from the result's ``usage``, cost from its
  ``total_cost_usd`` (the CLI's own figure); one ``llm_call`` event, whose
  ``billed_to`` says who paid: ``api`` (an ``ANTHROPIC_API_KEY`` was set)
  or ``subscription`` (the login).
- **Faults**, in the CLI's own words: ``is_error`` (with
  ``api_error_status`` when the API refused), ``error_max_turns``, a result
  without ``structured_output``, a kill or a timeout, no result at all, a
  missing ``claude``.  Never retried here: Claude Code retries the API
  itself.
"""

from __future__ import annotations

import json
import os
from typing import Any, TypeVar

from pydantic import BaseModel

from stepkit.plugins.agent_clis import INSTALL, claude_usage, usage_limit
from stepkit.plugins.llm.budget import cost_left
from stepkit.plugins.llm.cli_engine import CliEngine, CliRun, access, run_cli, session_lost
from stepkit.plugins.llm.helpers import Thread, parse_answer, record
from stepkit.plugins.llm.strict_schema import lean_json_schema
from stepkit.plugins.llm.tools import Tool
from stepkit.records import StageContext, StageFault
from stepkit.workspace.redact import redact

M = TypeVar("M", bound=BaseModel)
READ_TOOLS = "Read,Grep,Glob"
WRITE_TOOLS = "Read,Grep,Glob,Edit,Write,Bash"
#: (tools, permission mode) per kind of access
ACCESS = {"none": ("", "plan"), "read": (READ_TOOLS, "plan"), "write": (WRITE_TOOLS, "acceptEdits")}


class ClaudeCodeEngine(CliEngine):
    """Structured answers from headless Claude Code."""

    kind = "claude"
    product = "Claude Code"
    install = INSTALL["claude"]

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
            a started one is resumed by its session id, and only ``prompt``
            is sent."""
        model, note = self.start(node, ctx)
        argv = self.argv(
            system,
            schema,
            access(tools),
            max_turns,
            model,
            cost_left(ctx.settings, ctx.usage),
            thread=thread,
        )
        resumed = thread is not None and thread.started
        stdin = redact(f"{prefix}\n\n{prompt}" if prefix and not resumed else prompt)
        run = run_cli(argv, stdin_text=stdin, ctx=ctx, log_name=f"llm-{node}-claude")
        opened = any(obj.get("type") == "result" for obj in run.objects)
        if thread is not None and resumed and session_lost(run, thread.session, opened):
            # the conversation is gone: a new one, with the whole material
            ctx.emit("llm_session_lost", node=node, engine="claude", session=thread.session)
            thread.session = None
            return self.structured(
                node=node,
                system=system,
                prompt=prompt,
                schema=schema,
                tools=tools,
                ctx=ctx,
                max_turns=max_turns,
                prefix=prefix,
                thread=thread,
            )
        result = _result(run, note)
        if thread is not None and result.get("session_id"):
            thread.session = str(result["session_id"])
        _record(ctx, node, model, result, run)
        return _answer(result, schema, note)

    def new_thread(self) -> Thread:
        """A new conversation for :meth:`structured` calls to continue (a Claude Code session)."""
        return Thread()

    def argv(
        self,
        system: str,
        schema: type[BaseModel],
        kind: str,
        max_turns: int,
        model: str | None,
        budget: float | None,
        thread: Thread | None = None,
    ) -> list[str]:
        """The ``claude -p`` command line of one call (of ``thread``, if given)."""
        tools, mode = ACCESS[kind]
        argv = [
            self.executable,
            "-p",
            "--output-format",
            "json",
            "--json-schema",
            json.dumps(lean_json_schema(schema)),
            "--append-system-prompt",
            redact(system) + _tool_note(tools),
            "--tools",
            tools,
            "--allowedTools",
            tools,
            "--permission-mode",
            mode,
            "--max-turns",
            str(max_turns),
            "--strict-mcp-config",
        ]
        if thread is None:
            argv.append("--no-session-persistence")  # a single call: nothing will resume it
        elif thread.session is not None:
            argv += ["--resume", thread.session]
        if model:
            argv += ["--model", model]
        if budget is not None:
            argv += ["--max-budget-usd", f"{budget:.4f}"]
        return argv


def _tool_note(tools: str) -> str:
    """The instructions name stepkit's tools; say which of Claude Code's stand in."""
    if not tools:
        return "\n\nYou have no tools here: answer from what you are given."
    return (
        f"\n\nUse your own tools ({tools.replace(',', ', ')}) where these instructions name "
        "read_file, list_dir, search, run_command, write_file or edit_file."
    )


def _result(run: CliRun, note: Any) -> dict[str, Any]:
    """The CLI's result object.

    :raises StageFault: it was killed, timed out, could not start, or printed
        no result."""
    crash = run.result.crash("the claude CLI")
    if crash:
        raise StageFault(note(f"{crash}: {run.words()}"))
    results = [obj for obj in run.objects if obj.get("type") == "result"]
    if not results:
        raise StageFault(
            note(f"the claude CLI printed no result (exit {run.result.exit_code}): {run.words()}")
        )
    return results[-1]


def _record(
    ctx: StageContext, node: str, model: str | None, result: dict[str, Any], run: CliRun
) -> None:
    usage = claude_usage(result)
    used = model or ",".join(result.get("modelUsage") or {}) or None
    # who Claude Code billed: an API key in its environment wins over the subscription login
    billed_to = "api" if os.environ.get("ANTHROPIC_API_KEY") else "subscription"
    record(
        ctx,
        usage,
        node=node,
        engine="claude",
        model=used,
        call=1,
        attempts=1,
        billed_to=billed_to,
        turns=result.get("num_turns"),
        stop_reason=result.get("subtype"),
        duration_s=run.result.duration_s,
    )


def _answer(result: dict[str, Any], schema: type[M], note: Any) -> M:
    """The validated ``structured_output``.

    :raises StageFault: the CLI reported an error, or gave no valid answer."""
    words = str(result.get("result") or "; ".join(map(str, result.get("errors") or [])) or "")
    if result.get("subtype") == "error_max_turns":
        raise StageFault(note(f"the claude CLI stopped at its turn limit: {words}"))
    if result.get("is_error") or result.get("subtype") != "success":
        status = result.get("api_error_status")
        limit = usage_limit(f"{words} {'429' if status == 429 else ''}")
        if limit:
            raise StageFault(
                note(
                    f"the claude CLI hit {limit}, an environment fault, not a failure "
                    f"of the code: {words}"
                )
            )
        what = f"API error {status}" if status else f"error ({result.get('subtype')})"
        raise StageFault(note(f"the claude CLI reported an {what}: {words}"))
    answer = result.get("structured_output")
    if answer is None:
        raise StageFault(
            note(f"the claude CLI answered without the structured output: {words[:300]}")
        )
    parsed, problem = parse_answer(json.dumps(answer), schema)
    if parsed is None:
        raise StageFault(note(f"the answer does not match {schema.__name__}: {problem}"))
    return parsed
