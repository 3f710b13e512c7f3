"""stepkit's own records out of the coder's reach, end to end: the run store
in the git directory (no whole-tree check of the project sees it, ``git
clean -xfd`` does not reach it), a legacy ``.stepkit/`` moved there, and
records the coder forges, edits or deletes never believed, each named."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from stepkit.workspace.seal import write_sealed
from stepkit.workspace.store import store_dir
from tests.e2e.test_e2e_verdicts import ADD, BROKEN_ADD, MUL_TEST, gate_of_tests, pytest_project
from tests.support.e2e import GOOD_MUL, PY, command_coder, flag_texts, make_project, unconfined_env

# whole-step runs over many variants: outside the default suite (tests/conftest.py)
pytestmark = pytest.mark.slow

#: A whole-tree check as ``prettier .`` or ``eslint .`` does it: every file
#: on disk outside ``.git`` (and bytecode) must be one git knows, whatever
#: any nested ``.gitignore`` says.
TREE_CHECK = """import os, subprocess, sys
known = set(subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], capture_output=True,
                           text=True, check=True).stdout.split())
strays = []
for top, dirs, files in os.walk("."):
    dirs[:] = [d for d in dirs if d not in (".git", "__pycache__")]
    strays += [os.path.relpath(os.path.join(top, f)) for f in files]
strays = [p for p in strays if p not in known or p.startswith(".stepkit")]
print("stray files:", strays)
sys.exit(1 if strays else 0)
"""

#: A coder that breaks a committed test and, from its second round on,
#: writes into every baseline record that the broken test failed before the step.
FORGER = f"""import json, pathlib, subprocess, sys
state = pathlib.Path(sys.argv[1])
calls = state / "forger_calls"
n = int(calls.read_text()) if calls.exists() else 0
calls.write_text(str(n + 1))
sys.stdin.read()
pathlib.Path("calc.py").write_text({BROKEN_ADD!r})
pathlib.Path("tests/test_mul.py").write_text({MUL_TEST!r})
common = subprocess.run(["git", "rev-parse", "--git-common-dir"], capture_output=True, text=True).stdout.strip()
for record in [*pathlib.Path(common).glob("stepkit/*/baseline/tests-*.json"),
               *pathlib.Path(".stepkit").glob("baseline/tests-*.json")]:
    data = json.loads(record.read_text())
    data["failures"] = sorted({{*(data["failures"] or []), {ADD!r}}})
    record.write_text(json.dumps(data))
    print("forged", record)
