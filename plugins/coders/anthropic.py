"""The built-in coder (``--coder anthropic[:MODEL]``): plan → edit → build →
tests → fix loop, in stepkit's own tool loop.

Plan, edit and every fix round are ONE conversation (an engine thread, kept
in the run dir between the implement rounds of a step: an API engine's
messages, or the session id an agent CLI resumes, with what the model read
in it): a fix round sees what it changed and why, and the earlier turns are
read from the prompt cache.  Every round sends the same instructions and
tool definitions, so the cached prefix stays valid; in the plan round the
write tools answer with an error.  (An engine without threads, such as the scripted one, gets
one call per round.)

1. **Plan** (writes refused), once per step: files to touch, risks,
   complexity 1–10.  A plan of complexity 7 or more is shown at the
   ``coder_plan_approval`` gate (unless ``CODER_AUTOAPPROVE=1``, or this is
   a fix round); any answer but "yes" ends with CODER_REJECTED.  The plan is
   kept in the run dir for the step, so a run paused at that gate resumes
   with the same plan, and a later implement round of the step (a
   step-level or review-driven fix) continues the conversation with the fix
   instructions and the diff since the coder's last round, never planning
   again.
2. **Edit** with the coder tools: writes outside the project dir or into
   the plan repo come back to the model as tool errors.  The model runs the
   tests it wrote before it answers (an answer "done" after an edit with no
   test run since is sent back once); it answers done, rejected or failed
   (with the reason).  When its turns run out it is asked for its answer
   without tools (the engine's final turn).
3. **Verify** with the step's gates (format on the step's changed files,
   lint, build, tests) of the same gate runner and gate plan the step uses; each passing result carries the hash of the tree it left, so
   the step-level gate can reuse it instead of running it again.
4. **Fix loop**: the first failing gate's evidence goes back to the model,
   at most ``coder_fix_budget`` (3) times; a failure whose signature repeats
   after a fix ends the loop at once with "no progress".  The budget, both
   rules and the fix-rules sentence are the step's own
   (:mod:`stepkit.protocol.fixloop`).

It ends with CODER_COMPLETE, CODER_REJECTED or CODER_FAILED and a short
report naming the changed files.  A model fault is a crash (the tree may be
half edited; the coder is never re-run).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from stepkit.engine.answers import Rejected, read_answer
from stepkit.hookspecs import hookimpl
from stepkit.plugins.coders.command import builtin_spec, check_builtin_spec, delegate_spec
from stepkit.plugins.coders.prompt import SENTINEL_RULE, build_coder_prompt
from stepkit.presets import presets as registered_presets
from stepkit.protocol.fixloop import FIX_RULES, coder_fix_budget, next_fix
from stepkit.protocol.state import StepState, step_state
from stepkit.protocol.switches import switch_on
from stepkit.records import (
    CoderResult,
    CoderSentinel,
    GateResult,
    Question,
    StageContext,
    StageFault,
    Usage,
)
from stepkit.workspace.files import atomic_write

DIFF_CHARS = 12_000  # the diff since the last round, in a fix round's task
KEPT_FILE_BYTES = 200_000  # the largest file whose text is kept for that diff
APPROVAL_COMPLEXITY = 7
PLAN_TURNS = 30
EDIT_TURNS = 80
COMPLETE: Final = "CODER_COMPLETE"
REJECTED: Final = "CODER_REJECTED"
FAILED: Final = "CODER_FAILED"


class CoderPlan(BaseModel):
    """The coder's plan, made with read-only tools before any edit."""

    files_to_touch: list[str] = Field(description="project-relative paths to create or change")
    risks: list[str] = Field(description="what could go wrong or break elsewhere")
    complexity: int = Field(ge=1, le=10, description="1 trivial … 10 very large or risky")
    approach: str = Field(description="how the change will be made, in a few sentences")


