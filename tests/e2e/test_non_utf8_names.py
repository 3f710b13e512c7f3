"""Bytes are bytes: a file name that is not UTF-8, created by the coder,
survives every record of a run (the sealed checkpoint, the events, the
snapshot, the plan-repo guard, the gate evidence and the handoff) and is
shown escaped (``caf\\xe9.txt``).  Real CLI, a real git repo, a command coder
script that creates the files through bytes, and the scripted engine.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from stepkit.workspace.store import store_dir
from tests.support.e2e import GOOD_MUL, PY, Project, command_coder, make_project

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="a file name of raw bytes needs a POSIX file system"
)

NAME = b"caf\xe9.txt"
HELD = os.fsdecode(NAME)  # how Python holds it: caf\udce9.txt
SHOWN = "caf\\xe9.txt"  # how stepkit shows it

#: a lint gate that fails naming each file (raw bytes) that holds the marker
LINT_NAMES = """import os, sys
bad = [name for name in sorted(os.listdir(b".")) if os.path.isfile(name) and b"LINT" + b"FAIL" in open(name, "rb").read()]
for name in bad:
    sys.stdout.buffer.write(name + b":1:1: E999 forbidden marker\\n")
sys.exit(1 if bad else 0)
"""


def bytes_coder(state_dir: Path, *names: bytes) -> str:
    """A coder that adds calc.mul and writes each of ``names`` (bytes,
    project-relative); its first round writes the lint marker into the first."""
    return f"""import os, pathlib, sys
state = pathlib.Path({str(state_dir)!r})
first = not (state / "bytes_prompt_0").exists()
(state / f"bytes_prompt_{{0 if first else 1}}").write_bytes(sys.stdin.buffer.read())
root = os.fsencode(os.environ["STEPKIT_PROJECT_DIR"])
with open(os.path.join(root, b"calc.py"), "w") as out:
    out.write({GOOD_MUL!r})
for name in {list(names)!r}:
    path = os.path.join(root, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as out:
        out.write(b"LINT" + b"FAIL\\n" if first and name == {names[0]!r} else b"menu\\n")
print("coder: added mul and the files")
print("CODER_COMPLETE")
"""


def strings(value: Any) -> list[str]:
    """Every string (keys too) anywhere in a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def listing_project(tmp_path: Path, *names: bytes) -> tuple[Project, str]:
    project = make_project(tmp_path)
    (project.root / "lint_names.py").write_text(LINT_NAMES)
    config = project.root / "stepkit.toml"
    config.write_text(
        config.read_text().replace(f'lint = "{PY} lint.py"', f'lint = "{PY} lint_names.py"')
    )
    project.git("add", "-A")
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "lint names files")
    coder = project.state_dir / "bytes_coder.py"
    coder.write_text(bytes_coder(project.state_dir, *names))
    return project, command_coder(PY, coder)


def run_dir(project: Project, run_id: str) -> Path:
    return store_dir(project.root) / "runs" / run_id


@pytest.mark.slow
def test_a_coder_made_latin1_name_reaches_the_approval_and_completes(tmp_path: Path) -> None:
    project, coder = listing_project(tmp_path, NAME)
    paused = project.run(coder=coder)
    assert paused.code == 5 and paused.outcome == "PAUSED", (paused.stdout, paused.stderr)
    assert "internal error" not in paused.stderr
    run = run_dir(project, paused.data["run_id"])

    # the checkpoint is UTF-8 JSON that reads back the name byte for byte
    state = json.loads((run / "state.json").read_text(encoding="utf-8").split("\n")[0])
    assert HELD in state["state"]["changed_files"]
    for line in (run / "events.jsonl").read_text(encoding="utf-8").splitlines():
        json.loads(line)
    # the failed lint gate's evidence reached the fix round's coder, the name in it escaped
    assert f"{SHOWN}:1:1: E999".encode() in (project.state_dir / "bytes_prompt_1").read_bytes()

    # the handoff shows it escaped, in the changed files and in the evidence, and its digest holds
    draft = Path(paused.data["handoff_draft"])  # the handoff, until it is approved
    handoff = draft.read_text(encoding="utf-8")
    assert f"`{SHOWN}`" in handoff
    checked = project.stepkit("check-handoff", str(draft))
    assert checked.code == 0, (checked.stdout, checked.stderr)

    done = project.resume("approve")
    assert done.code == 0 and done.outcome == "STEP_COMPLETE", (done.stdout, done.stderr)
    assert os.path.exists(os.path.join(os.fsencode(project.root), NAME))


# a variant of the test above, which keeps the path in the default suite; CI's slow suite runs it
@pytest.mark.slow
def test_a_latin1_name_in_the_snapshot_and_the_plan_repo_guard_survives_a_revise_round(
    tmp_path: Path,
) -> None:
    """A variant: the name is untracked before the step (so the snapshot
    holds it), sits in a directory whose name is not UTF-8 either, and the
    coder also writes one into the plan repo (undone, and named, by the
    guard); a revise round reloads the snapshot before the approval."""
    project, coder = listing_project(tmp_path, NAME, b"d\xfcr/x.txt", b"plans/steps/caf\xe9.md")
    with open(os.path.join(os.fsencode(project.root), NAME), "wb") as out:
        out.write(b"untracked before the step\n")
    paused = project.run(coder=coder)
    assert paused.code == 5 and paused.outcome == "PAUSED", (paused.stdout, paused.stderr)
    run = run_dir(project, paused.data["run_id"])
    snapshot = json.loads((run / "scope_snapshot.json").read_text(encoding="utf-8"))
    assert HELD in strings(snapshot)
    assert not os.path.exists(os.path.join(os.fsencode(project.plans), b"steps/caf\xe9.md"))
    handoff = Path(paused.data["handoff_draft"]).read_text(encoding="utf-8")
    assert "plans/steps/caf\\xe9.md" in handoff and "d\\xfcr/x.txt" in handoff

    asked = project.resume("revise")
    assert asked.code == 5 and asked.data["pending"]["node"] == "get_revision", (
        asked.stdout,
        asked.stderr,
    )
    revised = project.resume("keep the menu")
    assert revised.code == 5 and revised.data["pending"]["node"] == "gate_user_review", (
        revised.stdout
    )
    assert "plans/steps/caf\\xe9.md (added; removed" in revised.data["pending"]["question"]
    done = project.resume("approve")
    assert done.code == 0 and done.outcome == "STEP_COMPLETE", (done.stdout, done.stderr)
