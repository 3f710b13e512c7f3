"""Go (``go.mod``): gofmt, go vet (or golangci-lint when configured), build, test."""

from __future__ import annotations

from pathlib import Path

from stepkit.plugins.projects import _shared

_GOLANGCI_CONFIGS = (
    ".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json",
)


def commands(project_dir: Path) -> dict[str, str] | None:
    """Go's gate commands; None without a go.mod."""
    if not (project_dir / "go.mod").is_file():
        return None
    golangci = _shared.first_file(project_dir, _GOLANGCI_CONFIGS)
    return {
        "format": "gofmt -l -w .",
        "lint": "golangci-lint run ./..." if golangci else "go vet ./...",
        "build": "go build ./...",
        "tests": "go test ./...",
    }


(stepkit_detect_project, stepkit_format_command, stepkit_lint_command,
 stepkit_build_command, stepkit_test_command) = _shared.gate_hooks("go", commands)
