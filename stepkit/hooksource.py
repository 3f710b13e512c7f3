"""The hookimpls a built-in plugin module declares, read from its source
without importing it: what :mod:`stepkit.lazyplugins` registers for it.

A hookimpl is read where it is written: a top-level ``def`` decorated with
``@hookimpl`` or ``@hookimpl(option=literal, …)`` (``hookimpl`` by any
dotted name).  A module that binds names at import through
``globals().update(…)`` (a project type binding its ``ProjectType``'s
hookimpls), names ``hookimpl`` at its top level other than as a
decorator (``stepkit_x = hookimpl(f)``), or whose decorator takes anything
but literal keywords, cannot be read: only importing it tells its hooks.

Parsing every built-in costs tens of milliseconds, so what is read is kept
in the state dir, one file per install, each module's entry keyed by its
source file's (path, mtime_ns, size): an edited module is read again, a
cache that is unreadable, corrupt or of another format is read as empty,
and one that cannot be written is kept in memory for the process.  Nothing
is written anywhere else.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: Hook name → the options set on its hookimpl (the true ones only), as
#: :func:`stepkit.lazyplugins.declared_hooks` gives them for an imported module.
Hooks = dict[str, dict[str, bool]]

#: The version of the cache's layout and of what is read into it; a cache of
#: another version is read as empty.
FORMAT = 1

#: What this process has read, by source path: ((mtime_ns, size), hooks).
_memory: dict[str, tuple[tuple[int, int], Hooks | None]] = {}


class Unreadable(Exception):
    """A module's hooks cannot be told from its source."""


def read_hooks(source: str | bytes) -> Hooks:
    """The hookimpls ``source`` declares.

    :raises Unreadable: it binds names through ``globals().update(…)``,
        names ``hookimpl`` at its top level but in a decorator or an import,
        or a hookimpl decorator takes more than literal keywords.
    :raises SyntaxError: it is not Python.
    """
    found: Hooks = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Expr) and _is_globals_update(node.value):
            raise Unreadable("binds names through globals().update()")
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if not isinstance(node, (ast.ClassDef, ast.Import, ast.ImportFrom)) and any(
                _name_of(part) == "hookimpl"
                for part in ast.walk(node)
                if isinstance(part, ast.expr)
            ):
                raise Unreadable("names hookimpl other than in a decorator")
            continue
        for decorator in node.decorator_list:
            options = _hookimpl_options(decorator, node.name)
            if options is not None:
                name = options.pop("specname", None) or node.name
                found[name] = {key: value for key, value in options.items() if value}
    return found


def _hookimpl_options(decorator: ast.expr, function: str) -> dict[str, Any] | None:
    """The options a ``@hookimpl`` decorator gives; None: not one.

    :raises Unreadable: it takes more than literal keywords.
    """
    call = decorator if isinstance(decorator, ast.Call) else None
    if _name_of(call.func if call else decorator) != "hookimpl":
        return None
    options: dict[str, Any] = {}
    for keyword in call.keywords if call else []:
        if keyword.arg is None:
            raise Unreadable(f"{function}: hookimpl given options unpacked")
        try:
            options[keyword.arg] = ast.literal_eval(keyword.value)
        except ValueError:
            raise Unreadable(f"{function}: a hookimpl option that is not a literal") from None
    if call and call.args:
        raise Unreadable(f"{function}: hookimpl given a positional argument")
    return options


def _name_of(expression: ast.expr) -> str | None:
    if isinstance(expression, ast.Attribute):
        return expression.attr
    return expression.id if isinstance(expression, ast.Name) else None


def _is_globals_update(expression: ast.expr) -> bool:
    return (
        isinstance(expression, ast.Call)
        and isinstance(expression.func, ast.Attribute)
        and expression.func.attr == "update"
        and isinstance(expression.func.value, ast.Call)
        and _name_of(expression.func.value.func) == "globals"
    )


def module_hooks(paths: Mapping[str, Path], cache: Path | None) -> dict[str, Hooks | None]:
    """The hooks of each module (name → its source file) read from source,
    None for a module that cannot be read (or whose file cannot be stat'ed).

    :param cache: the file to keep them in between runs (None: this process only).
    """
    entries = None
    found: dict[str, Hooks | None] = {}
    changed = False
    for name, path in paths.items():
        try:
            info = path.stat()
        except OSError:
            found[name] = None
            continue
        key = (info.st_mtime_ns, info.st_size)
        remembered = _memory.get(str(path))
        if remembered is None or remembered[0] != key:
            if entries is None:
                entries = _load(cache)
            hooks, cached = _from_entry(entries.get(str(path)), key)
            if not cached:
                hooks = _read_file(path)
                entries[str(path)] = {"key": list(key), "hooks": hooks}
                changed = True
            remembered = _memory[str(path)] = (key, hooks)
        found[name] = remembered[1]
    if changed and cache is not None and entries is not None:
        store(cache, {"format": FORMAT, "modules": entries})
    return found


def _read_file(path: Path) -> Hooks | None:
    try:
        return read_hooks(path.read_bytes())
    except (Unreadable, SyntaxError, ValueError, OSError):
        return None


def _from_entry(entry: Any, key: tuple[int, int]) -> tuple[Hooks | None, bool]:
    """An entry's hooks and whether it holds them for ``key`` (a stale or
    malformed entry does not)."""
    if not isinstance(entry, dict) or entry.get("key") != list(key):
        return None, False
    hooks = entry.get("hooks")
    if hooks is None:
        return None, True
    well_formed = isinstance(hooks, dict) and all(
        isinstance(options, dict) and all(v is True for v in options.values())
        for options in hooks.values()
    )
    return (hooks, True) if well_formed else (None, False)


def _load(cache: Path | None) -> dict[str, Any]:
    if cache is None:
        return {}
    try:
        data = json.loads(cache.read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return {}
    modules = data.get("modules")
    return modules if isinstance(modules, dict) else {}


def store(cache: Path, content: dict[str, Any]) -> None:
    """Write ``content`` to a cache file as JSON (a file in a real directory
    under the state dir, never through a link); a failure leaves it to this
    process's memory."""
    from stepkit.workspace.files import real_dir, replace_entry, state_home

    data = json.dumps(content, sort_keys=True).encode()
    try:
        state_home().mkdir(parents=True, exist_ok=True)
        replace_entry(real_dir(cache.parent, state_home()) / cache.name, data)
    except (OSError, ValueError):  # LinkInTheWay is an OSError
        pass


def cache_file(source_dir: Path) -> Path:
    """The cache of the built-ins under ``source_dir``: one per install, so
    that two installs sharing a state dir do not rewrite each other's."""
    from stepkit.workspace.files import state_home

    digest = hashlib.sha256(os.fsencode(source_dir)).hexdigest()[:16]
    return state_home() / "plugin-hooks" / f"{digest}.json"
