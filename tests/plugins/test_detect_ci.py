"""Detection prefers what the project's CI runs, and names the file and line."""

from __future__ import annotations

import json

import pytest

from stepkit.testing import resolve_gates
from tests.support.cli import stepkit
from tests.support.detect import detect_json

CI = "stepkit.plugins.projects.ci"
PYPROJECT = '[project]\nname = "demo"\n\n[tool.ruff]\n'

WORKFLOW = """\
name: CI
on: [push, pull_request]
jobs:
  check:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python: ["3.11", "3.12"]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python }}
      - run: pip install -e .[dev]
      - run: tox -e py${{ matrix.python }}
      - name: Lint
        run: |
          # comment lines are not commands
          flake8 src tests
      - run: mypy --strict src
      - name: Tests
        working-directory: pkg
        run: python -m pytest -q tests
      - run: twine upload dist/*
        env:
          TOKEN: ${{ secrets.PYPI }}
"""


def _gates(data):
    return {g["name"]: (g["command"], g["plugin"], g["source"]) for g in data["gates"]}


def test_ci_run_steps_answer_each_gate_with_their_line(stepkit_project):
    project = stepkit_project(
        {"pyproject.toml": PYPROJECT, ".github/workflows/ci.yml": WORKFLOW, "pkg/tests/t.py": ""}
    )
    gates = _gates(detect_json(project))
    assert gates["lint"] == ("flake8 src tests", CI, ".github/workflows/ci.yml:19")
    assert gates["build"] == ("mypy --strict src", CI, ".github/workflows/ci.yml:20")
    # the matrix-only tox line and the install are skipped; working-directory is kept
    assert gates["tests"] == (
        "cd pkg && python -m pytest -q tests",
        CI,
        ".github/workflows/ci.yml:23",
    )


def test_detect_text_names_the_source(stepkit_project):
    project = stepkit_project(
        {"pyproject.toml": PYPROJECT, ".github/workflows/ci.yml": WORKFLOW, "pkg/tests/t.py": ""}
    )
    text = stepkit("detect", "--project-dir", str(project), check=True).stdout
    assert "(from .github/workflows/ci.yml:20)" in text


def test_overrides_and_config_commands_still_beat_ci(stepkit_project, monkeypatch):
    project = stepkit_project(
        {
            "pyproject.toml": PYPROJECT + '\n[tool.stepkit.commands]\nlint = "ruff check"\n',
            ".github/workflows/ci.yml": WORKFLOW,
            "pkg/tests/t.py": "",
        }
    )
    monkeypatch.setenv("BUILD_CMD", "true")
    gates = resolve_gates(project)
    assert gates["lint"] == ("ruff check", "stepkit.plugins.overrides")
    assert gates["build"] == ("true", "stepkit.plugins.overrides")
    assert gates["tests"][1] == CI


def test_ci_beats_a_task_runner_guess_and_reads_what_the_target_runs(stepkit_project):
    project = stepkit_project(
        {
            "Makefile": "test:\n\tpytest\nstatic:\n\tmypy src\n",
            "package.json": json.dumps({"scripts": {"check:all": "eslint ."}}),
            ".gitlab-ci.yml": "stages: [test]\n.template:\n  script: [make nothing]\n"
            "checks:\n  script:\n    - make static\n    - npm run check:all\n"
            "unit:\n  script:\n    - scripts/run-unit\n",
            "scripts/run-unit": "#!/bin/sh\nexec python -m pytest -x\n",
        }
    )
    gates = _gates(detect_json(project))
    assert gates["build"] == ("make static", CI, ".gitlab-ci.yml:6")  # its recipe runs mypy
    assert gates["lint"] == ("npm run check:all", CI, ".gitlab-ci.yml:7")  # its script runs eslint
    assert gates["tests"] == (
        "scripts/run-unit",
        CI,
        ".gitlab-ci.yml:10",
    )  # the script it calls runs pytest


