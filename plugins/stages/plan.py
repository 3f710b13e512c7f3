"""Built-in ``stepkit_draft_plan``: the plan drafted from a spec by the LLM
engine, at the node ``plan`` (the scripted engine answers it by that id).
trylast, so a project's own implementation answers first."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from stepkit.hookspecs import hookimpl
from stepkit.plugins.stages.documents import PLAN_CHARS, SHARED_RULES, SHORT_CHARS, doc
from stepkit.records import StageContext

if TYPE_CHECKING:  # the draft's model is built only when a plan is drafted
    from stepkit.planrepo.draft import PlanDraft

#: the stage name ``settings["stages"]`` holds when ``stepkit plan`` will call the engine
PLAN_STAGE = "plan"

PLAN_SYSTEM = f"""\
You are the planner of stepkit.  stepkit runs ONE step of a plan at a time:
a coder makes the step's change, then the project's format, lint, build and
test gates judge it, and a human approves it.  From the spec you are given,
draft the plan's steps.

You are read-only.  Use the tools to look at the project (its layout, the
files and symbols the spec touches, how its tests run); never change a file.

Each step:
- is one small change a coder can finish and the project's tests can show
  in one run; the steps in order build what the spec asks, nothing more;
- objective: one or two sentences, what is true when it is done;
- context: the existing files, symbols and patterns the coder must know,
  each file as `path` in backticks;
- tasks: one change each, naming the file it creates or changes in
  backticks (`src/pkg/module.py`, `tests/test_module.py`); name every test
  or configuration file the step may change;
- acceptance_criteria: one checkable behaviour each, that a test can show;
- test_commands: the project's commands that check the step;
- edge_cases: cases to handle or decide; out_of_scope: what is left to
  later steps or not asked for;
- number: 1, 2, 3 ... in order; depends_on: numbers of EARLIER steps of
  this draft it needs; depends_on_existing: numbers of the plan's existing
  steps it needs (only those listed under "Existing steps").

notes: durable facts the spec states that every step should know (how the
tests run, a convention, a constraint); [] when it states none.

{SHARED_RULES}"""


def plan_prompt(spec: str, existing: list[dict[str, Any]], problems: list[str]) -> str:
    """The request: the spec, the existing steps, the previous answer's problems."""
    listed = "\n".join(f"- step {s['step']}: {s['title']} ({s['status']})" for s in existing)
    parts = [
        doc("Spec", spec, PLAN_CHARS),
        doc(
            "Existing steps (the draft's steps come after them)",
            listed or "None: this is a new plan",
            SHORT_CHARS * 4,
        ),
    ]
    if problems:
        parts.append(
            doc(
                "Problems with your previous draft (fix every one)",
                "\n".join(f"- {p}" for p in problems),
                SHORT_CHARS * 2,
            )
        )
    parts.append("Draft the plan's steps from the spec and answer.")
    return "\n".join(parts)


@hookimpl
def stepkit_configure(config: Any, settings: dict[str, Any], pm: Any) -> None:
    """``stepkit plan`` will call the engine: one that cannot be called (no
    credentials) is a usage error before anything is asked."""
    from stepkit.plugins.llm.engine import check_engine_spec

    if PLAN_STAGE in settings.get("stages", ()) and settings.get("project_dir"):
        check_engine_spec(settings.get("engine"), Path(settings["project_dir"]), pm=pm, calls=True)


@hookimpl(trylast=True)
def stepkit_draft_plan(
    ctx: StageContext, spec: str, existing: list[dict[str, Any]], problems: list[str]
) -> PlanDraft:
    """Ask the engine, with the read-only tools, for the draft."""
    from stepkit.planrepo.draft import PlanDraft
    from stepkit.plugins.llm.engine import make_engine
    from stepkit.plugins.llm.tools import read_only_tools

    return make_engine(None, ctx).structured(
        node=ctx.node,
        system=PLAN_SYSTEM,
        prompt=plan_prompt(spec, existing, problems),
        schema=PlanDraft,
        tools=read_only_tools(ctx.project_dir),
        ctx=ctx,
    )
