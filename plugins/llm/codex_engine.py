"""The Codex engine (``--engine codex[:MODEL]``): each structured answer is
one ``codex exec`` call, so a ChatGPT plan (or Codex's own configured
provider) runs the LLM nodes.

One call::

    codex exec --json --output-schema FILE --sandbox read-only
               --skip-git-repo-check --ephemeral [-m MODEL] -

with the instructions, the prefix and the prompt on stdin (Codex takes no
separate system prompt) and FILE the answer's strict JSON schema
(:mod:`stepkit.plugins.llm.strict_schema`).  ``--json`` prints one event per
line; the answer is the text of the last ``agent_message`` item, validated
by the stage's schema.

- **Threads** (:meth:`CodexEngine.new_thread`, the built-in coder's rounds):
  Codex keeps the conversation in its session, so a thread is the id of
  the ``thread.started`` event.  The call that opens it is saved (no
  ``--ephemeral``); every later one is ``codex exec --json --output-schema
  FILE --sandbox S … resume THREAD_ID -`` with only its prompt on stdin (the
  options before ``resume``: ``codex exec`` reads them there for a resumed
  session too, the output schema and the sandbox of this call included).
  A session Codex no longer has is said in its words, naming the id: the
  call is made again as a new session with the whole material (an
  ``llm_session_lost`` event).
- **Access**: every node runs in the ``read-only`` sandbox except one that
  writes (the built-in coder's edits): ``workspace-write``.  Codex has no
  turn limit to pass on.
- **Usage**: summed over the ``turn.completed`` events (``cached_input_tokens``
  counted as cache reads); Codex reports no cost, so it is estimated from
  the token counts (:mod:`stepkit.plugins.llm.pricing`) and budgets apply.
- **Faults**, in Codex's own words: ``turn.failed``, no final message, a
  final message that is not the JSON asked for, a kill or a timeout, a
  missing ``codex``.  ``error`` events and ``error`` items that a turn
  survives (``Reconnecting... 2/5``, a transport fallback) are notices, not
  failures.  Never retried here: Codex retries its own requests.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel

from stepkit.plugins.agent_clis import INSTALL, codex_sandbox, codex_turn_usage, usage_limit
from stepkit.plugins.llm.cli_engine import CliEngine, CliRun, access, run_cli, session_lost
from stepkit.plugins.llm.helpers import Thread, parse_answer, record
from stepkit.plugins.llm.pricing import estimate_cost
from stepkit.plugins.llm.strict_schema import strict_json_schema
from stepkit.plugins.llm.tools import Tool
from stepkit.records import StageContext, StageFault, Usage
from stepkit.workspace import sandbox
from stepkit.workspace.files import atomic_write
from stepkit.workspace.redact import redact

M = TypeVar("M", bound=BaseModel)


class CodexEngine(CliEngine):
    """Structured answers from ``codex exec``."""

    kind = "codex"
    install = INSTALL["codex"]

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
            a started one is resumed by its thread id, and only ``prompt``
            is sent."""
        model, note = self.start(node, ctx)
        name = f"llm-{node}-codex-schema.json"  # confined, codex cannot see the run store
        schema_file = sandbox.private_file(name) or ctx.log_dir() / name
        atomic_write(schema_file, json.dumps(strict_json_schema(schema), indent=1))
        argv = [
            self.executable,
            "exec",
            "--json",
            "--output-schema",
            str(schema_file),
            "--sandbox",
            codex_sandbox(write=access(tools) == "write"),
            "--skip-git-repo-check",
        ]
        if thread is None:
            argv.append("--ephemeral")  # a single call: nothing will resume it
        if model:
            argv += ["-m", model]
        session = thread.session if thread is not None else None
        resumed = session is not None
        if session is not None:
            argv += ["resume", session]
        argv.append("-")
        parts = (prompt,) if resumed else (system, prefix, prompt)
        stdin = redact("\n\n".join(part for part in parts if part))
        run = run_cli(argv, stdin_text=stdin, ctx=ctx, log_name=f"llm-{node}-codex")
        crash = run.result.crash("the codex CLI")
        if crash:
            raise StageFault(note(f"{crash}: {_words(run)}"))
        started = [
            e for e in run.objects if e.get("type") == "thread.started" and e.get("thread_id")
        ]
        if thread is not None and resumed and session_lost(run, session, bool(started)):
            # the conversation is gone: a new one, with the whole material
            ctx.emit("llm_session_lost", node=node, engine="codex", session=session)
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
        if thread is not None and started:
            thread.session = str(started[-1]["thread_id"])
        _record(ctx, node, model, run)
        return _answer(run, schema, note)

    def new_thread(self) -> Thread:
        """A new conversation for :meth:`structured` calls to continue (a Codex session)."""
        return Thread()


def _record(ctx: StageContext, node: str, model: str | None, run: CliRun) -> None:
    usage = Usage()
    for event in run.objects:
        if event.get("type") == "turn.completed":
            usage = usage.add(codex_turn_usage(event))
    usage.cost_usd = estimate_cost(model or "", usage)
    record(
        ctx,
        usage,
        node=node,
        engine="codex",
        model=model,
        call=1,
        attempts=1,
        duration_s=run.result.duration_s,
    )


def _answer(run: CliRun, schema: type[M], note: Any) -> M:
    """The validated final message.

    :raises StageFault: the turn failed, or its final message is missing or
        not a valid answer."""
    failed = [e for e in run.objects if e.get("type") == "turn.failed"]
    limit = usage_limit(_message(failed[-1].get("error"))) if failed else None
    if limit:
        raise StageFault(
            note(
                f"the codex CLI hit {limit}, an environment fault, not a failure of "
                f"the code: {_message(failed[-1].get('error'))}"
            )
        )
    if failed:
        raise StageFault(note(f"the codex turn failed: {_message(failed[-1].get('error'))}"))
    messages = [
        e["item"]
        for e in run.objects
        if e.get("type") == "item.completed"
        and (e.get("item") or {}).get("type") == "agent_message"
    ]
    if not messages:
        raise StageFault(
            note(
                f"the codex CLI gave no final message (exit {run.result.exit_code}): {_words(run)}"
            )
        )
    text = str(messages[-1].get("text") or "")
    answer, problem = parse_answer(text, schema)
    if answer is None:
        raise StageFault(
            note(
                f"the final message is not a valid {schema.__name__}: {problem}; "
                f"it was: {redact(text.strip())[:300]}"
            )
        )
    return answer


def _words(run: CliRun) -> str:
    """What Codex said last: its last error event, else its other output."""
    errors = [_message(e) for e in run.objects if e.get("type") == "error"]
    return errors[-1] if errors else run.words()


def _message(error: Any) -> str:
    """An error's message; an API error passed on as JSON text, unwrapped."""
    text = (
        str((error or {}).get("message") or error or "")
        if isinstance(error, dict)
        else str(error or "")
    )
    try:
        inner = json.loads(text)
    except ValueError:
        return text
    if isinstance(inner, dict) and isinstance(inner.get("error"), dict):
        return str(inner["error"].get("message") or text)
    return text
