"""The plan repo model: parsing of step plans, handoffs and NOTES.md."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from stepkit.errors import PlanError
from stepkit.planrepo.document import _simple_mapping, parse_document
from stepkit.planrepo.model import PlanRepo, resolve_plans_dir, step_from_prompt
from stepkit.planrepo.sections import plan_section
from stepkit.planrepo.stepstate import StepStates


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def plan(plans: Path, name: str, front: str = "", body: str = "Body.\n") -> Path:
    text = f"---\n{front}---\n{body}" if front else body
    return write(plans / "steps" / name, text)


def handoff(plans: Path, name: str, result: str | None) -> Path:
    front = f"result: {result}\n" if result is not None else "title: x\n"
    return write(plans / "handoffs" / name, f"---\n{front}---\n## Summary\nDone.\n")


@pytest.fixture
def plans(tmp_path: Path) -> Path:
    (tmp_path / "plans" / "steps").mkdir(parents=True)
    return tmp_path / "plans"


def test_number_slug_title_status_from_file_and_frontmatter(plans):
    plan(plans, "03-add-auth.md", "title: Add auth\nstatus: In-Progress\n", "# Add auth\n\nText.\n")
    plan(plans, "7-no-frontmatter.md", body="Just text.\n")
    repo = PlanRepo.load(plans)
    three, seven = repo.steps
    assert (three.number, three.slug, three.title, three.status) == (
        3,
        "add-auth",
        "Add auth",
        "in-progress",
    )
    assert three.body == "# Add auth\n\nText."
    assert three.metadata == {"title": "Add auth", "status": "In-Progress"}
    assert three.path == plans / "steps" / "03-add-auth.md"
    assert (seven.number, seven.slug, seven.title, seven.status) == (
        7,
        "no-frontmatter",
        "no-frontmatter",
        "pending",
    )
    assert seven.depends_on == [] and seven.metadata == {}
    assert repo.problems == []


def test_steps_are_sorted_by_number_not_by_name(plans):
    for name in ("10-ten.md", "9-nine.md", "011-eleven.md", "2-two.md"):
        plan(plans, name, "title: t\n")
    assert [s.number for s in PlanRepo.load(plans).steps] == [2, 9, 10, 11]


def test_depends_on_flow_block_and_single_styles(plans):
    plan(plans, "01-a.md", "title: a\n")
    plan(plans, "02-b.md", "title: b\n")
    plan(plans, "03-flow.md", "depends_on: [1, 2]\n")
    plan(plans, "04-block.md", "depends_on:\n  - 1\n  - 2\n")
    plan(plans, "05-single.md", "depends_on: 2\n")
    plan(plans, "06-strings.md", "depends_on: ['1', \"2\", 2]\n")
    plan(plans, "07-empty.md", "depends_on:\n")
    repo = PlanRepo.load(plans)
    assert [repo.step(n).depends_on for n in (3, 4, 5, 6, 7)] == [[1, 2], [1, 2], [2], [1, 2], []]
    assert repo.problems == []


def test_bad_depends_on_entries_are_a_problem(plans):
    plan(plans, "01-a.md", "title: a\n")
    plan(plans, "02-b.md", "depends_on: [1, first, true]\n")
    repo = PlanRepo.load(plans)
    assert repo.step(2).depends_on == [1]
    assert repo.problems == [
        f"{plans / 'steps' / '02-b.md'}: depends_on must list step numbers; cannot use 'first', True"
    ]


def test_unknown_status_is_a_problem_and_never_next(plans):
    plan(plans, "01-a.md", "status: done\n")
    plan(plans, "02-b.md", "status: pending\n")
    repo = PlanRepo.load(plans)
    assert repo.step(1).status == "done"
    assert repo.next_step().number == 2
    assert repo.problems == [
        f"{plans / 'steps' / '01-a.md'}: unknown status 'done' (expected pending, in-progress or complete)"
    ]


def test_title_fallback_for_empty_title_and_multiline_title_is_one_line(plans):
    plan(plans, "01-slug-one.md", "title: ''\n")
    plan(plans, "02-b.md", "title: |\n  two\n  lines\n")
    repo = PlanRepo.load(plans)
    assert repo.step(1).title == "slug-one"
    assert repo.step(2).title == "two lines"


def test_next_step_prefers_in_progress_then_first_pending(plans):
    plan(plans, "01-a.md", "status: complete\n")
    plan(plans, "02-b.md", "status: pending\n")
    plan(plans, "03-c.md", "status: in-progress\n")
    assert PlanRepo.load(plans).next_step().number == 3
    plan(plans, "03-c.md", "status: complete\n")
    assert PlanRepo.load(plans).next_step().number == 2
    plan(plans, "02-b.md", "status: complete\n")
    assert PlanRepo.load(plans).next_step() is None


def test_dependency_satisfaction_from_handoffs(plans):
    for n, name in enumerate(("a", "b", "c", "d"), start=1):
        plan(plans, f"0{n}-{name}.md", f"title: {name.upper()}\n")
    plan(plans, "05-e.md", "title: E\ndepends_on: [1, 2, 3, 4, 9]\n")
    handoff(plans, "01-a.md", "complete")
    handoff(plans, "02-b.md", "partial")
    handoff(plans, "03-c.md", None)
    repo = PlanRepo.load(plans)
    assert StepStates(repo).unsatisfied(repo.step(5)) == [
        "step 2 (B): result is partial",
        "step 3 (C): handoff 03-c.md has no result",
        "step 4 (D): no handoff",
        "step 9: no such step, no handoff",
    ]
    assert StepStates(repo).unsatisfied(repo.step(1)) == []


def test_blocked_result_and_a_result_that_is_not_exactly_complete(plans):
    plan(plans, "01-a.md", "title: A\n")
    plan(plans, "02-b.md", "title: B\n")
    plan(plans, "03-c.md", "depends_on: [1, 2]\n")
    handoff(plans, "01-a.md", "Complete")
    handoff(plans, "02-b.md", "blocked")
    repo = PlanRepo.load(plans)
    assert repo.handoffs[1].result == "Complete"  # as check-handoff sees it: not complete
    assert StepStates(repo).unsatisfied(repo.step(3)) == [
        "step 1 (A): result is Complete",
        "step 2 (B): result is blocked",
    ]
    assert [p.split(": ", 1)[1] for p in repo.problems] == [
        "result 'Complete' is not one of complete, partial or blocked (exact, lower case)"
    ]


def test_complete_handoff_satisfies_even_without_the_plan(plans):
    plan(plans, "05-e.md", "depends_on: [4]\n")
    handoff(plans, "04-gone.md", "complete")
    repo = PlanRepo.load(plans)
    assert StepStates(repo).unsatisfied(repo.step(5)) == []
    assert repo.problems == [
        f"{plans / 'steps' / '05-e.md'}: depends on step 4, which does not exist (edit its depends_on)"
    ]


def test_previous_handoff_is_the_highest_below(plans):
    for n in (1, 2, 5, 7):
        plan(plans, f"0{n}-s.md", "title: s\n")
    handoff(plans, "01-s.md", "complete")
    handoff(plans, "02-s.md", "partial")
    handoff(plans, "07-s.md", "complete")
    repo = PlanRepo.load(plans)
    assert repo.previous_handoff(repo.step(5)).path.name == "02-s.md"
    assert repo.previous_handoff(repo.step(2)).step == 1
    assert repo.previous_handoff(repo.step(1)) is None
    assert repo.handoffs[2].body == "## Summary\nDone."


def test_handoff_path_notes_and_dirs(plans):
    step = plan(plans, "04-do-it.md", "title: Do it\n")
    repo = PlanRepo.load(plans)
    assert repo.handoff_path(repo.step(4)) == plans / "handoffs" / step.name
    assert repo.notes_path == plans / "NOTES.md"
    assert repo.notes_text == ""
    assert repo.handoffs == {}
    write(plans / "NOTES.md", "# Notes\n- uses pnpm\n")
    assert repo.notes_text == "# Notes\n- uses pnpm\n"
    assert (repo.steps_dir, repo.handoffs_dir) == (plans / "steps", plans / "handoffs")


def test_duplicate_handoffs_prefer_the_plan_basename(plans):
    plan(plans, "02-real.md", "title: x\n")
    handoff(plans, "02-aaa.md", "partial")
    handoff(plans, "02-real.md", "complete")
    repo = PlanRepo.load(plans)
    assert repo.handoffs[2].path.name == "02-real.md"
    handoffs = plans / "handoffs"
    assert repo.problems == [
        f"{handoffs / '02-real.md'}: duplicate handoff for step 2 (also {handoffs / '02-aaa.md'})"
    ]


def test_bom_and_leading_blank_lines_before_frontmatter(plans):
    (plans / "steps" / "01-bom.md").write_bytes(b"\xef\xbb\xbf---\ntitle: Bom\n---\nx\n")
    plan(plans, "02-blank.md", body="\n\n---\ntitle: Blank\n---\ny\n")
    repo = PlanRepo.load(plans)
    assert [s.title for s in repo.steps] == ["Bom", "Blank"]


def test_no_plans_dir_or_no_steps_dir_is_one_line_plan_error(tmp_path):
    with pytest.raises(PlanError) as no_dir:
        PlanRepo.load(tmp_path / "missing")
    assert (
        str(no_dir.value)
        == f"no plan repo at {tmp_path / 'missing'} (expected {tmp_path / 'missing' / 'steps'}/): stepkit init writes one, --plans-dir names another"
    )
    (tmp_path / "plans").mkdir()
    with pytest.raises(PlanError, match="no plan repo at .*plans/steps/"):
        PlanRepo.load(tmp_path / "plans")


def test_hidden_and_non_markdown_files_are_ignored(plans):
    plan(plans, "01-a.md", "title: a\n")
    write(plans / "steps" / ".01-a.md.tmp", "junk")
    write(plans / "steps" / "notes.txt", "junk")
    (plans / "steps" / "02-dir.md").mkdir()
    repo = PlanRepo.load(plans)
    assert [s.number for s in repo.steps] == [1] and repo.problems == []


def test_thousand_step_repo(plans):
    for n in range(1, 1001):
        deps = [d for d in (n - 1, n // 2) if d >= 1]
        status = "complete" if n <= 600 else "pending"
        plan(plans, f"{n:04d}-s{n}.md", f"title: Step {n}\nstatus: {status}\ndepends_on: {deps}\n")
        if n <= 600:
            handoff(plans, f"{n:04d}-s{n}.md", "complete")
    repo = PlanRepo.load(plans)
    assert len(repo.steps) == 1000 and repo.problems == []
    assert repo.next_step().number == 601
    assert StepStates(repo).unsatisfied(repo.step(601)) == []
    assert StepStates(repo).unsatisfied(repo.step(700)) == ["step 699 (Step 699): no handoff"]
    assert repo.previous_handoff(repo.step(1000)).step == 600


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("Execute step 3", 3),
        ("execute STEP 12 now", 12),
        ("Run the step #4, please", 4),
        ("run step 5.", 5),
        ("implement step 6", 6),
        ("then do step 7", 7),
        ("Step #4, please", 4),
        ("step 3 please", 3),
        ("let's do step 3", 3),
        ("Step 2 was hard; continue", None),
        ("Step 1 is done and approved; continue with the plan", None),
        ("do not run step 1, run step 2", 2),
        ("don't execute step 3", None),
        ("rerun step 3", None),
        ("Execute the next step", None),
        ("do steps 3 and 4", None),
        ("a step-by-step guide", None),
        ("substep 3", None),
        ("sub-step 3", None),
        ("step 3rd", None),
        ("", None),
    ],
)
def test_step_from_prompt(prompt, expected):
    assert step_from_prompt(prompt) == expected


BODY = """\
# Step 3

