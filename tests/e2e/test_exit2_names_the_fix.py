"""Every exit-2 message names its fix: a representative exit-2 path of each
kind, triggered with the real CLI, prints one line on stderr that holds a fix
cue (a flag, a ``stepkit`` or ``git`` command, a file to edit, a setting),
and the cue this path's fix needs.  Real git project, real CLI."""

from __future__ import annotations

import re

import pytest

from tests.support.e2e import Project, make_project, plan

#: what names a fix: a flag, a command to run, a file to edit or a setting
FIX_CUE = re.compile(
    r"--[a-z]|\bstepkit (?:[a-z-]+ )?[a-z-]+\b|\bgit [a-z]|\S+\.(?:toml|md|ya?ml|py)\b|\w+ = "
)


def no_plan_repo(p: Project) -> list[str]:
    (p.root / "elsewhere").mkdir()
    return ["run", "--project-dir", str(p.root / "elsewhere")]


def bad_toml_value(p: Project) -> list[str]:
    toml = p.root / "stepkit.toml"
    toml.write_text('baseline = "sometimes"\n' + toml.read_text())
    return p.run_args()


def duplicate_number(p: Project) -> list[str]:
    (p.plans / "steps" / "01-again.md").write_text(plan(1, "Again", []))
    return p.run_args()


def missing_dependency(p: Project) -> list[str]:
    (p.plans / "steps" / "04-late.md").write_text(plan(4, "Late", [7]))
    return p.run_args("--step", "4")


def paused(p: Project) -> None:
    assert p.run().code == 5  # step 1 waits at its final approval (no terminal)


def outside_git(p: Project) -> list[str]:
    alone = p.root.parent / "alone"
    (alone / "plans" / "steps").mkdir(parents=True)
    (alone / "plans" / "steps" / "01-a.md").write_text(plan(1, "A", []))
    return ["ci", "--project-dir", str(alone)]


CASES = {
    "no plan repo": (no_plan_repo, "stepkit init"),
    "unknown step": (lambda p: p.run_args("--step", "9"), "stepkit status"),
    "not a step": (lambda p: p.run_args("--step", "x"), "--step"),
    "unknown --set key": (lambda p: p.run_args("--set", "bogus=1"), "--set"),
    "bad --set value": (lambda p: p.run_args("--set", "max_fix_attempts=x"), "--set"),
    "bad stepkit.toml value": (bad_toml_value, "stepkit.toml: stepkit setting baseline"),
    "unknown --coder": (lambda p: p.run_args(coder="nosuch"), "--coder"),
    "duplicate step number": (duplicate_number, "01-again.md"),
    "missing dependency": (missing_dependency, "depends_on"),
    "unknown option": (lambda p: ["run", "--bogus"], "stepkit --help"),
    "missing argument": (lambda p: ["new"], "stepkit new --help"),
    "unknown command": (lambda p: ["bogus"], "stepkit --help"),
    "ci outside git": (outside_git, "git init"),
    "undo with no run": (lambda p: ["undo", "--project-dir", str(p.root)], "--project-dir"),
    "resume with no run": (lambda p: ["resume", "--project-dir", str(p.root)], "stepkit run"),
    "resume an unknown run": (
        lambda p: ["resume", "20260101-000000-abcd", "--project-dir", str(p.root)],
        "stepkit status",
    ),
    "run a paused step again": (lambda p: paused(p) or p.run_args(), "stepkit resume"),
    "resume --answer no option": (
        lambda p: paused(p) or ["resume", "--project-dir", str(p.root), "--answer", "maybe"],
        "--answer",
    ),
    "undo a paused run": (
        lambda p: paused(p) or ["undo", "--project-dir", str(p.root)],
        "--answer",
    ),
    "--parallel with --step": (lambda p: p.run_args("--parallel", "2", "--step", "1"), "--step"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_an_exit_2_message_is_one_line_that_names_its_fix(tmp_path, case):
    arrange, cue = CASES[case]
    project = make_project(tmp_path)
    result = project.stepkit(*arrange(project), json_out=False)
    assert result.code == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("stepkit: error: "), result.stderr
    message = lines[0].removeprefix("stepkit: error: ")
    assert FIX_CUE.search(message), message
    assert cue in message, message
