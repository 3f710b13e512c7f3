"""Nodes and built-in plugins read the step state as types
(:class:`stepkit.protocol.state.StepState`, built once per node call by
:meth:`stepkit.records.StageContext.typed`), not by string keys: a read of
a run state by a constant key (``state["gates"]``, ``ctx.state.get("step")``)
is left only where a state of any graph is read (the engine, a paused
run's listing, the progress display, a checkpoint's step), at most
:data:`LIMIT` of them in ``stepkit/`` and ``plugins/``."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 20


def _is_state(node: ast.expr) -> bool:
    """``state`` or ``<anything>.state``."""
    return (isinstance(node, ast.Name) and node.id == "state") or (
        isinstance(node, ast.Attribute) and node.attr == "state"
    )


def _is_key(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def string_keyed_reads(source: str) -> list[int]:
    """The lines of ``source`` that read a run state by a constant key."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        subscript = (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Load)
            and _is_state(node.value)
            and _is_key(node.slice)
        )
        get = (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and _is_state(node.func.value)
            and bool(node.args)
            and _is_key(node.args[0])
        )
        if subscript or get:
            lines.append(getattr(node, "lineno", 0))
    return lines


def test_the_counter_sees_each_form_of_a_string_keyed_read():
    source = (
        'a = state["gates"]\n'
        'b = ctx.state.get("step", "?")\n'
        "c = self.ctx.state.get('coder_result')\n"
        'state["written"] = 1\n'  # a write is no read
        "d = state.get(key)\n"  # a key the code does not spell
        "e = step_state(ctx).gates\n"
    )
    assert string_keyed_reads(source) == [1, 2, 3]


def test_at_most_twenty_string_keyed_state_reads_remain():
    found = {
        str(path.relative_to(ROOT)): lines
        for folder in ("stepkit", "plugins")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if (lines := string_keyed_reads(path.read_text(encoding="utf-8")))
    }
    total = sum(len(lines) for lines in found.values())
    assert total <= LIMIT, f"{total} string-keyed state reads (at most {LIMIT}): {found}"
