"""A project type is one declaration whose gates answer through one hook."""

from types import ModuleType

from stepkit.plugins.projects._base import ProjectType

BAZEL = ProjectType(
    markers=("MODULE.bazel", "WORKSPACE"),
    name="bazel",
    tests=lambda d: "bazel test //..." if (d / "tests").is_dir() else None,
    build="bazel build //...",
)


def test_the_declared_gates_answer_through_the_one_gate_hook():
    assert sorted(BAZEL.hookimpls()) == ["stepkit_detect_project", "stepkit_gate_command"]
    assert sorted(ProjectType(name="bare").hookimpls()) == ["stepkit_detect_project"]


def test_a_declared_type_answers_through_pluggy_only_for_its_projects(stepkit_project, stepkit_pm):
    from stepkit.config import load_config
    from stepkit.workspace.gate_commands import project_types, resolve_commands

    plugin = ModuleType("bazel")  # hashable, as pluggy's subset hook callers need
    vars(plugin).update(BAZEL.hookimpls())
    bazel = stepkit_project({"MODULE.bazel": "", "tests/BUILD": ""})
    pm = stepkit_pm(bazel, plugin)
    assert project_types(pm, bazel) == ["bazel"]
    assert resolve_commands(pm, bazel, load_config(bazel)) == {
        "format": (None, None),
        "lint": (None, None),
        "build": ("bazel build //...", "bazel"),
        "tests": ("bazel test //...", "bazel"),
    }
    other = stepkit_project({"README": ""})
    assert project_types(stepkit_pm(other, plugin), other) == []
    assert resolve_commands(stepkit_pm(other, plugin), other, load_config(other))["build"] == (
        None,
        None,
    )
