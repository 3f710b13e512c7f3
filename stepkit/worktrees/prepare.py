"""The dependencies a new work tree's gates need, prepared as the user's
tree has them.

A work tree is a checkout: git gives it no ``node_modules``.  Before the
step runs, either the project's ``[worktree] setup`` command runs in the
work tree's project dir (``pnpm install --frozen-lockfile``), or each
dependency directory the project types name (``stepkit_dependency_dirs``)
is linked from the user's tree: a real directory whose entries are symlinks
to the user's entries.  A real directory, not one symlink, because git's
usual ignore rule ``node_modules/`` matches directories only: a symlink of
that name would be an untracked file, and the step's commit would hold it.

What cannot be prepared (the command fails, the user's tree lacks the
directory) is recorded in the work tree's record as ``unprepared``: every
gate with a command is then an environment fault (:mod:`stepkit.workspace.gates`).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from stepkit.workspace.worktree_record import (
    UNPREPARED,
    WorktreeRecord,
    admin_dir,
    write_record,
)

#: The setup command's log, in the work tree's admin directory (removed with it).
SETUP_LOG = "stepkit-setup.log"
_FIX = '[worktree] setup = "<your install command>" in stepkit.toml'


def prepare(record: WorktreeRecord) -> WorktreeRecord:
    """Prepare ``record``'s work tree; the record, rewritten with what could
    not be prepared (unchanged when everything was)."""
    from stepkit.config import load_config
    from stepkit.pluginmanager import get_plugin_manager

    project = Path(record.project)
    config = load_config(project)
    setup = config.worktree.setup
    if setup:
        record = _run_setup(record, setup, config)
    else:
        pm = get_plugin_manager(project, config)
        record = dataclasses.replace(record, unprepared=_link(record, pm))
    if record.unprepared:
        write_record(Path(record.path), record)
    return record


def _run_setup(record: WorktreeRecord, setup: str, config) -> WorktreeRecord:
    """Run the project's setup command in the work tree, its output logged."""
    from stepkit.workspace import process

    admin = admin_dir(Path(record.path))
    log = admin / SETUP_LOG if admin is not None else None
    done = process.run(
        setup,
        cwd=Path(record.project),
        timeout=config.timeouts.gate("build"),
        no_output_timeout=config.timeouts.no_output,
        log_path=log,
        log_limit=config.logs.max_bytes,
    )
    why = ""
    if done.start_error:
        why = f"[worktree] setup `{setup}` could not start: {done.start_error}"
    elif done.expired:
        why = f"[worktree] setup `{setup}` {done.expired}"
    elif done.exit_code != 0:
        why = f"[worktree] setup `{setup}` exited {done.exit_code}"
    unprepared = f"{UNPREPARED}: {why}; fix the command ({_FIX})" if why else ""
    return dataclasses.replace(
        record, unprepared=unprepared, setup_log=str(log) if log is not None else ""
    )


def _link(record: WorktreeRecord, pm) -> str:
    """Link each dependency directory of the user's tree into the work tree;
    why one could not be ("" when all were)."""
    project, origin = Path(record.project), Path(record.origin)
    names: list[str] = []
    for answer in pm.hook.stepkit_dependency_dirs(project_dir=project):
        names += [rel for rel in answer or () if rel not in names]
    for rel in names:
        mine, theirs = project / rel, origin / rel
        if mine.exists() or mine.is_symlink():
            continue
        if not theirs.is_dir():
            return (
                f"{UNPREPARED}: your tree has no {rel} to link (install the dependencies there), "
                f"or give the command that installs them ({_FIX})"
            )
        mine.mkdir(parents=True)
        for entry in sorted(os.scandir(theirs), key=lambda e: e.name):
            (mine / entry.name).symlink_to(Path(entry.path), entry.is_dir())
    return ""
