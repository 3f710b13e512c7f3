"""``stepkit init``: scaffold the plan repo, register the plan merge driver
in a git repository (:func:`stepkit.planrepo.mergesetup.register_merge_driver`),
then say what stepkit detected and what to run next."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from stepkit.cli import disabled_plugins
from stepkit.cli.init_commands import has_commands, render_table, write_table
from stepkit.errors import UsageError


def run(args: argparse.Namespace) -> int:
    """Write ``plans/``; 2 (nothing written) when any of it already exists."""
    from stepkit.api import detect_gates
    from stepkit.config import load_config, resolve_project_dir
    from stepkit.planrepo.model import resolve_plans_dir
    from stepkit.planrepo.scaffold import scaffold

    project = resolve_project_dir(args.project_dir)
    plans = resolve_plans_dir(project, args.plans_dir, load_config(project).plans_dir)
    kept = has_commands(project) and not args.force
    # --force writes the commands again for a project init set up already: its plan stays
    written = [] if args.force and plans.exists() else scaffold(plans)
    attributes = register_driver(project, plans)
    detected = detect_gates(project, args.pm, disabled_plugins=disabled_plugins(args))
    print(render(project, plans, written, detected, attributes), flush=True)
    if kept:
        print(
            "\nKept the [commands] table of stepkit.toml as it is "
            "(stepkit init --force proves the detected commands on HEAD and writes them over it)."
        )
    else:
        print(prove(project, args, detected))
    print(next_steps(project, plans, written))
    return 0


def prove(project: Path, args: argparse.Namespace, detected: dict) -> str:
    """Run each gate's command once on HEAD, a line per gate as it ends,
    and write the ``[commands]`` table of what ran (:mod:`stepkit.cli.init_commands`);
    the closing lines."""
    from stepkit.api import prove_gates

    print("\nProving them on HEAD, each once, in a scratch copy:", flush=True)

    def progress(result: Any) -> None:
        print(f"  {result.name:<7} {result.status}: {result.summary}", flush=True)

    proof = prove_gates(
        project,
        args.pm,
        disabled_plugins=disabled_plugins(args),
        on_gate=progress,
        choose=ask_gate if on_a_terminal() else None,
    )
    if proof.problem:
        print(f"  not proved: {proof.problem}")
    table = render_table(detected["gates"], proof)
    config = write_table(project, table)
    unproven = [line for line in table.splitlines() if line.endswith("# NOT RUN until set")]
    lines = [f"Wrote the [commands] table of {shown(config, project)}: the commands that ran"]
    if unproven:
        lines.append(
            f"  {len(unproven)} command(s) could not run there: written commented out, with why, "
            "and the gate switched off (NOT RUN) until you set it"
        )
    return "\n".join(lines)


def on_a_terminal() -> bool:
    """init may ask: both ends are a terminal (never in CI, never piped)."""
    import sys

    return sys.stdin.isatty() and sys.stdout.isatty()


def ask_gate(gate: str, tried: list[tuple[str, str]]) -> tuple[str, bool] | None:
    """Ask on the terminal about a gate none of whose candidates ran:
    ``(command, True)`` to keep a candidate as it is, ``(command, False)``
    to prove a typed one, None (Enter, end of input) to leave the gate off."""
    print(f"\nNo command for the {gate} gate could run on HEAD:", flush=True)
    for number, (command, why) in enumerate(tried, 1):
        print(f"  {number}. {command}\n     {why}", flush=True)
    try:
        answer = input(
            "A number keeps that command anyway, a command is tried next, "
            "Enter leaves the gate off (NOT RUN): "
        ).strip()
    except EOFError:
        return None
    if not answer:
        return None
    if answer.isdigit() and 1 <= int(answer) <= len(tried):
        return tried[int(answer) - 1][0], True
    return answer, False


def register_driver(project: Path, plans: Path) -> Path | None:
    """Register the plan merge driver for the plan repo just written
    (:func:`~stepkit.planrepo.mergesetup.register_merge_driver`): the
    attributes file naming its files, None outside git.

    :raises UsageError: the git config or the attributes file cannot be written.
    """
    from stepkit.planrepo.mergesetup import register_merge_driver

    try:
        return register_merge_driver(project, plans)
    except OSError as exc:
        raise UsageError(
            f"wrote the plan repo, but cannot register its merge driver: {exc.strerror or exc}"
        ) from None


def render(
    project: Path, plans: Path, written: list[Path], detected: dict, attributes: Path | None = None
) -> str:
    """What init wrote, the merge driver it registered (``attributes``: the
    file naming the plan files, None when none was), the gates, what next."""
    from stepkit.planrepo.mergesetup import DRIVER_NAME

    types = detected["project_types"]
    lines = ["Wrote:"]
    lines += [f"  {shown(path, project)}" for path in written]
    if attributes is not None:
        lines.append(
            f"Merge driver: {DRIVER_NAME} registered in the git config and {attributes} "
            "(branches' NOTES facts and Edge cases merge without conflict)"
        )
    lines += [
        "",
        f"Project type: {types[0] if types else 'none detected'}",
        "Gates stepkit will run:",
    ]
    for gate in detected["gates"]:
        if gate["command"]:
            source = f", from {gate['source']}" if gate.get("source") else ""
            lines.append(
                f"  {gate['name']:<7} {gate['command']}  (chosen by {gate['plugin']}{source})"
            )
        else:
            lines.append(
                f"  {gate['name']:<7} none found: NOT RUN (set it in stepkit.toml [commands])"
            )
    if detected.get("tool_dirs"):
        lines.append(
            f"  env:    {', '.join(detected['tool_dirs'])} first on PATH (the project's own tools)"
        )
    lines += [f"  note: {note}" for note in detected["notes"]]
    lines += [f"  build system not supported: {name}" for name in detected.get("unsupported") or []]
    return "\n".join(lines)


def next_steps(project: Path, plans: Path, written: list[Path]) -> str:
    """What to do after init."""
    step = shown(written[0] if written else plans / "steps", project)
    plans_option = "" if plans == project / "plans" else f" --plans-dir {shown(plans, project)}"
    lines = [
        "",
        "Next:",
        f"  1. edit {step}: its objective, tasks and acceptance criteria",
        f"  2. stepkit status{plans_option}     # the step and whether it is ready",
        f"  3. stepkit run{plans_option}        # run it; answer the final approval",
        "  4. git add and commit what the step changed (stepkit never commits)",
    ]
    return "\n".join(lines)


def shown(path: Path, project: Path) -> str:
    """``path`` relative to ``project`` when it is inside it."""
    try:
        return str(path.relative_to(project))
    except ValueError:
        return str(path)
