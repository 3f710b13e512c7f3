"""``stepkit run``: run one step of the plan through the step-runner graph.

Prints the end node's output (first line the sentinel), or with ``--json``
one JSON object; a paused run prints its question and the exact resume
command and exits 5; a stop signal saves the run as interrupted and exits
128 + the signal (Ctrl-C 130, SIGTERM 143, SIGHUP 129).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from stepkit.cli import disabled_plugins
from stepkit.shown import shown_json

#: Options of ``run`` itself; any other attribute came from a plugin's
#: ``stepkit_add_options`` and is passed on as ``settings["options"]``.
OWN_OPTIONS = {
    "command",
    "pm",
    "plugin_flags",
    "prompt",
    "step",
    "plans_dir",
    "project_dir",
    "engine",
    "coder",
    "reviewer",
    "graph",
    "sets",
    "answers",
    "rerun",
    "allow_incomplete_plan",
    "json",
    "verbose",
    "worktree",
    "merge",
    "parallel",
    "stack",
    "status_file",
    "worktree_base",
}


def run(args: argparse.Namespace) -> int:
    from stepkit.api import RunInterrupted, run_step

    if args.parallel is not None or args.stack:
        from stepkit.cli.parallel import run as run_parallel

        return run_parallel(args, plugin_options(args))
    try:
        with displays(args) as show:
            result = run_step(
                prompt=args.prompt,
                step=args.step,
                plans_dir=args.plans_dir,
                project_dir=args.project_dir,
                engine=args.engine,
                coder=args.coder,
                reviewer=args.reviewer,
                graph=args.graph,
                sets=args.sets,
                answers=args.answers,
                rerun=args.rerun,
                allow_incomplete_plan=args.allow_incomplete_plan,
                options=plugin_options(args),
                pm=args.pm,
                disabled_plugins=disabled_plugins(args),
                observers=show(args.pm),
                worktree=args.worktree,
                merge=args.merge,
                worktree_base=args.worktree_base,
            )
    except RunInterrupted as exc:
        return interrupted(exc)
    return report(result, args.json)


def plugin_options(args: argparse.Namespace) -> dict[str, Any]:
    """The values of options that plugins added to the command."""
    return {k: v for k, v in vars(args).items() if k not in OWN_OPTIONS}


def observers(args: argparse.Namespace, pm: Any) -> list[Any]:
    """What the plugins of ``pm`` (the command's) show the run with
    (``stepkit_run_observers``: the built-in progress display on stderr),
    unless ``--json`` asked for one object only; none without a plugin
    manager (a project dir that cannot be read: the command itself says why)."""
    if getattr(args, "status_file", None):  # a child of --parallel: its parent draws the progress
        from stepkit.worktrees.runstatus import StatusFile

        return [StatusFile(args.status_file)]
    if args.json or pm is None:
        return []
    answers = reversed(  # built-ins first
        pm.hook.stepkit_run_observers(
            command=args.command, verbose=bool(getattr(args, "verbose", False))
        )
    )
    return [observer for answer in answers for observer in answer or ()]


@contextmanager
def displays(args: argparse.Namespace) -> Iterator[Callable[[Any], list[Any]]]:
    """A function giving the :func:`observers` of a plugin manager (the
    command's, which a resume builds once it has found its run), each closed
    however the command ends (Ctrl-C too), so a live display gives the
    terminal back before anything else prints."""
    shown: list[Any] = []

    def show(pm: Any) -> list[Any]:
        made = observers(args, pm)
        shown.extend(made)
        return made

    try:
        yield show
    finally:
        for display in shown:
            display.close()


def report(result: Any, as_json: bool) -> int:
    """Print a run's result; return its exit code."""
    if as_json:
        print(shown_json(result.to_json()))
    else:
        print(result.output)
    return result.exit_code


def interrupted(exc: Any) -> int:
    """A stop signal: say how to continue; exit 128 + the signal (130 for Ctrl-C)."""
    import signal

    from stepkit.engine.interrupts import signal_label

    by = "" if exc.signum == signal.SIGINT else f" by {signal_label(exc.signum)}"
    try:
        print(
            f"stepkit: interrupted{by}; run {exc.run_id} saved. Resume with: {exc.resume_command}",
            file=sys.stderr,
        )
    except OSError:
        pass  # SIGHUP: the terminal may be gone; the exit code still tells
    return exc.exit_code
