"""The installed fingerprint is taken beside the run's start, and is there
before anything that could change the tools runs.

The gates' Python here is a ``python3`` first on PATH that, asked for its
site directories (what the fingerprint waits for), answers only once the
run's orientation has begun, and leaves a mark saying so.  Taken before the
graph started, the fingerprint would wait for an orientation that never
comes until the stand-in gives up; taken beside it, the orientation runs
while the fingerprint waits.  The coder looks for the mark as it starts:
the fingerprint was taken before it ran, in the run's first process or in
the process that resumed it.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest

from stepkit.workspace.gate_commands import INSTALLED_KEY
from stepkit.workspace.seal import is_apart
from stepkit.workspace.store import store_dir
from tests.support.e2e import ORIENT, PY, Project, make_project

#: the stand-in's wait for the orientation, at most (the run's own wait is shorter than the suite's)
WAIT_S = 20
#: a ``python3``/``python`` that, asked for its site directories, answers once the
#: orientation of a run of the project has started (``{runs}``), marking ``{mark}``
#: with ``orient`` or ``gave up``; any other call is the real Python's
STAND_IN = """#!{py}
import glob, os, sys, time
if sys.argv[1:3] == ["-S", "-c"]:
    deadline = time.monotonic() + {wait}
    seen = False
    while not seen and time.monotonic() < deadline:
        for events in glob.glob({runs!r} + "/*/events.jsonl"):
            with open(events, encoding="utf-8") as lines:
                seen = seen or any('"orient"' in line and "node_started" in line for line in lines)
        if not seen:
            time.sleep(0.01)
    with open({mark!r}, "a", encoding="utf-8") as mark:
        mark.write("orient\\n" if seen else "gave up\\n")
os.execv({py!r}, [{py!r}, *sys.argv[1:]])
"""


def _with_stand_in(tmp_path: Path, project: Project) -> tuple[dict[str, str], Path]:
    """The run's environment, the stand-in Python first on PATH, and its mark."""
    bin_dir, mark = tmp_path / "gates-python", project.state_dir / "site-dirs-asked"
    bin_dir.mkdir()
    script = STAND_IN.format(
        py=PY, wait=WAIT_S, runs=str(store_dir(project.root) / "runs"), mark=str(mark)
    )
    for name in ("python3", "python"):
        (bin_dir / name).write_text(script)
        (bin_dir / name).chmod(0o755)
    env = project.env()
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    return env, mark


def _coder_looks_for(mark: Path, seen: Path) -> dict:
    """A coder round that notes whether ``mark`` is there as it starts, then adds mul."""
    look = f"if [ -f {shlex.quote(str(mark))} ]; then echo there; else echo missing; fi"
    return {
        "shell": f"{look} > {shlex.quote(str(seen))}",
        "write": {
            "calc.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
        },
        "sentinel": "CODER_COMPLETE",
    }


def _installed_of(run_dir: str) -> object:
    return json.loads((Path(run_dir) / "state.json").read_text())["settings"][INSTALLED_KEY]


def test_the_orientation_runs_while_the_fingerprint_is_taken_and_the_coder_after_it(tmp_path):
    project = make_project(tmp_path)
    env, mark = _with_stand_in(tmp_path, project)
    seen = project.state_dir / "coder-saw"
    project.coder_actions(_coder_looks_for(mark, seen))

    result = project.run(env=env)

    assert result.code == 5, result.stdout[-3000:] + result.stderr
    assert result.data["pending"]["node"] == "gate_user_review"
    assert mark.read_text().splitlines()[0] == "orient"
    assert seen.read_text().strip() == "there"
    assert is_apart(_installed_of(result.data["run_dir"]))


@pytest.mark.slow
def test_a_run_that_paused_before_its_coder_takes_the_fingerprint_when_it_resumes(tmp_path):
    project = make_project(tmp_path)
    env, mark = _with_stand_in(tmp_path, project)
    seen = project.state_dir / "coder-saw"
    project.coder_actions(_coder_looks_for(mark, seen))
    deviation = {**ORIENT, "has_major_deviation": True, "deviation_summary": "calc.py moved"}

    paused = project.run(engine=project.script(orient=deviation), env=env)
    assert paused.data["pending"]["node"] == "gate_deviation", paused.stderr
    mark.unlink(missing_ok=True)  # what the first process asked is not the resume's
    resumed = project.resume("yes", env=env)

    assert resumed.data["pending"]["node"] == "gate_user_review", resumed.stderr
    assert seen.read_text().strip() == "there"
    assert is_apart(_installed_of(resumed.data["run_dir"]))
