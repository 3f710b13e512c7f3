"""Comments and docstrings cite only documents that are in the repository:
no specification that lives elsewhere, no issue number of a tracker the
reader cannot see."""

from __future__ import annotations

import ast
import functools
import io
import re
import subprocess
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: a document named in capitals (README.md, hooks.md is lower case and checked by its tests)
_DOCUMENT = re.compile(r"\b([A-Z][A-Z0-9_-]*\.md)\b")
_ISSUE = re.compile(r"\bissues? \d+\b", re.IGNORECASE)


def tracked() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return [ROOT / line for line in out.splitlines()]


@functools.cache
def prose(path: Path) -> str:
    """A Python file's comments and docstrings; any other text file whole,
    and any file whose text cites nothing (read once a process: both checks
    read every file)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py" or not (_DOCUMENT.search(text) or _ISSUE.search(text)):
        # a file citing nothing anywhere cites nothing in its comments: not tokenized
        return text
    parts = [
        tok.string
        for tok in tokenize.generate_tokens(io.StringIO(text).readline)
        if tok.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            parts.append(ast.get_docstring(node, clean=False) or "")
    return "\n".join(parts)


FILES = [p for p in tracked() if p.suffix in (".py", ".md", ".yaml", ".toml") and p.is_file()]
NAMES = {p.name for p in tracked()}


def test_every_document_cited_is_in_the_repository():
    missing = sorted(
        {
            f"{p.relative_to(ROOT)}: {name}"
            for p in FILES
            for name in _DOCUMENT.findall(prose(p))
            if name not in NAMES
        }
    )
    assert missing == []


def test_no_comment_or_docstring_cites_an_issue_number():
    cited = sorted(
        f"{p.relative_to(ROOT)}: {m.group(0)}" for p in FILES for m in _ISSUE.finditer(prose(p))
    )
    assert cited == []


def test_a_missing_document_and_an_issue_number_are_found(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        '"""See SPEC.md."""\n\nx = "DESIGN.md in a string is data"  # fixed by issue 7\n'
    )
    text = prose(sample)
    assert _DOCUMENT.findall(text) == ["SPEC.md"] and _ISSUE.findall(text) == ["issue 7"]
