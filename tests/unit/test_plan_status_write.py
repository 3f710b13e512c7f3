"""Byte-preserving, atomic edits of plan files: set_status and append_edge_case."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from stepkit.errors import PlanError
from stepkit.planrepo.edits import append_edge_case, set_status
from stepkit.planrepo.model import PlanRepo


def put(tmp_path: Path, data: bytes, name: str = "03-step.md") -> Path:
    steps = tmp_path / "plans" / "steps"
    steps.mkdir(parents=True, exist_ok=True)
    path = steps / name
    path.write_bytes(data)
    return path


def status_of(path: Path) -> str:
    return PlanRepo.load(path.parent.parent).step(3).status


CRLF = (
    b'---\r\nstep: 3\r\ntitle: "Add auth"\r\nstatus: pending\r\ndepends_on: [1, 2]\r\n---\r\n'
    b"# Add auth\r\n\r\n## Tasks\r\n- one\r\n"
)
COMMENTS = (
    b"---\n# owner: platform team\ntitle:   'Quoted title'   # keep this spacing\n"
    b"status: pending   # set by stepkit\nzeta: 1\nalpha: [b, a]\n---\nBody with status: pending\n"
)
NO_STATUS = b"---\ntitle: No status\ndepends_on:\n  - 1\n---\n\nBody.\n"
NO_TRAILING_NEWLINE = b"---\ntitle: T\nstatus: in-progress\n---\nlast line without newline"


@pytest.mark.parametrize(
    ("original", "expected"),
    [
        (CRLF, CRLF.replace(b"status: pending", b"status: in-progress")),
        (COMMENTS, COMMENTS.replace(b"status: pending   #", b"status: in-progress   #")),
        (NO_STATUS, NO_STATUS.replace(b"  - 1\n---", b"  - 1\nstatus: in-progress\n---")),
        (NO_TRAILING_NEWLINE, NO_TRAILING_NEWLINE),
    ],
    ids=["crlf", "comments", "no-status-line", "no-trailing-newline"],
)
def test_set_status_changes_only_the_status_value(tmp_path, original, expected):
    path = put(tmp_path, original)
    set_status(path, "in-progress")
    assert path.read_bytes() == expected
    assert status_of(path) == "in-progress"
    set_status(path, "complete")
    assert path.read_bytes() == expected.replace(b"status: in-progress", b"status: complete")
    assert status_of(path) == "complete"


@pytest.mark.parametrize(
    ("original", "status", "expected"),
    [
        (
            b"---\r\ntitle: T\r\n---\r\nbody",
            "complete",
            b"---\r\ntitle: T\r\nstatus: complete\r\n---\r\nbody",
        ),
        (
            b'---\nstatus: "pending" # q\ntitle: t\n---\n',
            "complete",
            b'---\nstatus: "complete" # q\ntitle: t\n---\n',
        ),
        (b"---\nstatus: 'pending'\n---\n", "in-progress", b"---\nstatus: 'in-progress'\n---\n"),
        (b"---\nstatus:\ntitle: t\n---\n", "complete", b"---\nstatus: complete\ntitle: t\n---\n"),
        (
            b"# Plain plan\r\n\r\nNo frontmatter.",
            "in-progress",
            b"---\r\nstatus: in-progress\r\n---\r\n# Plain plan\r\n\r\nNo frontmatter.",
        ),
        (
            b"---\nmeta:\n  status: nested\nstatus: pending\n---\nstatus: pending\n",
            "complete",
            b"---\nmeta:\n  status: nested\nstatus: complete\n---\nstatus: pending\n",
        ),
        (
            b"\xef\xbb\xbf---\nstatus: pending\n---\nx\n",
            "complete",
            b"\xef\xbb\xbf---\nstatus: complete\n---\nx\n",
        ),
    ],
    ids=[
        "added-line-uses-crlf",
        "double-quotes-kept",
        "single-quotes-kept",
        "empty-value",
        "no-frontmatter",
        "body-and-nested-untouched",
        "bom-kept",
    ],
)
def test_set_status_writes_exactly(tmp_path, original, status, expected):
    path = put(tmp_path, original)
    set_status(path, status)
    assert path.read_bytes() == expected
    assert status_of(path) == status


def test_write_is_atomic_keeps_mode_and_leaves_no_temp_file(tmp_path):
    path = put(tmp_path, b"---\nstatus: pending\n---\n")
    os.chmod(path, 0o640)
    inode = path.stat().st_ino
    set_status(path, "complete")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert path.stat().st_ino != inode  # replaced by rename, not rewritten in place
    assert sorted(p.name for p in path.parent.iterdir()) == ["03-step.md"]


def test_write_through_a_symlink_keeps_the_link(tmp_path):
    real = put(tmp_path, b"---\nstatus: pending\n---\n", "real.md")
    link = real.parent / "03-link.md"
    link.symlink_to(real.name)
    set_status(link, "complete")
    assert link.is_symlink()
    assert real.read_bytes() == b"---\nstatus: complete\n---\n"


def test_unchanged_status_does_not_rewrite(tmp_path):
    path = put(tmp_path, b"---\nstatus: complete\n---\n")
    inode = path.stat().st_ino
    set_status(path, "complete")
    assert path.stat().st_ino == inode


@pytest.mark.parametrize(
    "original",
    [
        b"---\nstatus:\n  pending\n---\n",  # block-style value on the next line
        b'---\n"status": pending\n---\n',  # quoted key
        b"---\nstatus: pending\ntitle: [unclosed\n---\n",  # malformed YAML
        b"---\nstatus: pending\n",  # no closing ---
        b"---\nstatus: pend\xffing\n---\n",  # not UTF-8
    ],
    ids=["block-value", "quoted-key", "malformed", "unclosed", "not-utf8"],
)
def test_files_it_cannot_edit_safely_raise_and_stay_unchanged(tmp_path, original):
    path = put(tmp_path, original)
    with pytest.raises(PlanError) as err:
        set_status(path, "complete")
    assert str(path) in str(err.value) and "\n" not in str(err.value)
    assert path.read_bytes() == original


def test_unknown_status_value_is_refused(tmp_path):
    path = put(tmp_path, b"---\nstatus: pending\n---\n")
    with pytest.raises(ValueError, match="status must be one of"):
        set_status(path, "done")


def test_missing_file_is_a_plan_error(tmp_path):
    with pytest.raises(PlanError, match="cannot set the status of it"):
        set_status(tmp_path / "nope.md", "complete")


PLAN = (
    b"---\ntitle: T\n## not a heading: a YAML comment\n---\n# Step\n\n## Tasks\n- do\n\n"
    b"## Edge cases\n- empty input\n  continued here\n\n## Out of scope\n- later\n"
)


def test_append_edge_case_adds_the_last_bullet_of_the_section(tmp_path):
    path = put(tmp_path, PLAN)
    assert append_edge_case(path, "unicode   names\nin paths") is True
    assert path.read_bytes() == PLAN.replace(
        b"  continued here\n", b"  continued here\n- unicode names in paths\n"
    )


def test_append_edge_case_refuses_an_identical_bullet(tmp_path):
    path = put(tmp_path, PLAN)
    inode = path.stat().st_ino
    assert append_edge_case(path, "empty  input continued here") is False
    assert append_edge_case(path, "- empty input continued here") is False
    assert path.read_bytes() == PLAN and path.stat().st_ino == inode
    assert append_edge_case(path, "empty input") is True


def test_append_edge_case_creates_the_section_at_the_end(tmp_path):
    original = b"---\ntitle: T\n---\n# Step\n\n## Tasks\n- do\n"
    path = put(tmp_path, original)
    assert append_edge_case(path, "timeouts") is True
    assert path.read_bytes() == original + b"\n## Edge cases\n\n- timeouts\n"
    assert append_edge_case(path, "timeouts") is False


def test_append_edge_case_without_trailing_newline_and_crlf(tmp_path):
    original = b"## Edge cases\r\n* first"
    path = put(tmp_path, original)
    assert append_edge_case(path, "second") is True
    assert path.read_bytes() == b"## Edge cases\r\n* first\r\n* second"
    path = put(tmp_path, b"# Step\r\n\r\n## Tasks\r\n- x")
    assert append_edge_case(path, "new") is True
    assert (
        path.read_bytes() == b"# Step\r\n\r\n## Tasks\r\n- x\r\n\r\n## Edge cases\r\n\r\n- new\r\n"
    )


def test_append_edge_case_ignores_headings_in_code_fences_and_keeps_subsections(tmp_path):
    original = (
        b"## Context\n```md\n## Edge cases\n- fake\n```\n\n### Edge cases\n- real\n"
        b"#### Detail\ntext\n\n## Tasks\n"
    )
    path = put(tmp_path, original)
    assert append_edge_case(path, "fake") is True  # the fenced one is not a section
    assert path.read_bytes() == original.replace(b"text\n\n## Tasks", b"text\n- fake\n\n## Tasks")


def test_append_edge_case_to_an_empty_section(tmp_path):
    original = b"## Edge cases\n\n## Out of scope\n- x\n"
    path = put(tmp_path, original)
    assert append_edge_case(path, "first") is True
    assert path.read_bytes() == b"## Edge cases\n- first\n\n## Out of scope\n- x\n"
    assert PlanRepo.load(path.parent.parent).step(3).body.count("- first") == 1


def test_append_edge_case_refuses_empty_text_and_bad_files(tmp_path):
    path = put(tmp_path, b"\xff\xfe")
    with pytest.raises(ValueError):
        append_edge_case(path, "  \n ")
    with pytest.raises(PlanError, match="not UTF-8"):
        append_edge_case(path, "x")
    assert path.read_bytes() == b"\xff\xfe"