## Objective
Do the thing.

### Details
Nested detail.

## Edge Cases:
- empty input

```sh
## not a heading
```
- after the fence

## Out of scope
- later
"""


def test_plan_section_levels_case_and_fences():
    assert plan_section(BODY, "Objective") == "Do the thing.\n\n### Details\nNested detail."
    assert plan_section(BODY, "edge cases") == (
        "- empty input\n\n```sh\n## not a heading\n```\n- after the fence"
    )
    assert plan_section(BODY, "details") == "Nested detail."
    assert plan_section(BODY, "Out of Scope") == "- later"
    assert plan_section(BODY, "Step 3") is None  # level 1 does not count
    assert plan_section(BODY, "not a heading") is None
    assert plan_section("## Tasks\n", "Tasks") == ""


def test_resolve_plans_dir_is_relative_to_the_project(tmp_path):
    assert resolve_plans_dir(tmp_path, None) == tmp_path / "plans"
    assert resolve_plans_dir(tmp_path, "docs/plans") == tmp_path / "docs" / "plans"
    assert resolve_plans_dir(tmp_path, tmp_path / "abs") == tmp_path / "abs"
    assert resolve_plans_dir(tmp_path, None, "other") == tmp_path / "other"


def test_parse_document_without_frontmatter_and_with_empty_frontmatter():
    assert parse_document("# Title\n\ntext\n") == ({}, "# Title\n\ntext")
    assert parse_document("---\n---\nbody\n") == ({}, "body")
    assert parse_document("---\n# only a comment\n---\nbody") == ({}, "body")


BLOCKS = [
    "title: Hello\nstatus: pending\ndepends_on: [1, 2]\n",
    'title: "Quoted # not a comment"  # a comment\n',
    "title: 'single'\nstep: 3\n",
    "depends_on:\n  - 1\n  - 2 # two\n\n  # note\n  - 3\nstatus: complete\n",
    "depends_on:\n- 1\n- 2\n",
    "depends_on:\nstatus:\n",
    "depends_on: []\nx: [1,]\n",
    "status: pending # set by stepkit\r\ntitle: CRLF\r\n",
    "title: it's fine, really\n",
    "title: été ✓\n",
    "yes: 1\n",
    "title: yes\n",
    "title: 2024-01-01\n",
    "title: 1.5\n",
    "step: 010\n",
    "step: 0x1f\n",
    "title: C# rocks\n",
    "title: ~\n",
    "title: null\n",
    "title: -5\n",
    "depends_on:\n  - 1\n   - 2\n",
    "title: a\n  continued\n",
    "depends_on: [a, b]\n",
    'title: "a\\nb"\n',
    "title: 1:20\n",
    "title: on\n",
    "step: 1_000\n",
    "step: +5\n",
    "title: a\u2028b\n",
    "title: x\n...\n",
    "title: 'it''s'\n",
    "depends_on: [01]\n",
    "- 1\n- 2\n",
    "title: {a: 1}\n",
    "title: &a x\nother: *a\n",
    "title: >\n  folded\n",
]


@pytest.mark.parametrize("block", BLOCKS)
def test_fast_frontmatter_reader_agrees_with_yaml(block):
    """The shortcut for simple frontmatter answers exactly as yaml.safe_load,
    or declines (None) and leaves the block to the YAML loader."""
    fast = _simple_mapping("\n" + block)
    if fast is not None:
        assert fast == (yaml.safe_load(block) or {})


def test_fast_reader_handles_the_common_shapes():
    assert _simple_mapping("\ntitle: T\nstatus: pending\ndepends_on: [1, 2]\n") == {
        "title": "T",
        "status": "pending",
        "depends_on": [1, 2],
    }
    assert _simple_mapping("\ndepends_on:\n  - 4\n") == {"depends_on": [4]}
