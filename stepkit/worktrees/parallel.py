"""``stepkit run --parallel N``: up to N ready steps at once, each a
``stepkit run --worktree --step K --json`` child process of its own.

Each child has its own run id, lock and checkpoint, so a child killed with
SIGKILL takes no other run with it and leaves its own worktree resumable.
Children run in sessions of their own: a stop signal reaches them only
through this process, which passes it on to each (every child saves its
checkpoint as interrupted) and then waits for all of them.

Which steps are ready is :class:`~stepkit.worktrees.schedule.Schedule`'s
business; each time a run ends, the plan repo is read again and the steps
ready then are started.  The runs' exit codes are combined by
:func:`worst_exit_code`.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from stepkit.engine.interrupts import held_signals, signal_label, signal_number
from stepkit.engine.pause import PAUSED_EXIT, last_runs, resume_command
from stepkit.errors import UsageError
from stepkit.planrepo.mergesetup import register_merge_driver
from stepkit.planrepo.model import PlanRepo, StepPlan
from stepkit.workspace.store import runs_dir
from stepkit.worktrees.runstatus import read_status
from stepkit.worktrees.schedule import Ready, Schedule

#: How often the progress lines are redrawn while no run ends (a run ending
#: wakes the loop at once).
REFRESH_S = 0.5
#: The outcome of a run stopped by a signal (its checkpoint says interrupted,
#: or, after SIGKILL, still running: either way ``stepkit resume`` goes on).
INTERRUPTED = "INTERRUPTED"
#: The outcome of a child that ended without a run result (a usage error: exit 2).
NOT_RUN = "NOT_RUN"
#: Exit codes from worst to best, for :func:`worst_exit_code`: a run a signal
#: stopped, a paused run (someone must answer it), a run that could not
#: start, STEP_FAILED, STEP_BLOCKED, STEP_REJECTED, STEP_COMPLETE.
SEVERITY = ("signal", PAUSED_EXIT, 2, 1, 3, 4, 0)


def severity(code: int) -> int:
    """Where ``code`` stands in :data:`SEVERITY` (0 is the worst); an exit
    code not listed ranks with a run that could not start."""
    if code >= 128:
        return 0
    return SEVERITY.index(code) if code in SEVERITY else SEVERITY.index(2)


def worst_exit_code(codes: Sequence[int]) -> int:
    """The exit code of ``--parallel``: the worst of the runs' (0 for none)."""
    return min(codes, key=severity, default=0)


class Progress(Protocol):
    """What shows the runs while they go (``stepkit.worktrees.progress``)."""

    def update(self, runs: Sequence[Child]) -> None: ...

    def close(self) -> None: ...


@dataclass
class Child:
    """One step's run: its process, and what it says about itself."""

    ready: Ready
    process: subprocess.Popen[bytes]
    status_file: Path
    stdout_file: Path
    stderr_file: Path
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    result: dict[str, Any] | None = None

    @property
    def step(self) -> int:
        return self.ready.step.number

    @property
    def title(self) -> str:
        return self.ready.step.title

    def status(self) -> dict[str, Any]:
        """Its status file (:class:`~stepkit.worktrees.runstatus.StatusFile`)."""
        return read_status(self.status_file)

    def elapsed(self) -> float:
        return (self.ended or time.monotonic()) - self.started

    def state(self) -> str:
        """The word the progress line shows: the node running, or how it ended."""
        if self.result is not None:
            return str(self.result.get("outcome"))
        status = self.status()
        return str(status.get("node") or "starting")


@dataclass
class Outcome:
    """How ``--parallel`` ended: every run, the steps not started and why,
    the signal that stopped it (None: it was not stopped)."""

    runs: list[Child]
    waiting: list[tuple[StepPlan, str]]
    signum: int | None = None

    @property
    def exit_code(self) -> int:
        if self.signum is not None:
            return 128 + self.signum
        return worst_exit_code(
            [int(child.result["exit_code"]) for child in self.runs if child.result]
        )

    @property
    def outcome(self) -> str:
        """The outcome of the run that gave the exit code (STEP_COMPLETE when every run completed)."""
        if self.signum is not None:
            return INTERRUPTED
        code = self.exit_code
        return next(
            (
                str(child.result["outcome"])
                for child in self.runs
                if child.result and int(child.result["exit_code"]) == code
            ),
            "STEP_COMPLETE",
        )

    def to_json(self) -> dict[str, Any]:
        """``stepkit run --parallel --json``'s object."""
        return {
            "outcome": self.outcome,
            "exit_code": self.exit_code,
            "runs": [child.result for child in self.runs if child.result is not None],
        }


