"""Go (``go.mod``): ``go test ./...``, and the other gates only where the
project shows it uses their tool (a config file, a CI line, a task-runner
target or a pre-commit hook), since a Go project whose CI runs only
``make test`` has never been held to gofmt or vet:

- format: gofmt on the step's changed ``.go`` files when the project runs
  ``gofmt``/``go fmt``/``goimports``, has a ``go-fmt`` hook, or its golangci
  config enables gofmt, gofumpt or goimports;
- lint: ``golangci-lint run ./...`` with a golangci config or a step running
  golangci-lint (its action too); else ``go vet ./...`` when the project runs it;
- build: ``go build ./...`` when the project runs ``go build``."""

from __future__ import annotations

import re
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


def _format(project_dir: Path) -> str | None:
    config = _shared.first_file(project_dir, _GOLANGCI_CONFIGS)
    shown = (
        _shared.runs(project_dir, "gofmt", "go fmt", "goimports", "gofumpt")
        or any(
            "fmt" in hook or "imports" in hook
            for hook in _shared.precommit_hooks(project_dir)
            if hook.startswith("go")
        )
        or (
            config is not None
            and re.search(r"\b(?:gofmt|gofumpt|goimports)\b", _shared.read_text(config))
        )
    )
    return f"gofmt -l -w {_shared.changed_files('.go')}" if shown else None


def _lint(project_dir: Path) -> str | None:
    if _shared.first_file(project_dir, _GOLANGCI_CONFIGS) or _shared.runs(
        project_dir, "golangci-lint", "golangci/golangci-lint-action"
    ):
        return "golangci-lint run ./..."
    return "go vet ./..." if _shared.runs(project_dir, "go vet") else None


#: What decides how go test, go vet, golangci-lint and gofmt judge, and how they start.
_SURFACE = {
    "tests": ["**/*_test.go", "**/testdata/**"],
    "config": [*_GOLANGCI_CONFIGS, "go.work"],
    "startup": ["bin/go", "bin/gofmt", "bin/golangci-lint"],
}

GO = ProjectType(
    markers=MARKERS[__name__],
    name="go",
    format=_format,
    lint=_lint,
    build=lambda project_dir: "go build ./..." if _shared.runs(project_dir, "go build") else None,
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
