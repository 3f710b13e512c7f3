"""The baseline: a gate's command run on the tree as it was before — when
the step started, or at a git ref — to tell a new failure from one that was
already there.

The tree is rebuilt outside the user's: a temporary ``git worktree add
--detach`` of the start commit with the start snapshot's uncommitted files
written over it (outside git: the snapshot's files in a temporary
directory).  The project's dependency directories that git ignores
(``node_modules``, each virtualenv of any name) are linked in, so the command finds
what it found in the project.  A work tree whose process was killed
before it could remove it is removed when the next baseline tree is
named (:func:`remove_left_worktrees`).  When a byte of that tree cannot be had (a
large or binary uncommitted file the snapshot did not keep) there is no
baseline: every failure counts as new.

A baseline is cached in the run store's ``baseline/`` by the tree's key
(its content: the git tree of its commit and the bytes of the files over
it, so a later step that starts from the same files finds it whatever
commit holds them), the gate and the command, so it runs once per run and
not again for a later run of the same base.  The step's start is measured
this way while the coder works (:mod:`stepkit.workspace.start_outcomes`).  The cache is sealed (:mod:`stepkit.workspace.seal`):
a record the coder forged or edited is discarded, run again, and named in
the record's ``store_flags``.

:func:`failure_keys` names what failed, comparably between two trees: test
ids for the tests gate; for build and lint each error by file, rule and
message, line and column numbers dropped (an edit above a pre-existing
error moves it without making it new; a second error in the same file is
new).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from pydantic import Field

from stepkit.errors import UsageError
from stepkit.jsontext import model_from_json, model_json
from stepkit.lazyregex import lazy_compile
from stepkit.models import Model
from stepkit.records import GateResult
from stepkit.workspace import sandbox
from stepkit.workspace.faults import tests_ran
from stepkit.workspace.files import pid_running
from stepkit.workspace.lintkeys import lint_keys
from stepkit.workspace.loglines import LogLines
from stepkit.workspace.scope import git
from stepkit.workspace.scope.snapshot import BeforeReader, Snapshot
from stepkit.workspace.scope.virtualenvs import top_level
from stepkit.workspace.seal import SealBroken, read_sealed, write_sealed
from stepkit.workspace.store import baseline_dir
from stepkit.workspace.testresults import TestResults, TestsRecord

#: Ignored dependency directories linked into the baseline tree when it
#: lacks them, beside every virtualenv of any name at the project's top.
DEPENDENCY_DIRS = ("node_modules",)


class BaselineUnavailable(Exception):
    """The earlier tree cannot be rebuilt exactly (the message says why)."""


class BlobReader(Protocol):
    """Gives the bytes of a blob id the tree names (a :class:`BeforeReader`, say)."""

    def read(self, oid: str | None) -> bytes | None:
        """The bytes of ``oid``; None when it cannot be read."""


@dataclass
class BaseTree:
    """A tree to rebuild: a commit (None: none) plus files over it.

    :ivar files: project-relative path → blob id (None: absent).
    :ivar label: how messages name it (``the step's start``, ``main``).
    """

    project_dir: Path
    label: str
    head: str | None = None
    git_root: Path | None = None
    prefix: str = ""
    files: dict[str, str | None] = field(default_factory=dict)
    reader: BlobReader | None = None

    @functools.cached_property
    def key(self) -> str:
        """Equal keys: byte-identical trees (the commit's git tree, not the
        commit: two commits of the same files are one tree)."""
        content = self.head
        if self.head is not None and self.git_root is not None:
            found = git.run(["rev-parse", "-q", "--verify", f"{self.head}^{{tree}}"], self.git_root)
            content = f"tree {git.text(found).strip()}" if found else self.head
        digest = hashlib.sha256(f"{content}\0{self.prefix}\n".encode())
        for rel, oid in sorted(self.files.items()):
            digest.update(f"{rel}\0{oid}\n".encode("utf-8", "surrogateescape"))
        return digest.hexdigest()

    def has(self, rel: str) -> bool:
        """The project-relative file ``rel`` is in the tree."""
        if rel in self.files:
            return self.files[rel] is not None
        return rel in self._committed

    @functools.cached_property
    def _committed(self) -> frozenset[str]:
        if self.head is None or self.git_root is None:
            return frozenset()
        return frozenset(git.commit_ids(self.git_root, self.head, self.prefix))


def snapshot_tree(snapshot: Snapshot) -> BaseTree:
    """The tree the step started from, as its scope snapshot recorded it."""
    root = Path(snapshot.git_root) if snapshot.git_root else None
    if root is not None:
        remove_left_worktrees(root)
    return BaseTree(
        Path(snapshot.project_dir),
        "the step's start",
        head=snapshot.head,
        git_root=root,
        prefix=snapshot.prefix,
        files=dict(snapshot.files),
        reader=BeforeReader(snapshot),
    )


def ref_tree(project_dir: Path, ref: str) -> BaseTree:
    """The tree of the git ref ``ref``.

    :raises UsageError: the project is not in git, or ``ref`` names no commit.
    """
    where = git.location(Path(project_dir))
    if where is None:
        raise UsageError(f"--baseline {ref}: {project_dir} is not in a git work tree")
    root, prefix = Path(where[0]), where[1]
    remove_left_worktrees(root)
    commit = git.resolve_commit(root, ref)
    if commit is None:
        raise UsageError(f"--baseline {ref}: no such commit in {root}")
    return BaseTree(Path(project_dir), ref, head=commit, git_root=root, prefix=prefix)


#: A baseline's temporary directory: ``stepkit-baseline-<pid>-<random>``,
#: the work tree in it named ``tree``.
_TEMP_PREFIX = "stepkit-baseline-"
_LEFT_TREE = lazy_compile(rf"{_TEMP_PREFIX}(\d+)-.+")


def remove_left_worktrees(root: Path) -> None:
    """Remove the temporary work trees of baselines whose process is gone
    (killed with -9 mid-baseline, it never ran its cleanup), and git's
    record of them.  A live process's work tree is left alone."""
    for path in git.worktrees(root)[1:]:
        left = _LEFT_TREE.fullmatch(path.parent.name)
        if path.name == "tree" and left and not pid_running(int(left.group(1))):
            git.worktree_remove(root, path)
            shutil.rmtree(path.parent, ignore_errors=True)


@contextlib.contextmanager
def checked_out(tree: BaseTree) -> Iterator[Path]:
    """Rebuild ``tree`` in a temporary directory; yield the project's place in
    it; remove it (and git's record of the work tree) afterwards.

    :raises BaselineUnavailable: it cannot be rebuilt exactly.
    """
    temp = sandbox.scratch_dir(f"{_TEMP_PREFIX}{os.getpid()}-")
    checkout = temp / "tree"
    added = False
    try:
        if tree.head is not None and tree.git_root is not None:
            added = git.worktree_add(tree.git_root, checkout, tree.head)
            if not added:
                raise BaselineUnavailable(f"git could not check out {tree.head[:12]}")
        else:
            checkout.mkdir()
        project = checkout / tree.prefix if tree.prefix else checkout
        _overlay(tree, project)
        _link_dependencies(tree.project_dir, project)
        yield project
    finally:
        if added and tree.git_root is not None:
            git.worktree_remove(tree.git_root, checkout)
        shutil.rmtree(temp, ignore_errors=True)


def _overlay(tree: BaseTree, project: Path) -> None:
    """Write the tree's files over the checkout (None: remove the file)."""
    for rel, oid in sorted(tree.files.items()):
        target = project / rel
        if oid is None:
            with contextlib.suppress(FileNotFoundError, IsADirectoryError):
                target.unlink()
            continue
        data = tree.reader.read(oid) if tree.reader is not None else None
        if data is None:
            raise BaselineUnavailable(
                f"the bytes of {rel} as they were at {tree.label} were not kept"
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def _link_dependencies(source: Path, project: Path) -> None:
    for name in dict.fromkeys([*DEPENDENCY_DIRS, *top_level(source)]):
        if (source / name).is_dir() and not os.path.lexists(project / name):
            (project / name).symlink_to(source / name, target_is_directory=True)


# -- the record and its cache ------------------------------------------------


class BaselineRecord(Model):
    """How a gate's command did on the earlier tree.

    :ivar failures: what failed there (:func:`failure_keys`); None when the
        run's failures could not be named (then no comparison is possible).
    :ivar status: the gate's status there.
    :ivar could_not_run: why the command could not run there (an
        environment fault, no test found, a tests command that failed
        before any test ran: :func:`could_not_run`); None: it ran.
    :ivar store_flags: what was wrong with the cache when it was read (a
        record forged or edited: discarded, and the command run again).
    :ivar concurrent: measured while the coder worked, not after the gate failed.
    """

    gate: str
    command: str
    tree: str
    label: str
    status: str
    summary: str = ""
    failures: list[str] | None = None
    tests: TestsRecord | None = None
    log: str | None = None
    ran_at: str = ""
    cached: bool = False
    could_not_run: str | None = None
    concurrent: bool = False
    store_flags: list[str] = Field(default_factory=list)

    def outcomes(self) -> dict[str, str] | None:
        """Every test id the run reported with its status (None: not known)."""
        return self.tests.outcomes() if self.tests is not None else None


#: How a gate's command went: (status, summary, log path, the output's text, the per-test results).
GateOutcome = tuple[str, str, str | None, Iterable[str], TestResults | None]
#: What runs the gate in the rebuilt tree: (its project dir, its log dir) → how it went.
GateRun = Callable[[Path, Path], GateOutcome]


def baseline_record(
    project_dir: Path, tree: BaseTree, gate: str, command: str, run: GateRun
) -> BaselineRecord:
    """The baseline of ``gate`` on ``tree``: from the cache, else run now
    (and cached unless it could not run or hit a time limit).

    :raises BaselineUnavailable: the tree cannot be rebuilt.
    """
    record, flags = cached_record(project_dir, tree, gate, command)
    if record is not None:
        return record
    log_dir = log_dir_of(project_dir, tree, gate, command)
    with checked_out(tree) as where:
        status, summary, log, output, tests = run(where, log_dir)
        record = new_record(
            tree, gate, command, (status, summary, log, output, tests), where, log_dir
        )
    keep_record(project_dir, tree, record)
    return record.model_copy(update={"store_flags": flags}) if flags else record


def cached_record(
    project_dir: Path, tree: BaseTree, gate: str, command: str
) -> tuple[BaselineRecord | None, list[str]]:
    """The cached record of ``gate``'s ``command`` on ``tree`` (None: none
    that stepkit wrote, or its per-test file is gone), and the flags of a
    record that was forged or edited (discarded)."""
    cache = _cache_path(project_dir, tree, gate, command)
    try:
        record = model_from_json(BaselineRecord, read_sealed(cache))
    except SealBroken as exc:
        with contextlib.suppress(OSError):
            cache.unlink()
        return None, [
            f"the baseline cache was not the one stepkit wrote: {exc}; discarded and run again"
        ]
    except (OSError, ValueError):
        return None, []
    if record.tests is not None and record.outcomes() is None:
        return None, []
    return record.model_copy(update={"cached": True}), []


def log_dir_of(project_dir: Path, tree: BaseTree, gate: str, command: str) -> Path:
    """Where the run of ``gate``'s ``command`` on ``tree`` keeps its logs."""
    cache = _cache_path(project_dir, tree, gate, command)
    return cache.parent / "logs" / cache.stem


def new_record(
    tree: BaseTree, gate: str, command: str, ran: GateOutcome, where: Path, log_dir: Path
) -> BaselineRecord:
    """The record of ``gate``'s command as it ran on ``tree``, rebuilt at ``where``."""
    status, summary, log, output, tests = ran
    return BaselineRecord(
        gate=gate,
        command=command,
        tree=tree.key,
        label=tree.label,
        status=status,
        summary=summary,
        failures=failure_keys(gate, status, tests, output, [where, where.resolve()]),
        log=log,
        ran_at=datetime.now(UTC).isoformat(timespec="seconds"),
        tests=tests.record(log_dir / "tests.json") if tests is not None else None,
        could_not_run=could_not_run(gate, status, summary, tests, output),
    )


def keep_record(project_dir: Path, tree: BaseTree, record: BaselineRecord) -> None:
    """Cache ``record``, sealed, when it says how the code did: never for a
    command that could not run or hit a time limit (the machine may change)."""
    if record.status in ("pass", "fail") and record.could_not_run is None:
        cache = _cache_path(project_dir, tree, record.gate, record.command)
        write_sealed(cache, model_json(record, indent=1))


def _cache_path(project_dir: Path, tree: BaseTree, gate: str, command: str) -> Path:
    key = f"{tree.key}\0{gate}\0{command}\0{judge_version()}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:40]
    return baseline_dir(project_dir) / f"{gate}-{digest}.json"


@functools.cache
def judge_version() -> str:
    """What reads a record's failures, as a key: the size and modification
    time of every module of stepkit and its built-in plugins, so that a
    record kept by another stepkit (one that read a tool's output another
    way) is never taken for this one's."""
    import importlib.util

    import stepkit

    # the built-in plugins' folder, found without importing them (the core never does)
    plugins = importlib.util.find_spec("stepkit.plugins")
    roots = [*stepkit.__path__, *((plugins and plugins.submodule_search_locations) or [])]
    signed = hashlib.sha256()
    for root in roots:
        for path in sorted(Path(root).rglob("*.py")):
            with contextlib.suppress(OSError):
                st = path.stat()
                signed.update(
                    f"{path.relative_to(root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode()
                )
    return signed.hexdigest()[:16]


# -- naming failures ---------------------------------------------------------


def failure_keys(
    gate: str,
    status: str,
    tests: TestResults | None,
    output: str | Iterable[str],
    roots: Iterable[Path] = (),
) -> list[str] | None:
    """What failed, named comparably between two trees.

    Tests: the failed and errored ids.  Build and lint: each error keyed by
    file, rule and message (:func:`~stepkit.workspace.lintkeys.lint_keys`).
    None when the gate failed and nothing that failed could be named (a
    crash before any test, output no rule reads).
    """
    if gate == "tests":
        failing = tests.failing if tests is not None else []
        return failing if failing or status == "pass" else None
    keys = lint_keys(output, roots)
    return keys if keys or status == "pass" else None


def could_not_run(
    gate: str,
    status: str,
    summary: str,
    tests: TestResults | None,
    output: str | Iterable[str],
) -> str | None:
    """Why a gate's command could not run (None: it ran): an environment
    fault (:mod:`~stepkit.workspace.faults`: ``error``), a tests command
    that ran no test (``not_run``), or one that failed with no test
    reported and nothing showing that a test ran (the interpreter it names
    has no test runner, say)."""
    if status in ("error", "not_run"):
        return summary or status
    if gate != "tests" or status != "fail" or (tests is not None and tests.outcomes):
        return None
    if tests_ran(output if isinstance(output, str) else "\n".join(output)):
        return None
    return (
        f"it failed before any test ran ({summary})" if summary else "it failed before any test ran"
    )


def split_failures(current: list[str], before: list[str] | None) -> tuple[list[str], list[str]]:
    """(new, pre-existing): a current failure is pre-existing when it failed
    before too; with nothing known of before, every one is new."""
    if before is None:
        return list(current), []
    earlier = set(before)
    return [k for k in current if k not in earlier], [k for k in current if k in earlier]


# -- a gate's result, read back ------------------------------------------------


def test_results_of(result: GateResult) -> TestResults | None:
    """The gate's per-test results read back from its file (the failing
    ids its record kept when the file is gone; None: none recorded)."""
    if result.tests is None:
        return None
    outcomes = result.tests.outcomes()
    if outcomes is None:  # the file is gone: the failing ids the record kept
        found = TestResults(source=result.tests.source, complete=False)
        for test_id in result.tests.failing:
            found.add(test_id, "failed")
        return found
    return TestResults(
        source=result.tests.source,
        complete=result.tests.complete,
        outcomes=outcomes,  # type: ignore[arg-type]  # statuses read back from JSON: pydantic checks them
    )


def log_text_of(result: GateResult) -> LogLines:
    """The gate's output as lines streamed from its log (its evidence when the log is gone)."""
    return LogLines(
        result.log if result.log and os.path.isfile(result.log) else None, result.evidence
    )
