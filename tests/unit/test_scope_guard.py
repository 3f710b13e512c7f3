"""Scope guard: changed files, step diff, plan-repo restore, tamper flags, tree hash."""

from __future__ import annotations

from pathlib import Path

import pytest

from stepkit.records import flag_lines
from stepkit.workspace import scope
from stepkit.workspace.store import store_dir
from tests.support.gitrepo import git, init_repo, write_files

BASE = {
    "src/app.py": "def main():\n    return 1\n",
    "src/util.py": "X = 1\n",
    "tests/test_app.py": "def test_main():\n    assert True\n",
    "plans/steps/01-a.md": "---\r\nstep: 1\r\nstatus: in-progress\r\n---\r\n## Tasks\r\n",
    "plans/steps/02-b.md": "---\nstep: 2\n---\nlater\n",
    ".gitignore": "*.log\n",
}


def make_project(tmp_path: Path, kind: str) -> Path:
    root = tmp_path / kind
    if kind == "git":
        return init_repo(root, BASE)
    write_files(root, BASE)
    return root


@pytest.fixture(params=["git", "files"])
def project(request, tmp_path):
    return make_project(tmp_path, request.param)


def roundtrip(snap: scope.Snapshot) -> scope.Snapshot:
    return scope.Snapshot.model_validate_json(snap.model_dump_json())


def test_changed_files_lists_modified_added_deleted_and_skips_the_plan_repo(project):
    before = roundtrip(scope.take_snapshot(project, project / "plans"))
    assert before.mode == ("git" if (project / ".git").exists() else "files")
    (project / "src/app.py").write_text("def main():\n    return 2\n")
    (project / "src/new.py").write_text("Y = 2\n")
    (project / "src/util.py").unlink()
    (project / "plans/steps/02-b.md").write_text("edited by the coder\n")
    store_dir(project).mkdir(parents=True, exist_ok=True)
    (store_dir(project) / "junk.txt").write_text("x")
    assert scope.step_changes(before, project).changed_files == [
        "src/app.py",
        "src/new.py",
        "src/util.py",
    ]


def test_a_file_dirty_before_the_step_counts_only_when_the_step_changes_it(tmp_path):
    project = make_project(tmp_path, "git")
    (project / "src/util.py").write_text("X = 'user work in progress'\n")
    (project / "notes.txt").write_text("untracked before\n")
    before = scope.take_snapshot(project, project / "plans")
    assert scope.step_changes(before, project).changed_files == []
    (project / "src/util.py").write_text("X = 'changed by the coder'\n")
    assert scope.step_changes(before, project).changed_files == ["src/util.py"]
    diff = scope.step_changes(before, project).diff
    assert "-X = 'user work in progress'" in diff  # against the step's start, not HEAD
    assert "+X = 'changed by the coder'" in diff


def test_commits_made_by_the_coder_are_still_its_changes(tmp_path):
    project = make_project(tmp_path, "git")
    before = scope.take_snapshot(project, project / "plans")
    (project / "src/app.py").write_text("def main():\n    return 3\n")
    git(project, "commit", "-qam", "coder commit")
    assert git(project, "status", "--porcelain") == ""
    assert scope.step_changes(before, project).changed_files == ["src/app.py"]
    assert "+    return 3" in scope.step_changes(before, project).diff


def test_a_project_inside_a_bigger_repository(tmp_path):
    repo = init_repo(
        tmp_path / "mono", {f"svc/{k}": v for k, v in BASE.items()} | {"other/x.py": "1\n"}
    )
    project = repo / "svc"
    before = scope.take_snapshot(project, project / "plans")
    assert before.prefix == "svc/"
    (project / "src/app.py").write_text("changed\n")
    (repo / "other/x.py").write_text("2\n")  # outside the project: not the step's
    assert scope.step_changes(before, project).changed_files == ["src/app.py"]


def test_step_diff_shows_added_modified_and_deleted_files(project):
    before = scope.take_snapshot(project, project / "plans")
    (project / "src/app.py").write_text("def main():\n    return 2\n")
    (project / "src/new.py").write_text("Y = 2\n")
    (project / "src/util.py").unlink()
    diff = scope.step_changes(before, project).diff
    assert "--- a/src/app.py\n+++ b/src/app.py\n" in diff
    assert "-    return 1\n+    return 2\n" in diff
    assert "--- /dev/null\n+++ b/src/new.py\n" in diff and "+Y = 2\n" in diff
    assert "--- a/src/util.py\n+++ /dev/null\n" in diff and "-X = 1\n" in diff
    assert "plans/" not in diff


