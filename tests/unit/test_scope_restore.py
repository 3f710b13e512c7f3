"""The plan-repo restore on real files and real symlinks: nothing it removes
or overwrites is lost, nothing is written through a link, nothing outside
the project (and the plan repo) is ever written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stepkit.workspace import scope
from stepkit.workspace.files import LinkInTheWay, real_dir, replace_entry
from stepkit.workspace.store import store_dir
from tests.support.gitrepo import write_files

PLANS = {
    "plans/steps/01-a.md": "step one\n",
    "plans/steps/02-b.md": "step two\n",
    "plans/NOTES.md": "# Notes\n",
    "src/app.py": "x = 1\n",
}


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    write_files(root, PLANS)
    return root


@pytest.fixture
def outside(tmp_path):
    """Files outside the project that a restore must never write."""
    root = tmp_path / "outside"
    write_files(root, {"secret.txt": "not the project's\n", "steps/01-a.md": "someone else's\n"})
    return root


def contents(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def restore(project: Path, before: scope.PlanCopy) -> list[str]:
    return scope.restore_plan_repo(before, store_dir(project) / "kept")


def test_a_file_replaced_by_a_link_to_an_outside_file(project, outside):
    before = scope.copy_plan_repo(project, project / "plans")
    untouched = contents(outside)
    plan = project / "plans/steps/01-a.md"
    plan.unlink()
    plan.symlink_to(outside / "secret.txt")
    assert restore(project, before) == [
        (
            f"plans/steps/01-a.md (replaced by a symlink to {outside / 'secret.txt'}; restored; "
            "the link removed, kept at .stepkit/kept/plans/steps/01-a.md)"
        )
    ]
    assert contents(outside) == untouched
    assert not plan.is_symlink() and plan.read_text() == "step one\n"
    assert os.readlink(project / ".stepkit/kept/plans/steps/01-a.md") == str(outside / "secret.txt")


def test_a_directory_replaced_by_a_link_to_an_outside_directory(project, outside):
    before = scope.copy_plan_repo(project, project / "plans")
    untouched = contents(outside)
    steps = project / "plans/steps"
    for path in steps.iterdir():
        path.unlink()
    steps.rmdir()
    steps.symlink_to(outside / "steps", target_is_directory=True)
    assert restore(project, before) == [
        (
            f"plans/steps (replaced by a symlink to {outside / 'steps'}; the link removed, "
            "kept at .stepkit/kept/plans/steps)"
        ),
        "plans/steps/01-a.md (deleted; restored)",
        "plans/steps/02-b.md (deleted; restored)",
    ]
    assert contents(outside) == untouched
    assert not steps.is_symlink()
    assert contents(steps) == {"01-a.md": b"step one\n", "02-b.md": b"step two\n"}


def test_the_plans_dir_itself_replaced_by_a_link(project, outside):
    before = scope.copy_plan_repo(project, project / "plans")
    untouched = contents(outside)
    os.rename(project / "plans", project / "plans.moved")
    (project / "plans").symlink_to(outside, target_is_directory=True)
    undone = restore(project, before)
    assert (
        undone[0]
        == f"plans (replaced by a symlink to {outside}; removed, kept at .stepkit/kept/plans)"
    )
    assert contents(outside) == untouched
    assert not (project / "plans").is_symlink()
    assert contents(project / "plans") == contents(project / "plans.moved")


def test_a_link_added_to_the_plan_repo_is_moved_away_and_the_users_own_link_stays(project, outside):
    (project / "plans/plan.md").symlink_to(outside / "secret.txt")  # the user's, before the coder
    before = scope.copy_plan_repo(project, project / "plans")
    (project / "plans/handoffs").symlink_to(outside, target_is_directory=True)
    assert restore(project, before) == [
        f"plans/handoffs (added, a symlink to {outside}; the link removed, kept at .stepkit/kept/plans/handoffs)"
    ]
    assert os.readlink(project / "plans/plan.md") == str(outside / "secret.txt")
    (project / "plans/plan.md").unlink()
    (project / "plans/plan.md").write_text("the coder's plan\n")
    assert restore(project, before) == [
        "plans/plan.md (modified; restored; the changed file kept at .stepkit/kept/plans/plan.md)"
    ]
    assert os.readlink(project / "plans/plan.md") == str(outside / "secret.txt")


def test_a_file_turned_into_a_directory_and_new_directories(project):
    before = scope.copy_plan_repo(project, project / "plans")
    (project / "plans/NOTES.md").unlink()
    write_files(project, {"plans/NOTES.md/inside.md": "x\n", "plans/extra/deep/new.md": "y\n"})
    assert restore(project, before) == [
        "plans/NOTES.md/inside.md (added; removed, kept at .stepkit/kept/plans/NOTES.md/inside.md)",
        "plans/extra/deep/new.md (added; removed, kept at .stepkit/kept/plans/extra/deep/new.md)",
        "plans/NOTES.md (deleted; restored)",
    ]
    assert (project / "plans/NOTES.md").read_text() == "# Notes\n"
    assert not (project / "plans/extra").exists()


def test_when_no_copy_can_be_kept_safely_nothing_is_touched(project, outside):
    before = scope.copy_plan_repo(project, project / "plans")
    store_dir(project).symlink_to(outside, target_is_directory=True)
    untouched = contents(outside)
    (project / "plans/NOTES.md").write_text("a hand edit\n")
    undone = restore(project, before)
    assert undone == [
        f"plans/NOTES.md (changed; left as it is: cannot keep a copy, {project / '.stepkit'} is a symlink)"
    ]
    assert (project / "plans/NOTES.md").read_text() == "a hand edit\n"
    assert contents(outside) == untouched


def test_modes_and_crlf_bytes_come_back(project):
    notes = project / "plans/NOTES.md"
    notes.write_bytes(b"# Notes\r\n- a\r\n")
    notes.chmod(0o640)
    before = scope.copy_plan_repo(project, project / "plans")
    notes.write_text("lost?\n")
    notes.chmod(0o600)
    restore(project, before)
    assert notes.read_bytes() == b"# Notes\r\n- a\r\n"
    assert notes.stat().st_mode & 0o777 == 0o640


def test_a_file_too_large_to_hold_is_never_overwritten_nor_lost(project, monkeypatch):
    from stepkit.workspace.scope import plancopy

    monkeypatch.setattr(plancopy, "PLAN_FILE_LIMIT", len("# Notes\n") - 1)
    before = scope.copy_plan_repo(project, project / "plans")
    (project / "plans/NOTES.md").write_text("a hand edit\n")
    assert restore(project, before) == [
        "plans/NOTES.md (changed; not restored: it was too large to hold a copy of)"
    ]
    assert (project / "plans/NOTES.md").read_text() == "a hand edit\n"
    (project / "plans/NOTES.md").unlink()
    assert restore(project, before) == [
        "plans/NOTES.md (deleted; not restored: it was too large to hold a copy of)"
    ]


# -- which paths are the plan repo --------------------------------------------------


def test_a_plans_dir_that_is_the_project_is_only_the_protocol_entries(project):
    write_files(
        project,
        {
            "steps/01-a.md": "s\n",
            "handoffs/01-a.md": "h\n",
            "NOTES.md": "n\n",
            "plan.md": "p\n",
            ".stepkit/runs/r/state.json": "{}",
            "stepsfile.py": "1\n",
        },
    )
    plan = scope.PlanScope.of(project, project)
    assert [
        rel
        for rel in (
            "steps/01-a.md",
            "handoffs/01-a.md",
            "NOTES.md",
            "plan.md",
            "src/app.py",
            "stepsfile.py",
            "plans/NOTES.md",
        )
        if plan.covers(rel)
    ] == ["steps/01-a.md", "handoffs/01-a.md", "NOTES.md", "plan.md"]
    assert sorted(plan.walk()[0]) == ["NOTES.md", "handoffs/01-a.md", "plan.md", "steps/01-a.md"]


def test_a_plans_dir_above_the_project_never_holds_a_project_file(tmp_path):
    outer = tmp_path / "outer"
    write_files(outer, {"steps/01-a.md": "s\n", "NOTES.md": "n\n", "other/x.md": "o\n"})
    project = outer / "steps" / "proj"  # the project inside a plan entry, even
    write_files(project, {"app.py": "1\n"})
    plan = scope.PlanScope.of(project, outer)
    assert not plan.covers("app.py")
    assert sorted(plan.walk()[0]) == ["NOTES.md", "steps/01-a.md"]


# -- the writes a restore uses ---------------------------------------------------------


def test_replace_entry_replaces_a_link_itself(tmp_path, outside):
    link = tmp_path / "link.md"
    link.symlink_to(outside / "secret.txt")
    replace_entry(link, b"mine\n")
    assert not link.is_symlink() and link.read_bytes() == b"mine\n"
    assert (outside / "secret.txt").read_text() == "not the project's\n"


def test_real_dir_never_goes_through_a_link(tmp_path, outside):
    (tmp_path / "a").symlink_to(outside, target_is_directory=True)
    with pytest.raises(LinkInTheWay):
        real_dir(tmp_path / "a" / "b", tmp_path)
    assert not (outside / "b").exists()
    assert real_dir(tmp_path / "c" / "d", tmp_path).is_dir()
