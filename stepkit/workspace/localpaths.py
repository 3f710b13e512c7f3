"""This machine's paths out of text that leaves it: what is committed to the
plan repo (the handoff, NOTES.md, a later step's Edge cases) and what the
final approval shows.

In order, the longest first: a path in the project's run store becomes
``<run store>/…`` (it is nowhere in a clone), a path in the project becomes
project-relative (the project itself ``.``), a path in the user's home
``~/…``.  Each is replaced only as a whole path component: ``/tmp/p`` is not
taken out of ``/tmp/project``.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

#: How the run store is named in text that leaves the machine.
RUN_STORE = "<run store>"


def portable_text(text: str, project: Path | str, name_store: bool = True) -> str:
    """``text`` with the run store's, the project's and the home directory's
    absolute paths replaced (see the module docstring).

    :param name_store: False: the run store is no exception, its paths are
        shown as any other (project-relative when it is in the project):
        a path the user at this machine can open.
    """
    for root, shown in _roots(Path(project), name_store):
        text = _pattern(root).sub(functools.partial(_rooted, shown), text)
    return text


def _rooted(shown: str, match: re.Match[str]) -> str:
    return _joined(shown, match.group(1))


def _roots(project: Path, name_store: bool) -> list[tuple[str, str]]:
    """(absolute path, what it is shown as), the longest path first."""
    from stepkit.workspace.store import store_dir

    named: dict[str, str] = {}
    roots: list[tuple[str | Path, str]] = [(os.environ.get("HOME") or "", "~"), (project, ".")]
    if name_store:
        roots.append((store_dir(project), RUN_STORE))
    for path, shown in roots:
        if not str(path) or Path(path) == Path(Path(path).anchor):  # never the root itself
            continue
        for variant in {str(Path(path)), str(Path(path).resolve())}:
            named[variant] = shown
    return sorted(named.items(), key=lambda item: len(item[0]), reverse=True)


def _pattern(root: str) -> re.Pattern[str]:
    # the path, then a separator (kept as group 1) or anything that cannot continue a name
    return re.compile(re.escape(root) + r"(?:(/)|(?![\w-])(?!\.[\w.-]))")


def _joined(shown: str, separator: str | None) -> str:
    if separator is None:
        return shown
    return "" if shown == "." else f"{shown}/"
