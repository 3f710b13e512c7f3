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

_BUILD = "cmake -S . -B build && cmake --build build"
_TESTING = re.compile(
    r"^\s*(?:enable_testing\s*\(|add_test\s*\(|include\s*\(\s*CTest\s*\))", re.IGNORECASE | re.MULTILINE
)


def commands(project_dir: Path) -> dict[str, str] | None:
    """The build, and the tests when CMakeLists.txt enables testing; None
    without a CMakeLists.txt."""
    lists = project_dir / "CMakeLists.txt"
    if not lists.is_file():
        return None
    found = {"build": _BUILD}
    if _TESTING.search(_shared.read_text(lists)):
        found["tests"] = f"{_BUILD} && ctest --test-dir build --output-on-failure"
    return found


(stepkit_detect_project, stepkit_build_command,
 stepkit_test_command) = _shared.gate_hooks("cmake", commands, gates=("build", "tests"))
