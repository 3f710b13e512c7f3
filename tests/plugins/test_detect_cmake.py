"""CMake: ctest that ran no test fails the gate; clang-format only with a config."""

from __future__ import annotations

import shutil

import pytest

from stepkit.testing import resolve_gates
from tests.support.detect import CMAKE_TESTS_BEHIND_AN_OPTION, detected, run_shell

CMAKE = "stepkit.plugins.projects.cmake"


def test_ctest_is_asked_to_fail_when_it_finds_no_test(stepkit_project):
    project = stepkit_project({"CMakeLists.txt": CMAKE_TESTS_BEHIND_AN_OPTION})
    assert detected(project)["tests"] == (
        "cmake -S . -B build && cmake --build build && "
        "ctest --test-dir build --output-on-failure --no-tests=error"
    )


@pytest.mark.skipif(
    not (shutil.which("cmake") and shutil.which("cc")), reason="needs cmake and a C compiler"
)
def test_the_real_ctest_fails_on_tests_behind_an_option_that_is_off(stepkit_project):
    project = stepkit_project(
        {"CMakeLists.txt": CMAKE_TESTS_BEHIND_AN_OPTION, "main.c": "int main(void) { return 0; }\n"}
    )
    command, _ = resolve_gates(project)["tests"]
    done = run_shell(command, project)
    assert done.returncode != 0
    assert "No tests were found" in done.stdout + done.stderr
    old = run_shell(command.replace(" --no-tests=error", ""), project)  # what stepkit used to run
    assert old.returncode == 0


def test_clang_format_on_the_changed_c_files_only_with_a_config(stepkit_project):
    with_config = stepkit_project(
        {"CMakeLists.txt": "project(x C)\n", ".clang-format": "BasedOnStyle: LLVM\n"}
    )
    without = stepkit_project({"CMakeLists.txt": "project(x C)\n"})
    assert resolve_gates(with_config)["format"] == (
        "clang-format -i {files:.c,.cc,.cpp,.cxx,.h,.hh,.hpp,.hxx}",
        CMAKE,
    )
    assert resolve_gates(without)["format"] == (None, None)
