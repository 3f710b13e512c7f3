""".NET plugin: dotnet format/build/test, naming the solution or project only when unambiguous."""

from stepkit.testing import resolve_gates

DOTNET = "stepkit.plugins.projects.dotnet"


def test_a_single_solution_is_named(stepkit_project):
    project = stepkit_project({"App.sln": "", "src/App/App.csproj": "<Project/>"})
    assert resolve_gates(project) == {
        "format": ("dotnet format App.sln --include {files:.cs,.vb}", DOTNET),
        "lint": (None, None),
        "build": ("dotnet build App.sln", DOTNET),
        "tests": ("dotnet test App.sln", DOTNET),
    }


def test_a_single_project_file_with_a_space_is_quoted(stepkit_project):
    project = stepkit_project({"My App.fsproj": "<Project/>"})
    assert resolve_gates(project)["build"] == ("dotnet build 'My App.fsproj'", DOTNET)


def test_several_solutions_are_not_guessed(stepkit_project, stepkit_pm):
    from stepkit.workspace.gate_commands import project_types

    project = stepkit_project({"A.sln": "", "B.sln": ""})
    assert project_types(stepkit_pm(project), project) == ["dotnet"]
    assert all(answer == (None, None) for answer in resolve_gates(project).values())


def test_a_solution_beats_several_projects(stepkit_project):
    project = stepkit_project({"All.slnx": "", "A.csproj": "", "B.vbproj": ""})
    assert resolve_gates(project)["tests"] == ("dotnet test All.slnx", DOTNET)
