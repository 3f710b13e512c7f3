"""The delegation prompt every coder gets (built-in or an external CLI).

It follows the step protocol's implement stage: task, expected outcome, must
do, must not, then the material (fix instructions and user guidance first,
because they are what this round is about; then the brief and the plan).
"""

from __future__ import annotations

from pathlib import Path

from stepkit.plugins.stages.documents import DIFF_CHARS, PLAN_CHARS, REPORT_CHARS, SHORT_CHARS, doc
from stepkit.protocol.state import step_state
from stepkit.records import StageContext

SENTINEL_RULE = (
    "End your final message with exactly one of these words on a line of its own:\n"
    "- CODER_COMPLETE: the work is done and the build and the full test suite pass;\n"
    "- CODER_REJECTED: the step cannot or should not be done as planned (say why);\n"
    "- CODER_FAILED: you tried and could not make it work (say what is still failing)."
)


def build_coder_prompt(ctx: StageContext) -> str:
    """Build the coder's prompt from the run state (``step``, ``title``,
    ``plan_text``, ``implementation_brief``, ``user_guidance``,
    ``fix_instructions``; missing keys are left out), the plan repo and the
    command of every gate the step will run (the run's gate plan)."""
    state = step_state(ctx)
    step = "?" if state.step is None else state.step
    title = state.title.strip()
    plans_dir = _plans_display(ctx)
    fix = state.fix_instructions.strip()
    guidance = state.user_guidance.strip()
    brief = state.implementation_brief.strip()
    plan = state.plan_text.strip()
    name = f"step {step}" + (f" ({title})" if title else "")

    if fix:
        task = (
            f"Apply the fix instructions below to your implementation of {name}. "
            "The rest of the step is already implemented; keep it."
        )
    else:
        task = f"Implement {name} of the plan below in this project."
    must_do = (
        "# Must do\n"
        "- Follow the implementation brief over the raw plan where they differ: the brief is "
        "the plan checked against the current code.\n"
        "- Match the patterns shown in the plan's Context section (names, structure, style).\n"
        "- Write tests from the Acceptance criteria."
    )
    must_not = (
        "# Must not\n"
        "- Touch anything the plan lists under Out of scope.\n"
        f"- Modify the plan repo ({plans_dir}/): edits there are undone and reported.\n"
        "- Do other steps' work.\n"
        "- Weaken verification: no deleted or skipped tests, no new ignore markers, no "
        "loosened lint or coverage settings."
    )
    outcome = (
        "# Expected outcome\n"
        "The step's Acceptance criteria hold, covered by tests; the project builds and its "
        f"FULL test suite passes.\n{SENTINEL_RULE}"
    )
    sections = [f"# Task\n{task}", outcome, must_do, must_not, _judges(ctx)]
    # the material, framed as data like every node's (a gate's log is kept whole, to its cap)
    if fix:
        sections.append(doc("Fix instructions", fix, DIFF_CHARS, shrink_fences=False))
    if guidance:
        sections.append(doc("User guidance", guidance, SHORT_CHARS))
    if brief:
        sections.append(doc("Implementation brief", brief, REPORT_CHARS))
    if plan:
        sections.append(doc(f"Plan of {name}", plan, PLAN_CHARS, shrink_fences=False))
    return "\n\n".join(section.rstrip("\n") for section in sections) + "\n"


def _judges(ctx: StageContext) -> str:
    """The gates the step will run after the coder, each with its command:
    the run's gate plan once a gate fixed it, else the plan as the gates
    would fix it now, not stored (the step's first gate plans again, after
    the coder's changes: a first step may create the files detection reads)."""
    from stepkit.records import GATE_ORDER
    from stepkit.workspace.gate_commands import gates_will_run

    plan = gates_will_run(ctx.settings, ctx.pm, ctx.project_dir, ctx.config)
    lines = []
    for name in GATE_ORDER:
        command, _plugin = plan.command(name)
        planned = plan.commands.get(name)
        why_not = planned.not_run if planned is not None else ""
        if command and not why_not:
            lines.append(
                f"- {name}: `{command}`"
                + (" (run on the files the step changed)" if name == "format" else "")
            )
        else:
            lines.append(f"- {name}: not run ({why_not or 'no command'})")
    return (
        "# How stepkit judges the change\n"
        "After you, stepkit runs these gates in this order; every gate that runs must pass "
        "(run the same commands yourself before you finish):\n" + "\n".join(lines)
    )


def _plans_display(ctx: StageContext) -> str:
    """The plan repo as the prompt names it (relative when inside the project)."""
    try:
        return Path(ctx.plans_dir).relative_to(ctx.project_dir).as_posix()
    except ValueError:
        return str(ctx.plans_dir)
