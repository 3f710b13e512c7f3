"""``stepkit stage NAME``: run one protocol stage (a row of
:data:`stepkit.protocol.stages.STAGES`) on its own and print its structured result.

The same hooks and harness mechanics as in ``stepkit run`` (see
:func:`stepkit.api.run_stage`), so other pipelines can reuse a stage without
the step-runner graph.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from stepkit.cli import disabled_plugins
from stepkit.shown import shown_json

#: Long values shown in full only with --json.
_TEXT_LIMIT = 4000


def run(args: argparse.Namespace) -> int:
    from stepkit.api import run_stage

    result = run_stage(
        args.stage,
        step=args.step,
        plans_dir=args.plans_dir,
        project_dir=args.project_dir,
        engine=args.engine,
        coder=args.coder,
        reviewer=args.reviewer,
        sets=args.sets,
        pm=args.pm,
        disabled_plugins=disabled_plugins(args),
    )
    if args.json:
        print(shown_json(result, default=str))
    else:
        print(render(args.stage, result))
    return _exit_code(args.stage, result)


def render(stage: str, result: dict[str, Any]) -> str:
    """The result as ``key: value`` blocks, long texts clipped."""
    lines = [f"stage {stage}:"]
    for key, value in result.items():
        if key in ("diff", "plan_text"):
            continue
        text = (
            value
            if isinstance(value, str)
            else json.dumps(value, ensure_ascii=False, indent=2, default=str)
        )
        if len(text) > _TEXT_LIMIT:
            text = (
                text[:_TEXT_LIMIT]
                + f"\n[... {len(text) - _TEXT_LIMIT} more characters; --json shows all]"
            )
        lines.append(
            f"{key}: {text}" if "\n" not in text else f"{key}:\n  " + text.replace("\n", "\n  ")
        )
    return "\n".join(lines)


def _exit_code(stage: str, result: dict[str, Any]) -> int:
    """0 when the stage did its job; 1 when its own verdict is a failure."""
    from stepkit.protocol.stages import STAGES

    failed = STAGES[stage].failed
    return 1 if failed is not None and failed(result) else 0
