"""The independent reviewer (``--reviewer anthropic[:MODEL] | command:SHELL |
claude | codex | aider | opencode``).

Every reviewer gets the same prompt: the step's Acceptance criteria, the
changed files, the harness's tamper flags, the step's diff and the plan.
Its report is the review; each finding carries a severity tag and 🔴 marks
a critical one (what route_review sends back to the coder).

A review that did not run properly is a fault, never findings: a model
fault, a command that crashed, timed out, exited non-zero or printed
nothing, a preset whose tool reported an error, and a reviewer that changed
the project tree (reviews are read-only).  The two attempts of
independent_review are the graph's business; nothing is retried here.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from stepkit.hookspecs import hookimpl
from stepkit.records import ReviewResult, StageContext, StageFault

REVIEW_TURNS = 40

REVIEW_SYSTEM = """You are an independent code reviewer. You did not write this change.
Review the step's diff against the plan's Acceptance criteria, reading the project with
the tools where the diff is not enough. Do not change anything.

Write the review as findings, one per line, each starting with its severity tag:
- 🔴 critical: an Acceptance criterion not met, a bug or regression, a security problem,
  or weakened verification (deleted or skipped tests, new ignore markers, loosened lint
  or coverage settings). The step is not done until it is fixed.
- 🟡 should fix: a real problem that does not block the step.
- 🟢 minor: style, naming, a nit.
Name the file (and the criterion) each finding is about. Use 🔴 only for critical
findings. If there is nothing to report, write "No findings." """


class ReviewAnswer(BaseModel):
    """The structured output of independent_review (field name fixed by DESIGN.md)."""

    review_report: str = Field(description="the findings, one per line, each starting with "
                                           "🔴, 🟡 or 🟢; or 'No findings.'")


def build_review_prompt(state: dict[str, Any], with_instructions: bool = True) -> str:
    """The reviewer's task and material, from the run state (``step``,
    ``title``, ``plan_text``, ``diff``, ``changed_files``, ``tamper_flags``);
    ``with_instructions`` adds :data:`REVIEW_SYSTEM` (for external CLIs, which
    get no system prompt from stepkit)."""
    from stepkit.planrepo.sections import plan_section

    plan = str(state.get("plan_text") or "")
    criteria = plan_section(plan, "Acceptance criteria") or "(the plan has no Acceptance criteria section)"
    changed = state.get("changed_files") or []
    flags = state.get("tamper_flags") or []
    diff = str(state.get("diff") or "").strip() or "(empty diff)"
    title = str(state.get("title") or "")
    return "\n\n".join([
        f"# Review step {state.get('step', '?')}" + (f": {title}" if title else ""),
        *([REVIEW_SYSTEM] if with_instructions else []),
        f"## Acceptance criteria\n{criteria.strip()}",
        "## Changed files\n" + ("\n".join(f"- {f}" for f in changed) or "none"),
        "## Tamper flags raised by the harness (judge each)\n"
        + ("\n".join(f"- {f}" for f in flags) or "none"),
        f"## Diff\n```diff\n{diff}\n```",
        f"## Plan\n{plan.strip()}",
    ]) + "\n"


@hookimpl(trylast=True)
def stepkit_review(ctx: StageContext) -> ReviewResult | None:
    """Answer for ``anthropic[:MODEL]``, ``command:SHELL`` and the presets."""
    from stepkit.plugins.coders.command import builtin_spec, delegate_spec
    from stepkit.plugins.coders.presets import PRESETS

    kind, arg = builtin_spec(delegate_spec(ctx.settings, "reviewer")) or ("", "")
    if kind == "anthropic":
        return _llm_review(ctx, f"anthropic:{arg}" if arg else None)
    if kind == "command":
        if not arg.strip():
            return ReviewResult(fault="--reviewer command: names no command")
        return _command_review(ctx, arg.strip(), None)
    if kind != "preset":
        return None
    preset = PRESETS[arg]
    with preset.session(ctx, review=True) as call:
        return _command_review(ctx, preset.command(call), preset, call)


def _llm_review(ctx: StageContext, engine_spec: str | None) -> ReviewResult:
    from stepkit.plugins.llm.engine import make_engine
    from stepkit.plugins.llm.tools import read_only_tools

    engine = make_engine(engine_spec, ctx)
    try:
        answer = engine.structured(
            node=ctx.node or "independent_review", system=REVIEW_SYSTEM,
            prefix=build_review_prompt(ctx.state, with_instructions=False),
            prompt="Review the change now and answer with the review_report.",
            schema=ReviewAnswer, tools=read_only_tools(ctx.project_dir), ctx=ctx,
            max_turns=REVIEW_TURNS,
        )
    except StageFault as fault:
        return ReviewResult(fault=fault.note)
    if not answer.review_report.strip():
        return ReviewResult(fault="the reviewer returned an empty report")
    return ReviewResult(review_report=answer.review_report.strip())


def _command_review(ctx: StageContext, command: str, preset, call=None) -> ReviewResult:
    from stepkit.plugins.coders.command import record_usage, reported_usage, run_delegate

    name = f"reviewer-{preset.name}" if preset else "reviewer"
    try:
        run = run_delegate(ctx, command, build_review_prompt(ctx.state), name=name,
                           timeout=ctx.config.timeouts.reviewer, env=preset.env(call) if preset else None,
                           spends=preset is not None)
    except StageFault as fault:  # the budget is spent
        return ReviewResult(fault=fault.note)
    parsed = preset.read(run.output, call.scratch) if preset is not None else None
    record_usage(ctx, name, parsed.usage if parsed is not None else reported_usage(run))
    crash = run.crash("the reviewer")
    if crash:
        return ReviewResult(fault=f"{crash} (log: {run.log})")
    if run.exit_code != 0:
        return ReviewResult(fault=f"the reviewer exited with code {run.exit_code} (log: {run.log})")
    report = run.output
    if preset is not None:
        if parsed is None:
            return ReviewResult(fault=f"could not read {preset.name}'s output (log: {run.log})")
        if parsed.errors or parsed.failed:
            problems = [*parsed.errors, *([parsed.failed] if parsed.failed else [])]
            return ReviewResult(fault=f"{preset.name} reported: {'; '.join(problems)[:500]}")
        report = parsed.text
    if not report.strip():
        return ReviewResult(fault=f"the reviewer printed no report (log: {run.log})")
    return ReviewResult(review_report=report.strip())

