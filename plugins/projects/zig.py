"""Zig (``build.zig``): ``zig fmt`` on the step's changed ``.zig`` files, ``zig
build``, and ``zig build test`` only when build.zig declares a ``test`` step
(``b.step("test", …)``)."""

from __future__ import annotations

from pathlib import Path

from stepkit.lazyregex import lazy_compile
from stepkit.plugins.projects import MARKERS, _shared
from stepkit.plugins.projects._base import ProjectType

_TEST_STEP = lazy_compile(r"\.step\(\s*\"test\"")


def _tests(project_dir: Path) -> str | None:
    return (
        "zig build test"
        if _TEST_STEP.search(_shared.read_text(project_dir / "build.zig"))
        else None
    )


ZIG = ProjectType(
    markers=MARKERS[__name__],
    name="zig",
    format=f"zig fmt {_shared.changed_files('.zig')}",
    build="zig build",
    tests=_tests,
)
globals().update(ZIG.hookimpls())
