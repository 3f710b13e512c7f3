"""One literal field of the declarations a package of built-in modules makes
(``lockfiles=`` of each ``Tool(…)`` in the tool modules' ``TOOLS``), read
from their source without importing them: the lockfiles a verify guards are
known before its first gate without importing fifty tool modules.

A module can be read when its only top-level binding of the attribute is a
tuple or list of calls, each taking the field as a literal keyword (or not
at all: then the field's default) and no positional argument but the first,
nothing unpacked.  Any other module, or a subpackage, makes the package
unreadable: only importing it tells.

What is read is kept in the state dir, one file per (package, attribute,
field), keyed by every module's (name, mtime_ns, size): an edited, added or
removed module reads the package again.  The cache is written as
:mod:`stepkit.hooksource` writes its own.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from stepkit import hooksource

#: The version of the cache's layout; a cache of another version is read as empty.
FORMAT = 1


def declared_values(
    directory: Path, attribute: str, field: str, default: Any = ()
) -> list[Any] | None:
    """Each ``field`` given to the declarations in ``attribute`` of the public
    modules in ``directory``, module by module in their names' order (as
    :func:`stepkit.plugins.declarations.declared_in` gathers them); None when
    a module's source does not tell."""
    key = _key(directory)
    if key is None:
        return None
    cache = _cache_file(directory, attribute, field)
    kept = _load(cache)
    if kept.get("key") == key and isinstance(kept.get("values"), list):
        return kept["values"]
    values: list[Any] = []
    for name, _, _ in key:
        found = _read(directory / f"{name}.py", attribute, field, default)
        if found is None:
            return None
        values.extend(found)
    hooksource.store(cache, {"format": FORMAT, "key": key, "values": values})
    return values


def _key(directory: Path) -> list[list[Any]] | None:
    """Every public module's [name, mtime_ns, size], by name; None: a subpackage
    (not read) or a directory that cannot be listed."""
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
        key = []
        for entry in entries:
            if entry.name.startswith(("_", ".")):
                continue
            if entry.is_dir():
                if (Path(entry.path) / "__init__.py").exists():
                    return None
                continue
            if entry.name.endswith(".py"):
                info = entry.stat()
                key.append([entry.name[:-3], info.st_mtime_ns, info.st_size])
        return key
    except OSError:
        return None


def _read(path: Path, attribute: str, field: str, default: Any) -> list[Any] | None:
    """``field`` of each declaration in ``attribute`` of the module at
    ``path``; None when its source does not tell."""
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None
    bound = [
        node
        for node in tree.body
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
        and any(
            isinstance(target, ast.Name) and target.id == attribute
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        )
    ]
    if len(bound) != 1 or not isinstance(bound[0].value, (ast.Tuple, ast.List)):
        return None
    values = []
    for call in bound[0].value.elts:
        if not isinstance(call, ast.Call) or len(call.args) > 1:
            return None
        if any(isinstance(a, ast.Starred) for a in call.args):
            return None
        given = {k.arg: k.value for k in call.keywords}
        if None in given:  # **unpacked
            return None
        if field not in given:
            values.extend(default)
            continue
        try:
            value = ast.literal_eval(given[field])
        except (ValueError, TypeError, SyntaxError):
            return None
        if not isinstance(value, (tuple, list)):
            return None
        values.extend(value)
    return values


def _load(cache: Path) -> dict[str, Any]:
    try:
        data = json.loads(cache.read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("format") == FORMAT else {}


def _cache_file(directory: Path, attribute: str, field: str) -> Path:
    from stepkit.workspace.files import state_home

    name = os.fsencode(f"{directory}\0{attribute}\0{field}")
    return state_home() / "declarations" / f"{hashlib.sha256(name).hexdigest()[:16]}.json"
