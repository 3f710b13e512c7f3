"""Swift packages (``Package.swift``): ``swift build``; ``swift test`` when a
``Tests/`` directory exists (without test targets it fails with "no tests
found"); ``swift format`` on the step's changed ``.swift`` files when
``.swift-format`` configures it; ``swiftlint``
when ``.swiftlint.yml`` does."""

from __future__ import annotations

from pathlib import Path

from stepkit.plugins.projects import MARKERS, _shared
from stepkit.plugins.projects._base import ProjectType

_FILES = _shared.changed_files(".swift")

SWIFT: ProjectType[Path] = ProjectType(
    markers=MARKERS[__name__],
    name="swift",
    format=lambda d: (
        f"swift format --in-place {_FILES}" if (d / ".swift-format").is_file() else None
    ),
    lint=lambda d: "swiftlint" if (d / ".swiftlint.yml").is_file() else None,
    build="swift build",
    tests=lambda d: "swift test" if (d / "Tests").is_dir() else None,
)
globals().update(SWIFT.hookimpls())
