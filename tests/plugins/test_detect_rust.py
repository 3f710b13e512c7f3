"""Rust detection on real shapes: clippy and rustfmt only when the project uses
them, a tracked Cargo.lock kept as it is, a workspace stub that gives way to
the JavaScript project beside it."""

from __future__ import annotations

import pytest

from stepkit.testing import resolve_gates
from stepkit.workspace.gate_commands import expand_files
from tests.support.detect import detected, need, run_shell
from tests.support.gitrepo import init_repo

RUST = "stepkit.plugins.projects.rust"
CRATE = '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n'
STUB = '[workspace]\nmembers = ["crates/core"]\nresolver = "2"\n'


@pytest.mark.parametrize(
    ("files", "lint"),
    [
        ({}, None),
        ({"clippy.toml": 'msrv = "1.70"\n'}, "cargo clippy --all-targets -- -D warnings"),
        (
            {
                ".github/workflows/ci.yml": "jobs:\n  c:\n    steps:\n      - run: cargo clippy -- -D warnings\n"
            },
            "cargo clippy -- -D warnings",
        ),  # CI's own command: stepkit.plugins.projects.ci
        (
            {"Cargo.toml": CRATE + '\n[lints.clippy]\nunwrap_used = "deny"\n'},
            "cargo clippy --all-targets -- -D warnings",
        ),
    ],
    ids=["not-configured", "clippy.toml", "ci-step", "lints-table"],
)
def test_clippy_only_when_the_project_configures_or_runs_it(stepkit_project, files, lint):
    project = stepkit_project({"Cargo.toml": CRATE, **files})
    plugin = "stepkit.plugins.projects.ci" if "ci.yml" in str(files) else RUST
    assert resolve_gates(project)["lint"] == (lint, plugin if lint else None)


def test_rustfmt_on_the_changed_files_when_ci_runs_cargo_fmt(stepkit_project):
    project = stepkit_project(
        {
            "Cargo.toml": CRATE,
            ".github/workflows/ci.yml": "jobs:\n  fmt:\n    steps:\n      - run: cargo fmt --all --check\n",
        }
    )
    assert detected(project)["format"] == "rustfmt --edition 2021 {files:.rs}"


def test_the_real_rustfmt_formats_the_changed_file(stepkit_project):
    need("rustfmt")
    tidy = "pub fn g() -> u8 {\n    2\n}\n"
    project = stepkit_project(
        {
            "Cargo.toml": CRATE,
            "rustfmt.toml": "",
            "src/lib.rs": "pub mod other;\npub fn f( )->u8{1}\n",
            "src/other.rs": tidy,
        }
    )
    command, _ = expand_files(
        resolve_gates(project)["format"][0], ["src/lib.rs", "Cargo.toml"]
    )  # the gate runner's
    done = run_shell(command, project)
    assert done.returncode == 0, done.stderr
    assert (project / "src/lib.rs").read_text() == "pub mod other;\npub fn f() -> u8 {\n    1\n}\n"
    # rustfmt also reads the modules a file declares; in a project that keeps
    # them formatted (it uses rustfmt) they do not change.
    assert (project / "src/other.rs").read_text() == tidy


def test_a_workspace_stub_gives_way_to_a_root_deno_json_with_tasks(stepkit_project, stepkit_pm):
    from stepkit.workspace.gate_commands import project_types

    project = stepkit_project(
        {
            "Cargo.toml": STUB,
            "crates/core/Cargo.toml": CRATE,
            "deno.json": '{"tasks": {"test": "deno test -A --unstable-ffi", "check": "deno check mod.ts"}}',
        }
    )
    assert project_types(stepkit_pm(project), project) == ["deno"]
    gates = detected(project)
    assert (gates["tests"], gates["build"]) == ("deno task test", "deno task check")


def test_a_workspace_stub_gives_way_to_package_json_scripts(stepkit_project):
    project = stepkit_project(
        {"Cargo.toml": STUB, "package.json": '{"scripts": {"test": "vitest run"}}'}
    )
    assert resolve_gates(project)["tests"] == ("npm run test", "stepkit.plugins.projects.node")


def test_a_root_package_or_a_lone_stub_stays_rust(stepkit_project):
    with_package = stepkit_project(
        {"Cargo.toml": CRATE + STUB, "deno.json": '{"tasks": {"test": "x"}}'}
    )
    lone_stub = stepkit_project(
        {"Cargo.toml": STUB, "package.json": '{"devDependencies": {"prettier": "3"}}'}
    )
    assert resolve_gates(with_package)["tests"] == ("cargo test --workspace", RUST)
    assert resolve_gates(lone_stub)["tests"] == ("cargo test --workspace", RUST)


def test_a_tracked_cargo_lock_gets_locked_and_stays_unchanged(tmp_path):
    need("cargo")
    env = {"CARGO_NET_OFFLINE": "true", "CARGO_TARGET_DIR": str(tmp_path / "target")}
    project = tmp_path / "crate"
    project.mkdir()
    (project / "Cargo.toml").write_text(CRATE)
    (project / "src").mkdir()
    (project / "src/lib.rs").write_text("pub fn f() -> u8 {\n    1\n}\n")
    assert run_shell("cargo generate-lockfile", project, **env).returncode == 0
    assert (
        resolve_gates(project)["build"][0] == "cargo build --locked --all-targets"
    )  # outside git: counts
    init_repo(project, {})
    build = detected(project)["build"]
    assert build == "cargo build --locked --all-targets"
    assert run_shell(build, project, **env).returncode == 0
    (project / "Cargo.toml").write_text(CRATE.replace("0.1.0", "0.2.0"))  # the lock is now stale
    locked = (project / "Cargo.lock").read_bytes()
    assert run_shell(build, project, **env).returncode != 0  # refuses rather than rewriting
    assert (project / "Cargo.lock").read_bytes() == locked
