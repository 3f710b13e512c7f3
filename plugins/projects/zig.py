"""Zig (``build.zig``): ``zig fmt .``, ``zig build``, and ``zig build test``
only when build.zig declares a ``test`` step (``b.step("test", …)``)."""

from __future__ import annotations

import re
from pathlib import Path

from stepkit.plugins.projects import _shared

from stepkit.hookspecs import hookimpl

_TEST_STEP = re.compile(r"\.step\(\s*\"test\"")


def _commands(project_dir: Path) -> dict[str, str]:
    build = project_dir / "build.zig"
    if not build.is_file():
        return {}
    commands = {"format": "zig fmt .", "build": "zig build"}
    if _TEST_STEP.search(_shared.read_text(build)):
        commands["tests"] = "zig build test"
    return commands


@hookimpl
def stepkit_detect_project(project_dir: Path) -> str | None:
    return "zig" if _commands(project_dir) else None


@hookimpl
def stepkit_format_command(project_dir: Path) -> str | None:
    return _commands(project_dir).get("format")


@hookimpl
def stepkit_build_command(project_dir: Path) -> str | None:
    return _commands(project_dir).get("build")


@hookimpl
def stepkit_test_command(project_dir: Path) -> str | None:
    return _commands(project_dir).get("tests")
