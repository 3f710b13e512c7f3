"""One finding of a lint or build gate, as a lint tool's declaration reads it
(:mod:`stepkit.workspace.tools`) and the baseline keys it
(:mod:`stepkit.workspace.lintkeys`)."""

from __future__ import annotations

from dataclasses import dataclass

Level = str  # "error" | "warning" | "note"


@dataclass(frozen=True)
class Diagnostic:
    """One finding: its file, rule (may be empty), message and level."""

    file: str
    rule: str
    message: str
    level: Level = "error"

    def key(self) -> str:
        what = f"{self.rule} {self.message}" if self.rule else self.message
        return f"{self.file}: {' '.join(what.split())}"


def level(word: str) -> Level:
    """The level a tool's word for it names (``error``, ``Warning``, ``fatal``,
    ``failure-note`` …): error, warning or note."""
    word = word.lower()
    if word.startswith("error") or word in ("fatal", "failure-note"):
        return "note" if word == "failure-note" else "error"
    return "warning" if word.startswith("warn") else "note"
