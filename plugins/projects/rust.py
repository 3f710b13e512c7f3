"""Rust (``Cargo.toml``): rustfmt, clippy, build, test — rustfmt and clippy
only when the project shows it uses them.

- format: ``rustfmt`` on the step's changed ``.rs`` files (with the edition
  Cargo.toml sets) when the project uses rustfmt: a ``rustfmt.toml`` /
  ``.rustfmt.toml``, or a task runner, CI step or hook running ``cargo fmt``
  or ``rustfmt``.  ``cargo fmt`` itself formats the whole tree, so it is
  never the gate's command.
- lint: ``cargo clippy --all-targets -- -D warnings`` when the project
  configures clippy (``clippy.toml`` / ``.clippy.toml``, ``[lints.clippy]``
  or ``[workspace.lints.clippy]``) or runs it; no lint gate otherwise (the
  build gate compiles with rustc's own warnings).
- build ``cargo build --all-targets``, tests ``cargo test``.

A workspace root (``[workspace]`` in Cargo.toml) gets ``--workspace`` so every
member is covered; with a tracked ``Cargo.lock`` cargo gets ``--locked`` so no
gate rewrites it.  A ``Cargo.toml`` that is only a ``[workspace]`` (no root
``[package]``) beside a ``deno.json`` with tasks or a ``package.json`` with
scripts is not a Rust project at the root: the JavaScript side answers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from stepkit.plugins.projects import MARKERS, _shared
from stepkit.plugins.projects._base import ProjectType

_RUSTFMT_CONFIGS = ("rustfmt.toml", ".rustfmt.toml")
_CLIPPY_CONFIGS = ("clippy.toml", ".clippy.toml")


class _Cargo(NamedTuple):
    dir: Path
    manifest: dict[str, Any]
    #: ``" --workspace"`` at a workspace root, else ``""``.
    workspace: str
    #: ``" --locked"`` when git tracks Cargo.lock, else ``""``.
    locked: str


def _read(project_dir: Path) -> _Cargo | None:
    """The manifest; None without one, or for a workspace stub the
    JavaScript side of the project outranks."""
    path = project_dir / "Cargo.toml"
    if not path.is_file():
        return None
    manifest = _shared.read_toml(path)
    if "package" not in manifest and "workspace" in manifest and _javascript_tasks(project_dir):
        return None
    workspace = " --workspace" if "workspace" in manifest else ""
    locked = " --locked" if _shared.is_tracked(project_dir, "Cargo.lock") else ""
    return _Cargo(project_dir, manifest, workspace, locked)


def _javascript_tasks(project_dir: Path) -> bool:
    """A root deno config with tasks, or a package.json with scripts."""
    config = _shared.first_file(project_dir, ("deno.json", "deno.jsonc"))
    if config and _shared.read_json(config, comments=True).get("tasks"):
        return True
    return bool(_shared.package_scripts(project_dir / "package.json"))


def _format(cargo: _Cargo) -> str | None:
    uses = _shared.first_file(cargo.dir, _RUSTFMT_CONFIGS) or _shared.runs(
        cargo.dir, "cargo fmt", "rustfmt"
    )
    if not uses:
        return None
    edition = _shared.table(cargo.manifest, "package").get("edition") or _shared.table(
        cargo.manifest, "workspace", "package"
    ).get("edition")
    flag = f" --edition {edition}" if isinstance(edition, str) and edition.isdigit() else ""
    return f"rustfmt{flag} {_shared.changed_files('.rs')}"


def _lint(cargo: _Cargo) -> str | None:
    configured = (
        _shared.first_file(cargo.dir, _CLIPPY_CONFIGS)
        or "clippy" in _shared.table(cargo.manifest, "lints")
        or "clippy" in _shared.table(cargo.manifest, "workspace", "lints")
        or _shared.runs(cargo.dir, "cargo clippy")
    )
    return (
        f"cargo clippy{cargo.workspace}{cargo.locked} --all-targets -- -D warnings"
        if configured
        else None
    )


#: What decides how cargo test, clippy and rustfmt judge, and how they start.
_SURFACE = {
    "tests": ["tests/**", "benches/**", "**/tests/**"],
    "config": [
        "Cargo.toml#lints,workspace.lints,lib,test,bench,bin,profile,features",
        "**/Cargo.toml#lints,lib,test,bench,features",
        # cargo reads the config of every directory from where it runs up
        "**/.cargo/config",
        "**/.cargo/config.toml",
        "rustfmt.toml",
        ".rustfmt.toml",
        "clippy.toml",
        ".clippy.toml",
        "rust-toolchain",
        "rust-toolchain.toml",
        "build.rs",
    ],
    "startup": ["bin/cargo", "bin/rustc", "bin/rustfmt"],
}

RUST = ProjectType(
    markers=MARKERS[__name__],
    read=_read,
    name="rust",
    format=_format,
    lint=_lint,
    build=lambda cargo: f"cargo build{cargo.workspace}{cargo.locked} --all-targets",
    tests=lambda cargo: f"cargo test{cargo.workspace}{cargo.locked}",
    surface=_SURFACE,
)
globals().update(RUST.hookimpls())
