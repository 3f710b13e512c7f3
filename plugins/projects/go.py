"""Go (``go.mod``): gofmt on the step's changed ``.go`` files, go vet (or
golangci-lint when configured), build, test."""

from __future__ import annotations

from pathlib import Path

from stepkit.plugins.projects import _shared
from stepkit.plugins.projects._base import ProjectType

_GOLANGCI_CONFIGS = (
    ".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json",
)


def _lint(project_dir: Path) -> str:
    if _shared.first_file(project_dir, _GOLANGCI_CONFIGS):
        return "golangci-lint run ./..."
    return "go vet ./..."


#: What decides how go test, go vet, golangci-lint and gofmt judge, and how they start.
_SURFACE = {
    "tests": ["**/*_test.go", "**/testdata/**"],
    "config": [*_GOLANGCI_CONFIGS, "go.work"],
    "startup": ["bin/go", "bin/gofmt", "bin/golangci-lint"],
}

GO = ProjectType(
    read=_shared.recognised_by("go.mod"),
    name="go",
    format=f"gofmt -l -w {_shared.changed_files('.go')}",
    lint=_lint,
    build="go build ./...",
    tests="go test ./...",
    surface=_SURFACE,
)
globals().update(GO.hookimpls())
