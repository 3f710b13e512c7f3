"""file_ids: what the read-only checks and the tree hash compare."""

from __future__ import annotations

from stepkit.workspace.scope import changed_between, file_ids, tree_hash
from stepkit.workspace.store import store_dir
from tests.support.gitrepo import init_repo


def make_tree(root, git=False):
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("a = 1\n")
    (root / "README.md").write_text("readme\n")
    (store_dir(root) / "runs").mkdir(parents=True)
    (root / "node_modules" / "x").mkdir(parents=True)
    if git:
        init_repo(root, {".gitignore": "node_modules/\n"})


def test_changes_are_found_with_and_without_git(tmp_path):
    for name, git in (("plain", False), ("repo", True)):
        root = tmp_path / name
        make_tree(root, git)
        before = file_ids(root)
        assert {"README.md", "src/a.py"} <= set(before)
        (root / "src" / "a.py").write_text("a = 2\n")
        (root / "README.md").unlink()
        (root / "src" / "new.py").write_text("")
        assert changed_between(before, file_ids(root)) == ["README.md", "src/a.py", "src/new.py"]


def test_same_bytes_rewritten_is_no_change_and_keeps_the_hash(tmp_path):
    make_tree(tmp_path, git=True)
    before, digest = file_ids(tmp_path), tree_hash(tmp_path)
    (tmp_path / "README.md").write_text("readme\n")
    assert changed_between(before, file_ids(tmp_path)) == []
    assert tree_hash(tmp_path) == digest
    (tmp_path / "README.md").write_text("changed\n")
    assert tree_hash(tmp_path) != digest


def test_the_run_store_and_caches_are_never_changes(tmp_path):
    for name, git in (("plain", False), ("repo", True)):
        root = tmp_path / name
        make_tree(root, git)
        before = file_ids(root)
        for store in (store_dir(root), root / ".stepkit"):  # the store, and an earlier version's
            (store / "runs").mkdir(parents=True, exist_ok=True)
            (store / "runs" / "events.jsonl").write_text("{}\n")
        (root / "src" / "__pycache__").mkdir()
        (root / "src" / "__pycache__" / "a.pyc").write_bytes(b"\0")
        (root / "node_modules" / "x" / "i.js").write_text("")
        assert changed_between(before, file_ids(root)) == []