class CoderAnswer(BaseModel):
    """The coder's answer in every round of its conversation: one output
    format for all of them, so the cached prefix stays valid from the plan
    round to the last fix.  :class:`PlanRound` and :class:`EditRound` check
    that it fits the round (same JSON schema, title included)."""

    model_config = ConfigDict(
        title="CoderAnswer",
        json_schema_extra={
            "description": ("The coder's answer in every round of its conversation.")
        },
    )

    status: Literal["plan", "done", "rejected", "failed"] = Field(
        description="plan: the answer to the plan round (fill `plan`); done: the change is made "
        "and the tests you wrote pass; rejected: the step cannot or should not be "
        "done as planned; failed: you tried and could not make it work"
    )
    summary: str = Field(
        description="what was changed; or why it was rejected; or what still "
        "fails and why; for the plan, one sentence"
    )
    plan: CoderPlan | None = Field(None, description="the plan (status plan only); null otherwise")


# The two rounds' answers have no docstring of their own: a description would
# differ in their JSON schemas, and one output format is what keeps the cache.
class PlanRound(CoderAnswer):  # the plan round: status plan, with the plan
    @model_validator(mode="before")
    @classmethod
    def _a_bare_plan(cls, data: Any) -> Any:
        """A plan given on its own (a scripted engine's file) is the plan round's answer."""
        if isinstance(data, dict) and "status" not in data and "files_to_touch" in data:
            return {"status": "plan", "summary": data.get("approach", ""), "plan": data}
        return data

    @model_validator(mode="after")
    def _has_a_plan(self) -> PlanRound:
        if self.status != "plan" or self.plan is None:
            raise ValueError("this round asks for the plan: status plan, with `plan` filled in")
        return self


class EditRound(CoderAnswer):  # an edit or fix round: done, rejected or failed
    @model_validator(mode="after")
    def _is_an_outcome(self) -> EditRound:
        if self.status == "plan":
            raise ValueError("this round asks for the outcome: status done, rejected or failed")
        return self


CODER_SYSTEM = """You are the coder of one step of a phased implementation plan, in one
conversation: first you plan, then you make the change, then you fix what the harness's
gates report. Tools: read_file, list_dir, search, run_command, write_file, edit_file
(write_file and edit_file are refused while you plan). Paths are relative to the project
root; the plan repo is read-only.
Follow the implementation brief over the raw plan, match the patterns of the plan's
Context section and write tests from the Acceptance criteria. Do not weaken verification
(no skipped or deleted tests, no new ignore markers, no loosened lint or coverage
settings). Before you answer "done", run the tests you wrote (and the project's test
command) with run_command; stepkit then runs the step's gates (format, lint, build, tests:
their commands are in the task) and decides what passed; a failing gate comes back to you."""

#: What replaces the delegation prompt's sentinel rule: this coder answers in fields.
ANSWER_RULE = (
    "Answer each round with the JSON object asked for: the plan when asked to plan; after the "
    "change, status done (the change is made and its tests pass), rejected (the step cannot or "
    "should not be done as planned: say why) or failed (you tried and could not make it work: "
    "say what still fails)."
)
PLAN_TASK = (
    "Plan the change now: read what you need first (you cannot edit yet), then answer "
    "with status plan and the plan: the files to touch, the risks, the complexity from 1 "
    "(trivial) to 10 (very large or risky) and the approach. Keep to the step."
)
FIX_ROUND_TASK = (
    "Make the fix now: the minimal change the fix instructions ask for, no "
    "refactoring; keep the rest of the step. Run the tests before you answer."
)
UNTESTED = (
    "You changed files after your last test run. Run the tests you wrote with "
    "run_command, fix what fails, then answer again."
)
_WRITE_TOOLS = ("write_file", "edit_file")


@hookimpl
def stepkit_check_delegate(role: str, spec: str | None, presets: Mapping[str, Any]) -> str | None:
    """``anthropic[:MODEL]`` as the coder (the reviewer's is
    :mod:`stepkit.plugins.coders.reviewer`'s)."""
    return check_builtin_spec(spec, presets, ("anthropic",)) if role == "coder" else None


@hookimpl(trylast=True)
def stepkit_implement(ctx: StageContext) -> CoderResult | None:
    """Answer for ``anthropic`` and ``anthropic:MODEL`` (the default coder)."""
    kind, model = builtin_spec(
        delegate_spec(ctx.settings, "coder"), registered_presets(ctx.pm)
    ) or ("", "")
    if kind != "anthropic":
        return None
    return BuiltinCoder(ctx, f"anthropic:{model}" if model else None).run()


