"""The step-level fix instructions name the failing command once, with the
evidence the real gate runner condensed (its own ``$ command`` / ``exit
code`` header)."""

from __future__ import annotations

from pathlib import Path

from stepkit.config import Config
from stepkit.pluginmanager import get_plugin_manager
from stepkit.protocol.nodes.verify import fix_loop_gate
from stepkit.records import GateResult, StageContext
from stepkit.workspace.evidence import condense

RUFF_OUTPUT = "greet.py:1:8: F401 [*] `os` imported but unused\nFound 1 error.\n"


def test_fix_instructions_have_no_duplicated_lines(tmp_path: Path):
    evidence = condense(get_plugin_manager(), "lint", "ruff check", RUFF_OUTPUT, 1, None)
    failing = GateResult(
        name="lint",
        status="fail",
        command="ruff check",
        exit_code=1,
        evidence=evidence.text,
        condensed=evidence,
        summary="1 error",
    ).model_dump()
    ctx = StageContext(
        node="fix_loop_gate",
        project_dir=tmp_path,
        plans_dir=tmp_path / "plans",
        state={"gates": [failing], "max_fix_attempts": 2},
        settings={},
        config=Config(),
        pm=None,
    )

    instructions = fix_loop_gate(ctx).updates["fix_instructions"]

    lines = [line for line in instructions.splitlines() if line.strip()]
    assert len(lines) == len(set(lines)), instructions
    assert "$ ruff check" in lines and "exit code: 1" in lines and "F401" in instructions
    # evidence without a header (a custom gate runner's) still names the command
    bare = {**failing, "evidence": "F401 unused import"}
    ctx.state = {"gates": [bare], "max_fix_attempts": 2}
    assert "$ ruff check\nexit code: 1\nF401" in fix_loop_gate(ctx).updates["fix_instructions"]