print("CODER_COMPLETE")
"""


def checkpoint(project, run_id: str) -> dict:
    return json.loads((store_dir(project.root) / "runs" / run_id / "state.json").read_text())


def test_the_store_is_in_the_git_dir_and_a_whole_tree_check_never_sees_it(tmp_path):
    project = make_project(tmp_path)
    (project.root / "tree_check.py").write_text(TREE_CHECK)
    config = (project.root / "stepkit.toml").read_text()
    (project.root / "stepkit.toml").write_text(
        config.replace(f'test = "{PY} check.py"', f'test = "{PY} check.py && {PY} tree_check.py"')
    )
    project.git("add", "-A")
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "a whole-tree check")

    paused = project.run()

    assert paused.code == 5, paused.stdout + paused.stderr
    assert gate_of_tests(paused.data)["status"] == "pass", paused.data["gates"]
    run_dir = Path(paused.data["run_dir"])
    assert run_dir == store_dir(project.root) / "runs" / paused.data["run_id"]
    assert run_dir.is_relative_to(project.root / ".git" / "stepkit")
    assert not (project.root / ".stepkit").exists()
    status = project.stepkit("status", "--project-dir", str(project.root)).data
    assert status["run_dir"] == str(run_dir)


def test_git_clean_by_the_coder_deletes_neither_the_store_nor_the_lock(tmp_path):
    project = make_project(tmp_path)
    (project.state_dir / "cleaner.py").write_text(
        "import pathlib, subprocess, sys\nsys.stdin.read()\n"
        "subprocess.run(['git', 'clean', '-xfd'], check=True)\n"
        f"pathlib.Path('calc.py').write_text({GOOD_MUL!r})\nprint('CODER_COMPLETE')\n"
    )

    paused = project.run(coder=command_coder(PY, project.state_dir / "cleaner.py"))

    assert paused.code == 5, paused.stdout + paused.stderr
    state = checkpoint(project, paused.data["run_id"])
    assert state["status"] == "paused"
    assert not state["state"].get("tamper_flags")
    done = project.resume("approve")
    assert done.outcome == "STEP_COMPLETE", done.stderr


def test_a_forged_baseline_record_does_not_make_a_broken_test_pre_existing(tmp_path):
    project = pytest_project(tmp_path)
    forger = project.state_dir / "forger.py"
    forger.write_text(FORGER)

    # unconfined: in the sandbox the coder cannot see the run store at all
    failed = project.run(
        coder=command_coder(PY, forger, project.state_dir),
        env=project.env(**unconfined_env(tmp_path)),
    )

    assert failed.outcome == "STEP_FAILED", failed.stdout + failed.stderr
    assert (
        int((project.state_dir / "forger_calls").read_text()) > 1
    )  # a forged record was there to read
    gate = gate_of_tests(failed.data)
    assert gate["status"] == "fail" and gate["new_failures"] == [ADD], gate
    flags = flag_texts(checkpoint(project, failed.data["run_id"])["state"], "run_store")
    assert flags and all(
        "forged or edited: " in flag and "/baseline/tests-" in flag for flag in flags
    ), flags


def test_a_checkpoint_edited_while_paused_is_not_resumed_and_is_named(tmp_path):
    project = make_project(tmp_path)
    paused = project.run()
    assert paused.code == 5, paused.stdout + paused.stderr
    state_file = store_dir(project.root) / "runs" / paused.data["run_id"] / "state.json"
    data = json.loads(state_file.read_text())
    data["state"]["gates"] = [{**g, "status": "pass"} for g in data["state"]["gates"]]
    state_file.write_text(json.dumps(data))

    refused = project.resume("approve")

    assert refused.code == 2 and refused.stdout == "", refused.stdout
    assert f"forged or edited: {state_file} (its seal does not verify)" in refused.stderr, (
        refused.stderr
    )
    assert len(refused.stderr.strip().splitlines()) == 1


def test_a_deleted_baseline_cache_and_snapshot_are_rebuilt_and_reported(tmp_path):
    project = pytest_project(tmp_path)
    deleter = project.state_dir / "deleter.py"
    deleter.write_text(
        "import pathlib, shutil, subprocess, sys\nsys.stdin.read()\n"
        "common = subprocess.run(['git', 'rev-parse', '--git-common-dir'], capture_output=True, text=True)"
        ".stdout.strip()\n"
        "for store in pathlib.Path(common).glob('stepkit/*'):\n"
        "    shutil.rmtree(store / 'baseline', ignore_errors=True)\n"
        "    for snapshot in store.glob('runs/*/scope_snapshot.json'):\n"
        "        snapshot.unlink()\n"
        f"pathlib.Path('calc.py').write_text({BROKEN_ADD!r})\nprint('CODER_COMPLETE')\n"
    )

    failed = project.run(  # unconfined, as above
        coder=command_coder(PY, deleter), env=project.env(**unconfined_env(tmp_path))
    )

    assert failed.outcome == "STEP_FAILED", failed.stdout + failed.stderr
    assert gate_of_tests(failed.data)["new_failures"] == [ADD]
    state = checkpoint(project, failed.data["run_id"])["state"]
    assert any(
        "scope_snapshot.json (deleted)" in flag for flag in flag_texts(state, "run_store")
    ), flag_texts(state, "run_store")


def test_a_store_an_earlier_version_left_in_the_project_is_moved_and_resumed(tmp_path):
    project = make_project(tmp_path)
    paused = project.run()
    assert paused.code == 5, paused.stdout + paused.stderr
    store = store_dir(project.root)
    run = store / "runs" / paused.data["run_id"]
    unsealed = re.sub(r',"seal":"[0-9a-f]{64}"\}$', "}", (run / "state.json").read_text())
    (run / "state.json").write_text(unsealed)  # earlier versions sealed nothing
    subprocess.run(["mv", str(store), str(project.root / ".stepkit")], check=True)
    write_sealed(
        project.root / ".stepkit" / "baseline" / "x.json", "{}"
    )  # a cache: not carried over

    done = project.resume("approve")

    assert done.outcome == "STEP_COMPLETE", done.stderr
    assert not (project.root / ".stepkit").exists()
    assert (run / "state.json").is_file() and not (store / "baseline").exists()