class BuiltinCoder:
    """One implement round of the built-in coder."""

    def __init__(self, ctx: StageContext, engine_spec: str | None):
        self.ctx = ctx
        self.engine_spec = engine_spec
        self.budget = coder_fix_budget(ctx.settings)
        self.turns = int(ctx.settings.get("coder_max_turns") or EDIT_TURNS)
        self.prompt = build_coder_prompt(ctx).replace(SENTINEL_RULE, ANSWER_RULE)
        self.gates: list[GateResult] = []
        self.tree: dict[str, str] | None = None  # file ids after the last gate, if it passed
        self.fixes = 0
        self.seen: dict[str, str] = {}  # what the model read in its conversation: path → digest

    def run(self) -> CoderResult:
        from stepkit.plugins.llm.engine import make_engine
        from stepkit.workspace import scope

        ctx = self.ctx
        spent_before = ctx.usage
        # file ids, not a full scope snapshot: the stage adapter keeps the
        # step's snapshot; the coder only names the files its round changed
        self.before = scope.file_ids(ctx.project_dir)
        engine = make_engine(self.engine_spec, ctx)
        self.thread = self._load_thread(engine)
        self.intro: str | None = None  # what a later implement round of the step is about
        # a fix round of the step (step-level or review-driven): the plan was made
        self.later_round = bool(step_state(ctx).fix_instructions) and self._has_plan()
        try:
            plan = self._plan(engine)
            rejection = self._approve(plan)
            if rejection:
                return self._result(REJECTED, rejection, plan, spent_before)
            sentinel, report = self._edit_and_verify(engine, plan)
        except StageFault as fault:
            reason = f"the built-in coder crashed: its model call failed: {fault.note}"
            return self._result(None, reason, None, spent_before)
        self._keep_tree()
        return self._result(sentinel, report, plan, spent_before)

    def _has_plan(self) -> bool:
        path = self._run_file("coder_plan")
        return path is not None and path.is_file()

    # -- plan ----------------------------------------------------------------

    def _ask(
        self, engine, node: str, task: str, schema: type[BaseModel], writes: bool, max_turns: int
    ) -> Any:
        """One round of the conversation: the same instructions and tool
        definitions every round (writes refused while planning)."""
        from stepkit.plugins.llm.tools import coder_tools

        # one memory of what the model read, for the whole conversation: a
        # write to a file it never read there is refused (the rounds share it)
        tools = coder_tools(
            self.ctx.project_dir, forbidden_dirs=[self.ctx.plans_dir], seen=self.seen
        )
        if not writes:
            tools = [
                replace(t, handler=_refuse_while_planning) if t.name in _WRITE_TOOLS else t
                for t in tools
            ]
        extra = {"thread": self.thread} if self.thread is not None else {}
        if self.thread is not None and self.thread.started and self.intro is None:
            # the prefix opened the thread in an earlier round
            self.intro = _new_round(step_state(self.ctx))
            task = f"{self.intro}\n\n{task}" if self.intro else task
        answer = engine.structured(
            node=node,
            system=CODER_SYSTEM,
            prefix=self.prompt,
            prompt=task,
            schema=schema,
            tools=tools,
            ctx=self.ctx,
            max_turns=max_turns,
            **extra,
        )
        self._save_thread()
        return answer

    def _plan(self, engine) -> CoderPlan:
        cache = self._run_file("coder_plan")
        if cache is not None and cache.is_file():
            return CoderPlan.model_validate_json(cache.read_text(encoding="utf-8"))
        plan = self._ask(
            engine, "coder_plan", PLAN_TASK, PlanRound, writes=False, max_turns=PLAN_TURNS
        ).plan
        if cache is not None:
            atomic_write(cache, plan.model_dump_json())
        self.ctx.emit("coder_plan", complexity=plan.complexity, files=plan.files_to_touch)
        return plan

    # -- the conversation, kept between the implement rounds of a step ----------

    def _run_file(self, kind: str):
        """Where the step's ``kind`` (its conversation, plan, last tree) is kept."""
        if self.ctx.run_dir is None:
            return None
        return self.ctx.run_dir / f"{kind}-{_step_or(self.ctx, 'x')}.json"

    def _thread_path(self):
        return self._run_file("coder_thread")

    def _load_thread(self, engine):
        """The step's conversation so far (a new one for its first round):
        an API engine's messages or an agent CLI's session id, and what the
        model has read in it (``self.seen``); None when the engine keeps no
        threads."""
        new_thread = getattr(engine, "new_thread", None)
        if new_thread is None:
            return None
        thread = new_thread()
        path = self._thread_path()
        if path is not None and path.is_file():
            try:
                kept = json.loads(path.read_text(encoding="utf-8"))
                if isinstance(
                    kept, list
                ):  # the messages alone, as a run of an earlier release kept them
                    kept = {"messages": kept}
                thread.messages[:] = kept.get("messages") or []
                thread.session = kept.get("session")
                self.seen.update(kept.get("seen") or {})
            except (OSError, ValueError, AttributeError):
                thread.messages.clear()  # unreadable: this round starts a new conversation
                thread.session = None
        return thread

    def _save_thread(self) -> None:
        path = self._thread_path()
        if self.thread is not None and path is not None:
            kept = {
                "messages": self.thread.messages,
                "session": self.thread.session,
                "seen": self.seen,
            }
            atomic_write(path, json.dumps(kept, ensure_ascii=False))

    def _changes_since_last_round(self) -> str | None:
        """The diff of the project since the coder's last round of this step
        ended (the harness's formatter, the user); None in its first round."""
        from stepkit.workspace import scope
        from stepkit.workspace.scope.diff import file_diff

        path = self._run_file("coder_tree")
        try:
            kept = json.loads(path.read_text(encoding="utf-8")) if path is not None else None
        except (OSError, ValueError):
            kept = None
        if not kept:
            return None
        now = scope.file_ids(self.ctx.project_dir)
        parts = []
        for rel in scope.changed_between(kept["ids"], now):
            old_id, new_id = kept["ids"].get(rel), now.get(rel)
            old = kept["texts"].get(rel)
            if old_id is not None and old is None:
                parts.append(f"--- a/{rel}\n+++ b/{rel}\n[changed; read it again]\n")
                continue
            new = (self.ctx.project_dir / rel).read_bytes() if new_id is not None else None
            parts.append(
                file_diff(rel, old_id, new_id, old.encode() if old is not None else None, new)
            )
        text = "".join(parts)
        return text if len(text) <= DIFF_CHARS else text[:DIFF_CHARS] + "\n[... diff cut ...]\n"

    def _keep_tree(self) -> None:
        """The file ids this round leaves, and the text of the files the step's
        rounds changed, for the next round's diff (in the run dir: the project's
        run store is not the coder's to touch)."""
        from stepkit.workspace import scope

        path = self._run_file("coder_tree")
        if path is None:
            return
        try:
            texts = json.loads(path.read_text(encoding="utf-8"))["texts"]
        except (OSError, ValueError, KeyError):
            texts = {}
        ids = scope.file_ids(self.ctx.project_dir)
        for rel in scope.changed_between(self.before, ids):
            full = self.ctx.project_dir / rel
            if rel in ids and full.is_file() and full.stat().st_size <= KEPT_FILE_BYTES:
                texts[rel] = full.read_text(encoding="utf-8", errors="replace")
        atomic_write(path, json.dumps({"ids": ids, "texts": texts}, ensure_ascii=False))

    def _approve(self, plan: CoderPlan) -> str | None:
        """None to go ahead, else why the plan was rejected."""
        if plan.complexity < APPROVAL_COMPLEXITY or switch_on(
            self.ctx.settings, "CODER_AUTOAPPROVE"
        ):
            return None
        if step_state(self.ctx).fix_instructions:
            return None  # a fix round: the step's plan was already approved
        if self.ctx.ask is None:
            return (
                f"the plan has complexity {plan.complexity}/10 and needs approval, but this "
                "run cannot ask (set CODER_AUTOAPPROVE=1 to skip the gate)"
            )
        question = Question(
            node="coder_plan_approval",
            kind="approval",
            options=["yes", "no"],
            aliases={"y": "yes", "n": "no"},
            other_as="no",
            text=(
                f"The coder's plan for step {_step_or(self.ctx, '?')} has complexity "
                f"{plan.complexity}/10.\n\n{_describe(plan)}\n\nProceed with this plan?"
            ),
        )
        answer = (self.ctx.ask(question) or "").strip()
        try:
            if read_answer(question, answer).route == "yes":
                return None
        except Rejected:  # a slip of yes or no is no yes
            pass
        return f"the plan (complexity {plan.complexity}/10) was not approved: answer {answer!r}"

    # -- edit, verify, fix -----------------------------------------------------

    def _edit_and_verify(self, engine, plan: CoderPlan) -> tuple[CoderSentinel, str]:
        if self.later_round:
            diff = self._changes_since_last_round()
            changed = (
                ""
                if diff is None  # its last round kept no tree (it ended early)
                else f"\nWhat changed in the project since your last round:\n```diff\n{diff}```"
                if diff
                else "\nNothing changed in the project since your last round."
            )
            task = FIX_ROUND_TASK + changed
        else:
            task = f"Make the change now. Your plan:\n{_describe(plan)}"
        previous = None
        while True:
            edit = self._edit(engine, task)
            if edit.status == "rejected":
                return REJECTED, f"the coder rejected the step: {edit.summary}"
            if edit.status == "failed":
                return FAILED, f"the coder could not make it work: {edit.summary}"
            failing = self._verify()
            if failing is None:
                return COMPLETE, edit.summary
            if (
                failing.status == "error"
            ):  # the machine, not the code: the step's own gate ends the run
                return COMPLETE, (
                    f"{edit.summary} (not verified: the {failing.name} gate hit an environment "
                    f"fault: {failing.summary})"
                )
            verdict = next_fix(failing, self.fixes, self.budget, previous)
            if verdict.stop is not None:
                return FAILED, f"{verdict.stop}\n{_gate_text(failing)}"
            previous = verdict.signature
            self.fixes += 1
            task = (
                f"The {failing.name} gate failed after your change (fix attempt {self.fixes} "
                f"of {self.budget}).\n{_gate_text(failing)}\n{FIX_RULES}"
            )

    def _edit(self, engine, task: str) -> EditRound:
        """One edit round; a "done" with files changed since the last test
        run is sent back once to run the tests first."""
        edit = self._ask(engine, "coder_edit", task, EditRound, writes=True, max_turns=self.turns)
        if edit.status == "done" and self.thread is not None and _untested(self.thread.messages):
            self.ctx.emit("coder_untested", note="asked to run its tests before answering")
            edit = self._ask(
                engine, "coder_edit", UNTESTED, EditRound, writes=True, max_turns=self.turns
            )
        return edit

    def _verify(self) -> GateResult | None:
        """Run the step's gates (format, lint, build, tests) as the step will;
        return the first failing gate (None: all good)."""
        from stepkit.records import GATE_ORDER
        from stepkit.workspace.gate_commands import run_gate_plan
        from stepkit.workspace.gates import GateRunner

        ctx = self.ctx
        # a passing gate is stamped with the tree it left, so the step's gate
        # can reuse it; the last stamp's ids are also the tree the report compares
        runner = GateRunner(
            ctx.pm,
            ctx.project_dir,
            ctx.config,
            ctx.log_dir(),
            stamp_passes=True,
            plan=run_gate_plan(ctx.settings, ctx.pm, ctx.project_dir, ctx.config),
            change_set=self._step_changes(),
            on_gate=lambda r: ctx.emit(
                "coder_gate", name=r.name, status=r.status, command=r.command
            ),
        )
        self.gates = runner.run(GATE_ORDER)
        self.tree = runner.tree_ids
        for result in self.gates:
            if result.failed:
                return result
        return None

    def _step_changes(self):
        """What the formatter is given, as the step's format gate: the files
        the step changed (the earlier rounds' and this one's); None (the
        changes against HEAD) when the run keeps no scope snapshot."""
        from stepkit.workspace import scope
        from stepkit.workspace.gates import existing_files

        state = step_state(self.ctx)
        if "changed_files" not in state.model_fields_set:
            return None
        earlier = state.changed_files
        project, plans = self.ctx.project_dir.resolve(), self.ctx.plans_dir.resolve()

        def changed() -> list[str]:
            now = scope.changed_between(self.before, scope.file_ids(project))
            mine = [p for p in now if not (project / p).is_relative_to(plans)]
            return existing_files(project, sorted({*earlier, *mine}))

        return changed

    # -- result ----------------------------------------------------------------

    def _result(
        self,
        sentinel: CoderSentinel | None,
        report: str,
        plan: CoderPlan | None,
        spent_before: Usage,
    ) -> CoderResult:
        """The report; ``sentinel`` None means the coder crashed (``report``
        is then the reason, and the last line)."""
        from stepkit.workspace import scope

        plans, project = self.ctx.plans_dir.resolve(), self.ctx.project_dir.resolve()
        # CODER_COMPLETE comes straight from a verify whose gates all passed
        # or did not run: the last passing gate's ids are the tree as it is
        after = (
            self.tree if sentinel == COMPLETE and self.tree is not None else scope.file_ids(project)
        )
        changed = [
            path
            for path in scope.changed_between(self.before, after)
            if not (project / path).is_relative_to(plans)
        ]
        lines = [f"Built-in coder: {report}"]
        if plan is not None:
            lines.append(
                f"Plan: complexity {plan.complexity}/10; files to touch: "
                f"{', '.join(plan.files_to_touch) or 'none named'}"
            )
        lines.append(f"Changed files: {', '.join(changed) if changed else 'none'}")
        if self.gates:
            lines.append("Gates: " + "; ".join(g.status_line() for g in self.gates))
        lines.append(f"Fix attempts: {self.fixes} of {self.budget}")
        lines.append(sentinel or report)
        return CoderResult(
            sentinel=sentinel,
            crashed=sentinel is None,
            text="\n".join(lines),
            changed_files=changed,
            gates=self.gates,
            cost_usd=self.ctx.usage.since(spent_before).cost_usd,
        )


