"""The user's git configuration as it stood when a run started.

stepkit's own git calls (:mod:`stepkit.workspace.scope.git`) read the
system, global and XDG configuration and the attributes and ignore files
they name, yet those live outside the project where the coder, running as
the user, can write them: a smudge filter added to ``~/.gitconfig`` and
``~/.config/git/attributes`` runs inside the ``git worktree add`` that
rebuilds the step's start for the baseline, and can make that start as
broken as the step.  So a run copies them when it starts (:func:`take`)
into its private state: every entry of the system and global scopes, their
includes resolved, into one file, and the attributes and ignore files into
others the copy names; its git calls then read only the copy
(:func:`env`: ``GIT_CONFIG_GLOBAL``, ``GIT_CONFIG_NOSYSTEM``,
``GIT_ATTR_NOSYSTEM``).  What the user had configured (an LFS filter, an
identity) still applies; what changes during the run never does.
"""

from __future__ import annotations

import os
import shutil
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

#: the snapshot's files inside the directory :func:`take` fills
CONFIG, ATTRIBUTES, IGNORE = "config", "attributes", "ignore"
#: the environment that keeps git from reading any configuration but the snapshot's
_NOTHING_ELSE = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_ATTR_NOSYSTEM": "1"}


def take(directory: Path, cwd: Path) -> Path:
    """Copy the user's git configuration into ``directory`` (created) as git
    reads it from ``cwd`` now; return ``directory``."""
    from stepkit.workspace.scope import git

    directory.mkdir(parents=True, exist_ok=True)
    entries: list[tuple[str, str | None]] = []
    origins: list[str] = []
    for scope in ("--system", "--global"):
        if scope == "--system" and os.environ.get("GIT_CONFIG_NOSYSTEM"):
            continue
        code, out, _ = git.call(
            ["config", scope, "--includes", "--show-origin", "-z", "--list"], cwd
        )
        if code == 0:
            entries += _entries(out, origins if scope == "--system" else None)
    attributes = _setting(entries, "core.attributesfile") or _xdg("attributes")
    ignore = _setting(entries, "core.excludesfile") or _xdg("ignore")
    system_attributes = Path(origins[0]).with_name("gitattributes") if origins else None
    if os.environ.get("GIT_ATTR_NOSYSTEM"):
        system_attributes = None
    _write(directory / ATTRIBUTES, _read(system_attributes) + _read(attributes))
    _write(directory / IGNORE, _read(ignore))
    entries += [
        ("core.attributesfile", str(directory / ATTRIBUTES)),
        ("core.excludesfile", str(directory / IGNORE)),
    ]
    _write(directory / CONFIG, "".join(_line(key, value) for key, value in entries))
    return directory


def env(directory: Path) -> dict[str, str]:
    """The environment that points git at the snapshot in ``directory``."""
    return {"GIT_CONFIG_GLOBAL": str(directory / CONFIG), **_NOTHING_ELSE}


#: where a run keeps its snapshot, inside its run directory
RUN_DIR_NAME = "gitconfig"


def pinned(run_dir: Path) -> AbstractContextManager[None]:
    """stepkit's git calls read the snapshot a run took when it started
    (one :func:`take` into ``run_dir``); a run started by a stepkit without
    snapshots reads the configuration as it is."""
    from stepkit.workspace.scope import git

    directory = run_dir / RUN_DIR_NAME
    if not (directory / CONFIG).is_file():
        return nullcontext()
    return git.pinned(env(directory))


def _entries(out: bytes, origins: list[str] | None) -> list[tuple[str, str | None]]:
    """``(key, value)`` of ``git config --show-origin -z --list`` (None: a
    key with no ``=``), the files they came from appended to ``origins``."""
    fields = out.split(b"\0")
    found: list[tuple[str, str | None]] = []
    for origin, entry in zip(fields[::2], fields[1::2], strict=False):
        key, newline, value = entry.decode("utf-8", "surrogateescape").partition("\n")
        if not key or _is_include(key):
            continue  # what it includes is listed already: the copy must not read the live file
        found.append((key, value if newline else None))
        where = origin.decode("utf-8", "surrogateescape").removeprefix("file:")
        if origins is not None and where not in origins:
            origins.append(where)
    return found


def _is_include(key: str) -> bool:
    lowered = key.lower()
    return lowered == "include.path" or (
        lowered.startswith("includeif.") and lowered.endswith(".path")
    )


def _setting(entries: list[tuple[str, str | None]], key: str) -> Path | None:
    values = [value for name, value in entries if name == key and value]
    return Path(os.path.expanduser(values[-1])) if values else None


def _xdg(name: str) -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base, "git", name)


def _line(key: str, value: str | None) -> str:
    """One entry as a config file section of its own (git merges repeated sections)."""
    section, _, rest = key.partition(".")
    subsection, _, name = rest.rpartition(".")
    head = f'[{section} "{_escape(subsection)}"]' if subsection else f"[{section}]"
    return f"{head}\n\t{name}\n" if value is None else f'{head}\n\t{name} = "{_escape(value)}"\n'


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")


def _read(path: Path | None) -> str:
    if path is None:
        return ""
    try:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return ""
    return text if text.endswith("\n") or not text else text + "\n"


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8", errors="surrogateescape")
    shutil.move(tmp, path)
