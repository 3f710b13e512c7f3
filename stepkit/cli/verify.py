"""``stepkit verify``: run the format, lint, build and test gates on a project
and print the evidence.  Exit 0 when every gate that ran passed and the
tests gate ran a test, 1 otherwise (a tests gate NOT RUN is no pass; another
gate with no command does not count either way), 2 when no gate had a
command to run.  The formatter runs in its check mode; ``--fix`` lets
it rewrite the files, as a run does.  It is given the work tree's changes
against HEAD, or with ``--all-files`` every file of the project, as
``pre-commit run --all-files`` (a clean checkout, as CI checks it)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from stepkit.cli import disabled_plugins
from stepkit.config import resolve_project_dir
from stepkit.errors import StepkitError
from stepkit.records import FAILED_STATUSES, GateResult
from stepkit.shown import shown_json


def run(args: argparse.Namespace) -> int:
    """Run the gates; print progress and evidence (or one JSON object)."""
    from stepkit.api import verify

    project = resolve_project_dir(args.project_dir)
    baseline, fix = getattr(args, "baseline", None), getattr(args, "fix", False)
    all_files = getattr(args, "all_files", False)
    if args.json:
        data = verify(
            project,
            args.pm,
            disabled_plugins=disabled_plugins(args),
            baseline=baseline,
            fix=fix,
            all_files=all_files,
        )
        print(shown_json(data, ensure_ascii=True))
    else:
        print(f"stepkit verify: {project}", flush=True)
        data = verify(
            project,
            args.pm,
            disabled_plugins=disabled_plugins(args),
            on_start=_print_start,
            on_gate=_print_result,
            baseline=baseline,
            fix=fix,
            all_files=all_files,
        )
        print(_verdict(data))
    if not any(g["command"] for g in data["gates"]):
        kind = (
            f"{data['project_type']} project"
            if data["project_type"]
            else "no project type stepkit knows"
        )
        if data.get("unsupported"):
            kind = f"build system not supported: {', '.join(data['unsupported'])}"
        raise StepkitError(
            f"no gate could run ({kind}): no command was found for format, lint, build or "
            "tests; `stepkit detect` shows what was looked for, stepkit.toml [commands] sets them"
        )
    return 0 if data["ok"] else 1


def _print_start(gate: str, command: str | None) -> None:
    if command is not None:
        print(f"\n[{gate}] running: {command}", flush=True)


def _print_result(result: GateResult) -> None:
    if result.status == "not_run":
        print(f"\n[{result.name}] NOT RUN")
    else:
        chooser = f"  (chosen by {result.plugin})" if result.plugin else ""
        print(
            f"[{result.name}] {result.status.upper()} in {result.duration_s:.2f} s — {result.summary}{chooser}"
        )
        for line in result.verdict_lines():
            print(f"[{result.name}] {line}")
    if result.changed_files:
        print(f"    changed by this gate: {', '.join(result.changed_files)}")
    for line in result.evidence.split("\n"):
        print(f"    {line}".rstrip())
    sys.stdout.flush()


def _verdict(data: dict[str, Any]) -> str:
    gates = data["gates"]
    not_run = [g["name"] for g in gates if g["status"] == "not_run"]
    bad = [f"{g['name']} {g['status']}" for g in gates if g["status"] in FAILED_STATUSES]
    bad += [
        f"{g['name']} NOT RUN" for g in gates if g["name"] == "tests" and g["status"] == "not_run"
    ]
    tail = f"; NOT RUN (not evidence of a pass): {', '.join(not_run)}" if not_run else ""
    judged = [
        f"{g['name']}: {len(g[key])} {word}"
        for g in gates
        for key, word in (
            ("preexisting_failures", "PRE-EXISTING failure(s), not passing"),
            ("flaky", "FLAKY test(s)"),
        )
        if g.get(key)
    ]
    tail += f"; {'; '.join(judged)}" if judged else ""
    ran = len(gates) - len(not_run)
    kind = f" ({data['project_type']} project)" if data["project_type"] else ""
    if data.get("unsupported"):
        tail += f"; build system not supported: {', '.join(data['unsupported'])}"
    if not any(g["command"] for g in gates):
        return f"\nverify{kind}: no gate ran — this is NOT evidence that the project passes{tail}"
    if data["ok"]:
        return f"\nverify{kind}: ok — {ran} gate{'s' if ran != 1 else ''} passed{tail}"
    return f"\nverify{kind}: FAILED — {', '.join(bad)}{tail}"
