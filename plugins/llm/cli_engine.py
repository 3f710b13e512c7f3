"""What the engines that drive an agent CLI headless share (``--engine
claude``, ``--engine codex``): the check that the CLI is there and the
budget allows a call, the kind of access a node gets, running the CLI and
splitting its output into JSON lines and the CLI's own words.  What every
engine shares is :mod:`stepkit.plugins.llm.helpers`.

The CLI owns its tool loop and its retries: the engine makes one call per
structured answer and never retries on top (a retry would double the CLI's
own backoff and its spend).  The CLI's tools are its own (Read, Grep …, or
its shell); the stages' tool list says only what kind of access the node
gets: none, read-only, or writes (a list with ``write_file``).
"""

from __future__ import annotations

import itertools
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stepkit import quoting
from stepkit.plugins.agent_clis import state_paths
from stepkit.plugins.llm import budget
from stepkit.plugins.llm.helpers import DEFAULT_TIMEOUT_S, fault_note, node_model, setting
from stepkit.records import StageContext, StageFault
from stepkit.workspace import process, sandbox
from stepkit.workspace.evidence import clip_middle
from stepkit.workspace.jsonlines import json_lines

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
            return (
                f"--engine {self.kind}: the '{self.executable}' CLI{what} is not on PATH: "
                f"install it ({self.install}) or choose another --engine"
            )
        return None

    def start(self, node: str, ctx: StageContext) -> tuple[str | None, Any]:
        """The node's model and its fault-note writer, once the CLI is known
        to be there and the run's budget allows a call (else a StageFault)."""
        model = node_model(node, ctx, self.model)

        def note(what: str) -> str:
            return fault_note(node, f"{self.kind} CLI", model, what)

        if (problem := self.setup_problem()) is not None:
            raise StageFault(note(problem))
        budget.check(ctx.settings, ctx.usage, refused="the CLI was not started", note=note)
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


def session_lost(run: CliRun, session: str | None, opened: bool) -> bool:
    """Did a call that resumed ``session`` find it gone (the CLI's session
    store cleared, the run resumed on another machine)?  The CLI opened no
    session (``opened`` false: no result, no ``thread.started``) and its
    own words name the id it could not find."""
    return session is not None and not opened and run.result.crash() is None and session in run.text


def run_cli(argv: list[str], *, stdin_text: str, ctx: StageContext, log_name: str) -> CliRun:
    """Run ``argv`` in the project directory with the prompt on stdin, in its
    own process group, bounded by ``llm_timeout_s``; its whole (masked)
    output goes to ``<log_dir>/<log_name>-<N>.log``, N counting the calls
    (a fix round's log never replaces the first one's)."""
    logs = ctx.log_dir()
    log = next(
        path for n in itertools.count(1) if not (path := logs / f"{log_name}-{n}.log").exists()
    )
    with sandbox.widened(state_paths(Path(argv[0]).name)):  # confined when it is the coder
        result = process.run(
            quoting.shell(argv),
            cwd=Path(ctx.project_dir),
            stdin_text=stdin_text,
            timeout=setting(ctx.settings, "llm_timeout_s", float, DEFAULT_TIMEOUT_S),
            log_path=log,
        )
    objects, other = json_lines(result.output)
    return CliRun(result, objects, "\n".join(other))
