"""Tree snapshots: content hashes, changes found, caches and the run store ignored."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

from stepkit.snapshot import diff_snapshots, tree_snapshot


def make_tree(root: Path) -> None:
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "a.py").write_text("a = 1\n")
    (root / "README.md").write_text("readme\n")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref\n")
    (root / ".stepkit" / "runs").mkdir(parents=True)
    (root / "node_modules" / "x").mkdir(parents=True)


def test_snapshot_maps_relative_paths_to_content_hashes(tmp_path):
    make_tree(tmp_path)
    snap = tree_snapshot(tmp_path)
    assert sorted(snap) == ["README.md", "src/pkg/a.py"]
    assert snap["README.md"] == hashlib.sha1(b"readme\n").hexdigest()


def test_diff_finds_changed_added_and_removed_files(tmp_path):
    make_tree(tmp_path)
    before = tree_snapshot(tmp_path)
    (tmp_path / "src" / "pkg" / "a.py").write_text("a = 2\n")
    (tmp_path / "README.md").unlink()
    (tmp_path / "src" / "new.py").write_text("")
    assert diff_snapshots(before, tree_snapshot(tmp_path)) == [
        "README.md", "src/new.py", "src/pkg/a.py"]


def test_same_content_rewritten_is_no_change(tmp_path):
    make_tree(tmp_path)
    before = tree_snapshot(tmp_path)
    (tmp_path / "README.md").write_text("readme\n")
    assert diff_snapshots(before, tree_snapshot(tmp_path)) == []


def test_excluded_dirs_and_caches_are_ignored(tmp_path):
    make_tree(tmp_path)
    before = tree_snapshot(tmp_path)
    (tmp_path / ".stepkit" / "runs" / "events.jsonl").write_text("{}\n")
    (tmp_path / ".git" / "HEAD").write_text("other\n")
    (tmp_path / "src" / "pkg" / "__pycache__").mkdir()
    (tmp_path / "src" / "pkg" / "__pycache__" / "a.pyc").write_bytes(b"\0")
    (tmp_path / "node_modules" / "x" / "i.js").write_text("")
    assert diff_snapshots(before, tree_snapshot(tmp_path)) == []
    assert "src/pkg/__pycache__/a.pyc" in tree_snapshot(tmp_path, exclude=(".git",))


def test_symlinks_are_recorded_not_followed(tmp_path):
    make_tree(tmp_path)
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "big.txt").write_text("x")
    (tmp_path / "link").symlink_to(outside)
    before = tree_snapshot(tmp_path)
    assert "link" in before and not any(p.startswith("link/") for p in before)
    (tmp_path / "link").unlink()
    (tmp_path / "link").symlink_to(tmp_path / "src")
    assert diff_snapshots(before, tree_snapshot(tmp_path)) == ["link"]


def test_a_few_thousand_files_are_fast(tmp_path):
    for d in range(40):
        sub = tmp_path / f"d{d}"
        sub.mkdir()
        for f in range(100):
            (sub / f"f{f}.txt").write_text(f"{d}-{f}\n" * 20)
    started = time.perf_counter()
    snap = tree_snapshot(tmp_path)
    assert len(snap) == 4000
    assert time.perf_counter() - started < 2.0