def test_a_tox_env_named_for_the_type_check_is_the_build_behind_uv_run(stepkit_project):
    project = stepkit_project(
        {
            "pyproject.toml": PYPROJECT,
            "tox.ini": "[testenv:static]\ncommands = mypy src\n",
            ".github/workflows/t.yaml": "jobs:\n  t:\n    steps:\n      - run: uv run --locked tox run -e typing\n"
            "      - run: tox -e static\n",
        }
    )
    gates = _gates(detect_json(project))
    assert gates["build"] == ("uv run --locked tox run -e typing", CI, ".github/workflows/t.yaml:4")
    assert gates["tests"][1] != CI  # neither env runs the tests: the language plugin answers


@pytest.mark.parametrize(
    "workflow",
    [
        "jobs:\n  w:\n    runs-on: windows-latest\n    steps:\n      - run: pytest\n",
        "jobs:\n  w:\n    steps:\n      - run: pytest\n        shell: pwsh\n",
        (
            "jobs:\n  w:\n    strategy:\n      matrix: ${{ fromJSON(needs.plan.outputs.m) }}\n"
            "    env:\n      PY: ${{ matrix.py }}\n    steps:\n      - run: tox -e $PY\n"
        ),
        'jobs:\n  w:\n    steps:\n      - run: |\n          if [ -n "$X" ]; then\n            pytest\n          fi\n',
        "jobs:\n  w:\n    steps:\n      - run: npm ci && npm test\n",
        "jobs:\n  w:\n    steps:\n      - run: docker run --rm -it img pytest\n",
    ],
    ids=[
        "windows-job",
        "powershell",
        "matrix-env",
        "conditional",
        "install-first",
        "needs-terminal",
    ],
)
def test_ci_commands_that_cannot_run_here_are_skipped(stepkit_project, workflow):
    project = stepkit_project({"pyproject.toml": PYPROJECT, ".github/workflows/ci.yml": workflow})
    assert resolve_gates(project)["tests"][1] != CI


def test_multi_line_block_cd_and_continuations(stepkit_project):
    workflow = (
        "jobs:\n  b:\n    steps:\n      - run: |\n          mkdir -p build\n          cd build\n"
        "          cmake .. \\\n            -DX=1\n          cmake --build .\n          ctest \\\n"
        "            --output-on-failure\n"
    )
    # build/ is in the checkout here (a tracked dir), so the commands can run in it
    project = stepkit_project(
        {
            "CMakeLists.txt": "project(x)\n",
            ".github/workflows/c.yml": workflow,
            "build/README": "build here\n",
        }
    )
    gates = _gates(detect_json(project))
    assert gates["build"] == ("cd build && cmake --build .", CI, ".github/workflows/c.yml:9")
    assert gates["tests"] == (
        "cd build && ctest --output-on-failure",
        CI,
        ".github/workflows/c.yml:10",
    )


def test_a_local_system_precommit_hook_is_a_command(stepkit_project):
    project = stepkit_project(
        {
            "pyproject.toml": PYPROJECT,
            ".pre-commit-config.yaml": "repos:\n  - repo: local\n    hooks:\n      - id: types\n"
            "        name: types\n        entry: mypy src\n        language: system\n",
        }
    )
    assert _gates(detect_json(project))["build"] == ("mypy src", CI, ".pre-commit-config.yaml:6")


def test_the_formatter_ci_checks_with_names_its_line(stepkit_project):
    project = stepkit_project(
        {
            "pyproject.toml": PYPROJECT,
            ".github/workflows/f.yml": "jobs:\n  f:\n    steps:\n      - run: ruff format --check .\n",
        }
    )
    command, plugin, source = _gates(detect_json(project))["format"]
    assert plugin == "stepkit.plugins.projects.python" and command.startswith("ruff format")
    assert source == ".github/workflows/f.yml:4"  # where CI runs `ruff format --check .`


