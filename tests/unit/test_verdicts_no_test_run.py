"""No verdict without a test run: a tests gate in which no test ran is NOT
RUN, never a pass, however the command got to exit 0 — no output at all, a
pytest that never wrote the report stepkit asked it for (``os._exit(0)`` in
a conftest.py), every test skipped; and a formatter that had nothing to
format is NOT RUN too.  Real commands, real pytest, in tmp dirs."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from stepkit.cli import main

PY = shlex.quote(sys.executable)
NOT_EVIDENCE = "This is NOT evidence that tests passed"


def verify(capsys, project: Path, **commands: str) -> dict:
    """``stepkit verify --json`` on ``project`` with these gate commands (the others empty)."""
    table = {"format": "", "lint": "", "build": "", "test": "", **commands}
    (project / "stepkit.toml").write_text(
        "[commands]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in table.items())
    )
    main(["verify", "--project-dir", str(project), "--json"])
    return {g["name"]: g for g in json.loads(capsys.readouterr().out)["gates"]}


def pytest_project(
    root: Path, conftest: str | None = None, test: str = "def test_a():\n    assert 1 == 2\n"
) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_a.py").write_text(test)
    if conftest is not None:
        (root / "conftest.py").write_text(conftest)
    return root


def assert_not_run(gate: dict, reason: str) -> None:
    assert gate["status"] == "not_run", gate
    assert reason in gate["summary"] and NOT_EVIDENCE in gate["evidence"], gate


def test_exit_0_with_no_output_ran_no_test(tmp_path, capsys):
    gate = verify(capsys, tmp_path, test="true")["tests"]
    assert_not_run(gate, "printed nothing")
    assert gate["exit_code"] == 0


@pytest.mark.parametrize(
    "options", ["", "-s"]
)  # -s: the conftest's forged summary line reaches the output
def test_os_exit_in_conftest_wrote_no_report_so_no_test_was_verified(tmp_path, capsys, options):
    conftest = "import os\nprint('2 passed in 0.01s', flush=True)\nos._exit(0)\n"
    project = pytest_project(tmp_path, conftest=conftest)
    gate = verify(capsys, project, test=f"{PY} -m pytest -q -p no:cacheprovider {options} tests")[
        "tests"
    ]
    assert gate["exit_code"] == 0
    assert_not_run(gate, "pytest wrote no report")


def test_a_pytest_report_with_no_test_in_it_is_not_a_run(tmp_path, capsys):
    # the hook runs before any test: pytest writes a report with no testcase and exits 0
    hook = "import os\n\ndef pytest_runtestloop(session):\n    return True\n"
    project = pytest_project(tmp_path, conftest=hook)
    gate = verify(capsys, project, test=f"{PY} -m pytest -q -p no:cacheprovider tests")["tests"]
    assert gate["exit_code"] == 0
    assert_not_run(gate, "no test")


def test_every_test_skipped_is_not_run_whatever_the_runner_says(tmp_path, capsys):
    project = pytest_project(
        tmp_path,
        test="import pytest\n\n\n@pytest.mark.skip\ndef test_a():\n    pass\n\n\n"
        "@pytest.mark.skip\ndef test_b():\n    pass\n",
    )
    gate = verify(capsys, project, test=f"{PY} -m pytest -q -p no:cacheprovider tests")["tests"]
    assert_not_run(gate, "skipped")


def test_an_honest_pytest_run_still_passes(tmp_path, capsys):
    project = pytest_project(tmp_path, test="def test_a():\n    assert 1 == 1\n")
    gate = verify(capsys, project, test=f"{PY} -m pytest -q -p no:cacheprovider tests")["tests"]
    assert gate["status"] == "pass", gate


RUFF = shlex.quote(str(Path(sys.executable).with_name("ruff")))
MYPY = shlex.quote(str(Path(sys.executable).with_name("mypy")))
NO_RUNNER = "no test runner's summary or report in its output"


def test_a_command_whose_output_shows_no_test_ran_is_not_run_whatever_its_name(tmp_path, capsys):
    gate = verify(capsys, tmp_path, test="echo ran 4 checks")["tests"]
    assert_not_run(gate, NO_RUNNER)


def test_a_linter_forced_as_the_tests_command_is_not_run_never_a_pass(tmp_path, capsys):
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    gate = verify(capsys, tmp_path, test=f"{RUFF} check .")["tests"]
    assert gate["exit_code"] == 0 and "All checks passed!" in gate["evidence"]
    assert_not_run(gate, NO_RUNNER)
    assert "the command ran no test" in gate["summary"]


def test_a_make_test_target_that_only_type_checks_is_not_run(tmp_path, capsys):
    (tmp_path / "calc.py").write_text("def add(a: int, b: int) -> int:\n    return a + b\n")
    (tmp_path / "Makefile").write_text(f"test:\n\t{MYPY} --no-incremental calc.py\n")
    gate = verify(capsys, tmp_path, test="make test")["tests"]
    assert gate["exit_code"] == 0 and "Success" in gate["evidence"]
    assert_not_run(gate, NO_RUNNER)


def test_wrappers_that_run_a_test_runner_still_pass(tmp_path, capsys):
    # the report pytest writes behind make, and unittest's own closing summary, show tests ran
    project = pytest_project(tmp_path, test="def test_a():\n    assert 1 == 1\n")
    (project / "Makefile").write_text(f"test:\n\t{PY} -m pytest -q -p no:cacheprovider tests\n")
    assert verify(capsys, project, test="make test")["tests"]["status"] == "pass"
    (project / "test_b.py").write_text(
        "import unittest\n\n\nclass B(unittest.TestCase):\n    def test_b(self):\n"
        "        self.assertTrue(True)\n"
    )
    gate = verify(capsys, project, test=f"sh -c '{PY} -m unittest test_b'")["tests"]
    assert gate["status"] == "pass", gate


def test_a_formatter_with_nothing_to_format_is_not_run(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("no python here\n")
    gate = verify(capsys, tmp_path, format=f"{PY} -m black .")["format"]
    assert gate["status"] == "not_run", gate
    assert "nothing to format" in gate["summary"]
    ruff = Path(sys.executable).with_name("ruff")
    gate = verify(capsys, tmp_path, format=f"{shlex.quote(str(ruff))} format .")["format"]
    assert gate["status"] == "not_run", gate["evidence"]
    assert "nothing to format" in gate["summary"]


def test_a_report_emptied_after_the_run_verifies_no_test(tmp_path, capsys):
    emptier = "def pytest_unconfigure(config):\n    open(config.option.xmlpath, 'w').close()\n"
    project = pytest_project(tmp_path, conftest=emptier, test="def test_a():\n    assert 1 == 1\n")
    gate = verify(capsys, project, test=f"{PY} -m pytest -q -p no:cacheprovider tests")["tests"]
    assert_not_run(gate, "pytest wrote no report")


IGNORED_CRATE = """pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

