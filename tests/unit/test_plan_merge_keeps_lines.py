"""The plan merge driver (:func:`stepkit.planrepo.mergedriver.merge_plan_file`)
keeps every line either side added: a property over random NOTES.md files
and pairs of appends drawn from a small alphabet (so the same line, a blank
or a code fence, turns up on both sides and in the base all the time)."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from stepkit.planrepo.mergedriver import merge_plan_file

ALPHABET = [
    "",
    "## Step 2 notes",
    "## Step 3 notes",
    "- Money is stored in cents",
    "-  Money is stored  in cents",
    "- Dates are UTC",
    "```",
    "```sh",
    "make test",
]
lines = st.lists(st.sampled_from(ALPHABET), max_size=8)


def merge(base: list[str], ours: list[str], theirs: list[str]) -> tuple[list[str], int]:
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for name, content in (("base", base), ("ours", ours), ("theirs", theirs)):
            path = Path(tmp) / name
            path.write_text("".join(f"{line}\n" for line in content))
            paths.append(path)
        left = merge_plan_file(*paths, "plans/NOTES.md")
        return paths[1].read_text().splitlines(), left


def subsequence(needle: list[str], haystack: list[str]) -> bool:
    remaining = iter(haystack)
    return all(line in remaining for line in needle)


@settings(max_examples=80, deadline=None, database=None)
@given(body=lines, ours=lines, theirs=lines)
def test_both_sides_appends_are_all_kept_in_order(body, ours, theirs):
    base = ["# Notes", "", *body]

    merged, left = merge(base, base + ours, base + theirs)

    assert left == 0, merged
    expected = Counter(base) + Counter(ours) + (Counter() if ours == theirs else Counter(theirs))
    assert Counter(merged) == expected, merged
    assert subsequence(base + ours, merged) and subsequence(base + theirs, merged), merged


@settings(max_examples=50, deadline=None, database=None)
@given(head=lines, tail=lines, ours=lines, theirs=lines)
def test_inserts_in_the_middle_are_all_kept_in_order(head, tail, ours, theirs):
    """A variant: both sides insert at one place inside the file, not at its end."""
    base = ["# Notes", "", *head, "## Middle", *tail]
    at = len(head) + 3

    merged, left = merge(base, base[:at] + ours + base[at:], base[:at] + theirs + base[at:])

    assert left == 0, merged
    expected = Counter(base) + Counter(ours) + (Counter() if ours == theirs else Counter(theirs))
    assert Counter(merged) == expected, merged
    assert subsequence(base[:at] + ours + base[at:], merged), merged
    assert subsequence(base[:at] + theirs + base[at:], merged), merged
