"""A runner a plugin declares through ``stepkit_test_runners`` is judged as
the built-in ones are; the built-in runners judge whatever plugins a
manager has."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from types import SimpleNamespace

from stepkit.workspace.gates import run_gate
from stepkit.workspace.runners import builtin_runners, runners
from tests.support.evidence_logs import evidence_pm

ROOT = Path(__file__).resolve().parents[2]


def _hooks_md_plugin() -> SimpleNamespace:
    """The plugin of hooks.md's ``stepkit_test_runners`` example, as written."""
    doc = (ROOT / "hooks.md").read_text(encoding="utf-8")
    section = doc.split("### `stepkit_test_runners()", 1)[1]
    example = re.search(r"```python\n(.+?)\n```", section, flags=re.DOTALL).group(1)
    namespace: dict = {"stepkit": sys.modules["stepkit"]}
    exec(example, namespace)  # noqa: S102 - the documented example, run as a user would

    return SimpleNamespace(stepkit_test_runners=namespace["stepkit_test_runners"])


def _tests_gate(pm, tmp_path: Path, output: str, code: int = 0):
    script = tmp_path / "out.txt"
    script.write_text(output)
    command = f"cat out.txt; exit {code}"
    return run_gate(
        "tests", command, "t", tmp_path, tmp_path / "logs", 60, 60, pm, env=dict(os.environ)
    )


def test_a_declared_runners_no_test_line_makes_the_gate_not_run(tmp_path):
    pm = evidence_pm()
    pm.register(_hooks_md_plugin(), "prove-plugin")
    assert runners(pm).named("prove") is not None
    gate = _tests_gate(pm, tmp_path, "Files=0, Tests=0,  0 wallclock secs\nResult: NOTESTS\n")
    assert gate.status == "not_run" and gate.summary.startswith("prove: no test files (exit 0)")
    ran = _tests_gate(pm, tmp_path, "Files=2, Tests=7,  1 wallclock secs\nResult: PASS\n")
    assert ran.status == "pass"


def test_without_the_declaration_the_same_output_verifies_nothing(tmp_path):
    gate = _tests_gate(evidence_pm(), tmp_path, "Files=2, Tests=7,  1 wallclock secs\n")
    assert gate.status == "not_run" and "no test runner's summary" in gate.summary


def test_the_built_in_runners_judge_a_manager_without_their_plugin():
    pm = evidence_pm()
    assert pm.get_plugin("stepkit.plugins.runners") is None
    names = [r.name for r in runners(pm).declared]
    assert names == [r.name for r in builtin_runners().declared]
    assert names.index("vitest") < names.index("jest")
    assert names.index("cargo nextest") < names.index("cargo")
