"""No import circle in stepkit/ and plugins/ (shipped as ``stepkit.plugins``).

The graph is built from the AST of every module: ``import x`` and ``from x
import y`` anywhere in a file count, inside functions too (a deferred import
still runs, and a circle through it is still a circle).  Importing ``a.b.c``
also runs the ``__init__`` of ``a.b`` and ``a``, so those count as edges
too, except the packages the importer itself lives in (they are already
being imported when it runs).  Two kinds of import are left out, each for
its reason:

- ``from __future__ import …``: a compiler directive, not a module;
- imports under ``if TYPE_CHECKING:``: never executed (annotations only,
  which ``from __future__ import annotations`` keeps as strings), so they
  cannot take part in a circle at run time.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from stepkit.planrepo.checks import find_cycles

ROOT = Path(__file__).resolve().parents[2]
SOURCES = {"stepkit": ROOT / "stepkit", "stepkit.plugins": ROOT / "plugins"}
#: circles another change removes; each edge listed is left out of the graph
KNOWN: set[tuple[str, str]] = set()


def modules(sources: dict[str, Path]) -> dict[str, Path]:
    """Every module by its import name (``stepkit.plugins`` from plugins/)."""
    found = {}
    for package, directory in sources.items():
        for path in sorted(directory.rglob("*.py")):
            parts = list(path.relative_to(directory).with_suffix("").parts)
            if "examples" in parts:  # the demo project stepkit ships, not stepkit's code
                continue
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of the import nodes inside ``if TYPE_CHECKING:`` blocks."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in (
            "TYPE_CHECKING",
            "typing.TYPE_CHECKING",
        ):
            skipped.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    return skipped


def imported_names(module: str, path: Path) -> set[str]:
    """The dotted names ``module`` imports (``from x import y``: x and x.y)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    skipped = _type_checking_only(tree)
    is_package = path.name == "__init__.py"
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            if node.level:
                package = module.split(".") if is_package else module.split(".")[:-1]
                base = ".".join(
                    [
                        *package[: len(package) - node.level + 1],
                        *([node.module] if node.module else []),
                    ]
                )
            else:
                base = node.module or ""
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def graph(mods: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the modules importing it runs (known circles' edges left out)."""
    edges: dict[str, set[str]] = {}
    for module, path in mods.items():
        own_packages = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
        targets = set()
        for name in imported_names(module, path):
            parts = name.split(".")
            for i in range(1, len(parts) + 1):
                target = ".".join(parts[:i])
                if target in mods and target != module and target not in own_packages:
                    targets.add(target)
        edges[module] = {t for t in targets if (module, t) not in KNOWN}
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: one per strongly connected component of more than
    one module, its modules sorted (the plan repo's cycle finder, which works
    on any sortable nodes)."""
    found = find_cycles({node: sorted(targets) for node, targets in edges.items()})  # type: ignore[arg-type]
    return sorted(sorted(set(cycle)) for cycle in found)


MODULES = modules(SOURCES)


@functools.cache
def project_graph() -> dict[str, set[str]]:
    """The graph of stepkit's and the built-in plugins' modules, built once a process."""
    return graph(MODULES)


def test_the_graph_covers_every_layer():
    edges = project_graph()
    assert len(MODULES) > 100 and "stepkit.plugins.coders.anthropic" in MODULES
    assert "stepkit.text" in edges["stepkit.records"]  # a module-level import
    assert (
        "stepkit.workspace.gates" in edges["stepkit.protocol.nodes.verify"]
    )  # one inside a function


def test_there_is_no_import_circle():
    assert circles(project_graph()) == []


def test_a_circle_through_a_function_level_import_or_a_package_init_is_found(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(
        "from __future__ import annotations\n\ndef f():\n    from pkg import b\n"
    )
    (pkg / "b.py").write_text("from . import a\n")
    (pkg / "sub" / "__init__.py").write_text("from pkg.sub import leaf\n")
    (pkg / "sub" / "leaf.py").write_text("def g():\n    import pkg.c\n")
    (pkg / "c.py").write_text("from pkg.sub.leaf import g\n")  # runs pkg.sub's __init__ first
    (pkg / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import e\n"
    )
    (pkg / "e.py").write_text("import pkg.d\n")  # d -> e only for the type checker: no circle
    mods = modules({"pkg": pkg})
    assert circles(graph(mods)) == [
        ["pkg.a", "pkg.b"],
        ["pkg.c", "pkg.sub.leaf"],
    ]  # the shortest way round
