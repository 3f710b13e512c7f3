"""The core and the built-in plugins meet only through hooks and the protocol:

- no module of ``stepkit/`` imports a built-in plugin (``stepkit.plugins.*``,
  or the top-level ``plugins``), counting imports inside functions and
  ``TYPE_CHECKING`` blocks: every file's AST is walked;
- no built-in plugin spells a node id of the step-runner graph as a string:
  what a plugin needs to know about the node it serves (its stage, the
  stage's effort) comes from the protocol (``stepkit.protocol.stages``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from stepkit.protocol.graphs import STEP_RUNNER
from tests.unit.test_layering import MODULES, imported

ROOT = Path(__file__).resolve().parents[2]
PLUGIN_PACKAGES = ("stepkit.plugins", "plugins")
#: modules still importing a built-in plugin, and why they are left for now
NOT_YET: dict[str, str] = {}
CORE = sorted(name for name in MODULES if not name.startswith("stepkit.plugins"))


def plugin_imports(module: str, path: Path) -> list[str]:
    return sorted(
        name
        for name in imported(module, path)
        if any(name == p or name.startswith(p + ".") for p in PLUGIN_PACKAGES)
    )


@pytest.mark.parametrize(
    "module",
    [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=NOT_YET[name]))
        if name in NOT_YET
        else name
        for name in CORE
    ],
)
def test_the_core_never_imports_a_built_in_plugin(module):
    assert plugin_imports(module, MODULES[module]) == []


def test_an_import_inside_a_function_is_caught(tmp_path):
    bad = tmp_path / "api.py"
    bad.write_text(
        "def check():\n    from stepkit.plugins.coders import presets\n    import plugins.ask\n"
    )
    assert plugin_imports("stepkit.api", bad) == [
        "plugins.ask",
        "stepkit.plugins.coders",
        "stepkit.plugins.coders.presets",
    ]


NODE_IDS = frozenset(yaml.safe_load(STEP_RUNNER.read_text(encoding="utf-8"))["nodes"])


def node_id_literals(path: Path, root: Path = ROOT) -> list[str]:
    """``path:line: 'id'`` (``path`` relative to ``root``) for each string
    constant (f-string parts and dict keys included, docstrings not) that is
    a node id of the step-runner."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        f"{path.relative_to(root)}:{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value in NODE_IDS
        and id(node) not in docstrings
    ]


def test_no_plugin_spells_a_node_id():
    found = [
        hit for path in sorted((ROOT / "plugins").rglob("*.py")) for hit in node_id_literals(path)
    ]
    assert found == []


def test_a_node_id_in_a_plugin_is_caught(tmp_path):
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        '"""Mentions orient in prose only."""\n'
        'EFFORT = {"independent_review": "high"}\n'
        'def f(ctx):\n    return ctx.node == "write_handoff" or f"{ctx.node}" == "x"\n'
    )
    assert node_id_literals(plugin, tmp_path) == [
        "plugin.py:2: 'independent_review'",
        "plugin.py:4: 'write_handoff'",
    ]
