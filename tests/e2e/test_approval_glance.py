"""The final approval at a glance, and what an approval commits: real CLI
runs on a real git project (tests/support/e2e.py), scripted engine and
command coder.

- the question opens with the step, a verdict line per gate, the files
  changed with their +/- line counts, the flags (empty ones folded into one
  line) and the criteria map, with project-relative paths;
- the commands it prints resume the run by a short run-id prefix;
- an approved handoff, NOTES.md and a later step's Edge cases hold no
  absolute path of the machine (the project's, the run store's, $HOME).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from stepkit.workspace.store import store_dir
from tests.support.e2e import GOOD_MUL, HANDOFF, SWEEP, make_project, sh

# whole-step runs: outside the default suite (tests/conftest.py)
pytestmark = pytest.mark.slow

NEW_TEST = "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"


def _shown_python(project) -> str:
    """The project's Python as the gates' commands show it: relative to the
    project, quoted as the shell needs it (the test's path holds a space)."""
    return sh(project.root / ".venv" / "bin" / "python").replace(f"{project.root}/", "")


def _paused_at_review(tmp_path: Path, **env: str):
    """A project whose step 1 ran to the final question; the coder changed
    calc.py (+3) and added test_mul.py (+5); the gates run through a Python
    inside the project (``.venv``, as a user's virtualenv is)."""
    project = make_project(tmp_path, reviewer=False)
    (project.root / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    python = project.root / ".venv" / "bin" / "python"
    config = (project.root / "stepkit.toml").read_text().replace(sys.executable, sh(python))
    (project.root / "stepkit.toml").write_text(config)
    (project.root / ".gitignore").write_text(".venv\n")
    project.git("add", "-A")
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "venv")
    project.coder_actions(
        {"write": {"calc.py": GOOD_MUL, "test_mul.py": NEW_TEST}, "sentinel": "CODER_COMPLETE"}
    )
    home = str(tmp_path / "home")
    handoff = {
        **HANDOFF,
        "notes_facts": [
            f"the gates ran with {python}",
            f"a helper script lives in {home}/bin/helper",
        ],
    }
    sweep = {
        **SWEEP,
        "annotations": [{"step": 3, "edge_case": f"{project.root}/calc.py must stay importable."}],
    }
    engine = project.script(write_handoff=handoff, edge_case_sweep=sweep)
    run_env = project.env(HOME=home, CODER_AUTOAPPROVE="1", STEP_AUTOAPPROVE="1", **env)
    paused = project.run("--step", "1", engine=engine, env=run_env)
    assert paused.outcome == "PAUSED", paused.output + paused.stderr
    return project, paused, run_env


def test_committed_files_hold_no_absolute_path_of_the_machine(tmp_path):
    project, _, env = _paused_at_review(tmp_path)
    approved = project.resume("approve", env=env)
    assert approved.outcome == "STEP_COMPLETE", approved.output + approved.stderr

    handoff = project.handoff(1).read_text()
    committed = {
        "handoff": handoff,
        "NOTES.md": (project.plans / "NOTES.md").read_text(),
        "step 3": (project.plans / "steps" / "03-pow.md").read_text(),
    }
    for name, text in committed.items():
        for local in (str(project.root), str(project.root.resolve()), env["HOME"]):
            assert local not in text, f"{name} holds {local}:\n{text}"
    # what they held is still there, portable
    assert f"$ {_shown_python(project)} lint.py" in handoff
    assert "full log: <run store>/runs/" in handoff
    assert "the gates ran with .venv/bin/python" in committed["NOTES.md"]
    assert "~/bin/helper" in committed["NOTES.md"]
    assert "calc.py must stay importable." in committed["step 3"]


def test_the_final_question_opens_with_verdicts_files_flags_and_criteria(tmp_path):
    project, paused, _ = _paused_at_review(tmp_path)
    question = paused.data["pending"]["question"]
    lines = question.splitlines()
    assert lines[:2] == ["Step 1 (Add mul) is implemented and verified.", "Gates:"], question
    assert lines[2] == "- format: NOT RUN (no command; this is NOT evidence that format passed)"
    python = _shown_python(project)
    assert lines[3].startswith(f"- lint: PASS (`{python} lint.py`, exit 0, ")
    assert lines[4].startswith(f"- build: PASS (`{python} -m py_compile calc.py`, ")
    assert lines[5].startswith(f"- tests: PASS (`{python} check.py`, exit 0, ")
    assert lines[6:9] == [
        "Files changed (2, +9 -0):",
        "  calc.py      +4 -0",
        "  test_mul.py  +5 -0 (added)",
    ], question
    assert lines[9:12] == [
        "Acceptance criteria (tests stepkit saw pass in the final tests gate):",
        "- C1: `python check.py` passes. — no test cited",
        "No tamper flags, no scope deviations, no processes ended.",
    ], question
    assert "(none)" not in question
    assert "Handoff: plans/handoffs/01-mul.md once you approve (draft: .git/stepkit/" in question
    assert str(project.root) not in question
    # the commands that answer it name the run by a prefix, from the project
    run_id = paused.data["run_id"]
    assert f"  stepkit resume {run_id[:13]} --answer approve" in paused.output.splitlines()


def test_a_run_id_prefix_resumes_the_run_and_a_shared_one_is_refused_naming_both(tmp_path):
    project, paused, env = _paused_at_review(tmp_path)
    run_id = paused.data["run_id"]
    runs = store_dir(project.root) / "runs"
    # a second run started the same minute (a copy: refused before it is read)
    twin = f"{run_id[:13]}59-0000"
    shutil.copytree(runs / run_id, runs / twin)
    root = str(project.root)
    for command in ("resume", "undo"):
        args = [command, run_id[:13], "--project-dir", root]
        answer = ["--answer", "approve"] if command == "resume" else []
        refused = project.stepkit(*args, *answer, env=env, json_out=command == "resume")
        assert refused.code == 2, refused.stderr
        assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
        assert run_id in refused.stderr and twin in refused.stderr, refused.stderr
    shutil.rmtree(runs / twin)

    # headless, a view word is no answer: refused with where to see it, the run still paused
    looked = project.stepkit(
        "resume", run_id[:13], "--project-dir", root, "--answer", "diff", env=env
    )
    assert looked.code == 2 and "on a terminal" in looked.stderr, looked.stderr
    approved = project.stepkit(
        "resume", run_id[:15], "--project-dir", root, "--answer", "approve", env=env
    )
    assert approved.outcome == "STEP_COMPLETE", approved.output + approved.stderr
