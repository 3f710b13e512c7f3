"""The imports run one way: a lower layer never imports a higher one.

Every module of ``stepkit`` and of ``plugins`` (shipped as
``stepkit.plugins``) is parsed with ``ast``; module-level imports and imports
inside functions both count, ``TYPE_CHECKING`` ones too.  The rules are the
ones each package's docstring states.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: import package -> its directory
SOURCES = {"stepkit": ROOT / "stepkit", "stepkit.plugins": ROOT / "plugins"}
HIGH = ("stepkit.engine", "stepkit.protocol", "stepkit.cli", "stepkit.api")
#: module prefix -> the packages it must not import (the longest matching prefix applies)
FORBIDDEN = {
    "stepkit.workspace": (*HIGH, "stepkit.graph", "stepkit.planrepo"),
    "stepkit.planrepo": (*HIGH, "stepkit.graph"),
    "stepkit.graph": (*HIGH, "stepkit.workspace", "stepkit.planrepo"),
    "stepkit.engine": ("stepkit.protocol", "stepkit.planrepo", "stepkit.cli", "stepkit.api"),
    "stepkit.protocol": ("stepkit.cli", "stepkit.api"),
    # --worktree runs: below the API, beside the protocol (which it never reads)
    "stepkit.worktrees": ("stepkit.protocol", "stepkit.cli", "stepkit.api"),
    "stepkit.api": ("stepkit.cli",),
    "stepkit.plugins": ("stepkit.cli",),
    # the shared top-level modules every layer imports
    "stepkit.errors": HIGH,
    "stepkit.records": HIGH,
    "stepkit.config": HIGH,
    "stepkit.hookspecs": HIGH,
    "stepkit.pluginmanager": HIGH,
    "stepkit.presets": HIGH,
    "stepkit.trust": HIGH,
    # where text leaves stepkit for a person or a client (the CLI, the MCP server, stepkit ci)
    "stepkit.shown": HIGH,
    # a leaf: records, evidence and the parsers all use it
    "stepkit.text": ("stepkit",),
    "stepkit.jsontext": ("stepkit",),
    "stepkit.quoting": ("stepkit",),
    "stepkit.credentials": ("stepkit",),
}


def modules() -> dict[str, Path]:
    """Every module by its import name (``stepkit.plugins`` from plugins/)."""
    found = {}
    for package, directory in SOURCES.items():
        for path in sorted(directory.rglob("*.py")):
            parts = list(path.relative_to(directory).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


MODULES = modules()


def imported(module: str, path: Path) -> set[str]:
    """The modules ``module`` imports anywhere in its file (a ``from X import
    y`` counts as X and as X.y, y being maybe a submodule)."""
    is_package = path.name == "__init__.py"
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, is_package, node.module, node.level)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def _absolute(module: str, is_package: bool, target: str | None, level: int) -> str:
    if level == 0:
        return target or ""
    parts = module.split(".")
    package = parts if is_package else parts[:-1]
    base = package[: len(package) - (level - 1)]
    return ".".join([*base, *([target] if target else [])])


def rule_for(module: str) -> tuple[str, ...]:
    prefixes = [p for p in FORBIDDEN if module == p or module.startswith(p + ".")]
    return FORBIDDEN[max(prefixes, key=len)] if prefixes else ()


def violations(module: str, path: Path) -> list[str]:
    forbidden = rule_for(module)
    return sorted(
        f"{module} imports {name}"
        for name in imported(module, path)
        if any(name == f or name.startswith(f + ".") for f in forbidden)
    )


def test_every_layer_is_covered():
    names = MODULES
    for package in ("workspace", "planrepo", "graph", "engine", "protocol", "cli", "plugins"):
        assert f"stepkit.{package}" in names
    assert "stepkit.api" in names and "stepkit.plugins.observers.progress" in names


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_lower_layer_imports_a_higher_one(module):
    assert violations(module, MODULES[module]) == []


def test_a_function_level_import_counts(tmp_path):
    bad = tmp_path / "model.py"
    bad.write_text("def f():\n    from stepkit.cli import main\n    from ..engine import driver\n")
    assert violations("stepkit.planrepo.model", bad) == [
        "stepkit.planrepo.model imports stepkit.cli",
        "stepkit.planrepo.model imports stepkit.cli.main",
        "stepkit.planrepo.model imports stepkit.engine",
        "stepkit.planrepo.model imports stepkit.engine.driver",
    ]
