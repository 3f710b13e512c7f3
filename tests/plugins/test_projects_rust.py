"""Rust plugin: cargo commands from Cargo.toml; a workspace root covers every
member; rustfmt and clippy only when the project uses them."""

from stepkit.testing import resolve_gates

RUST = "stepkit.plugins.projects.rust"
CRATE = '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n'


def test_a_plain_crate_gets_build_and_test_only(stepkit_project):
    project = stepkit_project({"Cargo.toml": CRATE, "src/lib.rs": "pub fn f() {}\n"})
    assert resolve_gates(project) == {
        "format": (None, None),
        "lint": (None, None),
        "build": ("cargo build --all-targets", RUST),
        "tests": ("cargo test", RUST),
    }


def test_a_crate_that_uses_rustfmt_and_clippy(stepkit_project):
    project = stepkit_project(
        {
            "Cargo.toml": CRATE + '\n[lints.clippy]\npedantic = "warn"\n',
            "rustfmt.toml": "max_width = 100\n",
        }
    )
    gates = resolve_gates(project)
    assert gates["format"] == ("rustfmt --edition 2021 {files:.rs}", RUST)
    assert gates["lint"] == ("cargo clippy --all-targets -- -D warnings", RUST)


def test_a_workspace_root_covers_every_member(stepkit_project):
    project = stepkit_project(
        {
            "Cargo.toml": '[workspace]\nmembers = ["a"]\n\n[workspace.lints.clippy]\nall = "warn"\n',
            "a/Cargo.toml": CRATE,
        }
    )
    gates = resolve_gates(project)
    assert gates["tests"] == ("cargo test --workspace", RUST)
    assert gates["lint"][0] == "cargo clippy --workspace --all-targets -- -D warnings"


def test_detects_rust_only_with_a_cargo_manifest(stepkit_project, stepkit_pm):
    from stepkit.workspace.gate_commands import project_types

    crate = stepkit_project({"Cargo.toml": CRATE})
    other = stepkit_project({"src/main.rs": "fn main() {}\n"})
    assert project_types(stepkit_pm(crate), crate) == ["rust"]
    assert project_types(stepkit_pm(other), other) == []
    assert resolve_gates(other)["tests"] == (None, None)
