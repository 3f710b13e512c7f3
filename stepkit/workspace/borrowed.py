"""Tools a stepkit work tree borrows from the user's tree.

A ``--worktree`` work tree is a fresh checkout: it has none of the user's
untracked environment directories (``.venv``, ``node_modules``).  Its gates
find tools in the user's tree's tool directories after the work tree's own
(:func:`stepkit.workspace.toolpath.tool_dirs`).  A borrowed virtualenv may
hold an editable install of the user's tree (a ``.pth`` line or a
setuptools ``__editable__`` finder naming a directory there): Python would
then import the user's source, not the step's.  :func:`shadowing_sources`
names the work tree's counterparts of those directories, which the gates put
first on ``PYTHONPATH``, ahead of every ``.pth`` entry and of the editable
finders (which come after the path finder).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

from stepkit.lazyregex import lazy_compile

_MAPPING = lazy_compile(r"^MAPPING\s*(?::[^=]*)?=\s*(\{.*\})\s*$", re.MULTILINE)


def shadowing_sources(origin_top: Path, worktree_top: Path, dirs: Iterable[str]) -> list[str]:
    """The work tree's directories standing for the user's-tree directories
    that the borrowed virtualenvs among ``dirs`` import from (existing ones,
    each once)."""
    origin_top, worktree_top = Path(origin_top), Path(worktree_top)
    found: list[str] = []
    for entry in dirs:
        tool_dir = Path(entry)
        if not tool_dir.is_absolute() or not tool_dir.is_relative_to(origin_top):
            continue
        for source in _imported_from(tool_dir.parent):
            if not source.is_relative_to(origin_top):
                continue
            mine = worktree_top / source.relative_to(origin_top)
            if mine.is_dir() and str(mine) not in found:
                found.append(str(mine))
    return found


def _imported_from(venv: Path) -> list[Path]:
    """The directories a virtualenv's editable installs add to imports."""
    found: list[Path] = []
    for site in sorted(venv.glob("lib/python*/site-packages")):
        for pth in sorted(site.glob("*.pth")):
            found += [
                Path(line.strip())
                for line in _lines(pth)
                if line.strip().startswith("/") and not line.startswith("import")
            ]
        for finder in sorted(site.glob("__editable__*finder.py")):
            found += [Path(target).parent for target in _mapping(finder)]
    return found


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def _mapping(finder: Path) -> list[str]:
    """The package directories (or module files) a setuptools editable
    finder maps top-level names to, where the name is the directory's own:
    only then does its parent on PYTHONPATH import the same name (a package
    mapped from a directory of another name cannot be shadowed this way)."""
    match = _MAPPING.search("\n".join(_lines(finder)))
    try:
        mapping = ast.literal_eval(match.group(1)) if match else {}
    except (ValueError, SyntaxError):
        return []
    if not isinstance(mapping, dict):
        return []
    return [
        value
        for name, value in mapping.items()
        if isinstance(name, str)
        and isinstance(value, str)
        and "." not in name
        and Path(value).name in (name, f"{name}.py")
    ]
