"""The final approval at a glance: what ``gate_user_review`` shows, rendered
once the handoff passed its check.

The question opens with the step, then (each a part of the state's
``review``, which its template places): a verdict line per gate, the files
changed since the step started with their ``+/-`` line counts (from the
step-start snapshot, :func:`~stepkit.workspace.scope.diff.diff_stat`), the
flags, the acceptance-criteria map and where the handoff goes.  A section
with nothing in it is no heading over ``(none)``: the empty ones are folded
into one line (``no tamper flags, no scope deviations, no processes
ended``).  Paths are the project's relative ones.

``diff`` is refreshed too: what the question's ``diff`` view pages is the
step's change as it is when the user is asked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stepkit.protocol.state import StepState, step_state
from stepkit.records import StageContext, TamperFlag, flag_lines
from stepkit.workspace.localpaths import portable_text


def flag_sections(
    state: StepState, unseen_tamper: list[TamperFlag] | tuple[TamperFlag, ...] = ()
) -> list[tuple[str, str, list[str]]]:
    """The flag lists the final approval and the run's ending show: the
    heading when there are some, the words when there are none, the items
    (the tamper flags with ``unseen_tamper``, not yet in the state)."""
    return [
        (
            "Tamper flags (signs that verification was weakened):",
            "no tamper flags",
            flag_lines([*state.tamper_flags, *unseen_tamper]),
        ),
        ("Scope deviations (recorded by stepkit):", "no scope deviations", state.scope_deviations),
        (
            "Processes that outlived their node (ended by stepkit):",
            "no processes ended",
            state.processes_ended,
        ),
    ]


def review_updates(ctx: StageContext) -> dict[str, Any]:
    """``review``: ``glance`` (the gates, files, flags and criteria, empty
    sections folded), ``files`` (what the ``files`` view lists) and
    ``handoff`` (where it goes), each text; and the step's ``diff`` now."""
    state = step_state(ctx)
    stats, diff = _changes(ctx)
    folded: list[str] = []
    gates = [f"- {gate.status_line()}" for gate in state.gates]
    files = _files(stats, folded)
    sections = [
        "\n".join(["Gates:", *gates]) if gates else "",
        files,
        _flags(state, folded),
        _criteria(state.criteria_report, folded),
        ", ".join(folded).capitalize() + "." if folded else "",
    ]
    review = {
        "glance": "\n".join(section for section in sections if section),
        "files": files or "No files changed.",
        "handoff": _handoff(state),
    }
    shown = {
        key: portable_text(text, ctx.project_dir, name_store=False) for key, text in review.items()
    }
    return {"review": shown, **({"diff": diff} if diff is not None else {})}


def _changes(ctx: StageContext) -> tuple[list[Any] | None, str | None]:
    """The step's line counts and diff since its snapshot (None, None: the
    run kept no snapshot; the state's changed files are shown then)."""
    from stepkit.workspace.scope import load_snapshot
    from stepkit.workspace.scope.diff import stat_and_changes

    if ctx.run_dir is None:
        return None, None
    before = load_snapshot(
        Path(ctx.run_dir) / "scope_snapshot.json", step_state(ctx).scope_snapshot_digest
    )
    if before is None:
        return None, None
    stats, changes = stat_and_changes(before, ctx.project_dir)
    return stats, changes.diff


def _files(stats: list[Any] | None, folded: list[str]) -> str:
    if stats is None:
        return ""
    if not stats:
        folded.append("no files changed")
        return ""
    added = sum(s.added or 0 for s in stats)
    removed = sum(s.removed or 0 for s in stats)
    width = max(len(s.path) for s in stats)
    lines = [f"Files changed ({len(stats)}, +{added} -{removed}):"]
    for stat in stats:
        counts = "binary" if stat.added is None else f"+{stat.added} -{stat.removed}"
        change = "" if stat.change == "modified" else f" ({stat.change})"
        lines.append(f"  {stat.path.ljust(width)}  {counts}{change}")
    return "\n".join(lines)


def _flags(state: StepState, folded: list[str]) -> str:
    lines = []
    for heading, none, items in flag_sections(state):
        if not items:
            folded.append(none)
            continue
        lines.append(heading)
        lines.extend(f"- {item}" for item in items)
    return "\n".join(lines)


def _criteria(rows: list[str], folded: list[str]) -> str:
    if not rows:
        folded.append("no acceptance criteria in the plan")
        return ""
    heading = "Acceptance criteria (tests stepkit saw pass in the final tests gate):"
    return "\n".join([heading, *(f"- {row}" for row in rows)])


def _handoff(state: StepState) -> str:
    target = state.handoff_path or "(none)"
    draft = state.handoff_draft or "(none)"
    lines = [f"Handoff: {target} once you approve (draft: {draft})"]
    if state.kept_handoff:
        lines.append(f"Previous handoff kept at (a rerun): {state.kept_handoff}")
    return "\n".join(lines)