def test_step_diff_is_bounded(project):
    before = scope.take_snapshot(project, project / "plans")
    for n in range(30):
        (project / f"src/gen{n:02}.py").write_text(
            "".join(f"value_{i} = {i}\n" for i in range(3000))
        )
    diff = scope.step_changes(before, project, max_chars=100_000).diff
    assert len(diff) < 100_000 + 200
    assert "diff of src/gen00.py cut at" in diff
    assert "more file(s) not shown" in diff


def test_restore_plan_repo_undoes_every_kind_of_edit_byte_for_byte(project):
    original = {p: (project / p).read_bytes() for p in BASE if p.startswith("plans/")}
    before = scope.copy_plan_repo(project, project / "plans")
    keep = project / ".stepkit" / "kept"
    (project / "plans/steps/01-a.md").write_bytes(b"---\nstatus: complete\n---\n")
    (project / "plans/steps/02-b.md").unlink()
    (project / "plans/steps/09-sneaky.md").write_text("new plan\n")
    (project / "src/app.py").write_text("code changes stay\n")
    undone = scope.restore_plan_repo(before, keep)
    assert undone == [
        "plans/steps/01-a.md (modified; restored; the changed file kept at .stepkit/kept/plans/steps/01-a.md)",
        "plans/steps/09-sneaky.md (added; removed, kept at .stepkit/kept/plans/steps/09-sneaky.md)",
        "plans/steps/02-b.md (deleted; restored)",
    ]
    assert {p: (project / p).read_bytes() for p in original} == original
    assert not (project / "plans/steps/09-sneaky.md").exists()
    assert (keep / "plans/steps/01-a.md").read_bytes() == b"---\nstatus: complete\n---\n"
    assert (keep / "plans/steps/09-sneaky.md").read_text() == "new plan\n"
    assert (project / "src/app.py").read_text() == "code changes stay\n"
    assert scope.restore_plan_repo(before, store_dir(project) / "kept-again") == []
    assert not (store_dir(project) / "kept-again").exists()


def test_a_copy_taken_before_the_coder_keeps_the_harness_own_edits(project):
    step_start = scope.take_snapshot(project, project / "plans")
    (project / "plans/steps/02-b.md").write_text("---\nstep: 2\n---\nlater\n## Edge cases\n* new\n")
    before_coder = scope.copy_plan_repo(project, project / "plans")
    (project / "plans/steps/02-b.md").write_text("rewritten by the coder\n")
    assert scope.restore_plan_repo(before_coder, project / ".stepkit" / "kept") == [
        "plans/steps/02-b.md (modified; restored; the changed file kept at .stepkit/kept/plans/steps/02-b.md)"
    ]
    assert "## Edge cases\n* new" in (project / "plans/steps/02-b.md").read_text()
    assert scope.step_changes(step_start, project).changed_files == []


def test_a_plan_repo_outside_the_project(tmp_path):
    project = make_project(tmp_path, "git")
    plans = tmp_path / "elsewhere" / "plans"
    write_files(plans, {"steps/01-a.md": "plan\n"})
    before = scope.copy_plan_repo(project, plans)
    (plans / "steps/01-a.md").write_text("edited\n")
    undone = scope.restore_plan_repo(before, project / ".stepkit" / "kept")
    assert undone == [
        (
            f"{plans / 'steps/01-a.md'} (modified; restored; the changed file kept at "
            ".stepkit/kept/plans/steps/01-a.md)"
        )
    ]
    assert (plans / "steps/01-a.md").read_text() == "plan\n"
    assert (project / ".stepkit/kept/plans/steps/01-a.md").read_text() == "edited\n"


