"""A tool a plugin declares through ``stepkit_tools`` is judged as the
built-in ones are (its fault signatures, its lockfiles, its error lines);
the built-in tools count whatever plugins a manager has."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from types import SimpleNamespace

from stepkit.workspace.gates import run_gate
from stepkit.workspace.lintkeys import lint_keys
from stepkit.workspace.scope.lockfiles import tracked_lockfiles
from stepkit.workspace.tools import Fault, Tool, Tools, builtin_tools, tools
from tests.support.evidence_logs import evidence_pm
from tests.support.gitrepo import git, write_files

ROOT = Path(__file__).resolve().parents[2]
CONDA = "EnvironmentLocationNotFound: Not a conda environment: /opt/envs/app\n"


def _hooks_md_plugin() -> SimpleNamespace:
    """The plugin of hooks.md's ``stepkit_tools`` example, as written."""
    doc = (ROOT / "hooks.md").read_text(encoding="utf-8")
    section = doc.split("### `stepkit_tools()", 1)[1]
    example = re.search(r"```python\n(.+?)\n```", section, flags=re.DOTALL).group(1)
    namespace: dict = {"stepkit": sys.modules["stepkit"]}
    exec(example, namespace)  # noqa: S102 - the documented example, run as a user would

    return SimpleNamespace(stepkit_tools=namespace["stepkit_tools"])


def _lint_gate(pm, tmp_path: Path, output: str, code: int):
    (tmp_path / "out.txt").write_text(output)
    return run_gate(
        "lint",
        f"cat out.txt; exit {code}",
        "t",
        tmp_path,
        tmp_path / "logs",
        60,
        60,
        pm,
        env=dict(os.environ),
    )


def test_a_declared_fault_signature_makes_a_failed_gate_an_environment_fault(tmp_path):
    pm = evidence_pm()
    pm.register(_hooks_md_plugin(), "conda-plugin")
    gate = _lint_gate(pm, tmp_path, f"running lint\n{CONDA}", 1)
    assert gate.status == "error"
    assert gate.summary.startswith("conda: no environment at /opt/envs/app")


def test_without_the_declaration_the_same_output_is_a_failure_of_the_code(tmp_path):
    gate = _lint_gate(evidence_pm(), tmp_path, f"running lint\n{CONDA}", 1)
    assert gate.status == "fail"


def test_a_declared_lockfile_git_tracks_is_guarded(tmp_path):
    write_files(tmp_path, {"conda-lock.yml": "version: 1\n", "uv.lock": "version = 1\n"})
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    pm = evidence_pm()
    assert tracked_lockfiles(tmp_path) == ["uv.lock"]
    pm.register(_hooks_md_plugin(), "conda-plugin")
    assert tracked_lockfiles(tmp_path, tools(pm).lockfiles) == ["conda-lock.yml", "uv.lock"]


def test_a_declared_one_line_format_is_keyed_by_file_rule_and_message():
    output = "a.zz|Z101|unused thing\nb.zz|Z202|bad name\n"
    assert lint_keys(output) == []
    table = Tools([Tool(name="zlint", lines=(r"^(?P<file>[^|]+)\|(?P<rule>\w+)\|(?P<msg>.+)$",))])
    assert lint_keys(output, judged_by=table) == ["a.zz: Z101 unused thing", "b.zz: Z202 bad name"]


def test_fault_signatures_naming_a_group_alike_still_match_in_one_pass():
    """Two tools' signatures may both name a group ``why``: the one pattern
    every line is matched against first leaves the names out."""
    table = Tools(
        [
            Tool(name="a", faults=(Fault(r"^alpha: (?P<why>.+)$", lambda m, *_: m["why"]),)),
            Tool(
                name="b",
                faults=(Fault(r"^BETA: (?P<why>.+)$", lambda m, *_: m["why"], re.IGNORECASE),),
            ),
        ]
    )
    assert table.any_fault.search("beta: down") and not table.any_fault.search("gamma: x")


def test_the_built_in_tools_count_for_a_manager_without_their_plugin():
    pm = evidence_pm()
    assert pm.get_plugin("stepkit.plugins.tools") is None
    names = [t.name for t in tools(pm).declared]
    assert names == [t.name for t in builtin_tools().declared]
    assert names.index("rustup") < names.index("cargo")
    assert names.index("mypy") < names.index("eslint")
