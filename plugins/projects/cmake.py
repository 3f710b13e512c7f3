"""CMake (``CMakeLists.txt``): configure and build out of source in ``build/``,
then ``ctest`` — only when the top-level CMakeLists.txt enables testing
(``enable_testing()``, ``include(CTest)`` or ``add_test(``).  ctest runs with
``--no-tests=error``: a project whose tests sit behind an option that is off
(``if(ENABLE_TESTS)``) fails the gate instead of passing with "No tests were
found", and ``--output-on-failure`` so a failing test shows its output.  The
tests command builds first (a no-op after the build gate) so it stands on its
own.  ``clang-format -i`` formats the step's changed C and C++ files when the
project has a ``.clang-format``.
"""

from __future__ import annotations

import re
from pathlib import Path

from stepkit.lazyregex import lazy_compile
from stepkit.plugins.projects import MARKERS, _shared
from stepkit.plugins.projects._base import ProjectType

_BUILD = "cmake -S . -B build && cmake --build build"
_CLANG_FORMAT = (".clang-format", "_clang-format")
_C_FILES = _shared.changed_files(".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx")
_TESTING = lazy_compile(
    r"^\s*(?:enable_testing\s*\(|add_test\s*\(|include\s*\(\s*CTest\s*\))",
    re.IGNORECASE | re.MULTILINE,
)


def _tests(project_dir: Path) -> str | None:
    if not _TESTING.search(_shared.read_text(project_dir / "CMakeLists.txt")):
        return None
    return f"{_BUILD} && ctest --test-dir build --output-on-failure --no-tests=error"


CMAKE = ProjectType(
    markers=MARKERS[__name__],
    name="cmake",
    format=lambda d: (
        f"clang-format -i {_C_FILES}" if _shared.first_file(d, _CLANG_FORMAT) else None
    ),
    build=_BUILD,
    tests=_tests,
)
globals().update(CMAKE.hookimpls())
