"""Rust (``Cargo.toml``): cargo fmt, clippy with warnings as errors, build, test.

A workspace root (``[workspace]`` in Cargo.toml) gets ``--workspace`` so every
member is covered.
"""

from __future__ import annotations

from pathlib import Path

from stepkit.plugins.projects import _shared
from stepkit.plugins.projects._base import ProjectType


def _workspace_flag(project_dir: Path) -> str | None:
    """``" --workspace"`` at a workspace root, ``""`` for one package, None
    without a Cargo.toml."""
    manifest = project_dir / "Cargo.toml"
    if not manifest.is_file():
        return None
    return " --workspace" if "workspace" in _shared.read_toml(manifest) else ""


RUST = ProjectType(
    read=_workspace_flag,
    name="rust",
    format=lambda workspace: "cargo fmt --all" if workspace else "cargo fmt",
    lint=lambda workspace: f"cargo clippy{workspace} --all-targets -- -D warnings",
    build=lambda workspace: f"cargo build{workspace} --all-targets",
    tests=lambda workspace: f"cargo test{workspace}",
)
globals().update(RUST.hookimpls())
