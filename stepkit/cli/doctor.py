"""``stepkit doctor``: whether a run can work here, checked in one place.

One line per check, each with the fix when it fails: the plan, each gate's
tool on the gates' own PATH, the engine, coder and reviewer (the checks a
run makes before it starts, credentials included), the lines the plugins
add (``stepkit_doctor_checks``: each coding CLI's login, by a dry call),
the sandbox, git's identity and the plan merge driver.  Exit 1 when a
check that ``stepkit run`` needs fails; a warning (``!``) does not change
the exit code.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from stepkit.cli import disabled_plugins
from stepkit.errors import PluginError, StepkitError
from stepkit.shown import shown_json

MARKS = {"ok": "✓", "fail": "✗", "warn": "!"}


@dataclass
class Check:
    """One line of the report."""

    name: str
    status: Literal["ok", "fail", "warn"]
    text: str
    fix: str = ""


def run(args: argparse.Namespace) -> int:
    from stepkit.config import load_config, resolve_project_dir
    from stepkit.planrepo.model import resolve_plans_dir

    project = resolve_project_dir(args.project_dir)
    config = load_config(project)
    plans = resolve_plans_dir(project, args.plans_dir, config.plans_dir)
    checks = [
        _plan(plans),
        *_gates(project, args),
        _delegates(project, plans, args),
        *_plugins(project, plans, args),
        _sandbox(config.sandbox.required),
        *_git(project, plans),
    ]
    if args.json:
        print(
            shown_json(
                {"ok": _ok(checks), "checks": [asdict(c) for c in checks]}, ensure_ascii=True
            )
        )
    else:
        for check in checks:
            print(f"{MARKS[check.status]} {check.name}: {check.text}")
            if check.fix and check.status != "ok":
                print(f"    fix: {check.fix}")
    return 0 if _ok(checks) else 1


def _ok(checks: list[Check]) -> bool:
    return all(check.status != "fail" for check in checks)


def _plan(plans: Path) -> Check:
    from stepkit.planrepo.model import PlanRepo

    try:
        repo = PlanRepo.load(plans)
    except StepkitError as exc:
        return Check("plan", "fail", str(exc), "stepkit init writes a plan repo")
    if repo.problems:
        more = f" (+{len(repo.problems) - 1} more)" if len(repo.problems) > 1 else ""
        return Check("plan", "fail", repo.problems[0] + more, "stepkit status lists them all")
    return Check("plan", "ok", f"{len(repo.steps)} step(s), no problems")


def _gates(project: Path, args: argparse.Namespace) -> list[Check]:
    """Each gate's command, its first word looked up on the PATH the gates get."""
    from stepkit.api import detect_gates
    from stepkit.workspace.programs import missing_program, program_of

    try:
        detected = detect_gates(project, args.pm, disabled_plugins=disabled_plugins(args))
    except StepkitError as exc:
        return [Check("gates", "fail", str(exc))]
    dirs = detected.get("tool_dirs") or []
    checks = []
    for gate in detected["gates"]:
        name, command = gate["name"], gate["command"]
        setting = f"set [commands] {name} in stepkit.toml"
        if not command:
            status: Literal["ok", "warn"] = "warn"
            checks.append(Check(name, status, "no command found: NOT RUN", setting))
            continue
        tool = program_of(command)
        missing = missing_program(command, project, dirs)
        if tool is None:
            checks.append(Check(name, "ok", f"`{command}` (a shell line: its tools not looked up)"))
        elif not missing:
            checks.append(Check(name, "ok", f"`{command}`"))
        else:
            checks.append(
                Check(
                    name,
                    "fail",
                    missing,
                    f"install {tool} in the project's environment, or {setting}",
                )
            )
    return checks


def _delegates(project: Path, plans: Path, args: argparse.Namespace) -> Check:
    """The engine, coder and reviewer as a run would check them before starting."""
    from stepkit.api import check_run

    try:
        check_run(
            project,
            plans_dir=plans,
            engine=args.engine,
            coder=args.coder,
            reviewer=args.reviewer,
            pm=args.pm,
            disabled_plugins=disabled_plugins(args),
            sandbox=False,  # the sandbox has its own line
        )
    except StepkitError as exc:
        return Check(
            "engine", "fail", str(exc), "see docs/agents.md: --engine, --coder and --reviewer"
        )
    return Check("engine", "ok", "the engine, coder and reviewer are ready to start")


def _plugins(project: Path, plans: Path, args: argparse.Namespace) -> list[Check]:
    """The lines the plugins add for the run these options would start (the
    built-in coders: each coding CLI's login)."""
    from stepkit.api import plugin_checks

    try:
        found = plugin_checks(
            project,
            plans_dir=plans,
            engine=args.engine,
            coder=args.coder,
            reviewer=args.reviewer,
            pm=args.pm,
            disabled_plugins=disabled_plugins(args),
        )
    except PluginError as exc:
        return [Check("plugins", "fail", str(exc), "fix or disable the plugin (-p no:NAME)")]
    except StepkitError:
        return []  # the options are wrong: the engine's line says how
    return [Check(c["name"], c["status"], c["text"], c["fix"]) for c in found]


def _sandbox(required: bool) -> Check:
    """Whether the coder and the code under test run confined here; a
    failure only where ``[sandbox] required = true`` makes a run refuse."""
    from stepkit.workspace import sandbox

    missing = sandbox.diagnosis()
    if missing is None:
        return Check(
            "sandbox",
            "ok",
            f"{sandbox.describe()}: the coder and the code under test run confined",
        )
    if required:
        return Check(
            "sandbox",
            "fail",
            f"{missing.why}: a run refuses to start ([sandbox] required = true)",
            missing.fix,
        )
    return Check("sandbox", "warn", f"{missing.why}: the coder would run unconfined", missing.fix)


def _git(project: Path, plans: Path) -> list[Check]:
    from stepkit.planrepo.mergesetup import merge_driver_problem
    from stepkit.workspace.store import git_location
    from stepkit.worktrees.identity import commit_identity

    located = git_location(project)
    if located is None:
        return [
            Check("repository", "warn", "not a git repository: no --worktree, --parallel or undo")
        ]
    checks = []
    if commit_identity(located[0]):
        checks.append(
            Check(
                "git identity",
                "warn",
                "git has no user.name or user.email: --worktree commits use stepkit's own",
                'git config user.name "…" && git config user.email "…"',
            )
        )
    else:
        checks.append(Check("git identity", "ok", "user.name and user.email are set"))
    problem = merge_driver_problem(project, plans)
    if problem:
        checks.append(Check("merge driver", "warn", problem, "stepkit merge-driver --register"))
    else:
        checks.append(Check("merge driver", "ok", "registered for the plan repo"))
    return checks
