"""Build systems stepkit has no project plugin for, named so that ``stepkit
detect`` and ``stepkit verify`` say so instead of finding "nothing": a
meson, autotools, Bazel, SCons … project gets no gate from its build
system, and a verify whose gates all have no command is then not "ok".

Each build system is recognised by the files that define it at the
project root; its gates come only from CI (``stepkit.plugins.projects.ci``),
a task runner, ``[tool.stepkit.commands]`` or a plugin of the project's.
"""

from __future__ import annotations

from pathlib import Path

from stepkit.hookspecs import hookimpl

#: (build system, the root files that define it): the first file found is named.
BUILD_SYSTEMS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("meson", ("meson.build",)),
    ("autotools", ("configure.ac", "configure.in", "Makefile.am", "configure")),
    ("bazel", ("MODULE.bazel", "WORKSPACE", "WORKSPACE.bazel", "BUILD.bazel", "BUILD")),
    ("buck", ("BUCK", ".buckconfig")),
    ("pants", ("pants.toml",)),
    ("scons", ("SConstruct", "Sconstruct", "sconstruct")),
    ("premake", ("premake5.lua", "premake4.lua")),
    ("ninja", ("build.ninja",)),
    ("xmake", ("xmake.lua",)),
    ("waf", ("wscript",)),
    ("build2", ("buildfile",)),
    ("qmake", ("*.pro",)),
    ("sbt", ("build.sbt",)),
    ("mill", ("build.mill", "build.sc")),
    ("leiningen", ("project.clj",)),
    ("cabal", ("cabal.project", "stack.yaml", "*.cabal")),
    ("dune", ("dune-project",)),
    ("rebar3", ("rebar.config",)),
    ("nimble", ("*.nimble",)),
    ("dart", ("pubspec.yaml",)),
)


def unsupported_build_systems(project_dir: Path) -> list[str]:
    """``name (file)`` for each build system in ``project_dir`` stepkit has no plugin for."""
    found = []
    for name, files in BUILD_SYSTEMS:
        hit = next(
            (
                path
                for pattern in files
                for path in sorted(project_dir.glob(pattern))
                if path.is_file()
            ),
            None,
        )
        if hit is not None:
            found.append(f"{name} ({hit.name})")
    return found


@hookimpl
def stepkit_unsupported_build_systems(project_dir: Path) -> list[str]:
    return unsupported_build_systems(project_dir)
