"""Swift packages (``Package.swift``): ``swift build``; ``swift test`` when a
``Tests/`` directory exists (without test targets it fails with "no tests
found"); ``swift format`` when ``.swift-format`` configures it; ``swiftlint``
when ``.swiftlint.yml`` does."""

from __future__ import annotations

from pathlib import Path

from stepkit.hookspecs import hookimpl


def _commands(project_dir: Path) -> dict[str, str]:
    if not (project_dir / "Package.swift").is_file():
        return {}
    commands = {"build": "swift build"}
    if (project_dir / "Tests").is_dir():
        commands["tests"] = "swift test"
    if (project_dir / ".swift-format").is_file():
        commands["format"] = "swift format --in-place --recursive ."
    if (project_dir / ".swiftlint.yml").is_file():
        commands["lint"] = "swiftlint"
    return commands


@hookimpl
def stepkit_detect_project(project_dir: Path) -> str | None:
    return "swift" if _commands(project_dir) else None


@hookimpl
def stepkit_format_command(project_dir: Path) -> str | None:
    return _commands(project_dir).get("format")


@hookimpl
def stepkit_lint_command(project_dir: Path) -> str | None:
    return _commands(project_dir).get("lint")


@hookimpl
def stepkit_build_command(project_dir: Path) -> str | None:
    return _commands(project_dir).get("build")


@hookimpl
def stepkit_test_command(project_dir: Path) -> str | None:
    return _commands(project_dir).get("tests")
