"""Approval is bound to the verified tree.

When the tests gate passes (the last of the gates), the step-runner records
the tree it verified (``verified_tree``: the content id of every tracked and
untracked non-ignored file, the plan repo left out, which the harness itself
writes after the gates).  The graph's ``recheck`` compares the tree with it
before the run ends successfully and at every resume: a file changed, added
or deleted since (an edit while the run was paused, a process the coder
left behind) sends the run back to the gates, the changed files named in
``tree_changes``, ``fix_history`` and the run's ``recheck`` event, so
STEP_COMPLETE is only ever printed for a tree the gates passed.
"""

from __future__ import annotations

from pathlib import Path

from stepkit.protocol.state import step_state
from stepkit.records import Outcome, StageContext
from stepkit.text import first_of

#: Where the gates start again.
FIRST_GATE = "verify_format_lint"
#: Nodes on the way to the coder: the gates run after it anyway, and an
#: answer given there (the revision asked for) is not dropped.
_TOWARDS_CODER = frozenset({"fix_loop_gate", "get_revision", "revise_from_choice", "implement"})
_NAMED = 10


def verified_tree(project_dir: Path, plans_dir: Path) -> dict[str, str]:
    """``{path: content id}`` of the project's files, the plan repo left out."""
    from stepkit.workspace.scope import PlanScope, file_ids

    plans = PlanScope.of(project_dir, plans_dir)
    return {rel: oid for rel, oid in file_ids(project_dir).items() if not plans.covers(rel)}


def with_verified_tree(ctx: StageContext, outcome: Outcome) -> Outcome:
    """The tests gate's ``outcome`` with the tree it verified when it passed
    (an empty record otherwise: nothing is verified until it passes again)."""
    passed = outcome.route == "pass"
    tree = verified_tree(ctx.project_dir, ctx.plans_dir) if passed else {}
    return outcome.model_copy(update={"updates": {**outcome.updates, "verified_tree": tree}})


def recheck(ctx: StageContext, path: list[str]) -> Outcome | None:
    """The step-runner's ``recheck``: back to the gates when the tree is not
    the one they verified (None: it is, or no verified tree applies)."""
    verified = step_state(ctx).verified_tree
    if not verified or ctx.node in _TOWARDS_CODER or _coder_ran_since_tests(path):
        return None
    from stepkit.workspace.scope import changed_between

    changed = changed_between(verified, verified_tree(ctx.project_dir, ctx.plans_dir))
    if not changed:
        return None
    shown = first_of(changed, _NAMED)
    return Outcome(
        route=FIRST_GATE,
        updates={
            "tree_changes": changed,
            "verified_tree": {},
            "fix_history": [
                f"the tree changed after the gates verified it ({shown}): the gates run again"
            ],
        },
    )


def _coder_ran_since_tests(path: list[str]) -> bool:
    """The coder ran after the last tests gate (its changes are checked by the gates after it)."""
    last = {node: index for index, node in enumerate(path)}
    return last.get("implement", -1) > last.get("verify_tests", -1)
