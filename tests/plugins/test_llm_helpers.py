"""The engines share plugins/llm/helpers.py: no engine borrows another
engine's names, and no module of the engines or the coders imports a
private name of another module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from pydantic import BaseModel

from stepkit.plugins.llm.helpers import correction, parse_answer

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
ENGINES = sorted((PLUGINS / "llm").glob("*_engine.py"))
#: the CLI engines' common base, which the CLI engines (and only they) build on
CLI_BASE = "stepkit.plugins.llm.cli_engine"


def imports(path: Path) -> list[tuple[str, str]]:
    """Every ``from MODULE import NAME`` of the file, functions' imports too."""
    return [
        (node.module or "", alias.name)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    ]


@pytest.mark.parametrize("engine", ENGINES, ids=lambda path: path.stem)
def test_an_engine_imports_no_other_engine(engine):
    own = f"stepkit.plugins.llm.{engine.stem}"
    allowed = {own, CLI_BASE} if engine.stem in ("claude_engine", "codex_engine") else {own}
    borrowed = {
        module
        for module, _ in imports(engine)
        if module.endswith("_engine") and module not in allowed
    }
    assert borrowed == set()


@pytest.mark.parametrize(
    "path",
    sorted([*(PLUGINS / "llm").rglob("*.py"), *(PLUGINS / "coders").rglob("*.py")]),
    ids=lambda path: str(path.relative_to(PLUGINS)),
)
def test_no_module_imports_a_private_name_of_another(path):
    private = [
        f"{module}.{name}"
        for module, name in imports(path)
        if module.startswith("stepkit.") and name.startswith("_")
    ]
    assert private == []


class Answer(BaseModel):
    summary: str


def test_a_fenced_answer_is_unwrapped_and_masked_and_a_cut_off_one_is_not_read():
    answer, problem = parse_answer('```json\n{"summary": "ok"}\n```', Answer)
    assert answer == Answer(summary="ok") and problem == ""
    answer, problem = parse_answer('{"summary": "ok"}', Answer, cut_at="max_tokens")
    assert answer is None and problem == "the reply was cut off at max_tokens (17 characters)"
    answer, problem = parse_answer('{"other": 1}', Answer)
    assert answer is None and "summary" in problem
    assert correction(problem, Answer).startswith(f"Your reply was not accepted: {problem}\n")
    assert "the Answer schema" in correction(problem, Answer)
