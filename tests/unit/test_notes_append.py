"""append_notes: NOTES.md is appended to, never rewritten."""

import os
import stat

from stepkit.protocol.handoff.notes import append_notes


def test_creates_the_file_with_a_header(tmp_path):
    notes = tmp_path / "plans" / "NOTES.md"
    assert append_notes(notes, ["Tests run with `uv run pytest`."], step=1) == [
        "Tests run with `uv run pytest`."
    ]
    assert notes.read_text() == "# Notes\n\n- Tests run with `uv run pytest`. (step 1)\n"


def test_existing_bytes_stay_an_exact_prefix(tmp_path):
    notes = tmp_path / "NOTES.md"
    original = "# Our notes\r\n\r\n- odd   spacing kept\r\n<!-- a comment -->"
    notes.write_bytes(original.encode())
    append_notes(notes, ["New fact", "Second\nline wrapped"], step=4)
    data = notes.read_bytes()
    assert data.startswith(original.encode())
    assert data[len(original) :] == b"\r\n- New fact (step 4)\r\n- Second line wrapped (step 4)\r\n"


def test_facts_already_present_are_skipped(tmp_path):
    notes = tmp_path / "NOTES.md"
    notes.write_text("# Notes\n\n- The API uses   snake_case keys (step 1)\n")
    before = notes.read_bytes()
    added = append_notes(
        notes,
        ["the api uses snake_case keys", "", "- Cache in .cache/", "Cache in .cache/"],
        step=2,
    )
    assert added == ["Cache in .cache/"]
    assert notes.read_bytes() == before + b"- Cache in .cache/ (step 2)\n"


def test_nothing_new_leaves_the_file_untouched(tmp_path):
    notes = tmp_path / "NOTES.md"
    notes.write_text("# Notes\n\n- known (step 1)\n")
    mtime = notes.stat().st_mtime_ns
    assert append_notes(notes, ["known"], step=3) == []
    assert notes.stat().st_mtime_ns == mtime


def test_mode_is_kept_and_no_temp_file_is_left(tmp_path):
    notes = tmp_path / "NOTES.md"
    notes.write_text("# Notes\n")
    os.chmod(notes, 0o640)
    append_notes(notes, ["fact"], step=1)
    assert stat.S_IMODE(notes.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["NOTES.md"]
