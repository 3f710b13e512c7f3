"""The gates find the project's own tools (``stepkit_tool_dirs``: its ``.venv/bin`` first on PATH,
named in detect and in the evidence), and a step that changes those tools
cannot pass the tests gate with them: real processes, a real git repo, a
project-local virtualenv directory with its own tool."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.support.e2e import PY, WRONG_MUL, command_coder, make_project, sh
from tests.support.variants import first_by_default

PLAIN_PATH = "/usr/bin:/bin"


def with_tools(tmp_path, test_command: str):
    """A project whose tests gate is ``test_command``, with a ``.venv`` (git
    ignores it) holding ``judge``, which runs the real check."""
    project = make_project(tmp_path)
    venv = project.root / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    tool(venv / "bin" / "judge", f"exec {sh(PY)} check.py")
    (project.root / ".gitignore").write_text(".venv/\n")
    config = project.root / "stepkit.toml"
    config.write_text(
        config.read_text().replace(f'test = "{PY} check.py"', f'test = "{test_command}"')
    )
    project.git("add", "-A")
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "tools")
    return project


def tool(path, body: str) -> None:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def test_gates_run_the_projects_own_tools_and_say_so(tmp_path):
    project = with_tools(tmp_path, "judge")
    env = project.env(PATH=PLAIN_PATH)
    verify = project.stepkit("verify", "--json", "--project-dir", str(project.root), env=env)
    gates = {g["name"]: g for g in verify.data["gates"]}
    # judge ran from .venv/bin (calc has no mul yet at HEAD): a real failure, not "command not found"
    assert (gates["tests"]["status"], gates["tests"]["exit_code"]) == ("fail", 1), gates["tests"]
    assert "test_mul: calc has no mul" in gates["tests"]["evidence"]
    assert gates["tests"]["evidence"].startswith(
        "environment: .venv/bin first on PATH (the project's own tools)"
    )
    detect = project.stepkit("detect", "--project-dir", str(project.root), env=env, json_out=False)
    assert "env:    .venv/bin first on PATH (the project's own tools)" in detect.stdout
    assert json.loads(
        project.stepkit(
            "detect", "--json", "--project-dir", str(project.root), env=env, json_out=False
        ).stdout
    )["tool_dirs"] == [".venv/bin"]


EVIL = """#!/bin/sh
cat > /dev/null
printf '%s' '{wrong}' > calc.py
{trick}
echo CODER_COMPLETE
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "test_command, trick, named",
    first_by_default(
        [
            # the step breaks mul, then makes the project's own test tool say it passed
            (
                "judge",
                "printf '#!/bin/sh\\necho 2 passed in 0.01s\\n' > .venv/bin/judge",
                ".venv/bin/judge (changed)",
            ),
            # a variant: a tool the gate command names, planted where PATH finds it first
            # (python3: on the plain PATH, so the command can start at the step's start)
            (
                "python3 check.py",
                "printf '#!/bin/sh\\necho 2 passed in 0.01s\\n' > .venv/bin/python3 && chmod +x .venv/bin/python3",
                ".venv/bin/python3 (added)",
            ),
        ],
        several=True,
    ),
)
def test_a_step_that_changes_the_tools_that_judge_it_fails_the_tests_gate(
    tmp_path, test_command, trick, named
):
    project = with_tools(tmp_path, test_command)
    coder = project.state_dir / "evil.sh"
    coder.write_text(EVIL.format(wrong=WRONG_MUL, trick=trick))
    result = project.run(
        "--set",
        "max_fix_attempts=0",
        coder=command_coder("sh", coder),
        env=project.env(PATH=PLAIN_PATH),
    )
    assert result.outcome == "STEP_FAILED", result.stdout + result.stderr
    tests = next(g for g in result.data["gates"] if g["name"] == "tests")
    assert tests["status"] == "fail"
    assert tests["summary"] == f"the step changed tools the gates run: {named}"
    assert "changing the tools that judge the step is not a fix" in tests["evidence"]


@pytest.mark.slow
def test_an_honest_step_in_a_project_with_tools_passes(tmp_path):
    project = with_tools(tmp_path, "judge")
    result = project.run(env=project.env(PATH=PLAIN_PATH))
    assert result.code == 5 and result.data["pending"]["node"] == "gate_user_review", result.stdout
    assert {g["name"]: g["status"] for g in result.data["gates"]}["tests"] == "pass"


@pytest.mark.slow
def test_the_demo_needs_no_path_of_its_own(tmp_path):
    done = subprocess.run(
        [PY, "-m", "stepkit", "demo"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": PLAIN_PATH, "HOME": str(tmp_path)},
        stdin=subprocess.DEVNULL,
        timeout=300,
        check=False,
    )
    assert done.returncode == 5, done.stdout + done.stderr
    assert "- lint: PASS (`ruff check`" in done.stdout and "- tests: PASS" in done.stdout
