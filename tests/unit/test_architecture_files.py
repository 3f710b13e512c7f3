"""docs/architecture.md's "Adding a language" names the files a new
language touches: each exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def named_files() -> list[str]:
    """The files of the section's table, its first column."""
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = doc.split("## Adding a language", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([^`]+)` \|", section, flags=re.MULTILINE)


def test_every_file_adding_a_language_names_exists():
    files = named_files()
    assert "plugins/runners/mix.py" in files
    assert [f for f in files if not (ROOT / f).is_file()] == []
