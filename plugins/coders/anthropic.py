"""The built-in coder (``--coder anthropic[:MODEL]``): plan → edit → build →
tests → fix loop, in stepkit's own tool loop.

1. **Plan** with the read-only tools: files to touch, risks, complexity 1–10.
   A plan of complexity 7 or more is shown at the ``coder_plan_approval``
   gate (unless ``CODER_AUTOAPPROVE=1``, or this is a fix round); any answer
   but "yes" ends with CODER_REJECTED.  The plan is cached in the run dir
   by prompt, so a run paused at that gate resumes with the same plan.
2. **Edit** with the coder tools: writes outside the project dir or into
   the plan repo come back to the model as tool errors.
3. **Verify** with the build and test gates of the same gate runner the
   step uses; each passing result carries the hash of the tree it left, so
   the step-level gate can reuse it instead of running it again.
4. **Fix loop**: the first failing gate's evidence goes back to the model,
   at most ``coder_fix_budget`` (3) times; a failure whose signature repeats
   after a fix ends the loop at once with "no progress".

It ends with CODER_COMPLETE, CODER_REJECTED or CODER_FAILED and a short
report naming the changed files.  A model fault is a crash (the tree may be
half edited; the coder is never re-run).
"""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import BaseModel, Field

from stepkit.hookspecs import hookimpl
from stepkit.plugins.coders.command import builtin_spec, delegate_spec
from stepkit.plugins.coders.prompt import build_coder_prompt
from stepkit.protocol.switches import switch_on
from stepkit.records import CoderResult, GateResult, Question, StageContext, StageFault, Usage
from stepkit.workspace.files import atomic_write

FIX_BUDGET = 3
APPROVAL_COMPLEXITY = 7
PLAN_TURNS = 30
EDIT_TURNS = 80
COMPLETE, REJECTED, FAILED = "CODER_COMPLETE", "CODER_REJECTED", "CODER_FAILED"


class CoderPlan(BaseModel):
    """The coder's plan, made with read-only tools before any edit."""

    files_to_touch: list[str] = Field(description="project-relative paths to create or change")
    risks: list[str] = Field(description="what could go wrong or break elsewhere")
    complexity: int = Field(ge=1, le=10, description="1 trivial … 10 very large or risky")
    approach: str = Field(description="how the change will be made, in a few sentences")


class CoderEdit(BaseModel):
    """The coder's answer after an edit round."""

    status: Literal["done", "rejected"] = Field(
        description="done: the change is made; rejected: the step cannot or should not be "
                    "done as planned")
    summary: str = Field(description="what was changed, or why it was rejected")


PLAN_SYSTEM = """You are the coder of one step of a phased implementation plan.
First, plan the change: read the code you need with the tools (read_file, list_dir,
search, run_command; you cannot edit yet). Then answer with the plan: the files to
touch, the risks, the complexity from 1 (trivial) to 10 (very large or risky) and
the approach. Keep to the step; follow the implementation brief over the raw plan."""

EDIT_SYSTEM = """You are the coder of one step of a phased implementation plan.
Make the change with the tools: read_file, list_dir, search, run_command, write_file,
edit_file. Paths are relative to the project root; the plan repo is read-only.
Follow the implementation brief over the raw plan, match the patterns of the plan's
Context section and write tests from the Acceptance criteria. Do not weaken
verification (no skipped or deleted tests, no new ignore markers, no loosened lint
or coverage settings). stepkit runs the build and the full test suite after you.
When the change is made, answer with status "done" and a short summary; answer
"rejected" with the reason only if the step cannot or should not be done as planned."""


@hookimpl(trylast=True)
def stepkit_implement(ctx: StageContext) -> CoderResult | None:
    """Answer for ``anthropic`` and ``anthropic:MODEL`` (the default coder)."""
    kind, model = builtin_spec(delegate_spec(ctx.settings, "coder")) or ("", "")
    if kind != "anthropic":
        return None
    return BuiltinCoder(ctx, f"anthropic:{model}" if model else None).run()


