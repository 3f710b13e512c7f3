"""Step files from the commented template: ``stepkit init``'s plan repo (a
first step, ``NOTES.md`` and ``handoffs/``, written only where nothing exists
yet) and ``stepkit new``'s next step; the plan repo around the steps
``stepkit plan`` drafts."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

from stepkit.errors import UsageError

FIRST_TITLE = "First step"


def slug(title: str) -> str:
    """A file-name slug of ``title`` (``"First step"`` → ``first-step``)."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "step"


def scaffold(plans_dir: Path, title: str = FIRST_TITLE) -> list[Path]:
    """Write the plan repo under ``plans_dir``; returns the files written.
    Raises :class:`UsageError` naming the first thing that already exists,
    before anything is written."""
    step_file = plans_dir / "steps" / f"01-{slug(title)}.md"
    files = {
        step_file: step_template().replace("{title}", title),
        **_repo_files(plans_dir),
    }
    steps = plans_dir / "steps"
    existing = [path for path in files if path.exists()]
    if steps.is_dir() and any(steps.glob("*.md")):
        existing.insert(0, steps)
    if existing:
        raise UsageError(
            f"{existing[0]} already exists; stepkit init writes nothing over it "
            f"(nothing was written)"
        )
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(files)


def untouched_first_step(plans_dir: Path) -> Path | None:
    """The step file ``stepkit init`` wrote, when it is the plan's only step
    and still byte for byte the template: no one's work, which a drafted
    plan may take the place of; None otherwise."""
    steps = Path(plans_dir) / "steps"
    first = steps / f"01-{slug(FIRST_TITLE)}.md"
    try:
        if [p.name for p in steps.glob("*.md")] != [first.name]:
            return None
        text = first.read_text(encoding="utf-8")
    except OSError:
        return None
    return first if text == step_template().replace("{title}", FIRST_TITLE) else None


def complete_repo(plans_dir: Path) -> list[Path]:
    """Make ``plans_dir`` a plan repo for steps written by other means
    (``stepkit plan``): ``steps/``, and NOTES.md and ``handoffs/`` as
    :func:`scaffold` writes them where they are missing; returns the files written."""
    (plans_dir / "steps").mkdir(parents=True, exist_ok=True)
    written = []
    for path, text in _repo_files(plans_dir).items():
        if path.exists() or (path.parent != plans_dir and path.parent.exists()):
            continue  # a handoffs/ of its own needs no .gitkeep
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def _repo_files(plans_dir: Path) -> dict[Path, str]:
    """What a plan repo has beside its steps: NOTES.md and ``handoffs/``."""
    return {
        plans_dir / "NOTES.md": _template("notes_template.md"),
        plans_dir / "handoffs" / ".gitkeep": "",
    }


def new_step(plans_dir: Path, title: str, depends_on: list[int]) -> Path:
    """Write the next step's file (the highest number under ``steps/`` plus
    one, any file that starts with a number counting, readable or not) from
    the template; returns its path.  Raises :class:`UsageError`, with nothing
    written, for an empty title or a dependency on no earlier step."""
    steps_dir = plans_dir / "steps"
    if not steps_dir.is_dir():
        raise UsageError(f"no plan repo at {plans_dir} (run `stepkit init` first)")
    if not title.strip() or "\n" in title:
        raise UsageError('stepkit new needs a one-line title, e.g. stepkit new "Add login"')
    taken = step_numbers(steps_dir)
    number = max(taken, default=0) + 1
    later = [n for n in depends_on if n not in taken]
    if later:
        raise UsageError(
            f"--depends-on {later[0]}: there is no step {later[0]} before step {number} "
            f"(steps: {', '.join(map(str, sorted(set(taken)))) or 'none'}; nothing was written)"
        )
    path = steps_dir / f"{number:02d}-{slug(title)}.md"
    text = step_template().replace("{title}", yaml_scalar(title.strip()))
    text = text.replace("\nstep: 1\n", f"\nstep: {number}\n", 1)
    text = text.replace("\ndepends_on: []\n", f"\ndepends_on: {sorted(set(depends_on))}\n", 1)
    with path.open("x", encoding="utf-8") as handle:  # never over a file written meanwhile
        handle.write(text)
    return path


_NUMBER = re.compile(r"(\d+)")


def step_numbers(steps_dir: Path) -> list[int]:
    """The numbers of the step files under ``steps_dir``: every ``*.md``
    whose name starts with one counts, readable or not."""
    return [int(m.group(1)) for p in steps_dir.glob("*.md") if (m := _NUMBER.match(p.name))]


def yaml_scalar(text: str) -> str:
    """``text`` as a YAML scalar that reads back as itself: plain where it
    does, else double-quoted (a JSON string is a YAML double-quoted scalar)."""
    import yaml

    from stepkit.yamltext import load_yaml

    try:
        if load_yaml(f"title: {text}") == {"title": text}:
            return text
    except yaml.YAMLError:
        pass  # not plain YAML: quoted below
    return json.dumps(text, ensure_ascii=False)


def step_template() -> str:
    """The commented step template, ``{title}`` still in it."""
    return _template("step_template.md")


def _template(name: str) -> str:
    return resources.files("stepkit.planrepo").joinpath(name).read_text(encoding="utf-8")
