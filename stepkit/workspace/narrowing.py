"""A fix round's lint on the files that can have changed its verdict.

A linter whose verdict on a file depends on that file and its configuration
alone (:attr:`~stepkit.workspace.tools.Tool.per_file`: ruff check, flake8,
eslint, rubocop; never a type checker, whose verdict on one file reads
others) gives, on the files of the step's change set and those its last
run failed on, the verdict the whole project would get: every other file is
byte-identical to the last run that found it clean.  :func:`narrowed` makes
that command from the project's own, or says it cannot (None: run the whole
command):

- the command is one the tool declares (:attr:`~stepkit.workspace.tools.Tool.invocations`),
  its options ``--name=value`` or options the tool declares take no value,
  the rest paths; no shell syntax, no option that may take the next word;
- no file that configures the tool changed (its own, or a shared one such
  as ``pyproject.toml``): a change there can change every file's verdict;
- at least one file of the tool's kinds lies under the command's paths.

The files replace the command's paths, after the options that make the tool
skip a file its configuration excludes even when named
(:attr:`~stepkit.workspace.tools.Tool.explicit_files`).  The verdict that
lets the step proceed is always the whole command's (the tests gate node
runs it when the round's lint was narrowed).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

from stepkit.workspace.tools import Tool, Tools

#: characters that make a command more than one tool's argument list
_SHELL = re.compile(r"[;&|<>$`()*?\[\]{}~\\\n'\"#]")


@dataclass(frozen=True)
class Narrowed:
    """The lint command on ``files`` only (project-relative)."""

    command: str
    files: list[str]


def narrowed(
    command: str, files: Iterable[str], changed: Iterable[str], table: Tools
) -> Narrowed | None:
    """``command`` on those of ``files`` it would check, or None when it must
    run whole (see the module's docstring); ``changed``: every path the step
    changed, deleted ones too (a configuration file among them runs it whole)."""
    if _SHELL.search(command):
        return None
    words = command.split()
    for tool in table.declared:
        if not tool.per_file:
            continue
        for invocation in tool.invocations:
            start = invocation.split()
            if words[: len(start)] == start:
                return _on_files(tool, start, words[len(start) :], list(files), list(changed))
    return None


def _on_files(
    tool: Tool, start: list[str], rest: list[str], files: list[str], changed: list[str]
) -> Narrowed | None:
    options, paths = [], []
    for word in rest:
        if not word.startswith("-"):
            paths.append(word)
        elif "=" in word or word in tool.flags:
            options.append(word)
        else:  # an option that may take the next word as its value: which words are paths?
            return None
    configs = (*tool.configs, *tool.shared_configs)
    if any(re.fullmatch(p, PurePosixPath(rel).name) for rel in changed for p in configs):
        return None
    chosen = sorted(
        {
            rel
            for rel in files
            if rel.endswith(tool.file_kinds)
            and not rel.startswith("-")
            and _under(rel, paths or ["."])
        }
    )
    if not chosen:
        return None
    extra = [flag for flag in tool.explicit_files if flag not in options]
    return Narrowed(shlex.join([*start, *options, *extra, *chosen]), chosen)


def _under(rel: str, paths: list[str]) -> bool:
    """``rel`` is one of ``paths`` or lies under one (``.``: everything)."""
    for path in paths:
        root = PurePosixPath(path.removeprefix("./") or ".")
        if (
            root == PurePosixPath(".")
            or PurePosixPath(rel) == root
            or root in PurePosixPath(rel).parents
        ):
            return True
    return False
