"""Go plugin: go tool commands from go.mod; golangci-lint only when configured."""

from stepkit.testing import resolve_gates

GO = "stepkit.plugins.projects.go"
GO_MOD = "module example.com/demo\n\ngo 1.22\n"


def test_a_module_that_shows_no_other_tool_gets_only_go_test(stepkit_project):
    project = stepkit_project({"go.mod": GO_MOD, "main.go": "package main\n"})
    assert resolve_gates(project) == {
        "format": (None, None),
        "lint": (None, None),
        "build": (None, None),
        "tests": ("go test ./...", GO),
    }


def test_gofmt_vet_and_build_where_the_project_runs_them(stepkit_project):
    makefile = "check:\n\tgofmt -l .\n\tgo vet ./...\n\tgo build ./...\n"
    project = stepkit_project({"go.mod": GO_MOD, "main.go": "package main\n", "Makefile": makefile})
    gates = resolve_gates(project)
    assert (gates["format"], gates["lint"], gates["build"]) == (
        ("gofmt -l -w {files:.go}", GO),
        ("go vet ./...", GO),
        ("go build ./...", GO),
    )


def test_a_golangci_config_enabling_gofmt_shows_the_formatter(stepkit_project):
    config = "version: '2'\nformatters:\n  enable:\n    - gofmt\n"
    project = stepkit_project({"go.mod": GO_MOD, ".golangci.yaml": config})
    gates = resolve_gates(project)
    assert gates["format"] == ("gofmt -l -w {files:.go}", GO)
    assert gates["lint"] == ("golangci-lint run ./...", GO)


def test_golangci_config_switches_the_linter(stepkit_project):
    project = stepkit_project(
        {"go.mod": GO_MOD, ".golangci.yml": "linters:\n  enable: [errcheck]\n"}
    )
    assert resolve_gates(project)["lint"] == ("golangci-lint run ./...", GO)


def test_no_go_mod_no_opinion(stepkit_project):
    project = stepkit_project({"main.go": "package main\n"})
    assert all(answer == (None, None) for answer in resolve_gates(project).values())
