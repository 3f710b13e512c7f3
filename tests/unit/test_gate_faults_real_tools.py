"""Environment faults and test runs that ran no test, told from the real
tools' real output: each gate runs the tool in a tmp dir, through the one
gate runner.  A tool this machine lacks skips its test with the reason.

Nothing here reaches a real registry: the unreachable ones are ``.invalid``
hosts (RFC 2606: they never resolve), rustup may not install a toolchain
(``RUSTUP_AUTO_INSTALL=0`` and a closed dist server), docker talks to no
engine."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stepkit.workspace.gates import run_gate
from tests.support.detect import CMAKE_TESTS_BEHIND_AN_OPTION
from tests.support.evidence_logs import evidence_pm
from tests.support.gitrepo import init_repo, write_files

PY = sys.executable
NO_TEST = "the command ran no test. This is NOT evidence that tests passed"


def tool(name: str) -> str:
    """The tool's path (this venv's bin first), or skip the test."""
    found = shutil.which(name, path=f"{Path(PY).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    if found is None:
        pytest.skip(f"{name} is not installed on this machine")
    return found


@pytest.fixture
def pm():
    return evidence_pm()


def gate(
    pm,
    project: Path,
    command: str,
    name: str = "build",
    env: dict[str, str] | None = None,
    timeout=180,
):
    return run_gate(
        name,
        command,
        "testplugin",
        project,
        project.parent / "logs",
        timeout,
        timeout,
        pm,
        env={**os.environ, **(env or {})},
    )


# -- make wrapping a missing tool ---------------------------------------------


@pytest.mark.parametrize(
    "recipe",
    [
        "clang-format -i src/x.c",  # make runs it itself: "make: clang-format: No such file or directory"
        "clang-format --dry-run -Werror src/*.c",  # through the shell: "/bin/sh: 1: clang-format: not found"
    ],
)
def test_make_wrapping_a_missing_tool_is_an_environment_fault_naming_it(pm, tmp_path, recipe):
    tool("make")
    project = write_files(
        tmp_path / "p", {"Makefile": f"lint:\n\t{recipe}\n", "src/x.c": "int x;\n"}
    )
    result = gate(pm, project, "make lint", env={"PATH": "/usr/bin:/bin"})
    assert (result.status, result.exit_code) == ("error", 2)
    assert result.summary == "make: clang-format: command not found (not installed or not on PATH)"
    assert "environment fault, not a failure of the code" in result.evidence
    assert "Error 127" in result.evidence


def test_a_nested_make_wrapping_a_missing_tool_is_an_environment_fault(pm, tmp_path):
    tool("make")
    project = write_files(
        tmp_path / "p", {"Makefile": "all:\n\t$(MAKE) lint\nlint:\n\tclang-format -i x.c\n"}
    )
    result = gate(pm, project, "make", env={"PATH": "/usr/bin:/bin"})
    assert (result.status, result.exit_code) == ("error", 2)
    assert result.summary.startswith("make: clang-format: command not found")


def test_a_failing_test_that_prints_command_not_found_stays_a_failure(pm, tmp_path):
    tool("make")
    project = write_files(
        tmp_path / "p",
        {
            "Makefile": f"test:\n\t{PY} -m pytest -q -p no:cacheprovider\n",
            "test_x.py": "def test_tool():\n    print('/bin/sh: 1: clang-format: not found')\n    assert False\n",
        },
    )
    result = gate(pm, project, "make test", name="tests")
    assert (result.status, result.exit_code) == ("fail", 2)
    assert "1 failed" in result.summary


def test_a_failing_test_whose_tool_is_missing_under_pytest_stays_a_failure(pm, tmp_path):
    project = write_files(
        tmp_path / "p",
        {
            "test_x.py": (
                "import subprocess\n\n"
                "def test_formats():\n"
                "    out = subprocess.run('clang-format --version', shell=True, capture_output=True, text=True)\n"
                "    print(out.stderr)\n"
                "    assert out.returncode == 0\n"
            )
        },
    )
    result = gate(pm, project, f"{PY} -m pytest -q -p no:cacheprovider", name="tests")
    assert result.status == "fail"


# -- rustup and cargo ---------------------------------------------------------

#: rustup may neither download nor install anything: auto-install off, and a
#: dist server on a closed local port in case this rustup ignores that switch
NO_RUSTUP_DOWNLOAD = {
    "RUSTUP_AUTO_INSTALL": "0",
    "RUSTUP_DIST_SERVER": "http://127.0.0.1:9",
    "RUSTUP_UPDATE_ROOT": "http://127.0.0.1:9/rustup",
}


def cargo_project(root: Path, extra: str = "") -> Path:
    return write_files(
        root,
        {
            "Cargo.toml": f'[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n{extra}',
            "src/main.rs": "fn main() {}\n",
        },
    )


def test_a_toolchain_that_is_not_installed_is_an_environment_fault(pm, tmp_path):
    tool("cargo"), tool("rustup")
    project = cargo_project(tmp_path / "p")
    (project / "rust-toolchain.toml").write_text('[toolchain]\nchannel = "1.0.0"\n')
    result = gate(pm, project, "cargo build", env=NO_RUSTUP_DOWNLOAD)
    if "is not installed" not in result.evidence:
        pytest.skip(f"this rustup did not report the toolchain as missing: {result.summary}")
    assert result.status == "error"
    assert result.summary.startswith("rustup: toolchain 1.0.0-") and result.summary.endswith(
        "is not installed"
    )


def test_an_unreachable_cargo_registry_is_an_environment_fault(pm, tmp_path):
    tool("cargo")
    project = cargo_project(tmp_path / "p", 'serde = "1"\n')
    write_files(
        project,
        {
            ".cargo/config.toml": (
                '[source.crates-io]\nreplace-with = "unreachable"\n'
                '[source.unreachable]\nregistry = "sparse+https://index.invalid/"\n[net]\nretry = 0\n'
            )
        },
    )
    result = gate(pm, project, "cargo build", env={"CARGO_HOME": str(tmp_path / "cargo-home")})
    assert result.status == "error", result.evidence
    assert (
        result.summary.startswith("cargo: registry unreachable (")
        and "index.invalid" in result.summary
    )


def test_cargo_running_0_tests_is_not_run(pm, tmp_path):
    tool("cargo")
    project = cargo_project(tmp_path / "p")
    result = gate(
        pm, project, "cargo test", name="tests", env={"CARGO_TARGET_DIR": str(tmp_path / "target")}
    )
    assert (result.status, result.exit_code) == ("not_run", 0)
    assert result.summary == f"cargo: running 0 tests in each of 1 test target; {NO_TEST}"
    assert NO_TEST in result.evidence


# -- cmake / ctest with the tests behind an option ------------------------------


@pytest.mark.parametrize("flags, code", [("", 0), (" --no-tests=error", 8)])
def test_ctest_with_the_tests_behind_an_option_is_not_run(pm, tmp_path, flags, code):
    tool("cmake"), tool("ctest")
    project = write_files(
        tmp_path / "p",
        {
            "CMakeLists.txt": CMAKE_TESTS_BEHIND_AN_OPTION,
            "main.c": "int main(void) { return 0; }\n",
        },
    )
    subprocess.run(
        ["cmake", "-S", ".", "-B", "build"], cwd=project, check=True, capture_output=True
    )
    result = gate(pm, project, f"ctest --test-dir build{flags}", name="tests")
    assert (result.status, result.exit_code) == ("not_run", code)
    assert result.summary == f"ctest: no tests were found (exit {code}); {NO_TEST}"
    assert "NOT RUN" in result.status_line() and "NOT evidence" in result.status_line()

    subprocess.run(
        ["cmake", "-S", ".", "-B", "build", "-DENABLE_TESTS=ON"],
        cwd=project,
        check=True,
        capture_output=True,
    )
    subprocess.run(["cmake", "--build", "build"], cwd=project, check=True, capture_output=True)
    ran = gate(pm, project, f"ctest --test-dir build{flags}", name="tests")
    assert (ran.status, ran.exit_code) == ("pass", 0)


# -- pytest -------------------------------------------------------------------


def test_pytest_exit_5_is_not_run_and_a_test_that_runs_is_a_pass(pm, tmp_path):
    project = write_files(tmp_path / "p", {"mod.py": "def helper():\n    return 1\n"})
    result = gate(pm, project, f"{PY} -m pytest -p no:cacheprovider", name="tests")
    assert (result.status, result.exit_code) == ("not_run", 5)
    assert result.summary == f"pytest: no tests collected (exit 5); {NO_TEST}"
    assert f"NOT RUN: pytest: no tests collected (exit 5): {NO_TEST}" in result.evidence

    (project / "test_mod.py").write_text(
        "import mod\n\ndef test_helper():\n    assert mod.helper() == 1\n"
    )
    assert gate(pm, project, f"{PY} -m pytest -p no:cacheprovider", name="tests").status == "pass"
    deselected = gate(
        pm, project, f"{PY} -m pytest -p no:cacheprovider -k nothing_matches", name="tests"
    )
    assert (deselected.status, deselected.exit_code) == ("not_run", 5)
    assert deselected.summary.startswith("pytest: every test was deselected (exit 5)")


def test_make_wrapping_pytest_exit_5_is_not_run(pm, tmp_path):
    tool("make")
    project = write_files(
        tmp_path / "p", {"Makefile": f"test:\n\t{PY} -m pytest -q -p no:cacheprovider\n"}
    )
    result = gate(pm, project, "make test", name="tests")
    assert (result.status, result.exit_code) == ("not_run", 2)


def test_no_tests_is_only_for_the_tests_gate(pm, tmp_path):
    project = write_files(tmp_path / "p", {"mod.py": "x = 1\n"})
    assert gate(pm, project, f"{PY} -m pytest -p no:cacheprovider", name="build").status == "fail"


# -- npm / npx ----------------------------------------------------------------


def npm_env(tmp_path: Path) -> dict[str, str]:
    return {
        "npm_config_cache": str(tmp_path / "npm-cache"),
        "npm_config_update_notifier": "false",
        "npm_config_audit": "false",
        "npm_config_fund": "false",
    }


def test_npx_of_a_package_without_that_bin_is_an_environment_fault(pm, tmp_path):
    tool("npx")
    project = write_files(
        tmp_path / "p",
        {
            "package.json": '{"name": "demo", "version": "1.0.0", "dependencies": {"nobin": "1.0.0"}}\n',
            "node_modules/nobin/package.json": '{"name": "nobin", "version": "1.0.0"}\n',
        },
    )
    result = gate(pm, project, "npx nobin", name="lint", env=npm_env(tmp_path))
    assert (result.status, result.exit_code) == ("error", 1), result.evidence
    assert result.summary.startswith("npx: could not determine executable to run")


def test_an_npm_script_whose_tool_is_missing_names_it(pm, tmp_path):
    tool("npm")
    project = write_files(
        tmp_path / "p",
        {"package.json": '{"name": "demo", "version": "1.0.0", "scripts": {"lint": "eslint ."}}\n'},
    )
    result = gate(pm, project, "npm run lint", name="lint", env=npm_env(tmp_path))
    assert (result.status, result.exit_code) == ("error", 127)
    assert result.summary == "eslint: command not found (not installed or not on PATH)"


def test_an_unreachable_npm_registry_is_an_environment_fault(pm, tmp_path):
    tool("npm")
    project = write_files(
        tmp_path / "p", {"package.json": '{"name": "demo", "version": "1.0.0"}\n'}
    )
    result = gate(
        pm,
        project,
        "npm install --registry=https://registry.invalid/ --fetch-retries=0 left-pad",
        env=npm_env(tmp_path),
    )
    assert (result.status, result.exit_code) == ("error", 1), result.evidence
    assert result.summary == "npm: registry unreachable (getaddrinfo ENOTFOUND registry.invalid)"


# -- uv, poetry, pip ----------------------------------------------------------

PYPROJECT = (
    '[project]\nname = "demo"\nversion = "0.1.0"\nrequires-python = ">=3.9"\ndependencies = []\n'
)


def test_uv_run_of_a_missing_tool_names_it(pm, tmp_path):
    uv = tool("uv")
    project = write_files(tmp_path / "p", {"pyproject.toml": PYPROJECT})
    result = gate(
        pm,
        project,
        f"{uv} run --no-project --offline no-such-checker-3b1 .",
        env={"UV_CACHE_DIR": str(tmp_path / "uv-cache"), "UV_PYTHON_DOWNLOADS": "never"},
    )
    assert (result.status, result.exit_code) == ("error", 2), result.evidence
    assert result.summary == "uv: failed to spawn no-such-checker-3b1 (not installed)"
    assert "os error 2" in result.evidence


def test_an_unreachable_uv_index_is_an_environment_fault(pm, tmp_path):
    uv = tool("uv")
    project = write_files(tmp_path / "p", {"pyproject.toml": PYPROJECT})
    result = gate(
        pm,
        project,
        f"{uv} pip install --python {PY} --dry-run --no-cache "
        "--index-url https://pypi.invalid/simple left-pad",
        env={"UV_HTTP_RETRIES": "0", "UV_CACHE_DIR": str(tmp_path / "uv-cache")},
    )
    assert result.status == "error", result.evidence
    assert result.summary.startswith(
        "uv: package index unreachable at https://pypi.invalid/simple/left-pad/"
    )


@pytest.mark.parametrize(
    "command",
    [
        # what tox-uv ran for attrs's lint and typing envs (tox.ini asks for Python 3.14)
        "venv -p 3.12 --python-preference only-managed {tmp}/venv",
        "python install 3.12",
    ],
)
def test_a_python_uv_cannot_download_is_named_as_such(pm, tmp_path, command):
    uv = tool("uv")
    project = write_files(tmp_path / "p", {"pyproject.toml": PYPROJECT})
    result = gate(
        pm,
        project,
        f"{uv} {command.format(tmp=tmp_path)}",
        env={
            "UV_PYTHON_INSTALL_MIRROR": "https://python.invalid/releases",
            "UV_PYTHON_INSTALL_DIR": str(tmp_path / "pythons"),
            "UV_HTTP_RETRIES": "0",
            "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
        },
    )
    assert result.status == "error", result.evidence
    assert result.summary.startswith("uv: could not download Python 3.12."), result.evidence
    assert "python.invalid" in result.evidence


def test_prek_that_cannot_clone_a_hook_repository_is_an_environment_fault(pm, tmp_path):
    prek = tool("prek")
    project = init_repo(
        tmp_path / "p",
        {
            ".pre-commit-config.yaml": "repos:\n  - repo: https://hooks.invalid/acme/hooks\n"
            "    rev: v1.0.0\n    hooks:\n      - id: fmt\n",
            "a.py": "x = 1\n",
        },
    )
    result = gate(
        pm, project, f"{prek} run fmt --files a.py", env={"PREK_HOME": str(tmp_path / "home")}
    )
    assert result.status == "error", result.evidence
    assert result.summary.startswith(
        "prek: cannot set up its hooks (fatal: unable to access 'https://hooks.invalid/acme/hooks/'"
    ), result.summary


@pytest.mark.parametrize("manager, run", [("yarn", ""), ("pnpm", "exec ")])
def test_a_node_tool_missing_from_node_modules_is_an_environment_fault(pm, tmp_path, manager, run):
    binary = tool(manager)
    project = write_files(tmp_path / "p", {"package.json": '{"name": "p", "version": "1.0.0"}\n'})
    result = gate(pm, project, f"{binary} {run}no-such-checker-3b1 --check a.js", name="format")
    assert result.status == "error", result.evidence
    assert result.summary == (
        "no-such-checker-3b1: command not found (not installed in the project's node_modules)"
    )


def test_poetry_run_of_a_missing_tool_names_it(pm, tmp_path):
    poetry = tool("poetry")
    project = write_files(
        tmp_path / "p", {"pyproject.toml": PYPROJECT + "\n[tool.poetry]\npackage-mode = false\n"}
    )
    result = gate(
        pm,
        project,
        f"{poetry} run no-such-checker-3b1 .",
        env={
            "POETRY_VIRTUALENVS_IN_PROJECT": "1",
            "POETRY_CACHE_DIR": str(tmp_path / "poetry-cache"),
            "POETRY_VIRTUALENVS_OPTIONS_NO_PIP": "1",
        },
    )
    assert (result.status, result.exit_code) == ("error", 1), result.evidence
    assert result.summary.startswith("poetry: no-such-checker-3b1: command not found")


def test_an_unreachable_pip_index_is_an_environment_fault(pm, tmp_path):
    project = write_files(tmp_path / "p", {"pyproject.toml": PYPROJECT})
    result = gate(
        pm,
        project,
        f"{PY} -m pip download --isolated --no-cache-dir --retries 1 --timeout 5 "
        f"--index-url https://pypi.invalid/simple left-pad -d {tmp_path / 'dl'}",
        env={"PIP_CONFIG_FILE": os.devnull},
    )
    assert (result.status, result.exit_code) == ("error", 1), result.evidence
    assert result.summary.startswith("pip: package index unreachable (")


# -- a gate that needs a terminal -----------------------------------------------


def test_docker_run_it_without_a_terminal_is_an_environment_fault(pm, tmp_path):
    tool("docker")
    project = tmp_path / "p"
    project.mkdir()
    # no engine is reached: the client refuses -it before it connects
    env = {
        "DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock",
        "DOCKER_CONFIG": str(tmp_path / "docker"),
    }
    result = gate(pm, project, "docker run -it --rm alpine true", name="tests", env=env)
    assert result.status == "error", result.evidence
    assert result.summary == "the command needs a terminal (docker: the input device is not a TTY)"

    engine = gate(pm, project, "docker run --rm alpine true", name="tests", env=env)
    assert engine.status == "error", engine.evidence
    assert engine.summary.startswith("docker: cannot connect to the Docker daemon at unix://")


# -- maven ----------------------------------------------------------------------

POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>x</groupId><artifactId>demo</artifactId><version>1.0</version>
  <properties><maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding></properties>
</project>
"""


@pytest.mark.slow
def test_an_unreachable_maven_repository_is_an_environment_fault(pm, tmp_path):
    tool("mvn")
    project = write_files(
        tmp_path / "p",
        {
            "pom.xml": POM,
            "settings.xml": (
                "<settings><mirrors><mirror><id>mirror</id><mirrorOf>*</mirrorOf>"
                "<url>https://repo.invalid/maven2</url></mirror></mirrors></settings>"
            ),
            "src/main/java/x/A.java": "package x; public class A {}\n",
        },
    )
    result = gate(
        pm, project, f"mvn -B -s settings.xml -Dmaven.repo.local={tmp_path / 'm2'} compile"
    )
    assert (result.status, result.exit_code) == ("error", 1), result.evidence
    assert (
        result.summary
        == "maven: repository mirror (https://repo.invalid/maven2) unreachable (Unknown host repo.invalid)"
    )
