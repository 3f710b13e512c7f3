"""``stepkit verify``: run the format, lint, build and test gates on a project
and print the evidence.  Exit 0 when every gate that ran passed, 1 otherwise
(a gate with no command is NOT RUN and does not count either way)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from stepkit.cli import disabled_plugins
from stepkit.config import load_config
from stepkit.detect import project_types
from stepkit.errors import UsageError
from stepkit.gates import run_gates
from stepkit.pluginmanager import get_plugin_manager
from stepkit.results import GateResult

#: The fields of each gate in ``--json`` (DESIGN.md, fixed).
JSON_FIELDS = ("name", "status", "command", "plugin", "exit_code", "duration_s", "log", "summary", "evidence")


def run(args: argparse.Namespace) -> int:
    """Run the gates; print progress and evidence (or one JSON object)."""
    project_dir = Path(args.project_dir).resolve()
    if not project_dir.is_dir():
        raise UsageError(f"project dir {args.project_dir} is not a directory")
    config = load_config(project_dir)
    pm = get_plugin_manager(project_dir, config, disabled_plugins(args))
    types = project_types(pm, project_dir)
    log_dir = new_log_dir(project_dir)

    if args.json:
        results = run_gates(pm, project_dir, config, log_dir)
    else:
        print(f"stepkit verify: {project_dir} ({', '.join(types) or 'no project type detected'})")
        print(f"logs: {log_dir}", flush=True)
        results = run_gates(pm, project_dir, config, log_dir, on_start=_print_start, on_gate=_print_result)
    ok = passed(results)
    if args.json:
        print(json.dumps(report(ok, types, results), indent=2))
    else:
        print(_verdict(ok, results))
    return 0 if ok else 1


def passed(results: list[GateResult]) -> bool:
    """Every gate that ran passed (``error`` and ``timeout`` are not passes)."""
    return all(r.status == "pass" for r in results if r.status != "not_run")


def report(ok: bool, types: list[str], results: list[GateResult]) -> dict[str, Any]:
    """The ``--json`` object of DESIGN.md."""
    return {
        "ok": ok,
        "project_type": types[0] if types else None,
        "gates": [{key: getattr(r, key) for key in JSON_FIELDS} for r in results],
    }


def new_log_dir(project_dir: Path) -> Path:
    """``<project>/.stepkit/verify/<timestamp>/logs``, and ``.stepkit/.gitignore``
    so that none of it is ever committed."""
    from stepkit.runstore import new_stamped_dir, stepkit_dir

    logs = new_stamped_dir(stepkit_dir(project_dir) / "verify") / "logs"
    logs.mkdir()
    return logs


def _print_start(gate: str, command: str | None) -> None:
    if command is not None:
        print(f"\n[{gate}] running: {command}", flush=True)


def _print_result(result: GateResult) -> None:
    if result.status == "not_run":
        print(f"\n[{result.name}] NOT RUN")
    else:
        chooser = f"  (chosen by {result.plugin})" if result.plugin else ""
        print(f"[{result.name}] {result.status.upper()} in {result.duration_s:.2f} s — {result.summary}{chooser}")
    for line in result.evidence.split("\n"):
        print(f"    {line}".rstrip())
    sys.stdout.flush()


def _verdict(ok: bool, results: list[GateResult]) -> str:
    not_run = [r.name for r in results if r.status == "not_run"]
    bad = [f"{r.name} {r.status}" for r in results if r.status not in ("pass", "not_run")]
    tail = f"; NOT RUN (not evidence of a pass): {', '.join(not_run)}" if not_run else ""
    ran = len(results) - len(not_run)
    if ran == 0:
        return f"\nverify: no gate ran — this is NOT evidence that the project passes{tail}"
    if ok:
        return f"\nverify: ok — {ran} gate{'s' if ran != 1 else ''} passed{tail}"
    return f"\nverify: FAILED — {', '.join(bad)}{tail}"
