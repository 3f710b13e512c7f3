"""Rust (``Cargo.toml``): cargo fmt, clippy with warnings as errors, build, test.

A workspace root (``[workspace]`` in Cargo.toml) gets ``--workspace`` so every
member is covered.
"""

from __future__ import annotations

from pathlib import Path

from stepkit.plugins.projects import _shared

from stepkit.hookspecs import hookimpl


def _commands(project_dir: Path) -> dict[str, str]:
    manifest = project_dir / "Cargo.toml"
    if not manifest.is_file():
        return {}
    workspace = " --workspace" if "workspace" in _shared.read_toml(manifest) else ""
    return {
        "format": "cargo fmt --all" if workspace else "cargo fmt",
        "lint": f"cargo clippy{workspace} --all-targets -- -D warnings",
        "build": f"cargo build{workspace} --all-targets",
        "tests": f"cargo test{workspace}",
    }


@hookimpl
def stepkit_detect_project(project_dir: Path) -> str | None:
    return "rust" if _commands(project_dir) else None


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
