"""What the engines that drive an agent CLI headless share (``--engine
claude``, ``--engine codex``): the model a node runs on, the budget check
before a call, running the CLI, reading its JSON lines, recording usage and
saying a fault in the CLI's own words.

The CLI owns its tool loop and its retries: the engine makes one call per
structured answer and never retries on top (a retry would double the CLI's
own backoff and its spend).  The CLI's tools are its own (Read, Grep …, or
its shell); the stages' tool list says only what kind of access the node
gets: none, read-only, or writes (a list with ``write_file``).
"""

from __future__ import annotations

import itertools
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stepkit.records import StageContext, StageFault, Usage
from stepkit.workspace import process
from stepkit.workspace.evidence import clip_middle
from stepkit.workspace.jsonlines import json_lines
from stepkit.workspace.redact import redact

#: Seconds one CLI call may take (``--set llm_timeout_s=``).
DEFAULT_TIMEOUT_S = 600.0
#: Characters of the CLI's own words kept in a fault note.
NOTE_CHARS = 600
WRITE_TOOLS = frozenset({"write_file", "edit_file"})


class CliEngine:
    """What a CLI engine is before its call: the CLI it runs and the model it
    asks for, and the check that the CLI is there.

    :cvar kind: the ``--engine`` kind (named in notes).
    :cvar product: what the CLI is, when its name does not say (named when it is missing).
    :cvar install: how to install the CLI (named when it is missing).
    """

    kind = ""
    product = ""
    install = ""

    def __init__(self, model: str | None = None, executable: str | None = None):
        self.model = model
        self.executable = executable or self.kind

    def setup_problem(self) -> str | None:
        """Why no call could be made: the CLI is not on PATH."""
        if shutil.which(self.executable) is None:
            what = f" ({self.product})" if self.product else ""
            return (f"--engine {self.kind}: the '{self.executable}' CLI{what} is not on PATH: "
                    f"install it ({self.install}) or choose another --engine")
        return None

    def start(self, node: str, ctx: StageContext) -> tuple[str | None, Any]:
        """The node's model and its fault-note writer, once the CLI is known
        to be there (else a StageFault)."""
        model = node_model(node, ctx, self.model)

        def note(what: str) -> str:
            return fault_note(node, f"{self.kind} CLI", model, what)

        if (problem := self.setup_problem()) is not None:
            raise StageFault(note(problem))
        return model, note


def access(tools: list[Any] | None) -> str:
    """``none``, ``read`` or ``write``: what the stage's tool list allows.

    The CLI's own tools stand in for stepkit's and cannot refuse a call the
    way a stepkit handler can, so only stepkit's own workspace writers give
    write access: a write tool whose handler was replaced (the built-in
    coder refusing writes while it plans, a plugin's wrapper) leaves the
    node read-only."""
    if not tools:
        return "none"
    return "write" if any(_writes(tool) for tool in tools) else "read"


def _writes(tool: Any) -> bool:
    from stepkit.plugins.llm import tools as stepkit_tools

    owner = getattr(tool.handler, "__self__", None)
    return tool.name in WRITE_TOOLS and type(owner).__module__ == stepkit_tools.__name__


def node_model(node: str, ctx: StageContext, spec_model: str | None) -> str | None:
    """The model for ``node``: ``--set model_<node>=``, ``[models] <node>``, the
    spec's model, ``[models] default``; None leaves the choice to the CLI
    (its own configured default), never a model of another vendor."""
    models = getattr(ctx.config, "models", None) or {}
    return (ctx.settings.get(f"model_{node}") or models.get(node) or spec_model
            or models.get("default") or None)


def setting(ctx: StageContext, name: str, kind: type, default: Any) -> Any:
    """``ctx.settings[name]`` as ``kind`` (``default`` when unset).

    :raises StageFault: the value is not a valid ``kind``."""
    value = ctx.settings.get(name)
    if value is None or value == "":
        return default
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise StageFault(f"setting {name}={value!r} is not a valid {kind.__name__}") from None


def remaining_budget(ctx: StageContext, note: Any) -> float | None:
    """Dollars left of ``max_cost_usd`` (None: no cost budget).

    :raises StageFault: the budget (``max_cost_usd`` or ``max_tokens``) is
        already spent; the CLI is not started."""
    used = ctx.usage
    max_cost = setting(ctx, "max_cost_usd", float, None)
    max_tokens = setting(ctx, "max_tokens", int, None)
    if max_tokens is not None and used.total_tokens >= max_tokens:
        raise StageFault(note(f"budget exceeded: the run has used {used.total_tokens} tokens of "
                              f"max_tokens={max_tokens}; the CLI was not started"))
    if max_cost is None:
        return None
    if used.cost_usd >= max_cost:
        raise StageFault(note(f"budget exceeded: the run has spent ${used.cost_usd:.4f} of "
                              f"max_cost_usd={max_cost:g}; the CLI was not started"))
    return max_cost - used.cost_usd


@dataclass(frozen=True)
class CliRun:
    """One finished CLI call: its JSON objects (one per output line that is
    one) and the rest of its output (its warnings and errors)."""

    result: process.ProcessResult
    objects: list[dict[str, Any]]
    text: str

    def words(self) -> str:
        """The CLI's own non-JSON output, clipped, for a fault note."""
        return clip_middle(self.text.strip(), NOTE_CHARS) or "(no other output)"


def run_cli(argv: list[str], *, stdin_text: str, ctx: StageContext, log_name: str) -> CliRun:
    """Run ``argv`` in the project directory with the prompt on stdin, in its
    own process group, bounded by ``llm_timeout_s``; its whole (masked)
    output goes to ``<log_dir>/<log_name>-<N>.log``, N counting the calls
    (a fix round's log never replaces the first one's)."""
    logs = ctx.log_dir()
    log = next(path for n in itertools.count(1) if not (path := logs / f"{log_name}-{n}.log").exists())
    result = process.run(shlex.join(argv), cwd=Path(ctx.project_dir), stdin_text=stdin_text,
                         timeout=setting(ctx, "llm_timeout_s", float, DEFAULT_TIMEOUT_S), log_path=log)
    objects, other = json_lines(result.output)
    return CliRun(result, objects, "\n".join(other))


def record(ctx: StageContext, usage: Usage, **event: Any) -> None:
    """Add one call's usage to the run's and emit its ``llm_call`` event."""
    ctx.usage = ctx.usage.add(usage)
    ctx.emit("llm_call", **event, **usage.model_dump())


def fault_note(node: str, engine: str, model: str | None, what: str) -> str:
    """``LLM fault in node N (engine, model M): what.`` on one line, masked."""
    on = f"{engine}, model {model}" if model else engine
    text = f"LLM fault in node {node} ({on}): {what.rstrip('.')}."
    return " ".join(redact(text).split())
