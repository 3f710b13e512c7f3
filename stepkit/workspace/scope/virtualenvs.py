"""Virtualenvs inside a project, known by the ``pyvenv.cfg`` every one
holds (PEP 405), whatever the directory is called: ``.venv``, ``venv``,
the ``.env`` some projects' docs make, or any other name.  Their files are
the installed environment, never the project's files nor the step's
changes; the tools they hold are the project's own
(:mod:`stepkit.plugins.projects.tool_dirs`)."""

from __future__ import annotations

import os
from pathlib import Path

#: The file at the top of every virtualenv.
MARKER = "pyvenv.cfg"
#: What a virtualenv's top holds (POSIX and Windows layouts, and the
#: ``.gitignore`` Python 3.13 and uv write): only these are the environment.
#: Anything else beside a ``pyvenv.cfg`` is the project's, so that the
#: marker cannot hide a package (``calc/__init__.py`` shadowing ``calc.py``).
LAYOUT = frozenset(
    {MARKER, ".gitignore", "bin", "Scripts", "lib", "lib64", "Lib", "include", "Include", "share"}
)


def is_virtualenv(directory: Path | str) -> bool:
    """``directory`` is the top of a virtualenv."""
    return os.path.isfile(os.path.join(directory, MARKER))


def top_level(project_dir: Path) -> list[str]:
    """The names of the virtualenvs directly in ``project_dir``, sorted."""
    try:
        names = sorted(entry.name for entry in os.scandir(project_dir) if entry.is_dir())
    except OSError:
        return []
    return [name for name in names if is_virtualenv(Path(project_dir, name))]


class Inside:
    """Whether paths relative to one directory lie in a virtualenv, each
    directory looked at once (a venv's thousands of files cost one stat)."""

    def __init__(self, root: Path | str) -> None:
        self._root = str(root)
        self._known: dict[str, bool] = {}

    def __call__(self, rel: str) -> bool:
        """``rel`` (posix, relative to the root) is a file of a virtualenv's
        own :data:`LAYOUT`."""
        parts = rel.split("/")
        for depth in range(1, len(parts)):
            directory = "/".join(parts[:depth])
            found = self._known.get(directory)
            if found is None:
                found = self._known[directory] = is_virtualenv(os.path.join(self._root, directory))
            if found:
                return parts[depth] in LAYOUT
        return False
