"""Test-level verdicts end to end: real pytest (and cargo test) suites, the
real CLI, a command coder.  A committed failing test is pre-existing, not
the step's; a test the step breaks fails the gate and is all the fix loop
hears about; a test that fails once and passes on the re-run is flaky; the
``baseline`` setting's strict and off modes; the handoff's criteria map."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from stepkit.workspace.store import store_dir
from tests.support.e2e import GOOD_MUL, HANDOFF, PY, Project, make_project
from tests.support.gitrepo import init_repo

# whole-step runs over many variants: outside the default suite (tests/conftest.py)
pytestmark = pytest.mark.slow

OLD = "tests/test_calc.py::test_old_bug"
ADD = "tests/test_calc.py::test_add"
MUL = "tests/test_mul.py::test_mul"
SUITE = """import calc


def test_add():
    assert calc.add(2, 3) == 5


def test_old_bug():
    assert calc.add(0.1, 0.2) == 0.3  # broken before the step: floats
"""
MUL_TEST = "import calc\n\n\ndef test_mul():\n    assert calc.mul(2, 3) == 6\n"
#: fails on its first run in the step's tree, passes on every later one (a counter in the
#: test's state dir; the step's start, measured in a scratch copy, counts apart)
FLAKY_TEST = """import os
import pathlib


def test_sometimes():
    tree = "" if pathlib.Path.cwd().name == "project" else "-start"
    counter = pathlib.Path(os.environ["E2E_STATE_DIR"]) / f"flaky_runs{tree}"
    runs = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(runs + 1))
    assert runs > 0, "the first run fails"
