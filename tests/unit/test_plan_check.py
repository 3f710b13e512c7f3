"""Validation of the plan repo: each problem is one line naming the file and the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from stepkit.planrepo.checks import find_cycles
from stepkit.planrepo.model import PlanRepo
from stepkit.planrepo.stepstate import StepStates


@pytest.fixture
def plans(tmp_path: Path) -> Path:
    (tmp_path / "plans" / "steps").mkdir(parents=True)
    return tmp_path / "plans"


def step(plans: Path, name: str, front: str = "title: t\n") -> Path:
    path = plans / "steps" / name
    path.write_text(f"---\n{front}---\nBody.\n", encoding="utf-8")
    return path


def problems(plans: Path) -> list[str]:
    found = PlanRepo.load(plans).problems
    assert all("\n" not in p for p in found)
    return found


def test_a_clean_repo_has_no_problems(plans):
    step(plans, "01-a.md")
    step(plans, "02-b.md", "depends_on: [1]\n")
    assert problems(plans) == []


def test_duplicate_step_numbers_name_both_files(plans):
    first = step(plans, "03-one.md")
    second = step(plans, "3-two.md")
    repo = PlanRepo.load(plans)
    assert repo.problems == [
        f"{second}: duplicate step number 3 (also {first}); renumber one: its file name and step:"
    ]
    assert [s.path.name for s in repo.steps] == ["03-one.md", "3-two.md"]
    assert repo.step(3).path == first


def test_dependency_on_a_missing_step(plans):
    path = step(plans, "02-b.md", "depends_on: [1, 9]\n")
    step(plans, "01-a.md")
    assert problems(plans) == [
        f"{path}: depends on step 9, which does not exist (edit its depends_on)"
    ]


def test_self_dependency(plans):
    path = step(plans, "04-d.md", "depends_on: 4\n")
    assert problems(plans) == [f"{path}: step 4 depends on itself (edit its depends_on)"]


def test_two_step_cycle_is_named(plans):
    two = step(plans, "02-b.md", "depends_on: [5]\n")
    step(plans, "05-e.md", "depends_on: [2]\n")
    assert problems(plans) == [f"{two}: dependency cycle: 2 -> 5 -> 2 (edit a depends_on)"]


def test_longer_cycles_and_separate_cycles_each_named_once(plans):
    one = step(plans, "01-a.md", "depends_on: [3]\n")
    step(plans, "02-b.md", "depends_on: [1]\n")
    step(plans, "03-c.md", "depends_on: [2, 4]\n")
    step(plans, "04-d.md")
    seven = step(plans, "07-g.md", "depends_on: [8]\n")
    step(plans, "08-h.md", "depends_on: [7, 4]\n")
    assert problems(plans) == [
        f"{one}: dependency cycle: 1 -> 3 -> 2 -> 1 (edit a depends_on)",
        f"{seven}: dependency cycle: 7 -> 8 -> 7 (edit a depends_on)",
    ]


def test_find_cycles_picks_a_shortest_way_around_the_lowest_node():
    graph = {1: [2], 2: [3, 1], 3: [1]}
    assert find_cycles(graph) == [[1, 2, 1]]
    assert find_cycles({1: [], 2: [1], 3: [2]}) == []


def test_find_cycles_on_a_ten_thousand_step_chain_does_not_recurse():
    chain = {n: [n - 1] if n > 1 else [10_000] for n in range(1, 10_001)}
    (cycle,) = find_cycles(chain)
    assert cycle[0] == cycle[-1] == 1 and len(cycle) == 10_001
    assert find_cycles({n: [n - 1] if n > 1 else [] for n in range(1, 10_001)}) == []


def test_file_names_without_a_leading_number(plans):
    step(plans, "01-a.md")
    (plans / "steps" / "intro.md").write_text("# Intro\n", encoding="utf-8")
    (plans / "steps" / "step-2.md").write_text("# Two\n", encoding="utf-8")
    repo = PlanRepo.load(plans)
    expected = "file name does not start with a step number (expected NN-<slug>.md)"
    assert repo.problems == [
        f"{plans / 'steps' / 'intro.md'}: {expected}",
        f"{plans / 'steps' / 'step-2.md'}: {expected}",
    ]
    assert [s.number for s in repo.steps] == [1]


def test_non_utf8_file(plans):
    (plans / "steps" / "05-latin1.md").write_bytes(b"---\ntitle: caf\xe9\n---\n")
    repo = PlanRepo.load(plans)
    assert repo.steps == []
    assert repo.problems == [f"{plans / 'steps' / '05-latin1.md'}: not UTF-8 (byte 0xe9 on line 2)"]


def test_unreadable_file(plans):
    (plans / "steps" / "06-gone.md").symlink_to("does-not-exist.md")
    assert problems(plans) == [
        f"{plans / 'steps' / '06-gone.md'}: unreadable: No such file or directory"
    ]


@pytest.mark.parametrize(
    ("front", "reason", "line"),
    [
        ("title: [unclosed\n", "did not find expected ',' or ']'", 3),
        ("title: a: b\n", "mapping values are not allowed", 2),
        ("\tstatus: pending\n", "found character", 2),
        ("- 1\n- 2\n", "a YAML list, not a mapping", None),
        ("date: 2024-13-45\n", "ValueError: month must be in 1..12", None),
        (
            "x: !!python/object:os.system {}\n",
            "could not determine a constructor for the tag",
            None,
        ),
    ],
)
def test_malformed_frontmatter(plans, front, reason, line):
    """Messages come from the YAML loader (libyaml words them slightly
    differently), so only their start and the line are fixed here."""
    path = step(plans, "07-bad.md", front)
    (problem,) = problems(plans)
    assert problem.startswith(f"{path}: malformed frontmatter: {reason}")
    if line is not None:
        assert problem.endswith(f"(line {line})")


def test_unclosed_frontmatter(plans):
    path = plans / "steps" / "08-open.md"
    path.write_text("---\ntitle: open\n\nBody without a closing line.\n", encoding="utf-8")
    assert problems(plans) == [f"{path}: malformed frontmatter: no closing '---' line"]


def test_frontmatter_step_must_match_the_file_name(plans):
    path = step(plans, "09-i.md", "step: 10\n")
    step(plans, "11-k.md", "step: '11'\n")
    assert problems(plans) == [
        f"{path}: frontmatter step 10 does not match the file name (step 9): make its step: match"
    ]


def test_step_numbers_in_other_scripts_are_problems_not_crashes(plans):
    """ "²" and "٣" pass str.isdigit(); a step number is ASCII digits only."""
    path = step(plans, "03-c.md", "step: '٣'\ndepends_on: ['²', '1']\n")
    step(plans, "01-a.md")
    repo = PlanRepo.load(plans)
    assert repo.step(3).depends_on == [1]
    assert repo.problems == [
        f"{path}: depends_on must list step numbers; cannot use '²'",
        f"{path}: frontmatter step '٣' does not match the file name (step 3): make its step: match",
    ]


def test_dependency_on_an_unreadable_plan_is_not_reported_as_missing(plans):
    (plans / "steps" / "01-bin.md").write_bytes(b"\xff")
    two = step(plans, "02-b.md", "depends_on: [1]\n")
    repo = PlanRepo.load(plans)
    assert repo.problems == [f"{plans / 'steps' / '01-bin.md'}: not UTF-8 (byte 0xff on line 1)"]
    assert StepStates(repo).unsatisfied(repo.step(2)) == ["step 1: plan unreadable, no handoff"]
    assert repo.step(2).path == two


def test_bad_handoff_files_are_problems_too(plans):
    step(plans, "01-a.md")
    handoffs = plans / "handoffs"
    handoffs.mkdir()
    (handoffs / "01-a.md").write_text("---\nresult: [complete\n---\n", encoding="utf-8")
    (handoffs / "summary.md").write_text("x", encoding="utf-8")
    assert problems(plans) == [
        f"{handoffs / 'summary.md'}: file name does not start with a step number (expected NN-<slug>.md)",
        f"{handoffs / '01-a.md'}: malformed frontmatter: did not find expected ',' or ']' (line 3)",
    ]


def test_every_kind_of_problem_at_once_still_loads(plans):
    step(plans, "01-a.md", "status: finished\ndepends_on: [1, 2, 99]\n")
    step(plans, "02-b.md", "depends_on: [1]\n")
    step(plans, "2-dup.md")
    (plans / "steps" / "notes.md").write_text("x", encoding="utf-8")
    (plans / "steps" / "03-bin.md").write_bytes(b"\x80")
    repo = PlanRepo.load(plans)
    assert [s.number for s in repo.steps] == [1, 2, 2]
    assert len(repo.problems) == 7
    assert repo.next_step().number == 2
