"""``stepkit plan`` on a real pseudo-terminal: the drafted steps as a table
(number, title, depends on, criteria); a step another depends on is not
dropped, a step is; an edit in ``$EDITOR`` with problems is not taken and
is reopened as left; accept writes what the table shows, quit writes
nothing."""

from __future__ import annotations

import re
import shlex

from tests.e2e.test_e2e_terminal import Terminal
from tests.e2e.test_plan_cli import DRAFT, answers, chain, spec_project
from tests.support.e2e import PY, clean_env

PROMPT = r"\[a\]ccept and write · \[e\]dit in \$EDITOR · \[d\]rop N · \[q\]uit: "

#: an editor that, the first time, renames step 1 and empties its criteria
#: (a change with a problem), and the second time finds that edit kept and
#: gives the criteria back
EDITOR = """import pathlib, sys, yaml
calls, path = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
draft = yaml.safe_load(path.read_text())
first = draft["steps"][0]
if not calls.exists():
    first["title"], first["acceptance_criteria"] = "Add slugify()", []
else:
    assert first["title"] == "Add slugify()" and first["acceptance_criteria"] == [], first
    first["acceptance_criteria"] = ["slugify('A b') == 'a-b'"]
calls.open("a").write("edited\\n")
path.write_text(yaml.safe_dump(draft))
"""


def row(number: int, title: str, depends: str, criteria: int) -> str:
    return rf"{number}\s*│\s*{re.escape(title)}\s*│\s*{re.escape(depends)}\s*│\s*{criteria}\s*│"


def start(tmp_path, **env: str) -> tuple[Terminal, object]:
    project = spec_project(tmp_path)
    argv = [PY, "-m", "stepkit", "plan", "spec.md", "--engine", answers(project, DRAFT)]
    return Terminal(argv, project, clean_env(**env)), project


def test_the_table_drops_a_step_only_when_none_depends_on_it_then_writes_it(tmp_path):
    term, project = start(tmp_path)
    try:
        term.read_until(row(1, "Add slugify", "-", 2))
        term.read_until(row(3, "The --max-length option", "1, 2", 2))
        term.read_until(PROMPT)
        term.type("d 2\n")
        term.read_until("step 3 depends on step 2: drop or edit that first")
        term.read_until(PROMPT)
        term.type("d 3\n")
        term.read_until(r"Drafted plan: 2 step\(s\)")
        term.read_until(PROMPT)
        term.type("a\n")
        assert term.wait() == 0, term.screen
    finally:
        term.kill()
    assert chain(project) == [
        (1, "Add slugify", [], "pending"),
        (2, "Cut slugs at a word boundary", [1], "pending"),
    ]


def test_an_edit_with_a_problem_is_not_taken_and_reopens_as_left(tmp_path):
    editor = tmp_path / "editor.py"
    editor.write_text(EDITOR)
    calls = tmp_path / "editor-calls"
    term, project = start(
        tmp_path, EDITOR=shlex.join([PY, str(editor), str(calls)])
    )  # the file comes last
    try:
        term.read_until(PROMPT)
        term.type("e\n")
        term.read_until("Not taken:")
        term.read_until(r"step 1 \(Add slugify\(\)\): no acceptance criteria")
        term.read_until(row(1, "Add slugify", "-", 2))  # the draft as it was
        term.read_until(PROMPT)
        term.type("e\n")
        term.read_until(row(1, "Add slugify()", "-", 1))
        term.read_until(PROMPT)
        term.type("a\n")
        assert term.wait() == 0, term.screen
    finally:
        term.kill()
    assert calls.read_text() == "edited\nedited\n"
    assert chain(project)[0] == (1, "Add slugify()", [], "pending")


def test_quit_writes_nothing(tmp_path):
    term, project = start(tmp_path)
    try:
        term.read_until(PROMPT)
        term.type("q\n")
        assert term.wait() == 1
    finally:
        term.kill()
    assert "the draft was not accepted; nothing was written" in term.screen
    assert not (project / "plans").exists()