"""
BROKEN_ADD = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
FEATURE = {
    "write": {"calc.py": GOOD_MUL, "tests/test_mul.py": MUL_TEST},
    "sentinel": "CODER_COMPLETE",
}


def pytest_project(
    tmp_path: Path, baseline: str | None = None, extra: dict[str, str] | None = None
):
    """The e2e project with a pytest suite holding one committed failing test."""
    project = make_project(tmp_path, reviewer=False)
    config = (project.root / "stepkit.toml").read_text()
    config = config.replace(
        f'test = "{PY} check.py"', f'test = "{PY} -m pytest -q -p no:cacheprovider tests"'
    )
    if baseline:
        config = f'baseline = "{baseline}"\n' + config
    files = {"stepkit.toml": config, "tests/test_calc.py": SUITE, **(extra or {})}
    for rel, text in files.items():
        (project.root / rel).parent.mkdir(parents=True, exist_ok=True)
        (project.root / rel).write_text(text)
    project.git("add", "-A")
    project.git(
        "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a suite with an old bug"
    )
    return project


def gate_of_tests(data: dict) -> dict:
    return next(g for g in data["gates"] if g["name"] == "tests")


def test_a_preexisting_failure_is_named_at_the_approval_in_the_output_and_the_handoff(tmp_path):
    project = pytest_project(tmp_path)
    project.coder_actions(FEATURE)
    paused = project.run()
    assert paused.code == 5, paused.stdout + paused.stderr
    question = paused.data["pending"]["question"]
    assert "PRE-EXISTING failures (failed before the step too; not passing) (1): " + OLD in question
    gate = gate_of_tests(paused.data)
    assert gate["status"] == "pass" and gate["exit_code"] == 1
    assert (
        gate["preexisting_failures"] == [OLD] and gate["new_failures"] == [] and gate["flaky"] == []
    )
    handoff = Path(paused.data["handoff_draft"]).read_text()  # approved, it goes to plans/
    assert OLD in handoff.split("## Evidence", 1)[1] and "PRE-EXISTING" in handoff
    assert project.coder_calls() == 1  # the old bug was never handed to the coder
    assert list((store_dir(project.root) / "baseline").glob("tests-*.json"))

    done = project.resume("approve")
    assert done.outcome == "STEP_COMPLETE"
    assert (
        f"PRE-EXISTING failures (failed before the step too; not passing) (1): {OLD}" in done.output
    )


def test_a_test_the_step_breaks_fails_the_gate_and_only_it_reaches_the_fix_loop(tmp_path):
    project = pytest_project(tmp_path)
    broken = {
        "write": {"calc.py": BROKEN_ADD, "tests/test_mul.py": MUL_TEST},
        "sentinel": "CODER_COMPLETE",
    }
    project.coder_actions(broken, FEATURE)
    paused = project.run()
    assert paused.code == 5, paused.stdout + paused.stderr
    assert project.coder_calls() == 2
    fix = project.coder_prompt(1)
    assert ADD in fix and "test_old_bug" not in fix
    history = json.loads(
        (store_dir(project.root) / "runs" / paused.data["run_id"] / "state.json").read_text()
    )
    first_tests = next(g for g in history["state"]["gate_history"] if g["name"] == "tests")
    assert first_tests["status"] == "fail"
    assert first_tests["new_failures"] == [ADD] and first_tests["preexisting_failures"] == [OLD]
    assert gate_of_tests(paused.data)["preexisting_failures"] == [OLD]


def test_a_test_that_passes_on_the_rerun_is_flaky_and_the_step_goes_on(tmp_path):
    project = pytest_project(
        tmp_path,
        extra={
            "tests/test_calc.py": SUITE.split("\n\ndef test_old_bug")[0] + "\n",
            "tests/test_flaky.py": FLAKY_TEST,
        },
    )
    project.coder_actions(FEATURE)
    paused = project.run()
    assert paused.code == 5, paused.stdout + paused.stderr
    gate = gate_of_tests(paused.data)
    assert gate["status"] == "pass" and gate["flaky"] == ["tests/test_flaky.py::test_sometimes"]
    assert gate["new_failures"] == [] and gate["preexisting_failures"] == []
    assert (
        "FLAKY tests (failed, passed when the suite was re-run; not evidence of a pass) (1)"
        in paused.data["pending"]["question"]
    )
    assert (
        project.state_dir / "flaky_runs"
    ).read_text() == "3"  # the run, alone, the whole command; no baseline after them
    assert "baseline: the same command" not in gate["evidence"]


def test_a_flaky_test_the_step_adds_is_its_own_failure_and_is_not_re_run(tmp_path):
    """The step wrote that test: failing once, it goes to the fix loop like
    any new failure, with no re-run alone or of the whole command first."""
    project = pytest_project(
        tmp_path, extra={"tests/test_calc.py": SUITE.split("\n\ndef test_old_bug")[0] + "\n"}
    )
    adds_a_flaky_test = {
        "write": {**FEATURE["write"], "tests/test_flaky.py": FLAKY_TEST},
        "sentinel": "CODER_COMPLETE",
    }
    project.coder_actions(adds_a_flaky_test, {"sentinel": "CODER_COMPLETE"})
    paused = project.run()
    assert paused.code == 5, paused.stdout + paused.stderr
    assert project.coder_calls() == 2
    history = json.loads(
        (store_dir(project.root) / "runs" / paused.data["run_id"] / "state.json").read_text()
    )
    first_tests = next(g for g in history["state"]["gate_history"] if g["name"] == "tests")
    assert first_tests["status"] == "fail" and first_tests["flaky"] == []
    assert first_tests["new_failures"] == ["tests/test_flaky.py::test_sometimes"]
    assert "test_sometimes" in project.coder_prompt(1)
    # the failing run, then the fix round's passing one: nothing in between
    assert (project.state_dir / "flaky_runs").read_text() == "2"


@pytest.mark.parametrize("mode", ["strict", "off"])
def test_strict_and_off_fail_the_step_on_a_preexisting_failure(tmp_path, mode):
    project = pytest_project(tmp_path, baseline=mode)
    project.coder_actions(FEATURE)
    failed = project.run()
    assert failed.outcome == "STEP_FAILED", failed.stdout + failed.stderr
    gate = gate_of_tests(failed.data)
    assert gate["status"] == "fail"
    assert project.coder_calls() == 2  # the old bug went to the fix loop, as before this setting
    baseline_dir = store_dir(project.root) / "baseline"
    if mode == "strict":
        assert gate["preexisting_failures"] == [OLD] and gate["new_failures"] == []
        assert list(baseline_dir.glob("tests-*.json"))
    else:  # not judged: the start is measured all the same (test-id conservation reads it)
        assert gate["preexisting_failures"] == [] and gate["new_failures"] == []
        assert "[stepkit verdict" not in gate["evidence"]


def test_a_criteria_map_citing_a_test_that_did_not_pass_is_rejected(tmp_path):
    project = pytest_project(tmp_path)
    project.coder_actions(FEATURE)
    cites_old = {
        **HANDOFF,
        "acceptance_criteria": [{"criterion": "`python check.py` passes.", "tests": [OLD]}],
    }
    failed = project.run(engine=project.script(write_handoff=cites_old))
    assert failed.outcome == "STEP_FAILED", failed.stdout + failed.stderr
    assert "handoff failed validation twice" in failed.output
    assert (
        f"cites test '{OLD}', which did not pass in the final tests gate (PRE-EXISTING FAILURE)"
        in failed.output
    )

    ok = make_project(tmp_path / "second", reviewer=False)
    cites_nothing = {**HANDOFF, "acceptance_criteria": []}
    paused = ok.run(engine=ok.script(write_handoff=cites_nothing))
    assert paused.code == 5, paused.output  # no entry is no test cited, not a failure
    assert "- C1: `python check.py` passes. — no test cited" in paused.data["pending"]["question"]
    assert (
        "C1: `python check.py` passes. — no test cited"
        in Path(paused.data["handoff_draft"]).read_text().split("## Evidence", 1)[1]
    )


def test_a_criteria_map_of_passing_tests_is_shown_at_the_approval(tmp_path):
    project = pytest_project(tmp_path)
    project.coder_actions(FEATURE)
    cites_mul = {**HANDOFF, "acceptance_criteria": [{"criterion": "C1", "tests": ["test_mul"]}]}
    paused = project.run(engine=project.script(write_handoff=cites_mul))
    assert paused.code == 5, paused.stdout + paused.stderr
    assert (
        f"- C1: `python check.py` passes. — `{MUL}`: passed" in paused.data["pending"]["question"]
    )
    draft = Path(paused.data["handoff_draft"]).read_text()  # approved, it goes to plans/
    assert f"`{MUL}`: passed" in draft.split("## Evidence", 1)[1]


def test_verify_baseline_ref_compares_the_working_tree_with_a_commit(tmp_path):
    project = pytest_project(tmp_path)
    same = project.stepkit("verify", "--project-dir", str(project.root), "--baseline", "HEAD")
    assert same.code == 0, same.stdout + same.stderr
    assert gate_of_tests(same.data)["preexisting_failures"] == [OLD]
    plain = project.stepkit("verify", "--project-dir", str(project.root))
    assert (
        plain.code == 1 and gate_of_tests(plain.data)["status"] == "fail"
    )  # no ref: the exit code decides

    (project.root / "calc.py").write_text(BROKEN_ADD)
    broken = project.stepkit("verify", "--project-dir", str(project.root), "--baseline", "HEAD")
    assert broken.code == 1
    gate = gate_of_tests(broken.data)
    assert gate["new_failures"] == [ADD] and gate["preexisting_failures"] == [OLD]
    changed = [
        line
        for line in project.git("status", "--porcelain").splitlines()
        if "__pycache__" not in line
    ]
    assert changed == [" M calc.py"]  # the user's tree untouched by the baseline

    bad = project.stepkit(
        "verify", "--project-dir", str(project.root), "--baseline", "nope", json_out=False
    )
    assert bad.code == 2 and bad.stderr.count("\n") == 1 and "no such commit" in bad.stderr


CARGO_LIB = """pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(2, 3), 5);
    }

    #[test]
    fn old_bug() {
        assert_eq!(add(i32::MAX, 0) + 0, -1);
    }
}
"""


@pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")
def test_cargo_test_preexisting_and_new_failures_against_a_ref(tmp_path):
    root = tmp_path / "crate"
    (root / "src").mkdir(parents=True)
    (root / "Cargo.toml").write_text(
        '[package]\nname = "adder"\nversion = "0.1.0"\nedition = "2021"\n'
    )
    (root / "src" / "lib.rs").write_text(CARGO_LIB)
    (root / ".gitignore").write_text("target/\n")
    (root / "stepkit.toml").write_text(
        '[commands]\nformat = ""\nlint = ""\nbuild = ""\ntest = "cargo test -q"\n'
    )
    init_repo(root, message="crate")
    project = Project(root, tmp_path)
    same = project.stepkit("verify", "--project-dir", str(root), "--baseline", "HEAD")
    assert same.code == 0, same.stdout + same.stderr
    assert gate_of_tests(same.data)["preexisting_failures"] == ["tests::old_bug"]

    (root / "src" / "lib.rs").write_text(CARGO_LIB.replace("a + b", "a - b"))
    broken = project.stepkit("verify", "--project-dir", str(root), "--baseline", "HEAD")
    gate = gate_of_tests(broken.data)
    assert broken.code == 1 and gate["new_failures"] == ["tests::adds"]
    assert gate["preexisting_failures"] == ["tests::old_bug"]


VITEST_SUITE = """import { describe, expect, it } from "vitest";
import { add } from "./calc.js";