def test_tamper_flags_name_each_weakening_with_its_file(project):
    write_files(
        project,
        {
            "pyproject.toml": '[tool.ruff.lint]\nignore = [\n    "E501",\n]\n\n'
            "[tool.coverage.report]\nfail_under = 90\n\n[project]\nname = 'x'\n",
            "web/app.test.js": "it('works', () => {});\n",
        },
    )
    if (project / ".git").exists():
        git(project, "add", "-A")
        git(project, "commit", "-qm", "config")
    before = scope.take_snapshot(project, project / "plans")
    (project / "tests/test_app.py").write_text(
        "import pytest\n\n@pytest.mark.skip\ndef test_main():\n    assert True\n"
    )
    (project / "src/app.py").write_text("import os  # noqa: F401\ndef main():\n    return 1\n")
    (project / "web/app.test.js").unlink()
    (project / "pyproject.toml").write_text(
        '[tool.ruff.lint]\nignore = [\n    "E501",\n    "F401",\n]\n\n'
        "[tool.coverage.report]\nfail_under = 60\n\n[project]\nname = 'x'\nskip = 1\n"
    )
    flags = flag_lines(scope.step_changes(before, project).tamper_flags)
    assert flags == [
        "coverage threshold lowered in pyproject.toml: fail_under 90 -> 60",
        'loosened lint/coverage config in pyproject.toml: "F401",',
        "new # noqa in src/app.py (+1)",
        "new pytest skip/xfail marker in tests/test_app.py (+1)",
        "deleted test file: web/app.test.js",
    ]


@pytest.mark.parametrize(
    ("path", "before", "after"),
    [
        (
            "pyproject.toml",
            "[tool.ruff]\nline-length = 100\n",
            '[tool.ruff]\nline-length = 100\n\n[tool.ruff.lint.per-file-ignores]\n"src/app.py" = ["F401"]\n',
        ),
        (
            "ruff.toml",
            "line-length = 100\n",
            'line-length = 100\n\n[lint.per-file-ignores]\n"src/app.py" = ["F401"]\n',
        ),
    ],
)
def test_a_new_entry_in_an_ignore_table_is_a_loosened_config(project, path, before, after):
    write_files(project, {path: before})
    if (project / ".git").exists():
        git(project, "add", "-A")
        git(project, "commit", "-qm", "config")
    snapshot = scope.take_snapshot(project, project / "plans")
    (project / path).write_text(after)
    flags = flag_lines(scope.step_changes(snapshot, project).tamper_flags)
    assert flags == [f'loosened lint/coverage config in {path}: "src/app.py" = ["F401"]']


def test_tamper_flags_ignore_markers_that_were_already_there(project):
    (project / "src/app.py").write_text("x = 1  # type: ignore\n")
    if (project / ".git").exists():
        git(project, "commit", "-qam", "marker")
    before = scope.take_snapshot(project, project / "plans")
    (project / "src/app.py").write_text("x = 2  # type: ignore\n")
    (project / "src/other.js").write_text("// eslint-disable-next-line\nfoo()\n")
    assert flag_lines(scope.step_changes(before, project).tamper_flags) == [
        "new eslint-disable in src/other.js (+1)"
    ]


def test_tree_hash_follows_content_only(project):
    first = scope.tree_hash(project)
    assert scope.tree_hash(project) == first
    (project / "build.log").write_text("ignored in git\n")
    store_dir(project).mkdir(parents=True, exist_ok=True)
    (store_dir(project) / "state.json").write_text("{}")
    if (project / ".git").exists():
        assert scope.tree_hash(project) == first
    (project / "src/app.py").write_text("changed\n")
    changed = scope.tree_hash(project)
    assert changed != first
    (project / "src/app.py").write_text(BASE["src/app.py"])
    (project / "build.log").unlink()
    assert scope.tree_hash(project) == first
    (project / "src/untracked.py").write_text("new\n")
    assert scope.tree_hash(project) not in (first, changed)


def test_caches_are_not_the_steps_changes_even_without_a_gitignore(tmp_path):

    from stepkit.workspace.scope import step_changes, take_snapshot

    (tmp_path / "plans" / "steps").mkdir(parents=True)
    init_repo(tmp_path, {"calc.py": "x = 1\n"})
    before = take_snapshot(tmp_path, tmp_path / "plans")
    (tmp_path / "calc.py").write_text("x = 2\n")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "calc.cpython-311.pyc").write_bytes(b"\x00")
    assert step_changes(before, tmp_path).changed_files == ["calc.py"]


