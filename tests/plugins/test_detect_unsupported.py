"""A build system stepkit has no plugin for is named by ``detect`` and
``verify``, and a verify in which no gate ran is not ``ok``."""

from __future__ import annotations

import json

import pytest

from stepkit.plugins.projects.unsupported import BUILD_SYSTEMS
from tests.support.cli import stepkit
from tests.support.detect import detect_json

CASES = [
    ("meson.build", "project('demo', 'c')\n", "meson (meson.build)"),
    ("configure.ac", "AC_INIT([demo], [1.0])\n", "autotools (configure.ac)"),
    ("Makefile.am", "bin_PROGRAMS = demo\n", "autotools (Makefile.am)"),
    ("MODULE.bazel", 'module(name = "demo")\n', "bazel (MODULE.bazel)"),
    ("WORKSPACE", "", "bazel (WORKSPACE)"),
    ("SConstruct", "Program('demo.c')\n", "scons (SConstruct)"),
    ("premake5.lua", 'workspace "demo"\n', "premake (premake5.lua)"),
    ("build.ninja", "rule cc\n  command = cc $in\n", "ninja (build.ninja)"),
    ("xmake.lua", 'target("demo")\n', "xmake (xmake.lua)"),
    ("demo.pro", "SOURCES = main.cpp\n", "qmake (demo.pro)"),
    ("build.sbt", 'name := "demo"\n', "sbt (build.sbt)"),
]


@pytest.mark.parametrize(("name", "text", "named"), CASES, ids=[c[0] for c in CASES])
def test_detect_names_the_unsupported_build_system(stepkit_project, name, text, named):
    project = stepkit_project({name: text, "demo.c": "int main(void) { return 0; }\n"})
    data = detect_json(project)
    assert data["unsupported"] == [named]
    assert all(g["command"] is None for g in data["gates"])


def test_every_listed_build_system_is_covered_by_a_case():
    assert {named.split()[0] for _, _, named in CASES} >= {
        "meson",
        "autotools",
        "bazel",
        "scons",
        "premake",
        "ninja",
        "xmake",
        "qmake",
        "sbt",
    }
    assert all(files for _, files in BUILD_SYSTEMS)


def test_a_supported_project_names_none(stepkit_project):
    assert detect_json(stepkit_project({"CMakeLists.txt": "project(x C)\n"}))["unsupported"] == []


def test_verify_is_not_ok_and_names_the_build_system(stepkit_project):
    project = stepkit_project({"meson.build": "project('demo', 'c')\n"})
    done = stepkit("verify", "--json", "--project-dir", str(project))
    data = json.loads(done.stdout)
    assert (done.returncode, data["ok"], data["unsupported"]) == (2, False, ["meson (meson.build)"])
    assert done.stderr.strip() == (
        "stepkit: error: no gate could run (build system not supported: meson (meson.build)): no command was "
        "found for format, lint, build or tests; `stepkit detect` shows what was looked for, stepkit.toml "
        "[commands] sets them"
    )
    text = stepkit("detect", "--project-dir", str(project), check=True).stdout
    assert "build system not supported: meson (meson.build)" in text
