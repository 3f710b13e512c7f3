"""Go (``go.mod``): gofmt, go vet (or golangci-lint when configured), build, test."""

from __future__ import annotations

from pathlib import Path

from stepkit.plugins.projects import _shared

from stepkit.hookspecs import hookimpl

_GOLANGCI_CONFIGS = (
    ".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json",
)


def _commands(project_dir: Path) -> dict[str, str]:
    if not (project_dir / "go.mod").is_file():
        return {}
    golangci = _shared.first_file(project_dir, _GOLANGCI_CONFIGS)
    return {
        "format": "gofmt -l -w .",
        "lint": "golangci-lint run ./..." if golangci else "go vet ./...",
        "build": "go build ./...",
        "tests": "go test ./...",
    }


@hookimpl
def stepkit_detect_project(project_dir: Path) -> str | None:
    return "go" if _commands(project_dir) else None


@hookimpl
def stepkit_format_command(project_dir: Path) -> str | None:
    return _commands(project_dir).get("format")


@hookimpl
def stepkit_lint_command(project_dir: Path) -> str | None:
    return _commands(project_dir).get("lint")


@hookimpl
def stepkit_build_command(project_dir: Path) -> str | None:
    return _commands(project_dir).get("build")


@hookimpl
def stepkit_test_command(project_dir: Path) -> str | None:
    return _commands(project_dir).get("tests")
