""":func:`stepkit.planrepo.mergedriver.resolve_appends` on git's diff3
output: which conflicts become unions and which stay, byte for byte."""

from __future__ import annotations

from stepkit.planrepo.mergedriver import resolve_appends

STEP_HEAD = (
    "---\nstep: 3\nstatus: pending\n---\n\n## Objective\nPow.\n\n## Edge cases\n\n- None yet.\n"
)


def conflict(ours: str, base: str, theirs: str, newline: str = "\n") -> str:
    return (
        f"<<<<<<< ours{newline}{ours}||||||| base{newline}{base}======={newline}{theirs}"
        f">>>>>>> theirs{newline}"
    )


def test_an_edge_cases_append_on_both_sides_is_our_block_then_theirs_every_line_kept():
    merged = (
        STEP_HEAD
        + conflict("- a\n- shared\n", "", "- shared\n- b\n")
        + "\n## Out of scope\n\n- x\n"
    )
    text, left = resolve_appends(merged, "plans/steps/03-pow.md")
    assert left == 0
    assert text == STEP_HEAD + "- a\n- shared\n- shared\n- b\n" + "\n## Out of scope\n\n- x\n"


def test_the_same_block_appended_on_both_sides_is_kept_once():
    merged = STEP_HEAD + conflict("- a\n- b\n", "", "- a\n- b\n")
    assert resolve_appends(merged, "plans/steps/03-pow.md") == (STEP_HEAD + "- a\n- b\n", 0)


def test_the_same_heading_in_notes_is_kept_on_both_sides_with_its_lines():
    """The defect: a note under "## Step 3 notes" vanished because "## Step 2
    notes" had the same line, and a pair of code fences was lost."""
    ours = "## Step 2 notes\n- run it\n```sh\nmake\n```\n"
    theirs = "## Step 3 notes\n- run it\n```sh\nmake test\n```\n"
    merged = "# Notes\n\n" + conflict(ours, "", theirs)
    assert resolve_appends(merged, "plans/NOTES.md") == ("# Notes\n\n" + ours + theirs, 0)


def test_inserts_around_a_base_line_keep_their_places():
    merged = "# Notes\n" + conflict("- a\n- keep\n- b\n", "- keep\n", "- c\n- keep\n- a\n")
    assert resolve_appends(merged, "plans/NOTES.md") == (
        "# Notes\n- a\n- c\n- keep\n- b\n- a\n",
        0,
    )


def test_a_setext_underline_in_their_lines_is_content_not_a_marker():
    merged = STEP_HEAD + conflict("- a\n", "", "- b\n=======\n")
    text, left = resolve_appends(merged, "plans/steps/03-pow.md")
    assert left == 0 and text.endswith("- a\n- b\n=======\n")


def test_the_same_append_in_another_section_stays_a_conflict_with_its_crlf_markers():
    head = STEP_HEAD.replace("\n", "\r\n").replace("## Edge cases\r\n\r\n- None yet.\r\n", "")
    merged = head + conflict("- a\r\n", "", "- b\r\n", newline="\r\n")
    text, left = resolve_appends(merged, "plans/steps/03-pow.md")
    assert (text, left) == (merged, 1)


def test_notes_appends_are_unions_but_not_in_a_file_the_driver_does_not_know():
    merged = "# Notes\n\n- old\n" + conflict("- one (step 1)\n", "", "- two (step 2)\n")
    assert resolve_appends(merged, "plans/NOTES.md") == (
        "# Notes\n\n- old\n- one (step 1)\n- two (step 2)\n",
        0,
    )
    assert resolve_appends(merged, "docs/notes.md") == (merged, 1)


def test_a_conflict_inside_the_frontmatter_stays():
    merged = "---\nstep: 3\n" + conflict(
        "status: complete\n", "status: pending\n", "status: in-progress\n"
    )
    merged += "---\n\n## Edge cases\n\n- None yet.\n"
    assert resolve_appends(merged, "plans/steps/03-pow.md") == (merged, 1)


def test_markers_that_are_not_closed_leave_the_text_as_it_is():
    merged = STEP_HEAD + "<<<<<<< ours\n- a\n||||||| base\n=======\n- b\n"
    assert resolve_appends(merged, "plans/steps/03-pow.md") == (merged, 1)
