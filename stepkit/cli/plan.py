"""``stepkit plan SPEC|-``: draft a plan's steps from a spec through the
engine (:func:`stepkit.api.draft_plan`), let a person on a terminal accept,
edit or trim it (:mod:`stepkit.cli.plan_review`), and write the step
files, the spec's facts into NOTES.md, and, for a new plan, the plan repo
around them with its merge driver registered as ``stepkit init`` does.

Nothing is ever written over a step: a plan that has steps takes a draft
only with ``--append``, numbered on after them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from stepkit.cli import disabled_plugins
from stepkit.cli.init import shown
from stepkit.errors import StepkitError, UsageError


def run(args: argparse.Namespace) -> int:
    """Draft, review on a terminal, write; 2 (nothing written) when the plan
    has steps and ``--append`` is not given, or the draft is invalid."""
    from stepkit.api import draft_plan
    from stepkit.cli.init import register_driver
    from stepkit.config import resolve_project_dir
    from stepkit.planrepo.scaffold import complete_repo
    from stepkit.protocol.handoff.notes import append_notes

    project = resolve_project_dir(args.project_dir)
    spec, source = _read_spec(args.spec)
    draft, target = draft_plan(
        spec,
        plans_dir=args.plans_dir,
        project_dir=project,
        engine=args.engine,
        append=args.append,
        pm=args.pm,
        disabled_plugins=disabled_plugins(args),
    )
    if args.spec != "-" and _terminal():
        from stepkit.cli.plan_review import review

        draft = review(draft, target)
        if draft is None:
            raise _Declined("the draft was not accepted; nothing was written")
    new_plan = not target.existing
    written = target.write(draft)
    written += complete_repo(target.plans_dir)
    facts = append_notes(target.plans_dir / "NOTES.md", draft.notes, f"from {source}")
    attributes = register_driver(project, target.plans_dir) if new_plan else None
    print(_report(project, draft, target, written, facts, attributes))
    return 0


class _Declined(StepkitError):
    """The person on the terminal quit the review: nothing written (exit 1)."""

    exit_code = 1


def _read_spec(name: str) -> tuple[str, str]:
    """The spec's text and how NOTES.md names it (``spec.md``, ``stdin``)."""
    if name == "-":
        return sys.stdin.buffer.read().decode("utf-8", errors="replace"), "the spec on stdin"
    path = Path(name)
    try:
        return path.read_bytes().decode("utf-8", errors="replace"), path.name
    except OSError as exc:
        raise UsageError(f"cannot read the spec {name}: {exc.strerror or exc}") from None


def _terminal() -> bool:
    try:
        return sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError):  # no stdin, or closed
        return False


def _report(
    project: Path,
    draft: Any,
    target: Any,
    written: list[Path],
    facts: list[str],
    attributes: Path | None,
) -> str:
    """What was written (the steps with their titles and dependencies, the
    plan repo's other files, the facts), and what to run next."""
    from stepkit.planrepo.mergesetup import DRIVER_NAME

    files = target.files(draft)
    lines = [f"Drafted {len(files)} step(s). Wrote:"]
    for file in files:
        after = f"  (after {', '.join(map(str, file.depends_on))})" if file.depends_on else ""
        lines.append(f"  {shown(file.path, project)}  {file.title}{after}")
    lines += [
        f"  {shown(path, project)}" for path in written if path not in {f.path for f in files}
    ]
    if facts:
        lines.append(f"  {len(facts)} fact(s) from the spec appended to NOTES.md")
    if attributes is not None:
        lines.append(f"Merge driver: {DRIVER_NAME} registered in the git config and {attributes}")
    plans = target.plans_dir
    option = "" if plans == project / "plans" else f" --plans-dir {shown(plans, project)}"
    lines += [
        "",
        "Next:",
        "  1. read the steps; change what the draft got wrong",
        f"  2. stepkit status{option}    # the steps and which is ready",
        f"  3. stepkit run{option}       # run the next step; answer the final approval",
    ]
    return "\n".join(lines)