#[cfg(test)]
mod tests {
    #[test]
    #[ignore]
    fn adds() {
        assert_eq!(super::add(2, 3), 5);
    }

    #[test]
    #[ignore]
    fn adds_again() {
        assert_eq!(super::add(2, 2), 4);
    }
}
"""


@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")
def test_cargo_with_every_test_ignored_is_not_run(tmp_path, capsys):
    (tmp_path / "src").mkdir()
    (tmp_path / "Cargo.toml").write_text(
        '[package]\nname = "adder"\nversion = "0.1.0"\nedition = "2021"\n'
    )
    (tmp_path / "src" / "lib.rs").write_text(IGNORED_CRATE)
    gate = verify(capsys, tmp_path, test="cargo test --offline")["tests"]
    assert_not_run(gate, "every test was skipped")


def _program(root: Path, lines: list[str], code: int = 0) -> str:
    """A test program of the project's own (no runner stepkit knows) printing ``lines``."""
    script = root / "selftest.py"
    script.write_text(f"import sys\nprint({chr(10).join(lines)!r})\nsys.exit({code})\n")
    return f"{PY} selftest.py"


def test_a_test_program_s_own_count_line_is_a_run(tmp_path, capsys):
    # tinyxml2's `make test` runs ./xmltest, whose last line is its own count of checks
    command = _program(tmp_path, ["[pass] Parse dream.xml [false][false]", "", "Pass 522, Fail 0"])
    tests = verify(capsys, tmp_path, test=command)["tests"]
    assert (tests["status"], tests["exit_code"]) == ("pass", 0), tests["summary"]


@pytest.mark.parametrize(
    "last",
    ["3 passed, 0 failed", "selftest: 3 passed, 0 failed, 1 skipped", "Passed: 3, Failed: 0"],
)
def test_the_plain_closing_count_line_is_a_run(tmp_path, capsys, last):
    tests = verify(capsys, tmp_path, test=_program(tmp_path, ["checking", last]))["tests"]
    assert tests["status"] == "pass", tests["summary"]


@pytest.mark.parametrize("last", ["0 passed, 0 failed", "Pass 0, Fail 0", "passed 3 of 4 steps"])
def test_a_count_line_with_no_test_run_is_still_not_run(tmp_path, capsys, last):
    tests = verify(capsys, tmp_path, test=_program(tmp_path, ["checking", last]))["tests"]
    assert tests["status"] == "not_run", tests["summary"]


def test_a_count_line_with_failures_and_exit_1_fails(tmp_path, capsys):
    tests = verify(capsys, tmp_path, test=_program(tmp_path, ["Pass 520, Fail 2"], code=1))["tests"]
    assert tests["status"] == "fail", tests["summary"]


@pytest.mark.parametrize(
    "dep",
    [
        # what pnpm 11 printed for unjs/ofetch (packageManager pnpm@10.20.0) on this machine
        (
            "@pnpm/win-x64@10.20.0: No matching version found for @pnpm/win-x64@10.20.0 while "
            "fetching it from https://registry.npmjs.org/"
        ),
        "@pnpm/win-arm64@10.20.0: GET https://registry.npmjs.org/@pnpm%2Fwin-arm64: Not Found - 404",
    ],
)
def test_pnpm_failing_to_switch_to_the_project_s_version_is_an_environment_fault(
    tmp_path, capsys, dep
):
    lines = [
        "Error: ERR_PNPM_BAD_CONFIG_DEP",
        "",
        "  × resolve package manager dependencies",
        f"  ╰─▶ Failed to resolve config dependency {dep}",
    ]
    tests = verify(capsys, tmp_path, test=_program(tmp_path, lines, code=1))["tests"]
    assert tests["status"] == "error", tests["summary"]
    assert "config dependency" in tests["summary"]