def test_index_states_count_by_bytes_only(tmp_path):
    project = make_project(tmp_path, "git")
    before, ids = scope.take_snapshot(project, project / "plans"), scope.file_ids(project)
    (project / "src/app.py").write_text("def main():\n    return 4\n")
    (project / "src/staged.py").write_text("Z = 1\n")
    git(project, "add", "src/app.py", "src/staged.py")
    git(project, "rm", "-q", "--cached", "src/util.py")  # untracked now, same bytes: no change
    assert scope.step_changes(before, project).changed_files == ["src/app.py", "src/staged.py"]
    assert scope.changed_between(ids, scope.file_ids(project)) == ["src/app.py", "src/staged.py"]
    assert "-    return 1\n+    return 4\n" in scope.step_changes(before, project).diff


def test_a_repository_without_commits(tmp_path):
    project = tmp_path / "fresh"
    write_files(project, BASE)
    git(project, "init", "-q")
    before = scope.take_snapshot(project, project / "plans")
    assert before.mode == "git" and before.head is None
    (project / "src/app.py").write_text("changed\n")
    (project / "src/new.py").write_text("new\n")
    assert scope.step_changes(before, project).changed_files == ["src/app.py", "src/new.py"]
    assert "-def main():\n" in scope.step_changes(before, project).diff


def test_step_changes_gives_the_three_views_at_once(project):
    before = scope.take_snapshot(project, project / "plans")
    (project / "src/app.py").write_text("import os  # noqa\n")
    (project / "tests/test_app.py").unlink()
    changes = scope.step_changes(before, project)
    assert "+import os  # noqa" in changes.diff and "+++ /dev/null" in changes.diff
    assert changes.changed_files == ["src/app.py", "tests/test_app.py"]
    assert flag_lines(changes.tamper_flags) == [
        "new # noqa in src/app.py (+1)",
        "deleted test file: tests/test_app.py",
    ]


def test_a_test_module_that_patches_the_code_under_test_when_imported_is_flagged(project):
    snapshot = scope.take_snapshot(project, project / "plans")
    (project / "tests/test_new.py").write_text(
        "import os\nimport sys\n\nimport app\n\napp.main = lambda: 1\nsetattr(app, 'other', None)\n"
        "sys.modules['app'] = app\nos.environ['MODE'] = 'test'\nLIMIT = 3\n\n\n"
        "def test_main():\n    app.value = 2\n    assert app.main() == 1\n"
    )
    assert flag_lines(scope.step_changes(snapshot, project).tamper_flags) == [
        f"new module-level patch of {target} in tests/test_new.py (runs when the tests are collected, for every test)"
        for target in ("app.main", "setattr(app, 'other', None)", "sys.modules['app']")
    ]


def test_diff_stat_counts_lines_of_modified_added_and_deleted_files_and_names_binary_ones(
    project,
):
    from stepkit.workspace.scope.diff import FileStat, diff_stat

    before = roundtrip(scope.take_snapshot(project, project / "plans"))
    (project / "src" / "app.py").write_text("def main():\n    return 2\n\n\nX = 3\n")
    (project / "src" / "util.py").unlink()
    (project / "src" / "new.py").write_text("a = 1\nb = 2\n")
    (project / "src" / "blob.bin").write_bytes(b"\x00\x01\x02" * 10)
    (project / "plans" / "steps" / "02-b.md").write_text("edited\n")  # the plan repo: never counted
    assert diff_stat(before, project) == [
        FileStat("src/app.py", 4, 1, "modified"),
        FileStat("src/blob.bin", None, None, "added"),
        FileStat("src/new.py", 2, 0, "added"),
        FileStat("src/util.py", 0, 1, "deleted"),
    ]


def test_the_approvals_stat_and_diff_come_from_one_look_and_match_the_two_apart(
    project, monkeypatch
):
    from stepkit.workspace.scope import diff

    before = roundtrip(scope.take_snapshot(project, project / "plans"))
    (project / "src" / "app.py").write_text("def main():\n    return 2\n")
    (project / "src" / "util.py").unlink()
    (project / "src" / "new.py").write_text("a = 1\n")
    apart = diff.diff_stat(before, project), scope.step_changes(before, project)
    looks = []
    real = diff._changes
    monkeypatch.setattr(diff, "_changes", lambda *a: looks.append(1) or real(*a))

    assert diff.stat_and_changes(before, project) == apart
    assert len(looks) == 1  # the tree is walked once, each changed file read once