describe("calc", () => {
  it("adds", () => expect(add(2, 3)).toBe(5));
  it("has an old bug", () => expect(add(0.1, 0.2)).toBe(0.3));
});
"""


@pytest.fixture(scope="module")
def vitest_modules(tmp_path_factory) -> Path:
    """node_modules with vitest, installed once into a tmp dir (skips when npm
    or the registry is not there)."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    cache = tmp_path_factory.mktemp("vitest")
    (cache / "package.json").write_text('{"name": "vitest-cache", "private": true}')
    try:
        done = subprocess.run(
            ["npm", "i", "--no-audit", "--no-fund", "vitest@3"],
            cwd=cache,
            check=False,
            capture_output=True,
            text=True,
            timeout=300,
        )
    except subprocess.TimeoutExpired:
        pytest.skip("npm install of vitest timed out")
    if done.returncode != 0 or not (cache / "node_modules" / ".bin" / "vitest").exists():
        pytest.skip(f"npm could not install vitest: {done.stderr.strip()[-200:]}")
    return cache / "node_modules"


def test_vitest_behind_npm_test_preexisting_and_new_failures_against_a_ref(
    tmp_path, vitest_modules
):
    root = tmp_path / "web"
    (root / "src").mkdir(parents=True)
    files = {
        "package.json": json.dumps(
            {"name": "web", "private": True, "type": "module", "scripts": {"test": "vitest run"}}
        ),
        "src/calc.js": "export function add(a, b) {\n  return a + b;\n}\n",
        "src/calc.test.js": VITEST_SUITE,
        ".gitignore": "node_modules\n",
        "stepkit.toml": '[commands]\nformat = ""\nlint = ""\nbuild = ""\ntest = "npm test"\n',
    }
    for rel, text in files.items():
        (root / rel).write_text(text)
    (root / "node_modules").symlink_to(vitest_modules, target_is_directory=True)
    init_repo(root, message="web")
    project = Project(root, tmp_path)
    old, adds = "src/calc.test.js › calc › has an old bug", "src/calc.test.js › calc › adds"

    same = project.stepkit("verify", "--project-dir", str(root), "--baseline", "HEAD")
    assert same.code == 0, same.stdout + same.stderr
    assert gate_of_tests(same.data)["preexisting_failures"] == [old]

    (root / "src" / "calc.js").write_text("export function add(a, b) {\n  return a - b;\n}\n")
    broken = project.stepkit("verify", "--project-dir", str(root), "--baseline", "HEAD")
    gate = gate_of_tests(broken.data)
    assert (
        broken.code == 1
        and gate["new_failures"] == [adds]
        and gate["preexisting_failures"] == [old]
    )


