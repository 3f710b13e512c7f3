"""CMake (``CMakeLists.txt``): configure and build out of source in ``build/``,
then ``ctest`` — only when the top-level CMakeLists.txt enables testing
(``enable_testing()``, ``include(CTest)`` or ``add_test(``), since ctest
otherwise finds nothing and says so with exit code 0.  The tests command
builds first (a no-op after the build gate) so it stands on its own.
"""

from __future__ import annotations

import re
from pathlib import Path

from stepkit.plugins.projects import _shared
from stepkit.plugins.projects._base import ProjectType

_BUILD = "cmake -S . -B build && cmake --build build"
_TESTING = re.compile(
    r"^\s*(?:enable_testing\s*\(|add_test\s*\(|include\s*\(\s*CTest\s*\))", re.IGNORECASE | re.MULTILINE
)


def _tests(project_dir: Path) -> str | None:
    if not _TESTING.search(_shared.read_text(project_dir / "CMakeLists.txt")):
        return None
    return f"{_BUILD} && ctest --test-dir build --output-on-failure"


CMAKE = ProjectType(
    read=_shared.recognised_by("CMakeLists.txt"),
    name="cmake",
    build=_BUILD,
    tests=_tests,
)
globals().update(CMAKE.hookimpls())
