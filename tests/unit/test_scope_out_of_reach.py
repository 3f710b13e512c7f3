"""What the scope guard compares with stays out of a coder's reach: the
persisted snapshot checked by its digest and held in memory, kept objects
checked by their id, the run-store watch, and changes inside submodules."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from stepkit.records import flag_lines
from stepkit.workspace import scope
from stepkit.workspace.scope import git as git_module
from stepkit.workspace.store import store_dir
from tests.support.gitrepo import git, init_repo, write_files

BASE = {
    "src/app.py": "x = 1\n",
    "plans/steps/01-a.md": "plan\n",
    "tests/test_app.py": "def test(): pass\n",
}


@pytest.fixture
def project(tmp_path):
    root = init_repo(tmp_path / "project", BASE)
    (root / "wip.py").write_text("# work in progress\n")  # untracked: its bytes go to the store
    return root


def saved(project: Path) -> tuple[Path, str]:
    path = store_dir(project) / "runs" / "r1" / "scope_snapshot.json"
    return path, scope.save_snapshot(scope.take_snapshot(project, project / "plans"), path)


def test_a_snapshot_is_loaded_only_when_it_is_the_one_its_digest_names(project):
    path, digest = saved(project)
    assert scope.snapshot_digest(path) == digest
    assert scope.load_snapshot(path, digest).files == {
        "wip.py": scope.load_snapshot(path, None).files["wip.py"]
    }
    path.write_text(path.read_text().replace('"files":{', '"files":{"forged.py":null,'))
    assert scope.load_snapshot(path, digest) is None
    path.unlink()
    assert scope.load_snapshot(path, digest) is None


def test_the_held_snapshot_outlives_the_store_and_puts_it_back(project):
    path, digest = saved(project)
    held = scope.load_snapshot(path, digest)
    text = path.read_bytes()
    shutil.rmtree(store_dir(project) / "objects")
    path.unlink()
    (project / "wip.py").write_text("x = 2\n")
    assert "-# work in progress\n+x = 2\n" in scope.step_changes(held, project).diff
    held.persist(path)
    assert path.read_bytes() == text
    again = scope.load_snapshot(path, digest)
    assert "-# work in progress\n" in scope.step_changes(again, project).diff


def test_a_forged_object_is_not_taken_for_the_bytes_before(project):
    path, digest = saved(project)
    for kept in (store_dir(project) / "objects").rglob("*"):
        if kept.is_file():
            kept.write_text("x = 2\n")  # as if the file had always been what the coder wrote
    (project / "wip.py").write_text("x = 2\n")
    diff = scope.step_changes(scope.load_snapshot(path, digest), project).diff
    assert "[content before the step was not kept; file changed]" in diff


def test_the_watch_names_what_was_added_deleted_or_changed(project):
    run = store_dir(project) / "runs" / "r1"
    saved(project)
    (run / "state.json").write_text("{}")
    (run / "logs").mkdir()
    watch = scope.StoreWatch(project, *scope.run_store_paths(project, run))
    (run / "logs" / "coder.log").write_text("stepkit's own log\n")  # not the coder's doing
    assert watch.changes() == []
    (run / "state.json").write_text('{"forged": true}')
    shutil.rmtree(store_dir(project) / "objects")
    write_files(run, {"displaced/coder-1/plans/x.md": "planted\n"})
    store = scope.shown_path(store_dir(project), project)
    assert watch.changes() == [
        f"{store}/objects (deleted)",
        f"{store}/runs/r1/displaced (added)",
        f"{store}/runs/r1/state.json (changed)",
    ]
    assert scope.store_flag(watch.changes()).startswith("the coder touched stepkit's run store: ")


# -- submodules -----------------------------------------------------------------------


@pytest.fixture
def with_submodule(project, tmp_path):
    lib = init_repo(tmp_path / "lib", {"helper.py": "def helper():\n    return 1\n"})
    git(
        project,
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        str(lib),
        "vendor/lib",
    )
    git(project, "commit", "-qm", "a submodule")
    return project


def test_edits_inside_a_submodule_are_changes(with_submodule):
    project = with_submodule
    before = scope.take_snapshot(project, project / "plans")
    ids = scope.file_ids(project)
    assert "vendor/lib/helper.py" in ids
    (project / "vendor/lib/helper.py").write_text("def helper():\n    return 2\n")
    (project / "vendor/lib/new.py").write_text("new = 1\n")
    changes = scope.step_changes(before, project)
    assert changes.changed_files == ["vendor/lib/helper.py", "vendor/lib/new.py"]
    assert "-    return 1\n+    return 2\n" in changes.diff
    assert scope.changed_between(ids, scope.file_ids(project)) == [
        "vendor/lib/helper.py",
        "vendor/lib/new.py",
    ]
    assert scope.working_tree_changes(project, project / "plans").changed_files == [
        "vendor/lib/helper.py",
        "vendor/lib/new.py",
        "wip.py",
    ]


def test_commits_inside_a_submodule_are_still_changes(with_submodule):
    project = with_submodule
    before = scope.take_snapshot(project, project / "plans")
    (project / "vendor/lib/helper.py").unlink()
    write_files(
        project, {"vendor/lib/tests/test_helper.py": "import pytest\npytest.skip('later')\n"}
    )
    git(project / "vendor/lib", "add", "-A")
    git(project / "vendor/lib", "commit", "-qm", "the coder's commit")
    changes = scope.step_changes(before, project)
    assert changes.changed_files == ["vendor/lib/helper.py", "vendor/lib/tests/test_helper.py"]
    assert "--- a/vendor/lib/helper.py\n+++ /dev/null\n" in changes.diff
    assert flag_lines(changes.tamper_flags) == [
        "new pytest skip/xfail marker in vendor/lib/tests/test_helper.py (+1)"
    ]


def test_no_gitmodules_no_extra_git_process(project, monkeypatch):
    calls = []
    real = subprocess.run

    def counting(args, *a, **kw):
        calls.append(args)
        return real(args, *a, **kw)

    monkeypatch.setattr(subprocess, "run", counting)
    scope.take_snapshot(project, project / "plans")
    assert [args[len(git_module.command([]))] for args in calls] == ["rev-parse", "status"]
