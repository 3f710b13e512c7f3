"""atomic_write: the one way stepkit replaces a file."""

import os

from stepkit.workspace.files import atomic_write


def test_replaces_the_file_and_leaves_no_temp(tmp_path):
    path = tmp_path / "handoffs" / "03-parser.md"
    atomic_write(path, "first")
    atomic_write(path, b"second\r\n")
    assert path.read_bytes() == b"second\r\n"
    assert sorted(p.name for p in path.parent.iterdir()) == ["03-parser.md"]


def test_keeps_an_existing_mode_and_gives_a_new_file_the_umask_default(tmp_path):
    kept = tmp_path / "kept.md"
    kept.write_text("x")
    kept.chmod(0o640)
    atomic_write(kept, "y")
    assert kept.stat().st_mode & 0o777 == 0o640
    umask = os.umask(0o022)
    try:
        atomic_write(tmp_path / "new.md", "z")
    finally:
        os.umask(umask)
    assert (tmp_path / "new.md").stat().st_mode & 0o777 == 0o644


def test_writes_through_a_symlink_to_its_target(tmp_path):
    target = tmp_path / "real.md"
    target.write_text("old")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    atomic_write(link, "new")
    assert link.is_symlink()
    assert target.read_text() == "new"