#: the step's calc keeps state between calls: the second call of add is wrong
LEAKY_ADD = (
    "_calls = []\n\n\ndef add(a, b):\n    _calls.append((a, b))\n"
    "    return a + b if len(_calls) == 1 else a - b\n\n\ndef mul(a, b):\n    return a * b\n"
)
ADD_AGAIN = "import calc\n\n\ndef test_add_again():\n    assert calc.add(2, 3) == 5\n"


def test_a_test_that_fails_after_another_and_passes_alone_is_order_dependent_not_flaky(tmp_path):
    project = pytest_project(
        tmp_path,
        extra={
            "tests/test_calc.py": SUITE.split("\n\ndef test_old_bug")[0] + "\n",
            "tests/test_z.py": ADD_AGAIN,
        },
    )
    leaky = {
        "write": {"calc.py": LEAKY_ADD, "tests/test_mul.py": MUL_TEST},
        "sentinel": "CODER_COMPLETE",
    }
    project.coder_actions(leaky, FEATURE)
    paused = project.run()
    assert paused.code == 5, paused.stdout + paused.stderr
    assert project.coder_calls() == 2  # the order-dependent failure went to the fix loop
    named = "tests/test_z.py::test_add_again fails after tests/test_calc.py::test_add"
    assert f"order-dependent: {named}" in project.coder_prompt(1)
    history = json.loads(
        (store_dir(project.root) / "runs" / paused.data["run_id"] / "state.json").read_text()
    )
    first_tests = next(g for g in history["state"]["gate_history"] if g["name"] == "tests")
    assert (first_tests["status"], first_tests["flaky"]) == ("fail", [])
    assert first_tests["order_dependent"] == [named]
    assert first_tests["new_failures"] == ["tests/test_z.py::test_add_again"]


def test_os_exit_in_a_conftest_the_step_adds_is_not_run_never_pass(tmp_path):
    project = pytest_project(tmp_path)
    trick = {
        "write": {
            "calc.py": BROKEN_ADD,
            "tests/test_mul.py": MUL_TEST,
            "conftest.py": "import os\nos._exit(0)\n",
        },
        "sentinel": "CODER_COMPLETE",
    }
    project.coder_actions(trick)
    paused = project.run()
    gate = gate_of_tests(paused.data)
    # no test ran, so the tests that held at the step's start are lost: the gate fails
    assert gate["status"] == "fail", gate
    assert "This is NOT evidence that tests passed" in gate["summary"]
    assert (
        f"does not run to a result after it (missing, deselected, not collected, skipped or renamed): {ADD}"
        in gate["summary"]
    )
    assert "tests: PASS" not in paused.output
