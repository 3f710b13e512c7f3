"""``stepkit run --parallel N [--stack]``: the command-line side of
:func:`stepkit.worktrees.parallel.run_parallel`: what is refused up front,
the command line each step's child runs with (the user's options passed
on), and what is printed at the end.

Printed: each run's own output under a line naming its step and how it
ended (a paused run's names the ``stepkit resume RUN_ID --answer …``
commands that answer it), the steps not started and why, and a last line
with the exit code; with ``--json``, one object ``{"outcome", "exit_code",
"runs"}``.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import TYPE_CHECKING, Any

from stepkit.errors import UsageError
from stepkit.shown import shown_json

if TYPE_CHECKING:
    from stepkit.worktrees.parallel import Outcome


def check(args: argparse.Namespace) -> None:
    """The options ``--parallel`` cannot go with.

    :raises UsageError: one line; nothing was started."""
    from stepkit.planrepo.model import step_from_prompt

    if args.parallel is None:
        raise UsageError(
            "--stack needs --parallel N (it starts a step from a branch of the same invocation)"
        )
    if args.step is not None:
        raise UsageError(
            f"--parallel runs every ready step; --step {args.step} runs one: drop one of them"
        )
    named = step_from_prompt(args.prompt or "")
    if named is not None:
        raise UsageError(
            f"--parallel runs every ready step; the prompt names step {named}: "
            "drop --parallel or reword the prompt"
        )
    if args.rerun:
        raise UsageError(
            "--parallel runs the steps still to do; --rerun runs a complete one: drop one of them"
        )


def run(args: argparse.Namespace, options: dict[str, Any]) -> int:
    """``stepkit run --parallel``; ``options``: the values of the options plugins added to ``run``."""
    from stepkit.api import check_run
    from stepkit.cli import disabled_plugins
    from stepkit.config import load_config, resolve_project_dir
    from stepkit.planrepo.model import resolve_plans_dir
    from stepkit.workspace.store import git_location
    from stepkit.worktrees.parallel import run_parallel
    from stepkit.worktrees.progress import RunLines

    check(args)
    project = resolve_project_dir(args.project_dir)
    if git_location(project) is None:
        raise UsageError(
            f"--parallel runs each step in a git worktree; {project} is in no git repository "
            "(git init and commit first)"
        )
    check_run(
        args.project_dir,
        args.plans_dir,
        args.engine,
        args.coder,
        args.reviewer,
        args.graph,
        args.sets,
        args.answers,
        args.pm,
        options=options,
        disabled_plugins=disabled_plugins(args),
    )
    plans_dir = resolve_plans_dir(project, args.plans_dir, load_config(project).plans_dir)
    progress = None if args.json else RunLines()
    shared = passed_on(args, options)
    try:
        outcome = run_parallel(
            plans_dir,
            args.parallel,
            lambda step, base, status: [
                sys.executable,
                "-m",
                "stepkit",
                "run",
                "--worktree",
                f"--step={step}",
                "--json",
                f"--status-file={status}",
                *([f"--worktree-base={base}"] if base else []),
                *shared,
            ],
            progress,
            stack=args.stack,
            project_dir=project,
            allow_incomplete=args.allow_incomplete_plan,
        )
    finally:
        if progress is not None:
            progress.close()
    if args.json:
        print(shown_json(outcome.to_json()))
    else:
        print(render(outcome))
    return outcome.exit_code


def passed_on(args: argparse.Namespace, options: dict[str, Any]) -> list[str]:
    """The user's options, as each step's child ``stepkit run --worktree``
    gets them (then the prompt).  ``--merge`` is passed on: each completed
    branch is merged when that is safe, and a step whose dependencies were
    merged so is ready when the next run ends."""
    argv = [
        f"--project-dir={args.project_dir}",
        *(["--merge"] if args.merge else []),
        *(["--allow-incomplete-plan"] if args.allow_incomplete_plan else []),
    ]
    for option, value in (
        ("--plans-dir", args.plans_dir),
        ("--engine", args.engine),
        ("--coder", args.coder),
        ("--reviewer", args.reviewer),
        ("--graph", args.graph),
    ):
        if value is not None:
            argv.append(f"{option}={value}")  # joined: a value starting with '-' stays a value
    for option, values in (
        ("--set", args.sets),
        ("--answer", args.answers),
        ("-p", args.plugin_flags),
    ):
        argv += [f"{option}={value}" for value in values or ()]
    return [*argv, *plugin_arguments(args, options), "--", args.prompt]


def plugin_arguments(args: argparse.Namespace, values: dict[str, Any]) -> list[str]:
    """The options plugins added to ``run`` (``stepkit_add_options``) that
    the user gave (``values``), written out again for a child (which adds the same ones)."""
    from stepkit.cli import build_parser

    if not values or args.pm is None:
        return []
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    run_parser = commands.choices["run"]
    args.pm.hook.stepkit_add_options(parser=run_parser, command="run")
    argv: list[str] = []
    for action in run_parser._actions:
        value = values.get(action.dest, action.default)
        if not action.option_strings or action.dest not in values or value == action.default:
            continue
        flag = action.option_strings[-1]
        if action.nargs == 0:  # a switch (store_true, store_const, count)
            argv += [flag] * (value if type(value) is int else 1)
        elif isinstance(action, argparse._AppendAction):
            argv += [f"{flag}={item}" for item in value]
        elif isinstance(value, list):
            argv += [flag, *map(str, value)]
        else:
            argv.append(f"{flag}={value}")
    return argv


def render(outcome: Outcome) -> str:
    """The text output: each run's output under its heading, the steps not started, the exit code."""
    blocks = []
    for child in outcome.runs:
        result = child.result or {}
        where = f", branch {result['branch']}" if result.get("branch") else ""
        head = (
            f"== step {child.step} ({child.title}): {result.get('outcome')} (exit {result.get('exit_code')})"
            f"{', run ' + str(result['run_id']) if result.get('run_id') else ''}{where}"
        )
        body = str(result.get("output") or "").rstrip()
        if result.get("resume"):
            body += f"\nResume with: {result['resume']}"
        blocks.append(f"{head}\n{body}" if body else head)
    if outcome.waiting:
        blocks.append(
            "Not started:\n"
            + "\n".join(
                f"  step {step.number} ({step.title}): {why}" for step, why in outcome.waiting
            )
        )
    counts = Counter(str((child.result or {}).get("outcome")) for child in outcome.runs)
    tally = ", ".join(f"{count} {name}" for name, count in counts.items())
    blocks.append(
        f"--parallel: {len(outcome.runs)} run(s): {tally or 'none'}; {outcome.outcome} "
        f"(exit {outcome.exit_code})"
    )
    return "\n\n".join(blocks)
