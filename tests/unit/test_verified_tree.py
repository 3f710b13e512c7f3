"""The verified tree and the step-runner's ``recheck`` on a real git project:
which changes count (tracked, untracked non-ignored, deleted; never the plan
repo, ignored files or caches) and where a changed tree does not send the
run back to the gates (a coder round since, or a node on the way to it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stepkit.protocol.verified import FIRST_GATE, recheck, verified_tree
from stepkit.records import StageContext
from tests.support.gitrepo import init_repo

PATH = [
    "resolve_step",
    "orient",
    "implement",
    "verify_format_lint",
    "verify_build",
    "verify_tests",
    "edge_case_sweep",
    "write_handoff",
    "check_handoff",
    "gate_user_review",
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return init_repo(
        tmp_path / "project",
        {
            "calc.py": "x = 1\n",
            "tests/test_calc.py": "def test(): pass\n",
            ".gitignore": "*.log\n",
            "plans/steps/01-a.md": "---\ntitle: A\n---\n",
        },
    )


def ctx(project: Path) -> StageContext:
    state = {"verified_tree": verified_tree(project, project / "plans")}
    return StageContext(
        node="end_success",
        project_dir=project,
        plans_dir=project / "plans",
        state=state,
        settings={},
        config=None,
        pm=None,
    )


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda p: (p / "calc.py").write_text("x = 2\n"), ["calc.py"]),
        (lambda p: (p / "tests" / "test_calc.py").unlink(), ["tests/test_calc.py"]),
        (
            lambda p: (p / "conftest.py").write_text("import pytest\n"),
            ["conftest.py"],
        ),  # untracked, not ignored
    ],
)
def test_a_changed_tree_goes_back_to_the_gates_naming_the_files(project, change, named):
    context = ctx(project)
    change(project)
    outcome = recheck(context, PATH)
    assert outcome is not None and outcome.route == FIRST_GATE
    assert outcome.updates["tree_changes"] == named and outcome.updates["verified_tree"] == {}
    assert named[0] in outcome.updates["fix_history"][0]


@pytest.mark.parametrize(
    "change",
    [
        lambda p: (
            (p / "plans" / "handoffs").mkdir()
            or (p / "plans" / "handoffs" / "01-a.md").write_text("done\n")
        ),
        lambda p: (p / "run.log").write_text("ignored\n"),
        lambda p: (
            (p / "__pycache__").mkdir() or (p / "__pycache__" / "calc.pyc").write_bytes(b"\0")
        ),
    ],
)
def test_the_plan_repo_ignored_files_and_caches_are_not_the_verified_tree(project, change):
    context = ctx(project)
    change(project)
    assert recheck(context, PATH) is None


def test_a_coder_round_after_the_tests_gate_or_the_way_to_the_coder_is_left_to_the_gates(project):
    context = ctx(project)
    (project / "calc.py").write_text("x = 3\n")
    assert recheck(context, [*PATH, "independent_review", "route_review", "implement"]) is None
    for node in ("get_revision", "revise_from_choice", "fix_loop_gate", "implement"):
        at_node = StageContext(
            node=node,
            project_dir=project,
            plans_dir=project / "plans",
            state=context.state,
            settings={},
            config=None,
            pm=None,
        )
        assert recheck(at_node, PATH) is None
    assert recheck(context, PATH) is not None


def test_no_verified_tree_no_recheck(project):
    context = StageContext(
        node="end_success",
        project_dir=project,
        plans_dir=project / "plans",
        state={},
        settings={},
        config=None,
        pm=None,
    )
    (project / "calc.py").write_text("x = 4\n")
    assert recheck(context, PATH) is None
