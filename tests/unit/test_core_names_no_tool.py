"""The core judges a tool's output through the tools' declarations
(:mod:`stepkit.workspace.runners`, :mod:`stepkit.workspace.tools`): no
module of ``stepkit/workspace`` spells a test runner's, linter's or package
manager's name in its code.  Every string constant but a
docstring is read (comments are not code), and every name it binds."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKSPACE = ROOT / "stepkit" / "workspace"
TOOLS = (
    "pytest",
    "py.test",
    "unittest",
    "jest",
    "vitest",
    "mocha",
    "node --test",
    "go test",
    "cargo",
    "nextest",
    "libtest",
    "ctest",
    "maven",
    "mvn",
    "surefire",
    "gradle",
    "dotnet",
    "mix test",
    "exunit",
    "rspec",
    "minitest",
    "phpunit",
    "deno",
    # linters, type checkers and formatters (stepkit.plugins.tools)
    "ruff",
    "eslint",
    "mypy",
    "clippy",
    "flake8",
    "pylint",
    "golangci-lint",
    "rubocop",
    "pyright",
    "tsc",
    "black",
    "prettier",
    "isort",
    "bandit",
    # package managers and environment tools
    "uv",
    "npm",
    "npx",
    "pip",
    "yarn",
    "pnpm",
    "pdm",
    "poetry",
    "pipenv",
    "corepack",
    "docker",
    "rustup",
    "bundler",
    "composer",
)
_TOOL = re.compile(
    r"(?<![\w.-])(?:" + "|".join(map(re.escape, TOOLS)) + r")(?![\w-])", re.IGNORECASE
)


def tool_names(path: Path) -> list[str]:
    """``line: text`` of each string constant (docstrings left out) or bound
    name in ``path`` that spells a tool's name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        text = None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = None if id(node) in docstrings else node.value
        elif isinstance(node, ast.Name | ast.FunctionDef | ast.ClassDef):
            text = getattr(node, "id", None) or getattr(node, "name", None)
        if text and _TOOL.search(text.replace("_", " ")):
            found.append(f"{node.lineno}: {text[:80]!r}")
    return found


MODULES = sorted(str(p.relative_to(WORKSPACE)) for p in WORKSPACE.rglob("*.py"))


@pytest.mark.parametrize("module", MODULES)
def test_no_core_module_names_a_tool(module):
    assert tool_names(WORKSPACE / module) == []


def test_a_tool_in_a_string_is_caught_and_one_in_a_docstring_is_not(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('"""Reads pytest."""\n\ndef f(runner):\n    return runner == "jest"\n')
    assert tool_names(bad) == ["4: 'jest'"]
