"""``stepkit init``'s plan repo: a first step plan from a commented template,
``NOTES.md`` and ``handoffs/``, written only where nothing exists yet."""

from __future__ import annotations

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
        step_file: _template("step_template.md").replace("{title}", title),
        plans_dir / "NOTES.md": _template("notes_template.md"),
        plans_dir / "handoffs" / ".gitkeep": "",
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


def _template(name: str) -> str:
    return resources.files("stepkit.planrepo").joinpath(name).read_text(encoding="utf-8")
