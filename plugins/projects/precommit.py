"""The format and lint gates from the hooks of ``.pre-commit-config.yaml``
(local and remote ones: pre-commit.ci runs them as the project's CI), run
through pre-commit (or prek) so the tool's version and arguments are the
ones the project pins.

- format: the first hook that runs a formatter, on the step's changed
  files: ``pre-commit run ruff-format --files {files}`` (pre-commit picks
  among them the files the hook's ``types``/``files`` match).
- lint: the first hook that runs a linter, as pre-commit.ci runs it: ``pre-commit run
  ruff-check --all-files``.  A lint hook told to fix (``--fix``, ``--write``
  …) would rewrite files where a lint gate must only judge: it is passed
  over, with a note.

What a hook runs is read from its ``entry`` (a local hook) or its id
(``ruff-format`` → ``ruff format``), by the tools of
:mod:`stepkit.plugins.projects.gate_tools`.  prek runs the hooks when the
project shows it uses prek (it declares it or runs ``prek``), else
pre-commit: from the project's environment when the project declares it
there (``uv run --frozen python -m pre_commit``), else as PATH gives it; a
machine without it fails the gate with exit 127, an environment fault
naming pre-commit.  This plugin answers after CI's commands and the task
runners' targets and before the language plugins' defaults.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, NamedTuple

from stepkit.hookspecs import hookimpl
from stepkit.plugins.projects import _shared, environments
from stepkit.plugins.projects.gate_tools import tool_gate

CONFIG = ".pre-commit-config.yaml"
#: Remote hook ids that do not spell the command they run.
_RUNS = {"ruff": "ruff check"}
#: Arguments that make a linter rewrite the files it checks.
_FIXES = frozenset({"--fix", "--write", "-w", "--apply", "--fix-only", "--unsafe-fixes"})


class Hook(NamedTuple):
    """One hook of the config, and the gate of what it runs."""

    id: str
    gate: str | None
    args: tuple[str, ...]


def hooks(project_dir: Path) -> list[Hook]:
    """Every hook of the project's pre-commit config, in file order."""
    found = []
    for repo in _shared.read_yaml(project_dir / CONFIG).get("repos") or []:
        for hook in (repo.get("hooks") or []) if isinstance(repo, dict) else []:
            if isinstance(hook, dict) and isinstance(hook.get("id"), str):
                found.append(_hook(repo, hook))
    return found


def _hook(repo: dict[str, Any], hook: dict[str, Any]) -> Hook:
    entry = hook.get("entry") if repo.get("repo") in ("local", "meta") else None
    runs = entry if isinstance(entry, str) else _RUNS.get(hook["id"], hook["id"].replace("-", " "))
    args = tuple(str(a) for a in hook.get("args") or [] if isinstance(a, (str, int, float)))
    return Hook(hook["id"], tool_gate(f"{runs} {' '.join(args)}"), args)


def _runner(project_dir: Path) -> str:
    """How the project runs its hooks: prek or pre-commit, from its environment when declared."""
    declared = environments.python_dependencies(project_dir)
    if "prek" in declared or _shared.runs(project_dir, "prek"):
        return "prek"
    if "pre-commit" in declared:
        return environments.python_tool(project_dir, "pre_commit", script="pre-commit")
    return "pre-commit"


def _chosen(project_dir: Path, gate: str) -> tuple[Hook | None, list[str]]:
    """The hook that is ``gate``'s command, and a note for each such hook passed over."""
    notes = []
    for hook in hooks(project_dir):
        if hook.gate != gate:
            continue
        fixes = sorted(_FIXES.intersection(hook.args))
        if gate == "lint" and fixes:
            notes.append(
                f"lint: passed over the pre-commit hook `{hook.id}` ({CONFIG}): its "
                f"{', '.join(fixes)} rewrites files, where a lint gate only judges"
            )
            continue
        return hook, notes
    return None, notes


#: The gates a pre-commit hook answers for, each with the files it runs the hook on.
_FILES = {"format": f"--files {_shared.changed_files()}", "lint": "--all-files"}


@hookimpl
def stepkit_gate_command(gate: str, project_dir: Path) -> str | None:
    """``pre-commit run <hook> …`` for the format or lint gate; None: no config, no such hook."""
    if gate not in _FILES or not (project_dir / CONFIG).is_file():
        return None
    hook, _ = _chosen(project_dir, gate)
    return f"{_runner(project_dir)} run {hook.id} {_FILES[gate]}" if hook else None


@hookimpl
def stepkit_detect_notes(project_dir: Path) -> list[str]:
    """Each lint hook passed over because it fixes what it finds."""
    if not (project_dir / CONFIG).is_file():
        return []
    return _chosen(project_dir, "lint")[1]


@hookimpl
def stepkit_gate_source(gate: str, command: str, project_dir: Path) -> str | None:
    """The line of the config that lists the hook a format or lint command runs."""
    if gate not in _FILES or not (project_dir / CONFIG).is_file():
        return None
    hook, _ = _chosen(project_dir, gate)
    if hook is None or f" run {hook.id} " not in command:
        return None
    pattern = re.compile(rf"^\s*-?\s*id:\s*[\"']?{re.escape(hook.id)}[\"']?\s*(?:#.*)?$")
    for number, line in enumerate(_shared.read_text(project_dir / CONFIG).splitlines(), 1):
        if pattern.match(line):
            return f"{CONFIG}:{number}"
    return None
