"""Go plugin: go tool commands from go.mod; golangci-lint only when configured."""

from stepkit.testing import resolve_gates

GO = "stepkit.plugins.projects.go"
GO_MOD = "module example.com/demo\n\ngo 1.22\n"


def test_a_module_gets_gofmt_vet_build_test(stepkit_project):
    project = stepkit_project({"go.mod": GO_MOD, "main.go": "package main\n"})
    assert resolve_gates(project) == {
        "format": ("gofmt -l -w {files:.go}", GO),
        "lint": ("go vet ./...", GO),
        "build": ("go build ./...", GO),
        "tests": ("go test ./...", GO),
    }


def test_golangci_config_switches_the_linter(stepkit_project):
    project = stepkit_project(
        {"go.mod": GO_MOD, ".golangci.yml": "linters:\n  enable: [errcheck]\n"}
    )
    assert resolve_gates(project)["lint"] == ("golangci-lint run ./...", GO)


def test_no_go_mod_no_opinion(stepkit_project):
    project = stepkit_project({"main.go": "package main\n"})
    assert all(answer == (None, None) for answer in resolve_gates(project).values())
