"""CI read as its runner runs it for a push to the default branch on this
machine: ``if:`` evaluated, one matrix entry, env and matrix values put in,
what cannot run here passed over with the reason, benchmark and release
workflows set aside; and language defaults only where the project shows the
tool.  The real-project fixtures are under tests/fixtures/ci_real/ (see its
README)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from stepkit.plugins.projects import machine
from tests.support.detect import detect_json

CI = "stepkit.plugins.projects.ci"
REAL = Path(__file__).resolve().parents[1] / "fixtures" / "ci_real"


def _real(stepkit_project, name: str) -> Path:
    root = REAL / name
    files = {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*") if p.is_file()}
    return stepkit_project(files)


def _gates(data):
    return {g["name"]: (g["command"], g["plugin"], g["source"]) for g in data["gates"]}


def _notes_on(data, text: str) -> list[str]:
    return [note for note in data["notes"] if text in note]


def test_installer_runs_the_nox_line_of_this_machines_python_not_the_pypy_one(stepkit_project):
    data = detect_json(_real(stepkit_project, "installer"))
    command, plugin, source = _gates(data)["tests"]
    assert "pypy" not in command
    python = machine.version("python") or ""
    listed = next(
        (v for v in ("3.10", "3.11", "3.12", "3.13", "3.14") if python.startswith(v + ".")), None
    )
    if listed:  # this machine's Python is an entry of CI's matrix: its line, as CI runs it there
        assert (command, plugin, source) == (
            f"nox -s test-{listed} doctest-{listed} --error-on-missing-interpreters",
            CI,
            ".github/workflows/ci.yml:25",
        )
    else:  # no entry for it: the line needing another Python is passed over, the plugin answers
        assert plugin == "stepkit.plugins.projects.python"
    (pypy,) = _notes_on(data, "test-pypy3")
    assert "`if: matrix.python-version == 'pypy3.10'` is false here" in pypy


def test_rand_lint_and_tests_come_from_the_main_tests_not_the_benches_crate(stepkit_project):
    data = detect_json(_real(stepkit_project, "rand"))
    gates = _gates(data)
    assert gates["lint"] == (
        "cargo clippy --workspace --lib --bins --tests -- -D warnings",
        CI,
        ".github/workflows/test.yml:21",
    )
    assert "benches" not in (gates["tests"][2] or "")
    assert not gates["tests"][0].startswith("cd benches")
    assert any(
        "is for benchmarks" in note for note in _notes_on(data, "cd benches && cargo clippy")
    )
    # the no_std job builds for a target with the nightly toolchain only CI installs
    assert "thumbv6m" not in (gates["build"][0] or "")
    (thumb,) = _notes_on(data, "thumbv6m-none-eabi --no-default-features")
    assert "nightly" in thumb or "target thumbv6m-none-eabi" in thumb


def test_rand_tests_on_a_machine_with_a_stable_rust(stepkit_project):
    rust = machine.rust()
    if rust is None or rust.channel != "stable" or "x86_64-unknown-linux-gnu" not in rust.targets:
        pytest.skip("needs a stable x86_64 Linux rustc")
    gates = _gates(detect_json(_real(stepkit_project, "rand")))
    assert gates["tests"] == (
        "cargo test --target x86_64-unknown-linux-gnu --lib --tests --no-default-features",
        CI,
        ".github/workflows/test.yml:48",
    )


def test_go_whose_ci_runs_only_make_test_gets_no_gofmt_vet_or_build(stepkit_project):
    gates = _gates(detect_json(_real(stepkit_project, "go_make_test")))
    assert gates["tests"] == ("make test", CI, ".github/workflows/ci.yml:17")
    assert gates["format"] == gates["lint"] == gates["build"] == (None, None, None)


def test_ruby_rubocop_in_a_group_bundle_install_skips_is_no_lint_gate(stepkit_project):
    gates = _gates(detect_json(_real(stepkit_project, "ruby_dev_group")))
    assert gates["lint"] == (None, None, None)
    assert gates["tests"] == ("bundle exec rake test", CI, ".github/workflows/ci.yml:17")


def test_a_bundle_config_without_development_counts_too(stepkit_project):
    project = _real(stepkit_project, "ruby_dev_group")
    (project / ".github" / "workflows" / "ci.yml").unlink()
    assert _gates(detect_json(project))["lint"][0] == "bundle exec rubocop"
    (project / ".bundle").mkdir()
    (project / ".bundle" / "config").write_text('---\nBUNDLE_WITHOUT: "development:docs"\n')
    assert _gates(detect_json(project))["lint"] == (None, None, None)


# -- variants: the mechanism on forms the fixes were not written for -----------------

TOX_MATRIX = """\
on: [push]
jobs:
  tox:
    runs-on: ${{ matrix.os }}
    strategy:
      matrix:
        os: [ubuntu-latest, windows-latest]
        python: ["2.7", "%(here)s"]
        include:
          - python: "2.7"
            toxenv: py27
          - python: "%(here)s"
            toxenv: py%(nodot)s
        exclude:
          - os: windows-latest
    env:
      TOX_ENV: ${{ matrix.toxenv }}
    steps:
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python }}
      - run: tox -e $TOX_ENV
      - run: tox -e lint
        if: startsWith(github.ref, 'refs/tags/') || github.event_name == 'schedule'
