"""Whether a gate command's program can start here, without running it.

The program is the first word of the command line past ``VAR=value``
words; it is looked up on the PATH the gates get (the project's tool
directories first: :func:`~stepkit.workspace.toolpath.tool_dirs`), or, when
it names a path (``./gradlew``, ``scripts/build.sh``), as a file of the
project.  A line a shell must read (pipes, ``&&``, a builtin) is not
looked into.  ``stepkit doctor`` and a run's check before its coder starts
(:mod:`stepkit.workspace.precheck`) read it.
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Iterable
from pathlib import Path

#: Words that start a line only a shell can run: its grammar and builtins, which no file provides.
_SHELL_WORDS = frozenset(
    {"!", "(", "{", ".", "case", "cd", "eval", "exec", "export", "for", "if", "set", "source"}
)
_SHELL_WORDS |= {"until", "while", "ulimit", "umask", "unset", "command", "exit", ":", "trap"}
_SHELL_WORDS |= {"alias", "break", "continue", "hash", "read", "return", "shift", "type", "wait"}


def program_of(command: str) -> str | None:
    """The program a command line starts (past ``VAR=value`` words); None
    for a line a shell must read (pipes, ``&&``, quotes it cannot split, a
    builtin)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    words = [w for w in words if not ("=" in w and w.split("=", 1)[0].isidentifier())] or [""]
    if any(w in ("&&", "||", "|", ";") or w.endswith(";") for w in words) or not words[0]:
        return None
    return None if words[0] in _SHELL_WORDS else words[0]


def gates_path(project_dir: Path, dirs: Iterable[str]) -> str:
    """The PATH the gates get: the project's tool directories first."""
    return os.pathsep.join([*(str(Path(project_dir, d)) for d in dirs), os.environ.get("PATH", "")])


def missing_program(command: str, project_dir: Path, dirs: Iterable[str]) -> str:
    """Why ``command``'s program cannot start here ("" when it can, or when
    the line is a shell's to read): not on the gates' PATH, or a path
    naming no file of the project."""
    program = program_of(command)
    if program is None:
        return ""
    if os.sep in program or (os.altsep and os.altsep in program):
        path = Path(project_dir, program)
        if path.is_file():
            return ""
        return f"`{program}` (of `{command}`) is not a file of the project"
    if shutil.which(program, path=gates_path(project_dir, dirs)):
        return ""
    return f"`{program}` (of `{command}`) is not on the gates' PATH"
