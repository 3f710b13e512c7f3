"""The project's own tools on the gates' PATH, and the tools the step changed.

The directories come from ``stepkit_tool_dirs`` (a virtualenv inside the
project, ``node_modules/.bin``): the gates run with them first on PATH, so
``ruff`` is the project's ruff.  They are inside the coder's reach, so a run
takes a :func:`fingerprint` of them when it starts; a tool the step changed
or added under a name a gate command uses (:func:`tool_changes`) fails the
tests gate: changing the tools that judge the step is not a fix.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from stepkit.workspace.borrowed import shadowing_sources
from stepkit.workspace.store import git_location
from stepkit.workspace.worktree_record import record_of

#: Entries of one tool directory read for a fingerprint at most (node_modules/.bin is wide).
MAX_ENTRIES = 5000


def tool_dirs(pm, project_dir: Path) -> list[str]:
    """The project's tool directories (project-relative, existing, each once,
    in hook order); in a stepkit work tree, then the user's tree's that the
    work tree has no copy of, as absolute paths (see :mod:`stepkit.workspace.borrowed`)."""
    found: list[str] = []
    for answer in pm.hook.stepkit_tool_dirs(project_dir=project_dir):
        for rel in answer or ():
            if rel not in found and (project_dir / rel).is_dir():
                found.append(rel)
    record = record_of(project_dir)
    if record is not None:
        origin = Path(record.origin)
        for answer in pm.hook.stepkit_tool_dirs(project_dir=origin):
            for rel in answer or ():
                borrowed = str(origin / rel)
                if rel not in found and borrowed not in found and (origin / rel).is_dir():
                    found.append(borrowed)
    return found


def tool_env(
    project_dir: Path,
    dirs: Iterable[str],
    base: Mapping[str, str] | None = None,
    where: Path | None = None,
) -> dict[str, str] | None:
    """The gates' environment: ``base`` (this process's) with ``dirs`` first
    on PATH; None when there are none (the environment as it is).

    A command that runs in another tree than the one its tools were
    installed for (a stepkit work tree borrowing the user's tools, the
    baseline checkout of either; ``where``: where it runs, default the
    project) imports that tree's source, not the installing tree's: the
    counterparts of the tools' editable installs come first on PYTHONPATH
    (:mod:`stepkit.workspace.borrowed`)."""
    dirs = list(dirs)
    paths = [str(Path(project_dir, rel).resolve()) for rel in dirs]
    if not paths:
        return None
    env = dict(os.environ if base is None else base)
    env["PATH"] = os.pathsep.join([*paths, env.get("PATH", "")])
    sources = _shadowing(
        Path(project_dir), paths, Path(where) if where is not None else Path(project_dir)
    )
    if sources:
        env["PYTHONPATH"] = os.pathsep.join([*sources, *filter(None, [env.get("PYTHONPATH")])])
    return env


def _shadowing(project_dir: Path, paths: list[str], where: Path) -> list[str]:
    """The PYTHONPATH entries :func:`tool_env` puts first (none when the
    tools were installed for the tree the command runs in)."""
    located = git_location(project_dir.resolve())
    if located is None:
        return []
    top = located[0]
    prefix = project_dir.resolve().relative_to(top)
    record = record_of(project_dir)
    owner = Path(record.origin_top) if record else top
    run_top = where.resolve()
    for _ in prefix.parts:
        run_top = run_top.parent
    return shadowing_sources(owner, run_top, paths) if owner.resolve() != run_top else []


def fingerprint(project_dir: Path, dirs: Iterable[str]) -> dict[str, str]:
    """``{"<dir>/<name>": id}`` of every entry of ``dirs`` (a file's sha256,
    a symlink's target)."""
    ids: dict[str, str] = {}
    for rel in dirs:
        try:
            entries = sorted(os.scandir(Path(project_dir, rel)), key=lambda e: e.name)[:MAX_ENTRIES]
        except OSError:
            continue
        for entry in entries:
            ids[f"{rel}/{entry.name}"] = _entry_id(entry)
    return ids


def tool_changes(
    before: Mapping[str, str], now: Mapping[str, str], commands: Iterable[str | None]
) -> list[str]:
    """The tools the step changed: an entry that was there and changed or
    went, and an added one named like a word of a gate command (``pytest``
    in ``uv run pytest``)."""
    words = {word for command in commands if command for word in re.findall(r"[\w.+-]+", command)}
    changed = [
        f"{path} (changed)" for path, id_ in now.items() if path in before and before[path] != id_
    ]
    changed += [f"{path} (removed)" for path in before if path not in now]
    changed += [
        f"{path} (added)" for path in now if path not in before and path.rsplit("/", 1)[-1] in words
    ]
    return sorted(changed)


def _entry_id(entry: os.DirEntry) -> str:
    try:
        if entry.is_symlink():
            return f"link:{os.readlink(entry.path)}"
        if not entry.is_file():
            return "dir"
        digest = hashlib.sha256()
        with open(entry.path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()
    except OSError:
        return "unreadable"
