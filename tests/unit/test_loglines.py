"""A gate's log read back as a stream of bounded lines."""

from __future__ import annotations

from stepkit.plugins.runners.cargo import read_libtest
from stepkit.workspace import loglines
from stepkit.workspace.lintkeys import lint_keys
from stepkit.workspace.loglines import LogLines


def test_lines_come_from_the_log_each_time_they_are_iterated(tmp_path):
    log = tmp_path / "tests-1.log"
    log.write_bytes(b"one\r\ntwo\nthree")
    lines = LogLines(log, kept="not this")
    assert list(lines) == ["one", "two", "three"]
    log.write_bytes(b"again\n")
    assert list(lines) == ["again"]


def test_a_line_longer_than_the_bound_is_cut_and_the_next_line_still_read(tmp_path, monkeypatch):
    monkeypatch.setattr(loglines, "MAX_LINE_CHARS", 30)
    log = tmp_path / "tests-1.log"
    log.write_text("x" * 95 + "\ntest a::b ... FAILED\n")
    assert list(LogLines(log)) == ["x" * 30, "test a::b ... FAILED"]
    assert read_libtest(LogLines(log)).failing == ["a::b"]


def test_the_kept_output_stands_in_for_a_missing_log(tmp_path):
    assert list(LogLines(tmp_path / "gone.log", kept="a\nb\n")) == ["a", "b"]
    assert list(LogLines(None, kept="c")) == ["c"]


def test_lint_keys_read_a_streamed_log_as_they_read_its_text(tmp_path):
    text = 'noise\n{"filename": "a.py", "code": "F401", "message": "unused"}\nsrc/b.py:3:1: E501 too long\n'
    log = tmp_path / "lint-1.log"
    log.write_text(text)
    assert lint_keys(LogLines(log)) == lint_keys(text) == ["a.py: F401 unused"]
    document = '[{"filename": "a.py", "code": "F401",\n  "message": "unused"}]\n'
    log.write_text(document)
    assert lint_keys(LogLines(log)) == lint_keys(document) == ["a.py: F401 unused"]


def test_a_log_that_gc_compressed_is_read_from_its_gz(tmp_path):
    import gzip

    log = tmp_path / "tests-1.log"
    with gzip.open(log.with_name("tests-1.log.gz"), "wt") as packed:
        packed.write("FAILED tests/test_a.py::test_one - boom\nlast\n")
    assert list(LogLines(log, "kept")) == ["FAILED tests/test_a.py::test_one - boom", "last"]
