"""The site directories of the gates' Pythons, outside the project.

Every Python runs the ``.pth`` files of its site directories and imports a
``sitecustomize`` or ``usercustomize`` found there, before any test, and
imports from them what the project does not hold.  Those directories are
outside the project (a virtualenv's, the user's ``~/.local``), so the scope
guard never sees them, yet a coder running as the user can write there:
one line in a ``.pth`` file patches the code under test in every gate, and
a ``calc.py`` there stands in for an uninstalled one.  :func:`look` takes
the lstat signatures of the top-level entries of the site directories of
the Pythons a gate would start (``python`` and ``python3`` on the gates'
PATH, and stepkit's own interpreter): a file's (a write changes it) and a
directory's identity (a package added or removed; what changes inside an
installed package is not looked at); and of those Pythons themselves (one
put earlier on PATH is a new entry).  :func:`changes` names what differs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterable
from concurrent.futures import Future
from pathlib import Path
from typing import NamedTuple

from stepkit.workspace import ahead
from stepkit.workspace.scope.tree import changed_how
from stepkit.workspace.scope.watch import Signatures, signature

#: entries of a site directory that Python itself writes
ROUTINE = frozenset({"__pycache__"})
#: the names a gate command starts Python by
PYTHON_NAMES = ("python3", "python")
#: asks an interpreter for its version and site directories without running their start-up
#: files (-S); -S also leaves out the virtualenv's, which :func:`_asked` adds from pyvenv.cfg
#: (written so that a Python 2 answers too)
_SITE_DIRS = (
    "import json, site, sys; print(json.dumps({'version': '%d.%d' % sys.version_info[:2], "
    "'release': '%d.%d.%d' % sys.version_info[:3], "
    "'dirs': site.getsitepackages() + [site.getusersitepackages()]}))"
)


class _Asked(NamedTuple):
    #: the interpreter's version (``3.11.7``); None when it could not say
    release: str | None
    dirs: tuple[str, ...]


Look = Signatures


def look(tool_dirs: Iterable[str]) -> Look:
    """``{path: lstat signature}`` of the Pythons found first in
    ``tool_dirs`` (absolute directories put before PATH), then on PATH (a
    new one earlier on PATH is a new path), and of the top-level entries (a
    directory's path ends in ``/``) of their and this interpreter's site
    directories."""
    found: Look = {}
    for python in _pythons(tuple(tool_dirs)):
        try:
            st = os.lstat(python)
        except OSError:
            continue
        found[python] = signature(st)
    for site_dir in site_dirs(tuple(tool_dirs)):
        try:
            entries = list(os.scandir(site_dir))
        except OSError:
            continue
        for entry in entries:
            if entry.name in ROUTINE:
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            found[entry.path + ("/" if stat.S_ISDIR(st.st_mode) else "")] = signature(st)
    return found


def changes(before: Look | None, now: Look | None) -> list[str]:
    """``<path> (added|changed|deleted)`` for each entry that differs."""
    if before is None or now is None:
        return []
    return [f"{path} ({how})" for path, how in changed_how(before, now)]


def site_dirs(tool_dirs: tuple[str, ...]) -> list[str]:
    """The site directories of the Pythons a gate would start, each once."""
    found: list[str] = []
    own = _identity(sys.executable)
    pythons = _by_identity(tool_dirs)
    asking = {key: _asking(python) for key, python in pythons.items() if key != own}
    for key in pythons:
        asked = _own_site_dirs() if key == own else asking[key].result().dirs
        for directory in map(os.path.realpath, asked):  # lib64 is often a link to lib
            if directory not in found:
                found.append(directory)
    return found


def ask_ahead(tool_dirs: tuple[str, ...]) -> None:
    """Start asking the Pythons a gate would start (other than this one)
    for their site directories, each in a thread of its own, while the
    caller goes on: :func:`site_dirs` takes their answers (each Python
    starts once per process)."""
    own = _identity(sys.executable)
    for key, python in _by_identity(tool_dirs).items():
        if key != own:
            _asking(python)


def _by_identity(tool_dirs: tuple[str, ...]) -> dict[tuple[str, str | None], str]:
    """The Pythons a gate would start and this one, one per identity."""
    # not resolved: a virtualenv's python is a link to the base one, and knows its venv by the path it was started by;
    # one interpreter of one venv under two names (python, python3) is asked once
    return {_identity(python): python for python in [*_pythons(tool_dirs), sys.executable]}


def release(python: str) -> str | None:
    """The version of ``python`` (``3.11.7``), None when it cannot say:
    asked with its site directories (:func:`ask_ahead`), once per process;
    this interpreter's is known."""
    if _identity(python) == _identity(sys.executable):
        return ".".join(map(str, sys.version_info[:3]))
    return _asking(python).result().release


def _asking(python: str) -> Future[_Asked]:
    """``python``'s answer (:func:`_asked`), asked in a thread of its own once per process."""
    return ahead.asking(("site-dirs", python), lambda: _asked(python), "stepkit-site-dirs")


def _pythons(tool_dirs: tuple[str, ...]) -> list[str]:
    """The Pythons a gate command names ``python3`` or ``python`` would start."""
    search = os.pathsep.join([*tool_dirs, os.environ.get("PATH", "")])
    return [p for p in dict.fromkeys(shutil.which(name, path=search) for name in PYTHON_NAMES) if p]


def _identity(python: str) -> tuple[str, str | None]:
    """What decides a Python's site directories: its binary and its virtualenv."""
    config = _venv_config(python)
    return os.path.realpath(python), str(config) if config is not None else None


def _venv_config(python: str) -> Path | None:
    here = Path(python).parent
    return next(
        (d / "pyvenv.cfg" for d in (here, here.parent) if (d / "pyvenv.cfg").is_file()), None
    )


def _own_site_dirs() -> tuple[str, ...]:
    """This interpreter's site directories, without starting another."""
    import site

    return (*site.getsitepackages(), site.getusersitepackages())


def _asked(python: str) -> _Asked:
    """``python``'s version and site directories (none when it cannot say):
    its virtualenv's first, as ``pyvenv.cfg`` beside it or one level up
    names it, the base interpreter's only when that file includes them."""
    try:
        out = subprocess.run(
            [python, "-S", "-c", _SITE_DIRS],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            stdin=subprocess.DEVNULL,
        ).stdout
        asked = json.loads(out)
        version, release, dirs = (
            str(asked["version"]),
            str(asked["release"]),
            [str(Path(d)) for d in asked["dirs"] if isinstance(d, str)],
        )
    except (OSError, ValueError, KeyError, TypeError, subprocess.SubprocessError):
        return _Asked(None, ())
    config = _venv_config(python)
    if config is None:
        return _Asked(release, tuple(dirs))
    venv = [
        str(config.parent / lib / f"python{version}" / "site-packages") for lib in ("lib", "lib64")
    ]
    shared = re.search(
        r"^\s*include-system-site-packages\s*=\s*true\s*$",
        _read(config),
        re.IGNORECASE | re.MULTILINE,
    )
    return _Asked(release, tuple([*venv, *dirs] if shared else [*venv, dirs[-1]] if dirs else venv))


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
