"""Where stepkit keeps what it writes about a project, and how that is laid
out: the one module that knows either (every other module asks it).

The run store is where the project's own tools never see it:

- in a git repository, inside the git directory:
  ``<git common dir>/stepkit/<worktree>/``, ``<worktree>`` being ``main``
  for the main work tree and ``worktrees/<name>`` for a linked one (with
  ``--<path>`` added when the project is a subdirectory of the work tree).
  Neither ``prettier .`` nor ``git clean -xfd`` reaches there;
- outside git, ``<project>/.stepkit/``, with its own ``.gitignore`` (``*``).

A store an earlier version left at ``<project>/.stepkit/`` of a git
repository is moved there the first time stepkit opens the run store
(:func:`ensure_store`), before anything in it is read.

Inside the store: ``runs/<run_id>/`` (see :mod:`stepkit.engine.runstore`),
``baseline/`` (the baseline cache), ``objects/`` (the bytes snapshots keep),
``adhoc/`` (logs of stages run outside a run) and ``verify/`` (logs of
``stepkit verify``).

Outside every project, under :func:`~stepkit.workspace.files.state_home`: ``locks/`` (the project
locks, see :mod:`stepkit.engine.lock`) and ``secret`` (the key that seals
the records stepkit trusts, see :mod:`stepkit.workspace.seal`) — out of the
reach of anything a coder does in the project.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from pathlib import Path

from stepkit.errors import UsageError
from stepkit.workspace import seal
from stepkit.workspace.files import state_home
from stepkit.workspace.scope import git

#: The run store's directory in a project outside git (and where earlier
#: versions kept it in every project).
STORE_NAME = ".stepkit"
#: What the git directory holds the stores of its work trees under.
GIT_SUBDIR = "stepkit"
#: What of an earlier version's store is not carried over when it moves: its
#: lock (which lives elsewhere now) and its unsealed baseline cache.
_LEGACY_ONLY = (".gitignore", "lock", "lock.json", "baseline")


def store_dir(project_dir: Path) -> Path:
    """The project's run store (not created, see :func:`ensure_store`): in
    its git directory, or ``<project>/.stepkit`` outside git."""
    project = Path(project_dir).resolve()
    return _git_store(project) or project / STORE_NAME


def ensure_store(project_dir: Path) -> Path:
    """The project's run store, created (outside git with its ``.gitignore``),
    an earlier version's ``<project>/.stepkit`` moved into the git directory
    first.

    :raises UsageError: it is not a directory, or cannot be created or moved."""
    project = Path(project_dir).resolve()
    git_root = _git_store(project)
    root = git_root or project / STORE_NAME
    if root.exists() and not root.is_dir():
        raise UsageError(f"{root} is not a directory (stepkit keeps its runs there); move it away")
    try:
        legacy = project / STORE_NAME
        if git_root is not None and legacy.is_dir() and not root.exists():
            _move_legacy(legacy, root)
        root.mkdir(parents=True, exist_ok=True)
        ignore = root / ".gitignore"
        if git_root is None and not ignore.exists():
            ignore.write_text("*\n", encoding="utf-8")
    except OSError as exc:
        raise UsageError(
            f"cannot write {root}: {exc.strerror or exc} (stepkit keeps its runs there)"
        ) from None
    return root


def store_root(project_dir: Path) -> Path:
    """What holds the run stores of every work tree of the project's
    repository (``<git common dir>/stepkit``), or the store itself outside git."""
    store = store_dir(project_dir)
    located = git_location(Path(project_dir).resolve())
    return located[1] / GIT_SUBDIR if located is not None else store


def runs_dir(project_dir: Path) -> Path:
    """``runs/``: one directory per run."""
    return store_dir(project_dir) / "runs"


def baseline_dir(project_dir: Path) -> Path:
    """``baseline/``: the baseline cache (created)."""
    return ensure_store(project_dir) / "baseline"


def objects_dir(project_dir: Path) -> Path:
    """``objects/``: the file bytes snapshots keep."""
    return store_dir(project_dir) / "objects"


def adhoc_dir(project_dir: Path) -> Path:
    """``adhoc/``: what a stage run outside a run writes (created)."""
    return ensure_store(project_dir) / "adhoc"


def cache_dir(project_dir: Path) -> Path:
    """``cache/``: what stepkit may rebuild at any time (parsed plan files; created)."""
    return ensure_store(project_dir) / "cache"


def verify_dir(project_dir: Path) -> Path:
    """``verify/``: the logs of ``stepkit verify`` (created)."""
    return ensure_store(project_dir) / "verify"


def lock_files(project_dir: Path) -> tuple[Path, Path]:
    """(the lock file, its holder record) of a project: outside the project,
    named by a hash of its resolved path, so that deleting the run store
    (``git clean -xfd``, ``rm -rf``) never deletes a live lock."""
    key = hashlib.sha256(
        str(Path(project_dir).resolve()).encode("utf-8", "surrogateescape")
    ).hexdigest()[:32]
    locks = state_home() / "locks"
    return locks / f"{key}.lock", locks / f"{key}.json"


def write_anchor(project_dir: Path, path: Path) -> Path:
    """What ``path``, about to be written, is checked to be a real directory
    below (:func:`~stepkit.workspace.files.real_dir`): the project's run
    store when ``path`` is in it and it lies outside the project (as in a
    linked git work tree), else the project."""
    project, store = Path(project_dir), store_dir(project_dir)
    outside = not store.is_relative_to(project.resolve())
    return store if outside and Path(path).is_relative_to(store) else project


def in_store(rel: str) -> bool:
    """True for a project-relative path inside ``<project>/.stepkit/``."""
    return rel == STORE_NAME or rel.startswith(STORE_NAME + "/")


def _git_store(project: Path) -> Path | None:
    """``<git common dir>/stepkit/<worktree>`` of the git work tree holding
    ``project``; None outside git."""
    located = git_location(project)
    if located is None:
        return None
    top, common, worktree = located
    rel = project.relative_to(top).as_posix()
    if rel != ".":
        worktree += "--" + rel.replace("/", "--")
    return common / GIT_SUBDIR / worktree


def git_location(project: Path) -> tuple[Path, Path, str] | None:
    """(work tree root, git common dir, ``main`` or ``worktrees/<id>``) of the
    git work tree holding the resolved ``project``; None outside git.  Read
    from the ``.git`` entries, as git finds them, without starting git."""
    for top in (project, *project.parents):
        dot_git = top / ".git"
        if dot_git.is_dir():
            return top, dot_git, "main"
        if dot_git.is_file():
            located = _linked_git_dir(dot_git)
            return None if located is None else (top, *located)
    return None


def _linked_git_dir(dot_git: Path) -> tuple[Path, str] | None:
    """(common dir, worktree id) of a ``.git`` file (``gitdir: …``) of a
    linked work tree or a submodule; None when it names no directory."""
    try:
        text = git.read_text(dot_git).strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    git_dir = (dot_git.parent / text.removeprefix("gitdir:").strip()).resolve()
    if not git_dir.is_dir():
        return None
    try:
        common = (git_dir / git.read_text(git_dir / "commondir").strip()).resolve()
    except OSError:
        return git_dir, "main"  # a submodule: its git dir is its own common dir
    return common, f"worktrees/{git_dir.name}"


def _move_legacy(legacy: Path, root: Path) -> None:
    """Move an earlier version's store into the git directory, without what
    only that version used, its runs' checkpoints sealed as this version's
    (it wrote them before any coder of this version ran)."""
    root.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(legacy), str(root))
    for name in _LEGACY_ONLY:
        path = root / name
        with contextlib.suppress(OSError):
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    for checkpoint in (root / "runs").glob("*/state.json"):
        seal.adopt(checkpoint)


def store_report(project_dir: Path) -> dict[str, str | None]:
    """``run_store`` (the project's run store) and ``run_dir`` (its latest
    run's directory, None before the first run), read without moving anything
    (``stepkit status --json``)."""
    store = store_dir(project_dir)
    try:
        latest = max(entry.name for entry in os.scandir(store / "runs") if entry.is_dir())
    except (OSError, ValueError):
        return {"run_store": str(store), "run_dir": None}
    return {"run_store": str(store), "run_dir": str(store / "runs" / latest)}