@pytest.mark.parametrize(
    "steps",
    [
        "      - run: |\n          mkdir build\n          cd build\n          cmake ..\n          cmake --build .\n",
        "      - run: |\n          autoreconf -i\n          ./configure\n          make -j4\n",
        "      - run: scan-build make\n",
    ],
)
def test_a_ci_command_that_needs_what_an_earlier_step_generates_is_left_out(stepkit_project, steps):
    project = stepkit_project(
        {
            "CMakeLists.txt": "project(x C)\n",
            ".github/workflows/b.yml": f"jobs:\n  b:\n    steps:\n{steps}",
        }
    )
    assert resolve_gates(project)["build"] == (
        "cmake -S . -B build && cmake --build build",
        "stepkit.plugins.projects.cmake",
    )


def test_a_plugin_of_the_project_names_a_source_a_build_system_and_an_order(stepkit_project):
    from stepkit.api import detect_gates
    from stepkit.hookspecs import hookimpl
    from stepkit.pluginmanager import get_plugin_manager

    class Mine:
        @hookimpl
        def stepkit_test_command(self, project_dir, config):
            return "ci/run-tests.sh"

        @hookimpl
        def stepkit_gate_source(self, gate, command, project_dir):
            return "ci/run-tests.sh:1" if command == "ci/run-tests.sh" else None

        @hookimpl
        def stepkit_unsupported_build_systems(self, project_dir):
            return ["tup (Tupfile)"]

        @hookimpl
        def stepkit_gate_fault(self, gate, command, project_dir):
            return (
                "it needs the tup toolchain, which this machine lacks" if gate == "tests" else None
            )

        @hookimpl
        def stepkit_gate_order(self, project_dir):
            return ["build", "format", "lint", "tests"]

    project = stepkit_project({"Tupfile": ": foreach *.c |> gcc -c %f |> %B.o\n"})
    pm = get_plugin_manager(project)
    pm.register(Mine(), "mine")
    data = detect_gates(project, pm)
    assert data["gates"][3] == {
        "name": "tests",
        "command": "ci/run-tests.sh",
        "plugin": "mine",
        "source": "ci/run-tests.sh:1",
        "fault": "it needs the tup toolchain, which this machine lacks",
        "candidates": [],
    }
    assert data["unsupported"] == ["tup (Tupfile)"]
    assert data["order"] == ["build", "format", "lint", "tests"]


BUILD_THEN_LINT = json.dumps({"scripts": {"build": "tsc", "lint": "eslint ."}})


def test_a_ci_job_that_builds_before_it_lints_records_that_order(stepkit_project):
    from stepkit.config import load_config
    from stepkit.pluginmanager import get_plugin_manager
    from stepkit.workspace.gate_commands import plan_gates

    project = stepkit_project(
        {
            "package.json": BUILD_THEN_LINT,
            ".github/workflows/ci.yml": "jobs:\n  all:\n    steps:\n      - run: npm run build\n      - run: npm run lint\n",
        }
    )
    assert detect_json(project)["order"] == ["format", "build", "lint", "tests"]
    plan = plan_gates(get_plugin_manager(project), project, load_config(project))
    assert plan.ci_order == ["format", "build", "lint", "tests"]
    text = stepkit("detect", "--project-dir", str(project), check=True).stdout
    assert "order:  CI runs format → build → lint → tests" in text


@pytest.mark.parametrize(
    "workflow",
    [
        "jobs:\n  all:\n    steps:\n      - run: npm run lint\n      - run: npm run build\n",
        "jobs:\n  b:\n    steps:\n      - run: npm run build\n  l:\n    steps:\n      - run: npm run lint\n",
    ],
    ids=["lint-first", "separate-jobs"],
)
def test_no_order_when_ci_shows_no_need(stepkit_project, workflow):
    project = stepkit_project(
        {"package.json": BUILD_THEN_LINT, ".github/workflows/ci.yml": workflow}
    )
    assert detect_json(project)["order"] is None


