"""Swift packages (``Package.swift``): ``swift build``; ``swift test`` when a
``Tests/`` directory exists (without test targets it fails with "no tests
found"); ``swift format`` when ``.swift-format`` configures it; ``swiftlint``
when ``.swiftlint.yml`` does."""

from __future__ import annotations

from pathlib import Path

from stepkit.plugins.projects import _shared


def commands(project_dir: Path) -> dict[str, str] | None:
    """SwiftPM's gate commands; None without a Package.swift."""
    if not (project_dir / "Package.swift").is_file():
        return None
    found = {"build": "swift build"}
    if (project_dir / "Tests").is_dir():
        found["tests"] = "swift test"
    if (project_dir / ".swift-format").is_file():
        found["format"] = "swift format --in-place --recursive ."
    if (project_dir / ".swiftlint.yml").is_file():
        found["lint"] = "swiftlint"
    return found


(stepkit_detect_project, stepkit_format_command, stepkit_lint_command,
 stepkit_build_command, stepkit_test_command) = _shared.gate_hooks("swift", commands)