#: Builds a child's command line: the step to run, the branch to start it
#: from (None: the user's HEAD), the status file it keeps.
CommandLine = Callable[[int, str | None, Path], list[str]]


def run_parallel(
    plans_dir: Path,
    limit: int,
    command: CommandLine,
    progress: Progress | None,
    *,
    stack: bool = False,
    project_dir: Path,
    allow_incomplete: bool = False,
) -> Outcome:
    """Run the plan's ready steps, up to ``limit`` at once, until none is
    left to start and every run has ended.

    :param plans_dir: the user's plan repo, read again whenever a run ends.
    :param command: the command line of one child (``stepkit run --worktree
        --step K --json`` and the user's options).
    :param progress: what shows the runs as they go (None: nothing).
    :param stack: a step whose dependencies a run of this invocation
        completed starts from that run's branch.
    :param project_dir: the user's project (for the resume command of a run
        that ended without saying where it stands).
    :param allow_incomplete: start a step whose plan is incomplete too
        (its child gets ``--allow-incomplete-plan`` in ``command``).
    :raises UsageError: no step is ready (nothing was started).
    """
    schedule = Schedule(
        PlanRepo.load(plans_dir),
        stack=stack,
        elsewhere=under_way(project_dir, plans_dir),
        runs=last_runs(runs_dir(project_dir)),
        allow_incomplete=allow_incomplete,
    )
    if not schedule.ready():
        waiting = "; ".join(
            f"step {step.number} ({step.title}): {why}" for step, why in schedule.waiting()
        )
        raise UsageError(
            f"--parallel: no step is ready to run ({waiting or 'every step is complete'}); "
            "nothing was started"
        )
    with contextlib.suppress(
        OSError
    ):  # once here: the runs then find it and never write git's config
        register_merge_driver(project_dir, plans_dir)
    children: list[Child] = []
    live: dict[int, Child] = {}
    ended: queue.Queue[Child] = queue.Queue()
    signum = None
    with tempfile.TemporaryDirectory(prefix="stepkit-parallel-") as scratch:
        try:
            while True:
                for ready in schedule.ready()[: max(0, limit - len(live))]:
                    with held_signals():  # a child started is a child the stop reaches
                        child = _start(ready, command, Path(scratch), ended)
                        schedule.start(ready)
                        children.append(child)
                        live[child.step] = child
                _show(progress, children)
                if not live:
                    break
                try:
                    child = ended.get(timeout=REFRESH_S)
                except queue.Empty:
                    continue
                with held_signals():  # a child that ended is never left counted as live
                    result = _finish(child, project_dir)
                    del live[child.step]
                    if result.get("outcome") == "STEP_COMPLETE" and result.get("branch"):
                        schedule.complete(child.ready, str(result["branch"]))
                    schedule.repo = PlanRepo.load(
                        plans_dir
                    )  # the user may have merged a branch meanwhile
        except KeyboardInterrupt as exc:
            signum = signal_number(exc)
            _stop(live, ended, signum, progress, children, project_dir)
        finally:
            _show(progress, children)
    return Outcome(children, [] if signum is not None else schedule.waiting(), signum)


