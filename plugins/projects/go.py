"""Go (``go.mod``): gofmt on the step's changed ``.go`` files, go vet (or
golangci-lint when configured), build, test."""

from __future__ import annotations

from pathlib import Path

from stepkit.hookspecs import hookimpl
from stepkit.plugins.projects import MARKERS, _shared
from stepkit.plugins.projects._base import ProjectType

_GOLANGCI_CONFIGS = (
    ".golangci.yml",
    ".golangci.yaml",
    ".golangci.toml",
    ".golangci.json",
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
    markers=MARKERS[__name__],
    name="go",
    format=f"gofmt -l -w {_shared.changed_files('.go')}",
    lint=_lint,
    build="go build ./...",
    tests="go test ./...",
    surface=_SURFACE,
)
globals().update(GO.hookimpls())


@hookimpl
def stepkit_added_file_reach(project_dir: Path, path: str, test_file: bool) -> str | None:
    """A ``_test.go`` file the step added is compiled into its package's test
    binary with the tests that were there before it: its ``init`` and its
    tests run in their process and can rebind the package's variables."""
    if not test_file or not path.endswith("_test.go") or not (project_dir / "go.mod").is_file():
        return None
    return "a test file, compiled into one test binary with its package's tests that were there before it"
