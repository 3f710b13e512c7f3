"""Rust (``Cargo.toml``): cargo fmt, clippy with warnings as errors, build, test.

A workspace root (``[workspace]`` in Cargo.toml) gets ``--workspace`` so every
member is covered.
"""

from __future__ import annotations

from pathlib import Path

from stepkit.plugins.projects import _shared


def commands(project_dir: Path) -> dict[str, str] | None:
    """cargo's gate commands; None without a Cargo.toml."""
    manifest = project_dir / "Cargo.toml"
    if not manifest.is_file():
        return None
    workspace = " --workspace" if "workspace" in _shared.read_toml(manifest) else ""
    return {
        "format": "cargo fmt --all" if workspace else "cargo fmt",
        "lint": f"cargo clippy{workspace} --all-targets -- -D warnings",
        "build": f"cargo build{workspace} --all-targets",
        "tests": f"cargo test{workspace}",
    }


(stepkit_detect_project, stepkit_format_command, stepkit_lint_command,
 stepkit_build_command, stepkit_test_command) = _shared.gate_hooks("rust", commands)