def under_way(project_dir: Path, plans_dir: Path) -> dict[int, str]:
    """The steps a run in a stepkit work tree works on (running, paused,
    interrupted or kept after failing) or complete on a ``stepkit/`` branch
    not merged yet, each with what to do about it: none is started again
    (its branch is taken)."""
    from stepkit.worktrees.listing import worktree_status

    report = worktree_status(project_dir, plans_dir)
    found: dict[int, str] = {}
    for branch in report["unmerged_branches"]:
        if isinstance(branch["step"], int):  # a step file at the branch may say anything
            found[branch["step"]] = (
                f"complete on {branch['branch']}, not merged (git merge {branch['branch']})"
            )
    for run in report["worktree_runs"]:
        if run["state"] in ("paused", "interrupted"):
            then = f"stepkit resume {run['run_id']}"
        else:
            then = f"its branch is taken until that work tree is removed (git worktree remove {run['worktree']})"
        found.setdefault(
            int(run["step"]),
            f"{run['state']} in {run['worktree']} (branch {run['branch']}); {then}",
        )
    return found


def _show(progress: Progress | None, children: list[Child]) -> None:
    if progress is None:
        return
    try:
        progress.update(children)
    except OSError:
        pass  # SIGHUP: the terminal may be gone; the runs go on, the exit code still tells


def _start(ready: Ready, command: CommandLine, scratch: Path, ended: queue.Queue[Child]) -> Child:
    """Start the child process of ``ready``'s step, and a thread that says when it ends."""
    name = f"step-{ready.step.number}"
    status, stdout, stderr = (
        scratch / f"{name}.{kind}" for kind in ("status.json", "stdout", "stderr")
    )
    argv = command(ready.step.number, ready.base.branch if ready.base else None, status)
    with open(stdout, "wb") as out, open(stderr, "wb") as err:
        # a session of its own: the terminal's Ctrl-C reaches it once, through this process
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True
        )
    child = Child(ready, process, status, stdout, stderr)

    def wait() -> None:
        process.wait()
        ended.put(child)

    threading.Thread(target=wait, name=f"stepkit-parallel-{name}", daemon=True).start()
    return child


def _stop(
    live: dict[int, Child],
    ended: queue.Queue[Child],
    signum: int,
    progress: Progress | None,
    children: list[Child],
    project_dir: Path,
) -> None:
    """Pass ``signum`` on to every live child and wait until each has ended
    (a second signal is passed on too: it cuts a child's grace short)."""
    for child in live.values():
        _signal(child, signum)
    while live:
        try:
            ended.get(timeout=REFRESH_S)
        except queue.Empty:
            _show(progress, children)
        except KeyboardInterrupt as again:
            for child in live.values():
                _signal(child, signal_number(again))
        for child in [child for child in live.values() if child.process.poll() is not None]:
            _finish(child, project_dir)
            del live[child.step]


def _signal(child: Child, signum: int) -> None:
    try:
        os.kill(child.process.pid, signum)
    except ProcessLookupError:
        pass  # it has just ended; its waiter says so


def _finish(child: Child, project_dir: Path) -> dict[str, Any]:
    """Read how ``child`` ended (kept as its ``result``): its ``--json``
    object, or one that says why there is none (it could not start, or a
    signal stopped it)."""
    child.ended = time.monotonic()
    code = child.process.returncode
    text = child.stdout_file.read_text(encoding="utf-8", errors="surrogateescape")
    try:
        result = json.loads(text) if text.strip() else None
    except ValueError:
        result = None
    child.result = result if isinstance(result, dict) else _without_result(child, code, project_dir)
    return child.result


def _without_result(child: Child, code: int, project_dir: Path) -> dict[str, Any]:
    """The run object of a child that printed none."""
    status = child.status()
    error = _last_line(child.stderr_file)
    run_id = status.get("run_id")
    stopped = code < 0 or code >= 128
    result: dict[str, Any] = {
        "outcome": INTERRUPTED if stopped else NOT_RUN,
        "exit_code": 128 - code if code < 0 else code,
        "run_id": run_id,
        "step": child.step,
        "title": child.title,
        "output": error,
    }
    if stopped:
        result["signal"] = signal_label(-code if code < 0 else code - 128)
    if stopped and run_id:
        result["resume"] = resume_command(
            str(run_id), str(status.get("project_dir") or project_dir)
        )
    return result


def _last_line(path: Path) -> str:
    lines = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    return lines[-1] if lines else ""