class BuiltinCoder:
    """One implement round of the built-in coder."""

    def __init__(self, ctx: StageContext, engine_spec: str | None):
        self.ctx = ctx
        self.engine_spec = engine_spec
        self.budget = int(ctx.settings.get("coder_fix_budget") or FIX_BUDGET)
        self.prompt = build_coder_prompt(ctx)
        self.gates: list[GateResult] = []
        self.tree: dict[str, str] | None = None  # file ids after the last gate, if it passed
        self.fixes = 0

    def run(self) -> CoderResult:
        from stepkit.plugins.llm.engine import make_engine
        from stepkit.workspace import scope

        ctx = self.ctx
        spent_before = ctx.usage
        # file ids, not a full scope snapshot: the stage adapter keeps the
        # step's snapshot; the coder only names the files its round changed
        self.before = scope.file_ids(ctx.project_dir)
        engine = make_engine(self.engine_spec, ctx)
        try:
            plan = self._plan(engine)
            rejection = self._approve(plan)
            if rejection:
                return self._result(REJECTED, rejection, plan, spent_before)
            sentinel, report = self._edit_and_verify(engine, plan)
        except StageFault as fault:
            reason = f"the built-in coder crashed: its model call failed: {fault.note}"
            return self._result(None, reason, None, spent_before)
        return self._result(sentinel, report, plan, spent_before)

    # -- plan ----------------------------------------------------------------

    def _plan(self, engine) -> CoderPlan:
        from stepkit.plugins.llm.tools import read_only_tools

        cache = self._plan_cache()
        if cache is not None and cache.is_file():
            return CoderPlan.model_validate_json(cache.read_text(encoding="utf-8"))
        plan = engine.structured(
            node="coder_plan", system=PLAN_SYSTEM, prefix=self.prompt,
            prompt="Plan the change now (read what you need first).", schema=CoderPlan,
            tools=read_only_tools(self.ctx.project_dir), ctx=self.ctx, max_turns=PLAN_TURNS,
        )
        if cache is not None:
            atomic_write(cache, plan.model_dump_json())
        self.ctx.emit("coder_plan", complexity=plan.complexity, files=plan.files_to_touch)
        return plan

    def _plan_cache(self):
        if self.ctx.run_dir is None:
            return None
        digest = hashlib.sha256(self.prompt.encode()).hexdigest()[:16]
        return self.ctx.run_dir / f"coder_plan-{digest}.json"

    def _approve(self, plan: CoderPlan) -> str | None:
        """None to go ahead, else why the plan was rejected."""
        if plan.complexity < APPROVAL_COMPLEXITY or switch_on(self.ctx.settings, "CODER_AUTOAPPROVE"):
            return None
        if self.ctx.state.get("fix_instructions"):
            return None  # a fix round: the step's plan was already approved
        if self.ctx.ask is None:
            return (f"the plan has complexity {plan.complexity}/10 and needs approval, but this "
                    "run cannot ask (set CODER_AUTOAPPROVE=1 to skip the gate)")
        question = Question(
            node="coder_plan_approval", kind="approval", options=["yes", "no"],
            text=(f"The coder's plan for step {self.ctx.state.get('step', '?')} has complexity "
                  f"{plan.complexity}/10.\n\n{_describe(plan)}\n\nProceed with this plan?"),
        )
        answer = (self.ctx.ask(question) or "").strip()
        if answer.lower() in ("yes", "y"):
            return None
        return f"the plan (complexity {plan.complexity}/10) was not approved: answer {answer!r}"

    # -- edit, verify, fix -----------------------------------------------------

    def _edit_and_verify(self, engine, plan: CoderPlan) -> tuple[str, str]:
        from stepkit.plugins.llm.tools import coder_tools
        from stepkit.workspace.stall import failure_signature, is_stalled

        tools = coder_tools(self.ctx.project_dir, forbidden_dirs=[self.ctx.plans_dir])
        task = f"Make the change now. Your plan:\n{_describe(plan)}"
        previous = None
        while True:
            edit = engine.structured(
                node="coder_edit", system=EDIT_SYSTEM, prefix=self.prompt, prompt=task,
                schema=CoderEdit, tools=tools, ctx=self.ctx, max_turns=EDIT_TURNS,
            )
            if edit.status == "rejected":
                return REJECTED, f"the coder rejected the step: {edit.summary}"
            failing = self._verify()
            if failing is None:
                return COMPLETE, edit.summary
            signature = failure_signature(failing)
            if is_stalled(previous, signature):
                return FAILED, (f"no progress: the {failing.name} gate failed the same way after "
                                f"fix attempt {self.fixes}\n{_gate_text(failing)}")
            if self.fixes >= self.budget:
                return FAILED, (f"fix budget spent: {self.fixes} of {self.budget} fix attempts "
                                f"used and the {failing.name} gate still fails\n{_gate_text(failing)}")
            previous = signature
            self.fixes += 1
            task = (f"The {failing.name} gate failed after your change (fix attempt {self.fixes} "
                    f"of {self.budget}).\n{_gate_text(failing)}\n"
                    "Make the minimal fix, no refactoring. Regressions caused by this change are "
                    "in scope.")

    def _verify(self) -> GateResult | None:
        """Run build and tests; return the first failing gate (None: all good)."""
        from stepkit.workspace.gate_commands import run_gate_plan
        from stepkit.workspace.gates import GateRunner

        ctx = self.ctx
        # a passing gate is stamped with the tree it left, so the step's gate
        # can reuse it; the last stamp's ids are also the tree the report compares
        runner = GateRunner(
            ctx.pm, ctx.project_dir, ctx.config, ctx.log_dir(), stamp_passes=True,
            plan=run_gate_plan(ctx.settings, ctx.pm, ctx.project_dir, ctx.config),
            on_gate=lambda r: ctx.emit("coder_gate", name=r.name, status=r.status, command=r.command),
        )
        self.gates = runner.run(("build", "tests"))
        self.tree = runner.tree_ids
        for result in self.gates:
            if result.failed:
                return result
        return None

    # -- result ----------------------------------------------------------------

    def _result(self, sentinel: str | None, report: str, plan: CoderPlan | None,
                spent_before: Usage) -> CoderResult:
        """The report; ``sentinel`` None means the coder crashed (``report``
        is then the reason, and the last line)."""
        from stepkit.workspace import scope

        plans, project = self.ctx.plans_dir.resolve(), self.ctx.project_dir.resolve()
        # CODER_COMPLETE comes straight from a verify whose gates all passed
        # or did not run: the last passing gate's ids are the tree as it is
        after = self.tree if sentinel == COMPLETE and self.tree is not None else scope.file_ids(project)
        changed = [path for path in scope.changed_between(self.before, after)
                   if not (project / path).is_relative_to(plans)]
        lines = [f"Built-in coder: {report}"]
        if plan is not None:
            lines.append(f"Plan: complexity {plan.complexity}/10; files to touch: "
                         f"{', '.join(plan.files_to_touch) or 'none named'}")
        lines.append(f"Changed files: {', '.join(changed) if changed else 'none'}")
        if self.gates:
            lines.append("Gates: " + "; ".join(g.status_line() for g in self.gates))
        lines.append(f"Fix attempts: {self.fixes} of {self.budget}")
        lines.append(sentinel or report)
        return CoderResult(sentinel=sentinel, crashed=sentinel is None, text="\n".join(lines),
                           changed_files=changed, gates=self.gates,
                           cost_usd=self.ctx.usage.since(spent_before).cost_usd)


def _describe(plan: CoderPlan) -> str:
    risks = "\n".join(f"  - {r}" for r in plan.risks) or "  - none named"
    return (f"Approach: {plan.approach}\nFiles to touch: {', '.join(plan.files_to_touch)}\n"
            f"Risks:\n{risks}")


def _gate_text(gate: GateResult) -> str:
    # the evidence already starts with "$ command" and "exit code: N"
    return gate.evidence or gate.status_line()

