"""Zig (``build.zig``): ``zig fmt .``, ``zig build``, and ``zig build test``
only when build.zig declares a ``test`` step (``b.step("test", …)``)."""

from __future__ import annotations

import re
from pathlib import Path

from stepkit.plugins.projects import _shared

_TEST_STEP = re.compile(r"\.step\(\s*\"test\"")


def commands(project_dir: Path) -> dict[str, str] | None:
    """zig's gate commands; None without a build.zig."""
    build = project_dir / "build.zig"
    if not build.is_file():
        return None
    found = {"format": "zig fmt .", "build": "zig build"}
    if _TEST_STEP.search(_shared.read_text(build)):
        found["tests"] = "zig build test"
    return found


(stepkit_detect_project, stepkit_format_command, stepkit_build_command,
 stepkit_test_command) = _shared.gate_hooks("zig", commands, gates=("format", "build", "tests"))