def _step_or(ctx: StageContext, unknown: str) -> str:
    """The step's number, or ``unknown`` when the state names none."""
    step = step_state(ctx).step
    return unknown if step is None else str(step)


def _new_round(state: StepState) -> str:
    """The opening of a later implement round of the step, in the step's
    conversation: what the harness asks for now."""
    from stepkit.plugins.stages.documents import DIFF_CHARS, doc

    parts = [
        doc(title, text, DIFF_CHARS, shrink_fences=False).rstrip("\n")
        for value, title in (
            (state.fix_instructions, "Fix instructions"),
            (state.user_guidance, "User guidance"),
        )
        if (text := value.strip())
    ]
    if not parts:
        return ""  # the same round, resumed (after an approval pause)
    return "\n\n".join(
        ["A new implement round of this step: the harness asks for more work.", *parts]
    )


def _refuse_while_planning(args: dict[str, Any]) -> str:
    from stepkit.plugins.llm.tools import ToolError

    raise ToolError("not while planning: answer with the plan first; you edit in the next round")


def _untested(messages: list[dict[str, Any]]) -> bool:
    """Did the conversation write a file after its last run_command?  (The
    Messages API's ``tool_use`` blocks, or chat completions' ``tool_calls``.)"""
    calls = []
    for message in messages:
        if message.get("role") != "assistant":
            continue
        if isinstance(message.get("content"), list):
            calls += [
                block.get("name") for block in message["content"] if block.get("type") == "tool_use"
            ]
        calls += [
            (call.get("function") or {}).get("name") for call in message.get("tool_calls") or []
        ]
    last_write = max((i for i, name in enumerate(calls) if name in _WRITE_TOOLS), default=-1)
    last_run = max((i for i, name in enumerate(calls) if name == "run_command"), default=-1)
    return last_write > last_run


def _describe(plan: CoderPlan) -> str:
    risks = "\n".join(f"  - {r}" for r in plan.risks) or "  - none named"
    return (
        f"Approach: {plan.approach}\nFiles to touch: {', '.join(plan.files_to_touch)}\n"
        f"Risks:\n{risks}"
    )


def _gate_text(gate: GateResult) -> str:
    # the evidence already starts with "$ command" and "exit code: N"
    return gate.evidence or gate.status_line()
