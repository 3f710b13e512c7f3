"""Built-in ``stepkit_sweep``: the edge-case sweep by the LLM engine.

Annotations of later steps are returned as data; the harness applies them as
additions to those plans' Edge cases sections and nothing else."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stepkit.hookspecs import hookimpl
from stepkit.plugins.stages.documents import (
    DIFF_CHARS,
    REPORT_CHARS,
    SHARED_RULES,
    SHORT_CHARS,
    clip,
    doc,
    plan_prefix,
)
from stepkit.records import StageContext, SweepResult

SWEEP_SYSTEM = f"""\
You are the edge-case sweep of stepkit.  The current step's code is written
and its gates ran.  Read the changed code with the read-only tools and list
the edge cases of the new behaviour: empty, missing or huge inputs; invalid
values; errors, timeouts and partial failure; boundaries and off-by-one;
encoding and paths; concurrency; permissions and untrusted input.

For each edge case say whether it is handled (where: path:line or the test
that covers it) or punted (why, and which step should own it).

Rules:
- annotations: only for an edge case that belongs to a LATER step (one of
  those listed under "Later steps"), and only when that step's Edge cases
  section does not already cover it.  One short sentence each, as
  {{step, edge_case}}.  Never annotate the current or an earlier step.  The
  harness appends annotations to the later plan's Edge cases section; no
  other part of any plan can be changed.
- downstream_updates: a change that a later step's Objective, Tasks,
  Acceptance criteria or Out of scope would need is only proposed, never
  applied: for each, "Step N, <section>: before: ... / after: ... / why: ...".
  "None" when there is nothing.
- needs_independent_review: true when 5 or more files changed, or the change
  crosses a boundary: authentication or authorization, a public API, a data
  schema or migration, security-sensitive code (secrets, crypto, permissions,
  parsing untrusted input).  Otherwise false.
- edge_case_report: bullets starting "handled:" or "punted:".

{SHARED_RULES}"""


def sweep_prompt(state: Mapping[str, Any]) -> str:
    """The volatile part of the sweep request."""
    changed = state.get("changed_files") or []
    return "\n".join([
        doc("Implementation brief", state.get("implementation_brief"), REPORT_CHARS),
        doc(f"Changed files ({len(changed)})", "\n".join(f"- {name}" for name in changed),
             SHORT_CHARS * 2),
        doc("Diff", state.get("diff"), DIFF_CHARS),
        _later_steps(state.get("later_steps") or []),
        f"Sweep step {state.get('step')}'s changes for edge cases and answer.",
    ])


def _later_steps(later: Sequence[Mapping[str, Any]]) -> str:
    if not later:
        return doc("Later steps", "None (this is the last step: no annotations)", SHORT_CHARS)
    blocks = [f"### Step {s.get('step')}: {s.get('title') or ''}\nEdge cases:\n"
              f"{clip(s.get('edge_cases') or 'None', SHORT_CHARS, 'edge cases').strip()}"
              for s in later]
    return doc("Later steps (annotation targets)", "\n\n".join(blocks), SHORT_CHARS * 8)


@hookimpl(trylast=True)
def stepkit_sweep(ctx: StageContext) -> dict[str, Any]:
    """Ask the engine, with the read-only tools, to sweep the changed code."""
    from stepkit.plugins.llm.engine import ask
    from stepkit.plugins.llm.tools import read_only_tools

    return ask(ctx, system=SWEEP_SYSTEM, prefix=plan_prefix(ctx.state),
               prompt=sweep_prompt(ctx.state), schema=SweepResult,
               tools=read_only_tools(ctx.project_dir))
