"""Zig plugin: zig fmt and zig build; zig build test only when build.zig declares the step."""

from stepkit.testing import resolve_gates

ZIG = "stepkit.plugins.projects.zig"
BUILD_ZIG = """const std = @import("std");
pub fn build(b: *std.Build) void {
    const test_step = b.step("test", "Run unit tests");
    _ = test_step;
}
"""


def test_build_with_a_test_step(stepkit_project):
    project = stepkit_project({"build.zig": BUILD_ZIG})
    assert resolve_gates(project) == {
        "format": ("zig fmt {files:.zig}", ZIG),
        "lint": (None, None),
        "build": ("zig build", ZIG),
        "tests": ("zig build test", ZIG),
    }


def test_no_test_step_no_tests_gate(stepkit_project):
    project = stepkit_project({"build.zig": "pub fn build(b: *std.Build) void { _ = b; }\n"})
    assert resolve_gates(project)["tests"] == (None, None)
