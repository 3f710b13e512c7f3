"""Step quality: what a reviewer checks in a step plan before it is run.

A step is *incomplete* while its plan is not filled in:

- its title or the text of an example section (Objective, Context, Tasks,
  Acceptance criteria) is still the template's (``stepkit init``'s
  "First step", ``Describe the change this step makes.``, the example
  Tasks lines);
- Objective, Tasks or Acceptance criteria is missing or has no content
  (an HTML comment is no content);
- a criterion is not one bullet (a paragraph, or a bullet with sub-bullets);
- its Tasks name no file (no path-like token: backticked, with a ``/``, or
  ``name.ext``);
- it depends on a later step.

These findings concern one step, not the repo: ``stepkit status`` lists
them for every step, ``stepkit run`` refuses the step it would run while
it has any (``--allow-incomplete-plan`` overrides, and the handoff records
it), and another step runs as before.  A problem of the whole repo (a
cycle, a malformed file) is :attr:`~stepkit.planrepo.model.PlanRepo.problems`.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from stepkit.planrepo.sections import (
    LIST_ITEM,
    outline,
    split_lines,
    strip_list_markers,
    track_fence,
    without_comments,
)

if TYPE_CHECKING:
    from stepkit.planrepo.model import PlanRepo, StepPlan

#: the sections whose template text is an example to replace, in the order findings are listed
EXAMPLE_SECTIONS = ("Objective", "Context", "Tasks", "Acceptance criteria")
#: the sections a step needs with content of its own
REQUIRED = ("Objective", "Tasks", "Acceptance criteria")
#: the template's title placeholder
PLACEHOLDER = "{title}"
#: a path-like token: a code span, a word followed by a ``/``, or ``name.ext``
_PATH_LIKE = re.compile(
    r"`[^`\n]+`|\w/|(?<![\w.])[\w-]{2,}(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,9}\b"
)
NO_FILE = "Tasks: name no file (name each file to create or change, e.g. `src/app.py`)"
ONE_BULLET = "write each criterion as one bullet"
#: the most characters of the plan's own text a finding quotes
_QUOTED = 60


def step_findings(repo: PlanRepo, step: StepPlan) -> list[str]:
    """Why ``step`` is incomplete, one line each in the order the plan reads
    (empty: a reviewer would take it)."""
    from stepkit.planrepo.scaffold import FIRST_TITLE

    findings = []
    title = step.metadata.get("title")
    if not isinstance(title, str) and title is not None and title == _template_title():
        findings.append(f"title: still the template's ({_quote(PLACEHOLDER)})")
    elif _normal(step.title) in (_normal(FIRST_TITLE), _normal(PLACEHOLDER)):
        findings.append(f"title: still the template's ({_quote(step.title)})")
    found = outline(step.body)
    template = _template_lines()
    for name in EXAMPLE_SECTIONS:
        heading = found.find(name)
        if heading is None:
            if name in REQUIRED:
                findings.append(f"{name}: missing")
            continue
        lines = split_lines(without_comments(found.content(heading)))
        if not any(line.strip() for line in lines):
            if name in REQUIRED:
                findings.append(f"{name}: empty")
            continue
        kept = [text for text in map(_line_text, lines) if text in template[name]]
        if kept:
            quoted = ", ".join(_quote(text) for text in dict.fromkeys(kept))
            findings.append(f"{name}: still the template's text ({quoted})")
        elif name == "Tasks" and not _PATH_LIKE.search("".join(lines)):
            findings.append(NO_FILE)
        elif name == "Acceptance criteria":
            findings += [f"{name}: {finding}" for finding in _bullet_findings(lines)]
    findings += [
        f"depends_on: step {dep} is a later step"
        for dep in step.depends_on
        if dep > step.number and repo.step(dep) is not None
    ]
    return findings


def _bullet_findings(lines: list[str]) -> list[str]:
    """What in a criteria section is not one bullet per criterion: a
    paragraph outside any bullet, a bullet with sub-bullets (any marker).
    A line that continues a bullet (wrapped, or indented under it) is part
    of it; code blocks are left alone."""
    findings: list[str] = []
    top: int | None = None  # the indent of the criteria's own bullets
    bullet: str | None = None  # the criterion being read (None: outside any)
    nested = paragraph = blank = False
    fence = None
    for line in lines:
        was_fenced, fence = fence is not None, track_fence(line, fence)
        if was_fenced or fence is not None:
            continue
        if not line.strip():
            blank = True
            continue
        item = LIST_ITEM.match(line)
        indent = len(line[: len(line) - len(line.lstrip())].expandtabs(4))
        if item and (top is None or indent <= top):
            top, bullet, nested, paragraph = indent, item["text"], False, False
        elif item and bullet is not None:
            if not nested:
                findings.append(
                    f"{_quote(bullet)} has sub-bullets ({_quote(item['text'])}): {ONE_BULLET}"
                )
            nested = True
        elif not paragraph and (bullet is None or (blank and indent <= (top or 0))):
            findings.append(f"{_quote(line)} is not a bullet ({ONE_BULLET})")
            bullet, paragraph = None, True
        blank = False
    return findings


@functools.lru_cache(maxsize=1)
def _template_lines() -> dict[str, frozenset[str]]:
    """The text of each example section of the step template, line by line."""
    from stepkit.planrepo.scaffold import step_template

    found = outline(step_template())
    lines: dict[str, frozenset[str]] = {}
    for name in EXAMPLE_SECTIONS:
        heading = found.find(name)
        text = without_comments(found.content(heading)) if heading else ""
        lines[name] = frozenset(t for t in map(_line_text, split_lines(text)) if t)
    return lines


@functools.lru_cache(maxsize=1)
def _template_title() -> object:
    """The title the template's own front matter reads as (``title: {title}``
    is a YAML mapping): a step file copied from the template has it."""
    from stepkit.planrepo.document import parse_document
    from stepkit.planrepo.scaffold import step_template

    return parse_document(step_template())[0].get("title")


def _line_text(line: str) -> str:
    """A line as the template comparison sees it: no list marker, blanks collapsed."""
    return " ".join(strip_list_markers(line).split())


def _normal(title: str) -> str:
    return " ".join(title.split()).casefold()


def _quote(text: str) -> str:
    """``text`` quoted on one line, cut to :data:`_QUOTED` characters."""
    text = " ".join(text.split())
    return f'"{text if len(text) <= _QUOTED else text[: _QUOTED - 1] + "…"}"'
