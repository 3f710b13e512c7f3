"""The delegation prompt every coder gets (built-in or an external CLI).

It follows the step protocol's implement stage: task, expected outcome, must
do, must not, then the material (fix instructions and user guidance first,
because they are what this round is about; then the brief and the plan).
"""

from __future__ import annotations

from pathlib import Path

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
    ``fix_instructions``; missing keys are left out) and the plan repo."""
    state = ctx.state
    step = state.get("step", "?")
    title = str(state.get("title") or "").strip()
    plans_dir = _plans_display(ctx)
    fix = str(state.get("fix_instructions") or "").strip()
    guidance = str(state.get("user_guidance") or "").strip()
    brief = str(state.get("implementation_brief") or "").strip()
    plan = str(state.get("plan_text") or "").strip()
    name = f"step {step}" + (f" ({title})" if title else "")

    if fix:
        task = (f"Apply the fix instructions below to your implementation of {name}. "
                "The rest of the step is already implemented; keep it.")
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
    sections = [f"# Task\n{task}", outcome, must_do, must_not]
    if fix:
        sections.append(f"# Fix instructions\n{fix}")
    if guidance:
        sections.append(f"# User guidance\n{guidance}")
    if brief:
        sections.append(f"# Implementation brief\n{brief}")
    if plan:
        sections.append(f"# Plan of {name}\n{plan}")
    return "\n\n".join(sections) + "\n"


def _plans_display(ctx: StageContext) -> str:
    """The plan repo as the prompt names it (relative when inside the project)."""
    try:
        return Path(ctx.plans_dir).relative_to(ctx.project_dir).as_posix()
    except ValueError:
        return str(ctx.plans_dir)
