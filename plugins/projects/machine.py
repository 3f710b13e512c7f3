"""What this machine has that a CI job sets up: the versions of Python,
Node and Go on PATH, the Rust toolchain rustc runs by default, the
toolchains rustup has and the targets the default one can build for.

Asked of the tools themselves (``python3``, with its site directories;
``rustc -vV``, ``rustup toolchain list`` …: each only reports), once per process and PATH
and only the kind a reader asks for;
a tool that is missing or fails reads as absent.  CI readers
(:mod:`stepkit.plugins.projects.ci_github`) pick the matrix entry this
machine can run and leave out the lines it cannot.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple


class Rust(NamedTuple):
    #: the default toolchain's release (``1.95.0``) and channel (``stable``, ``beta``, ``nightly``).
    release: str
    channel: str
    #: the channels rustup has installed (the default's alone without rustup).
    channels: frozenset[str]
    #: the targets the default toolchain has a standard library for.
    targets: frozenset[str]


def _output(*args: str) -> str | None:
    if shutil.which(args[0]) is None:
        return None
    try:
        done = subprocess.run(
            args, capture_output=True, text=True, timeout=20, check=False, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout + done.stderr if done.returncode == 0 else None


def _version(text: str | None) -> str | None:
    found = re.search(r"(\d+(?:\.\d+)+)", text or "")
    return found[1] if found else None


#: how each kind's version is asked, the first command that answers deciding
_ASKED = {
    "node": (("node", "--version"),),
    "go": (("go", "version"),),
}


@lru_cache(maxsize=16)
def _kind_version(kind: str, path: str) -> str | None:
    # each kind asked only when read: a tool's start (node's is tens of
    # milliseconds) is paid before the first gate of every verify that reads CI
    if kind == "python":
        return _python_version()
    return _version(next(filter(None, (_output(*args) for args in _ASKED.get(kind, ()))), None))


def _python_version() -> str | None:
    """The version of ``python3`` on PATH, else of ``python``: asked with
    their site directories (:func:`stepkit.workspace.scope.startup.release`),
    which a run starts asking as it begins, so a CI reader's question is
    answered by then (a pyenv shim takes ~100 ms to start a Python)."""
    from stepkit.workspace.scope import startup

    found = (shutil.which(name) for name in ("python3", "python"))
    return next(filter(None, (startup.release(python) for python in found if python)), None)


def version(kind: str) -> str | None:
    """The version of ``python``, ``node`` or ``go`` on PATH, or None."""
    return _kind_version(kind, os.environ.get("PATH", ""))


@lru_cache(maxsize=4)
def _rust(path: str) -> Rust | None:
    verbose = _output("rustc", "-vV")
    if verbose is None:
        return None
    release = re.search(r"^release:\s*(\S+)", verbose, re.MULTILINE)
    name = release[1] if release else ""
    channel = next((c for c in ("nightly", "beta") if c in name), "stable")
    listed = _output("rustup", "toolchain", "list")
    channels = {channel}
    if listed is not None:
        channels |= {line.split("-")[0] for line in listed.splitlines() if line.strip()}
    sysroot = (_output("rustc", "--print", "sysroot") or "").strip()
    rustlib = Path(sysroot) / "lib" / "rustlib"
    targets = (
        {p.name for p in rustlib.iterdir() if (p / "lib").is_dir()}
        if sysroot and rustlib.is_dir()
        else set()
    )
    return Rust(name.split("-")[0], channel, frozenset(channels), frozenset(targets))


def rust() -> Rust | None:
    """The Rust toolchain here, or None without rustc."""
    return _rust(os.environ.get("PATH", ""))
