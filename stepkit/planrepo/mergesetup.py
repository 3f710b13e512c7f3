"""Registering the plan merge driver (:mod:`stepkit.planrepo.mergedriver`)
with the git repository that holds a plan repo.

:func:`register_merge_driver` writes the driver into the repository's git
config (``merge.stepkit-plan.name`` and ``.driver``, the command being this
Python's ``-m stepkit merge-driver``, so git finds it without PATH) and
names the plan repo's NOTES.md and step files in ``<git common dir>/info/attributes``:
nothing is written into the user's tree, and every work tree of the
repository (a step's worktree too) merges with it.  It is idempotent and
keeps every other attribute line.
"""

from __future__ import annotations

import sys
from pathlib import Path

from stepkit import quoting
from stepkit.workspace.files import atomic_write
from stepkit.workspace.scope import git
from stepkit.workspace.store import git_location

#: The driver's name in git config and in ``merge=`` attributes.
DRIVER_NAME = "stepkit-plan"


def driver_command() -> str:
    """The command git runs for a merge (%O base, %A ours and the result, %B theirs, %P the path)."""
    return f"{quoting.shell([sys.executable, '-m', 'stepkit', 'merge-driver'])} %O %A %B %P"


def register_merge_driver(project_dir: Path, plans_dir: Path) -> Path | None:
    """Register the plan merge driver for ``plans_dir`` in the git repository
    holding ``project_dir``.

    :return: the attributes file that names the plan files, None (nothing
        done) outside git or when ``plans_dir`` is outside the work tree.
    :raises OSError: the git config or the attributes file cannot be written.
    """
    where = _plan_place(project_dir, plans_dir)
    if where is None:
        return None
    common, prefix = where
    for key, value in (
        ("name", "stepkit plan repo: keeps every branch's NOTES facts and Edge cases"),
        ("driver", driver_command()),
    ):
        current = git.run(["config", "--get-all", f"merge.{DRIVER_NAME}.{key}"], Path(project_dir))
        if current is not None and git.text(current).rstrip("\n") == value:
            continue  # written only when it differs: runs side by side never race on config.lock
        if (
            git.run(
                ["config", "--replace-all", f"merge.{DRIVER_NAME}.{key}", value], Path(project_dir)
            )
            is None
        ):
            raise OSError(f"git config merge.{DRIVER_NAME}.{key} failed")
    attributes = common / "info" / "attributes"
    wanted = [
        f"{_pattern('/' + prefix + name)} merge={DRIVER_NAME}"
        for name in ("NOTES.md", "steps/*.md")
    ]
    text = git.read_text(attributes) if attributes.is_file() else ""
    missing = [line for line in wanted if line not in text.splitlines()]
    if missing:
        if text and not text.endswith("\n"):
            text += "\n"
        attributes.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(attributes, git.raw(text + "".join(f"{line}\n" for line in missing)))
    return attributes


def merge_driver_problem(project_dir: Path, plans_dir: Path) -> str | None:
    """Why git would not merge the plan repo's files with this stepkit's
    driver (not registered, registered with another command, its files not
    named in the attributes); None when it would, or outside git."""
    where = _plan_place(project_dir, plans_dir)
    if where is None:
        return None
    common, prefix = where
    current = git.run(["config", "--get", f"merge.{DRIVER_NAME}.driver"], Path(project_dir))
    if current is None:
        return "the plan merge driver is not registered in this repository"
    if current.decode("utf-8", "surrogateescape").rstrip("\n") != driver_command():
        return "the plan merge driver is registered with another stepkit's command"
    attributes = common / "info" / "attributes"
    text = (
        attributes.read_bytes().decode("utf-8", "surrogateescape") if attributes.is_file() else ""
    )
    if f"{_pattern('/' + prefix + 'NOTES.md')} merge={DRIVER_NAME}" not in text.splitlines():
        return f"{attributes} does not name the plan repo's files"
    return None


def _plan_place(project_dir: Path, plans_dir: Path) -> tuple[Path, str] | None:
    """The git common dir and the plan repo's path prefix in the work tree
    (``""`` at its top, else ``"plans/"``); None outside git or when the plan
    repo is outside the work tree."""
    located = git_location(Path(project_dir).resolve())
    if located is None:
        return None
    top, common, _ = located
    try:
        rel = Path(plans_dir).resolve().relative_to(top.resolve()).as_posix()
    except ValueError:
        return None
    return common, "" if rel == "." else f"{rel}/"


def _pattern(path: str) -> str:
    """An attributes pattern for ``path``: C-quoted when it holds a blank, a
    quote or a backslash (git reads a pattern up to the first blank)."""
    if not any(c.isspace() or c in '"\\' for c in path):
        return path
    escaped = (
        path.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t").replace("\n", "\\n")
    )
    return f'"{escaped}"'