@pytest.mark.parametrize(
    ("files", "line", "gate"),
    [
        ({"justfile": "check-all:\n    cargo clippy --all-targets\n"}, "just check-all", "lint"),
        ({"Makefile": "verify:\n\tgo test ./...\n"}, "make verify", "tests"),
        ({"tox.ini": "[testenv:static]\ncommands = mypy src\n"}, "tox -e static", "build"),
        (
            {
                "noxfile.py": "import nox\n\n@nox.session\ndef static(session):\n    session.run('pyright')\n\n"
                "@nox.session\ndef other(session):\n    session.run('pytest')\n"
            },
            "nox -s static",
            "build",
        ),
        (
            {"package.json": json.dumps({"scripts": {"ci:all": "vitest run"}})},
            "npm run ci:all",
            "tests",
        ),
        (
            {"scripts/verify.sh": "#!/bin/sh\nset -e\npython -m pytest -q\n"},
            "bash scripts/verify.sh",
            "tests",
        ),
    ],
    ids=["justfile", "makefile", "tox", "nox", "package.json", "script"],
)
def test_a_runner_target_named_for_nothing_goes_to_the_gate_its_body_runs(
    stepkit_project, files, line, gate
):
    from stepkit.plugins.projects.ci import gate_of

    project = stepkit_project(files)
    assert gate_of(line, project) == gate


def test_npm_ci_installs_but_a_script_named_ci_checks(stepkit_project):
    from stepkit.plugins.projects.ci import gate_of

    project = stepkit_project({"package.json": json.dumps({"scripts": {"ci": "jest --ci"}})})
    assert (gate_of("npm ci", project), gate_of("npm run ci", project)) == (None, "tests")


def test_a_workflow_a_push_triggers_comes_before_a_release_workflow(stepkit_project):
    project = stepkit_project(
        {
            "pyproject.toml": PYPROJECT,
            ".github/workflows/a-release.yml": "on:\n  release:\n    types: [published]\njobs:\n  r:\n    steps:\n"
            "      - run: mypy --no-incremental src\n",
            ".github/workflows/z-ci.yml": "on: [push]\njobs:\n  c:\n    steps:\n      - run: mypy src\n",
        }
    )
    assert _gates(detect_json(project))["build"] == ("mypy src", CI, ".github/workflows/z-ci.yml:5")


def test_a_macos_only_job_answers_after_a_linux_job(stepkit_project):
    workflow = (
        "on: [push]\njobs:\n  mac:\n    runs-on: macos-latest\n    steps:\n      - run: npm test\n"
        "      - run: npm run build\n  linux:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: npm run build -- --strict\n"
    )
    project = stepkit_project(
        {
            "package.json": json.dumps({"scripts": {"build": "tsc", "test": "ava"}}),
            ".github/workflows/ci.yml": workflow,
        }
    )
    gates = _gates(detect_json(project))
    assert gates["build"] == ("npm run build -- --strict", CI, ".github/workflows/ci.yml:11")
    assert gates["tests"] == (
        "npm test",
        CI,
        ".github/workflows/ci.yml:6",
    )  # only macOS runs it: still CI's


@pytest.mark.parametrize(
    ("line", "gate"),
    [
        ("bundle exec rake", "tests"),
        ("bundle exec rake spec", "tests"),
        ("bundle exec rake build", None),
        ("./mvnw -B -ntp -V install", None),
        ("cargo bench --no-run", None),
        ("make docs", None),
        ("tox -e docs", None),
        ("pytest --version", None),
        ("uv run --locked tox run -e py3.11", "tests"),
        ("tox -e pypy311", "tests"),
    ],
)
def test_which_ci_lines_check_what(stepkit_project, line, gate):
    from stepkit.plugins.projects.ci import gate_of

    assert gate_of(line, stepkit_project({"README": ""})) == gate


