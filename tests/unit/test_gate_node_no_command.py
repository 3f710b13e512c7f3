"""A gate node with no command runs nothing, so it is not watched and holds
nothing to put back (:func:`stepkit.protocol.watched.watched`'s ``idle``);
a gate with a command still is.  A real git repo, the real node."""

from __future__ import annotations

from pathlib import Path

import pytest

from stepkit.protocol.nodes import verify
from stepkit.protocol.watched import RECORD
from stepkit.workspace import scope
from stepkit.workspace.gate_commands import RUN_PLAN_KEY, GatePlan, PlannedCommand
from tests.support.coder import make_ctx
from tests.support.gitrepo import init_repo


@pytest.mark.parametrize(
    ("node", "gate"), [(verify.verify_build, "build"), (verify.verify_format_lint, "lint")]
)
def test_a_gate_with_no_command_is_not_watched_and_one_with_a_command_is(
    node, gate, tmp_path: Path, monkeypatch
):
    repo = init_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    looked: list[Path] = []
    monkeypatch.setattr(scope, "git_internals", lambda where: looked.append(where))
    for command in (None, "true"):
        plan = GatePlan(commands={gate: PlannedCommand(command=command)})
        ctx = make_ctx(repo, settings={RUN_PLAN_KEY: plan.model_dump()})
        (ctx.run_dir / RECORD).unlink(missing_ok=True)
        outcome = node(ctx)
        ran = next(g for g in outcome.updates["gates"] if g["name"] == gate)
        assert ran["status"] == ("not_run" if command is None else "pass"), ran
        assert (ctx.run_dir / RECORD).exists() == (command is not None)
        assert len(looked) == (0 if command is None else 1)
