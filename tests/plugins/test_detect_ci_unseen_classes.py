"""The classes of misses the table of projects detection was not tuned on
found (docs/detection.md), each shown on a real project's CI files
(tests/fixtures/ci_unseen/) and on a variant the fix was not written for:
set-up-only runs, runner prefixes with options, fixers and autofix
workflows, another repository's checkout, container jobs, build trees an
earlier CI step makes, and ``deno check``."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from stepkit.api import detect_gates
from stepkit.plugins.projects import machine
from tests.plugins.test_detection_unseen import FIXTURES, RUST, VERSIONS

CI = "stepkit.plugins.projects.ci"


@pytest.fixture(autouse=True)
def _table_machine(monkeypatch):
    monkeypatch.setattr(machine, "rust", lambda: RUST)
    monkeypatch.setattr(machine, "version", VERSIONS.get)


@pytest.fixture
def real(tmp_path):
    def copy(name: str) -> Path:
        shutil.copytree(FIXTURES / name, tmp_path / name)
        return tmp_path / name

    return copy


def _gates(project: Path) -> dict[str, tuple[Any, Any, Any]]:
    return {
        g["name"]: (g["command"], g["plugin"], g["source"]) for g in detect_gates(project)["gates"]
    }


def _notes(project: Path, text: str) -> list[str]:
    return [note for note in detect_gates(project)["notes"] if text in note]


def _workflow(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, body in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
    return tmp_path


# -- a line that only sets up the runner's environment -----------------------------


def test_tox_notest_only_sets_up_and_is_not_the_tests_gate(real):
    project = real("tox-dev+platformdirs")
    command, _, _ = _gates(project)["tests"]
    assert "--notest" not in (command or "")


def test_nox_install_only_is_not_the_tests_gate_either(tmp_path):
    project = _workflow(
        tmp_path,
        {
            "noxfile.py": "import nox\n\n@nox.session\ndef tests(session):\n    session.run('pytest')\n",
            ".github/workflows/ci.yml": "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n"
            "    steps:\n      - run: nox --install-only -s tests\n"
            "      - run: nox --no-install -s tests\n",
        },
    )
    assert _gates(project)["tests"] == (
        "nox --no-install -s tests",
        CI,
        ".github/workflows/ci.yml:7",
    )


# -- what runs the tool: options with values, pipx, composer bin -------------------


def test_uv_run_with_only_group_reads_the_tox_call_after_it(real):
    project = real("python-attrs+attrs")
    gates = _gates(project)
    assert gates["lint"] == (
        "uv run --only-group tox tox run -f lint",
        CI,
        ".github/workflows/ci.yml:122",
    )
    assert gates["build"][0] == "uv run --only-group tox tox run -f typing"
    assert "lint" not in gates["tests"][0]


def test_pipx_run_nox_is_read_as_the_nox_session_it_runs(real):
    gates = _gates(real("pypa+packaging"))
    assert gates["tests"] == ("pipx run nox -s tests", CI, ".github/workflows/test.yml:37")
    assert gates["lint"][0] == "pipx run nox -s lint -- --show-diff-on-failure"


def test_composer_bin_update_installs_a_tool_and_checks_nothing(real):
    gates = _gates(real("guzzle+psr7"))
    assert gates["build"] == (
        "vendor/bin/phpstan analyze --no-progress",
        CI,
        ".github/workflows/static.yml:20",
    )


# -- fixers: an autofix workflow, a `…:fix` target --------------------------------


@pytest.mark.parametrize(
    ("name", "lint", "source"),
    [
        ("honojs+hono", "bun run lint", ".github/workflows/ci.yml:33"),
        ("unjs+ofetch", "pnpm lint", ".github/workflows/ci.yml:20"),
    ],
)
def test_the_lint_gate_is_the_check_not_the_autofix_workflows_fixer(real, name, lint, source):
    project = real(name)
    assert _gates(project)["lint"] == (lint, CI, source)


def test_a_fix_script_in_a_check_workflow_is_no_gate(tmp_path):
    project = _workflow(
        tmp_path,
        {
            "package.json": '{"scripts": {"style-fix": "eslint --fix .", "check": "eslint ."}}',
            ".github/workflows/ci.yml": "on: push\njobs:\n  lint:\n    runs-on: ubuntu-latest\n"
            "    steps:\n      - run: npm run style-fix\n      - run: npm run check\n",
        },
    )
    lint, _, source = _gates(project)["lint"]
    assert (lint, source) == ("npm run check", ".github/workflows/ci.yml:7")


# -- where a job's lines run: another repository's checkout, a container -----------


def test_a_job_testing_another_repositorys_checkout_is_passed_over(real):
    project = real("python-poetry+tomlkit")
    assert _gates(project)["tests"] == (
        "poetry run pytest -q tests",
        CI,
        ".github/workflows/tests.yml:36",
    )
    (integration,) = _notes(project, "integration.yml:57")
    assert "checkout of another repository (python-poetry/poetry)" in integration


def test_a_checkout_of_another_repository_beside_the_project_counts_as_here(tmp_path):
    project = _workflow(
        tmp_path,
        {
            ".github/workflows/ci.yml": "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n"
            "    steps:\n      - uses: actions/checkout@v4\n      - uses: actions/checkout@v4\n"
            "        with: {repository: org/fixtures, path: fixtures}\n"
            "      - run: go test ./...\n",
            "go.mod": "module x\n",
        },
    )
    assert _gates(project)["tests"][:2] == ("go test ./...", CI)


def test_a_container_jobs_line_gives_way_to_the_runners(real):
    project = real("pypa+packaging")
    (musl,) = _notes(project, "test.yml:50")
    assert "runs in the container image `alpine:3.23.4" in musl


# -- build trees an earlier CI step makes ------------------------------------------


@pytest.mark.parametrize(
    ("name", "gate", "line"),
    [
        ("fmtlib+fmt", "build", "cmake --build build --parallel"),
        ("leethomason+tinyxml2", "build", "cmake --build build-static-dbg"),
        ("jarro2783+cxxopts", "tests", "cd build; ctest"),
    ],
)
def test_a_build_tree_the_checkout_lacks_is_no_gates_command(real, name, gate, line):
    project = real(name)
    assert _gates(project)[gate][1] == "stepkit.plugins.projects.cmake"
    (passed,) = _notes(project, f"`{line}`")
    assert "needs what an earlier CI step generates" in passed


def test_a_build_tree_the_same_line_configures_is_kept(tmp_path):
    project = _workflow(
        tmp_path,
        {
            "CMakeLists.txt": "project(x)\nenable_testing()\n",
            ".github/workflows/ci.yml": "on: push\njobs:\n  b:\n    runs-on: ubuntu-latest\n"
            "    steps:\n      - run: cmake -B out && cmake --build out\n"
            "      - run: ctest --test-dir out2\n",
        },
    )
    gates = _gates(project)
    assert gates["build"][:2] == ("cmake -B out && cmake --build out", CI)
    assert gates["tests"][1] == "stepkit.plugins.projects.cmake"


# -- deno check is the type check --------------------------------------------------


def test_deno_check_is_the_build_gate(real):
    assert _gates(real("dsherret+dax"))["build"] == (
        "deno check",
        CI,
        ".github/workflows/ci.yml:27",
    )