def test_a_piped_ci_command_is_left_out(stepkit_project):
    # without pipefail `pytest | tee` exits with tee's 0: a failing suite would pass the gate
    project = stepkit_project(
        {
            "pyproject.toml": PYPROJECT,
            ".github/workflows/t.yml": "jobs:\n  t:\n    steps:\n      - run: pytest 2>&1 | tee log\n",
        }
    )
    assert resolve_gates(project)["tests"][1] != CI


#: CI lints before it tests, each step through a script of the project's
LINT_THEN_TEST = """\
on: [push, pull_request]
jobs:
  check:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Run linting checks
        run: scripts/check
      - name: Run tests
        run: scripts/test
"""


def test_a_script_named_check_that_only_lints_is_not_the_tests_gate(stepkit_project):
    project = stepkit_project(
        {
            "pyproject.toml": PYPROJECT,
            ".github/workflows/ci.yml": LINT_THEN_TEST,
            "scripts/check": "#!/bin/sh\nset -e\nruff check .\nruff format --check .\n",
            "scripts/test": '#!/bin/sh\nset -e\npytest "$@"\n',
        }
    )
    data = detect_json(project)
    gates = _gates(data)
    assert gates["tests"] == ("scripts/test", CI, ".github/workflows/ci.yml:10")
    assert gates["lint"] == ("scripts/check", CI, ".github/workflows/ci.yml:8")
    assert any("scripts/check" in note and "no test runner" in note for note in data["notes"])


def test_a_test_runner_beats_a_type_check_named_test_earlier_in_ci(stepkit_project):
    workflow = (
        "on: [push]\njobs:\n  t:\n    steps:\n      - run: pnpm test:types\n"
        "      - run: pnpm lint\n      - run: pnpm vitest --coverage\n"
    )
    scripts = {"test:types": "tsc --noEmit", "lint": "eslint ."}
    project = stepkit_project(
        {
            "package.json": json.dumps({"scripts": scripts}),
            ".github/workflows/ci.yml": workflow,
        }
    )
    data = detect_json(project)
    gates = _gates(data)
    assert gates["tests"] == ("pnpm vitest --coverage", CI, ".github/workflows/ci.yml:7")
    assert gates["build"] == ("pnpm test:types", CI, ".github/workflows/ci.yml:5")
    assert any("pnpm test:types" in note for note in data["notes"]), data["notes"]


def test_a_ci_step_named_for_tests_beats_one_named_for_linting(stepkit_project):
    # neither script can be read (they are generated): the steps' names decide
    workflow = (
        "on: [push]\njobs:\n  t:\n    steps:\n      - name: Lint and type check\n"
        "        run: make check\n      - name: Unit tests\n        run: make unit\n"
    )
    project = stepkit_project(
        {
            "Makefile": "check:\n\t$(MAKE) -C sub\nunit:\n\t$(MAKE) -C sub t\n",
            ".github/workflows/ci.yml": workflow,
        }
    )
    assert _gates(detect_json(project))["tests"] == ("make unit", CI, ".github/workflows/ci.yml:8")


def test_tox_lint_before_tox_py_gives_the_tests_gate_to_the_env_that_runs_pytest(stepkit_project):
    project = stepkit_project(
        {
            "pyproject.toml": PYPROJECT,
            "tox.ini": "[testenv:lint]\ncommands = ruff check .\n\n[testenv:py]\ncommands = pytest\n",
            ".github/workflows/ci.yml": "on: [push]\njobs:\n  t:\n    steps:\n"
            "      - name: Check everything\n        run: tox -e lint\n      - run: tox -e py\n",
        }
    )
    gates = _gates(detect_json(project))
    assert gates["tests"] == ("tox -e py", CI, ".github/workflows/ci.yml:7")
    assert gates["lint"] == ("tox -e lint", CI, ".github/workflows/ci.yml:6")