"""


def test_a_matrix_variable_through_the_environment_is_put_in_for_this_machines_entry(
    stepkit_project,
):
    here = ".".join((machine.version("python") or "3.0").split(".")[:2])
    project = stepkit_project(
        {
            "pyproject.toml": '[project]\nname = "demo"\n',
            "tox.ini": "[testenv]\ncommands = pytest\n[testenv:lint]\ncommands = ruff check .\n",
            ".github/workflows/ci.yml": TOX_MATRIX % {"here": here, "nodot": here.replace(".", "")},
        }
    )
    data = detect_json(project)
    tests = ("tox -e py" + here.replace(".", ""), CI, ".github/workflows/ci.yml:22")
    assert _gates(data)["tests"] == tests
    (lint,) = _notes_on(data, "tox -e lint")
    assert "is false here" in lint


JOBS_THAT_CANNOT_RUN_HERE = """\
on: [push, pull_request]
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: python -m build
      - uses: actions/upload-artifact@v4
  wheel-tests:
    needs: build
    runs-on: ubuntu-latest
    steps:
      - uses: actions/download-artifact@v4
      - run: pytest --wheel dist/*.whl
  db-tests:
    runs-on: ubuntu-latest
    services:
      postgres:
        image: postgres:16
    steps:
      - run: pytest tests/db
  flaky:
    runs-on: ubuntu-latest
    continue-on-error: true
    steps:
      - run: pytest tests/flaky
  shared:
    uses: acme/workflows/.github/workflows/python.yml@v5
"""


def test_artifacts_services_allowed_failures_and_reusable_workflows(stepkit_project):
    project = stepkit_project(
        {
            "pyproject.toml": '[project]\nname = "demo"\n\n[tool.ruff]\n',
            ".github/workflows/ci.yml": JOBS_THAT_CANNOT_RUN_HERE,
        }
    )
    data = detect_json(project)
    assert _gates(data)["tests"][1] != CI
    assert "artifacts another job built" in _notes_on(data, "dist/*.whl")[0]
    assert "service containers postgres" in _notes_on(data, "tests/db")[0]
    assert "continue-on-error" in _notes_on(data, "tests/flaky")[0]
    (reusable,) = _notes_on(data, "acme/workflows/.github/workflows/python.yml@v5")
    assert "another repository" in reusable


def test_release_only_and_deploy_workflows_are_not_the_push_ci(stepkit_project):
    project = stepkit_project(
        {
            "pyproject.toml": '[project]\nname = "demo"\n',
            ".github/workflows/a-nightly.yml": "on:\n  schedule:\n    - cron: '0 0 * * *'\n"
            "jobs:\n  n:\n    steps:\n      - run: pytest --slow\n",
            ".github/workflows/b-deploy.yml": "on: [push]\njobs:\n  d:\n    steps:\n      - run: mypy --strict src\n",
            ".github/workflows/c.yml": "on: [push]\njobs:\n  t:\n    steps:\n      - run: pytest -q\n"
            "      - run: mypy src\n",
            ".github/workflows/d-reused.yml": "on: workflow_call\njobs:\n  l:\n    steps:\n"
            "      - run: ruff check --no-fix\n",
        }
    )
    data = detect_json(project)
    gates = _gates(data)
    assert gates["tests"] == ("pytest -q", CI, ".github/workflows/c.yml:5")
    assert gates["build"] == ("mypy src", CI, ".github/workflows/c.yml:6")
    # a reusable workflow of the project's own is what its CI calls: read where it is
    assert gates["lint"] == ("ruff check --no-fix", CI, ".github/workflows/d-reused.yml:5")
    assert "only on schedule" in _notes_on(data, "pytest --slow")[0]
    assert "for deploys" in _notes_on(data, "mypy --strict src")[0]


def test_gitlab_rules_and_variables(stepkit_project):
    gitlab = """\
variables:
  SUITE: unit
pytest:
  script:
    - pytest tests/$SUITE
lint:
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
  script:
    - ruff check --select ALL .
typing:
  rules:
    - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH
  script:
    - mypy src
e2e:
  when: manual
  script:
    - pytest tests/e2e
"""
    project = stepkit_project(
        {"pyproject.toml": '[project]\nname = "demo"\n', ".gitlab-ci.yml": gitlab}
    )
    data = detect_json(project)
    gates = _gates(data)
    assert gates["tests"] == ("pytest tests/unit", CI, ".gitlab-ci.yml:5")
    assert gates["build"] == ("mypy src", CI, ".gitlab-ci.yml:15")
    assert gates["lint"][1] != CI
    assert "no rule of its job runs it" in _notes_on(data, "ruff check --select ALL")[0]
    assert "when: manual" in _notes_on(data, "tests/e2e")[0]


def _stable_rust_only(tmp_path: Path) -> str:
    """A PATH with this machine's stable rustc and cargo and no rustup."""
    rust = machine.rust()
    sysroot = Path(os.popen("rustc +stable --print sysroot 2>/dev/null").read().strip() or "/")
    if rust is None or not (sysroot / "bin" / "rustc").is_file():
        pytest.skip("needs a stable rustc")
    bin_dir = tmp_path / "stable-bin"
    bin_dir.mkdir()
    for tool in ("rustc", "cargo"):
        (bin_dir / tool).symlink_to(sysroot / "bin" / tool)
    git = shutil.which("git")
    assert git
    (bin_dir / "git").symlink_to(git)
    return str(bin_dir)


def test_a_nightly_flag_is_passed_over_on_a_machine_with_only_stable(
    stepkit_project, tmp_path, monkeypatch
):
    project = stepkit_project(
        {
            "Cargo.toml": '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n',
            "src/lib.rs": "",
            ".github/workflows/ci.yml": "on: [push]\njobs:\n  t:\n    steps:\n"
            "      - run: cargo test -Z build-std\n      - run: cargo test --workspace\n",
        }
    )
    monkeypatch.setenv("PATH", _stable_rust_only(tmp_path))
    data = detect_json(project)
    assert _gates(data)["tests"] == ("cargo test --workspace", CI, ".github/workflows/ci.yml:6")
    assert "nightly" in _notes_on(data, "-Z build-std")[0]


def test_every_entry_of_a_matrix_axis_that_is_not_the_machines_is_read(stepkit_project):
    """platformdirs's ``check`` job runs one tox env per ``tox_env`` entry
    (dev, type, docs, pkg_meta): the type check is CI's build gate, though
    the entry this machine takes first is ``dev``."""
    root = Path(__file__).resolve().parents[1] / "fixtures" / "ci_unseen" / "tox-dev+platformdirs"
    files = {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*") if p.is_file()}
    gates = _gates(detect_json(stepkit_project(files)))
    command, plugin, source = gates["build"]
    assert (command, plugin) == ("tox run --skip-pkg-install -e type", CI)
    assert source.startswith(".github/workflows/check.yaml:")


MATRIX_OF_TASKS = """\
on: [push]
jobs:
  check:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python-version: ["%(here)s", "2.7"]
        task: [tests, typing]
    steps:
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python-version }}
      - run: nox -s ${{ matrix.task }}-${{ matrix.python-version }}
"""


def test_a_task_axis_is_read_for_this_machines_version_only(stepkit_project):
    here = ".".join((machine.version("python") or "3.0").split(".")[:2])
    project = stepkit_project(
        {
            "pyproject.toml": '[project]\nname = "demo"\n',
            "noxfile.py": "import nox\n\n\n@nox.session\ndef tests(s): ...\n\n\n"
            "@nox.session\ndef typing(s): ...\n",
            ".github/workflows/ci.yml": MATRIX_OF_TASKS % {"here": here},
        }
    )
    data = detect_json(project)
    gates = _gates(data)
    assert gates["tests"][:2] == (f"nox -s tests-{here}", CI)
    assert gates["build"][:2] == (f"nox -s typing-{here}", CI)
    assert not any("2.7" in (command or "") for command, _, _ in gates.values())


def _unseen(stepkit_project, name: str) -> Path:
    root = Path(__file__).resolve().parents[1] / "fixtures" / "ci_unseen" / name
    files = {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*") if p.is_file()}
    return stepkit_project(files)


def test_a_formatter_in_a_script_ci_runs_is_the_projects(stepkit_project):
    """starlette's CI runs ``scripts/check``, whose ``ruff format --check``
    is the project showing that it formats with ruff."""
    gates = _gates(detect_json(_unseen(stepkit_project, "encode+starlette")))
    assert gates["format"][0] == "ruff format --force-exclude {files:.py,.pyi}"


def test_a_formatter_in_a_script_a_task_runs_is_the_projects(stepkit_project):
    project = stepkit_project(
        {
            "pyproject.toml": '[project]\nname = "demo"\n',
            "Makefile": "check:\n\tbash ci/style.sh\n",
            "ci/style.sh": "#!/usr/bin/env bash\nset -e\nblack --check src\n",
            "src/demo/__init__.py": "",
        }
    )
    assert _gates(detect_json(project))["format"][0].startswith("black")
