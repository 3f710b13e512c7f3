"""CMake plugin: out-of-source build; ctest only when the project enables testing."""

import shutil
import subprocess

import pytest

from stepkit.testing import resolve_gates

CMAKE = "stepkit.plugins.projects.cmake"
BUILD = "cmake -S . -B build && cmake --build build"
TESTED = """cmake_minimum_required(VERSION 3.20)
project(demo C)
add_executable(demo main.c)
enable_testing()
add_test(NAME runs COMMAND demo)
"""


def test_build_and_tests_when_testing_is_enabled(stepkit_project):
    project = stepkit_project({"CMakeLists.txt": TESTED})
    assert resolve_gates(project) == {
        "format": (None, None),
        "lint": (None, None),
        "build": (BUILD, CMAKE),
        "tests": (f"{BUILD} && ctest --test-dir build --output-on-failure --no-tests=error", CMAKE),
    }


def test_no_tests_gate_without_testing(stepkit_project):
    project = stepkit_project({"CMakeLists.txt": "project(demo C)\nadd_executable(demo main.c)\n"})
    assert resolve_gates(project)["tests"] == (None, None)


def test_include_ctest_enables_testing(stepkit_project):
    project = stepkit_project({"CMakeLists.txt": "project(demo C)\ninclude(CTest)\n"})
    assert resolve_gates(project)["tests"][1] == CMAKE


@pytest.mark.skipif(
    not (shutil.which("cmake") and shutil.which("cc")), reason="needs cmake and a C compiler"
)
def test_the_commands_really_build_and_test_a_project(stepkit_project):
    project = stepkit_project(
        {"CMakeLists.txt": TESTED, "main.c": "int main(void) { return 0; }\n"}
    )
    command, _ = resolve_gates(project)["tests"]
    done = subprocess.run(
        command, shell=True, check=False, cwd=project, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "100% tests passed" in done.stdout
