"""``stepkit status`` as a user runs it: real processes, exit codes, one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import cli


def stepkit(*args: str, cwd: Path, encoding: str = "utf-8") -> subprocess.CompletedProcess:
    return cli.stepkit(*args, cwd=cwd, env={**os.environ, "PYTHONIOENCODING": encoding})


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    plans = tmp_path / "plans"
    write(plans / "steps" / "01-setup.md", "---\ntitle: Set up\nstatus: complete\n---\n# Set up\n")
    write(plans / "steps" / "02-api.md", "---\ntitle: Add API\ndepends_on: [1]\n---\n")
    write(
        plans / "steps" / "03-ui.md",
        "---\ntitle: Add UI\nstatus: pending\ndepends_on:\n  - 2\n  - 9\n---\n",
    )
    write(plans / "handoffs" / "01-setup.md", "---\nstep: 1\nresult: complete\n---\n## Summary\n")
    return tmp_path


def test_json_has_the_design_shape(project):
    done = stepkit("status", "--json", cwd=project)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert list(data) == [
        "plans_dir",
        "next",
        "steps",
        "problems",
        "paused_runs",
        "run_store",
        "run_dir",
        "worktree_runs",
        "unmerged_branches",
    ]
    assert data["plans_dir"] == "plans" and data["next"] == 2
    assert data["steps"][0] == {
        "step": 1,
        "slug": "setup",
        "title": "Set up",
        "status": "complete",
        "path": str(Path("plans/steps/01-setup.md")),
        "depends_on": [],
        "deps_satisfied": True,
        "unsatisfied": [],
        "handoff": str(Path("plans/handoffs/01-setup.md")),
        "handoff_result": "complete",
        "state": "complete",
        "state_why": "status: complete; handoff 01-setup.md says result: complete",
        # a plan with no sections is incomplete (stepkit/planrepo/quality.py)
        "incomplete": ["Objective: missing", "Tasks: missing", "Acceptance criteria: missing"],
    }
    third = data["steps"][2]
    assert third["depends_on"] == [2, 9] and third["deps_satisfied"] is False
    assert third["unsatisfied"] == [
        "step 2 (Add API): no handoff",
        "step 9: no such step, no handoff",
    ]
    assert third["handoff"] is None and third["handoff_result"] is None
    assert data["problems"] == [
        f"{Path('plans/steps/03-ui.md')}: depends on step 9, which does not exist (edit its depends_on)"
    ]


def test_the_python_api_returns_the_same_object(project):
    from stepkit.api import plan_status

    root = project.resolve()
    done = stepkit("status", "--json", "--project-dir", str(root), cwd=root)
    assert json.loads(done.stdout) == plan_status(root)


def test_table_marks_next_and_lists_problems_without_colour(project):
    done = stepkit("status", cwd=project)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "\x1b[" not in done.stdout
    header = next(line for line in lines if "STEP" in line)
    assert header.split() == ["STEP", "TITLE", "STATUS", "STATE", "DEPS", "HANDOFF"]
    (marked,) = [line for line in lines if line.startswith("→")]
    assert marked.split()[1:] == ["2", "Add", "API", "pending", "pending", "1", "-"]
    row3 = next(line for line in lines if " Add UI " in line)
    assert "2, 9 (2 unmet)" in row3
    assert "next: step 2 (Add API)" in lines
    assert "Problems (1):" in lines
    assert lines[-1].endswith(
        "03-ui.md: depends on step 9, which does not exist (edit its depends_on)"
    )


def test_table_falls_back_to_ascii_when_stdout_cannot_encode_the_arrow(project):
    write(project / "plans" / "steps" / "02-api.md", "---\ntitle: Add API – caf\u00e9\n---\n")
    done = stepkit("status", cwd=project, encoding="ascii")
    assert done.returncode == 0, done.stderr
    (marked,) = [line for line in done.stdout.splitlines() if line.startswith(">")]
    assert marked.split()[1:5] == ["2", "Add", "API", "?"]


def test_project_dir_and_config_plans_dir(project, tmp_path):
    (project / "plans").rename(project / "docs-plans")
    write(project / "stepkit.toml", 'plans_dir = "docs-plans"\n')
    done = stepkit("status", "--json", "--project-dir", str(project), cwd=tmp_path.parent)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["plans_dir"] == str(project / "docs-plans")
    done = stepkit("status", "--json", "--plans-dir", "docs-plans", cwd=project)
    assert json.loads(done.stdout)["next"] == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--plans-dir", "nowhere"],
            "stepkit: error: no plan repo at nowhere (expected nowhere/steps/): stepkit init writes one, --plans-dir names another",
        ),
        (
            ["--plans-dir", "empty"],
            "stepkit: error: no plan repo at empty (expected empty/steps/): stepkit init writes one, --plans-dir names another",
        ),
        (["--project-dir", "missing"], "stepkit: error: project dir missing is not a directory"),
    ],
)
def test_unreadable_repo_exits_2_with_one_line(project, args, message):
    (project / "empty").mkdir()
    done = stepkit("status", *args, cwd=project)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [message]


def test_bad_config_exits_2_with_one_line(project):
    write(project / "stepkit.toml", "plans_dir = [\n")
    done = stepkit("status", cwd=project)
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr


def test_garbage_plan_files_never_show_a_traceback(project):
    steps = project / "plans" / "steps"
    (steps / "04-binary.md").write_bytes(bytes(range(256)))
    (steps / "05-empty.md").write_bytes(b"")
    (steps / "06-dashes.md").write_bytes(b"---")
    (steps / "07-deep.md").write_text("---\nx: " + "[" * 5000 + "\n---\n", encoding="utf-8")
    (steps / "08-list.md").write_text("---\n- a\n---\n", encoding="utf-8")
    (steps / "09-nul.md").write_bytes(b"---\ntitle: a\x00b\n---\n")
    (steps / "10-cycle.md").write_text("---\ndepends_on: [11]\n---\n", encoding="utf-8")
    (steps / "11-cycle.md").write_text("---\ndepends_on: [10, 11]\n---\n", encoding="utf-8")
    (steps / "readme.md").write_text("hi", encoding="utf-8")
    for args in (["status"], ["status", "--json"]):
        done = stepkit(*args, cwd=project)
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr + done.stdout
    problems = json.loads(done.stdout)["problems"]
    text = "\n".join(problems)
    for expected in (
        "04-binary.md: not UTF-8",
        "06-dashes.md: malformed frontmatter",
        "07-deep.md: malformed frontmatter",
        "08-list.md: malformed frontmatter",
        "09-nul.md: malformed frontmatter",
        "10-cycle.md: dependency cycle: 10 -> 11 -> 10",
        "11-cycle.md: step 11 depends on itself (edit its depends_on)",
        "readme.md: file name does not start",
    ):
        assert expected in text


@pytest.mark.parametrize(
    "argv", [["status", "--json"], ["status"], ["--version"], ["graph"], ["detect"]]
)
def test_commands_without_a_model_do_not_import_anthropic(project, argv):
    script = (
        "import sys\nfrom stepkit.cli import main\n"
        f"try:\n    code = main({argv!r})\nexcept SystemExit as exc:\n    code = exc.code\n"
        "assert code == 0, code\n"
        # the engine kinds' registry, the budget rule and the default budget are light;
        # the SDKs and the engines are not
        "light = ('stepkit.plugins.llm', 'stepkit.plugins.llm.builtin_engines', 'stepkit.plugins.llm.budget',\n"
        "         'stepkit.plugins.llm.helpers')\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('anthropic', 'openai', 'mcp')\n"
        "         or (m.startswith('stepkit.plugins.llm') and m not in light)]\n"
        "assert not heavy, f'imported: {heavy}'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_empty_steps_dir_reads_fine(tmp_path):
    (tmp_path / "plans" / "steps").mkdir(parents=True)
    done = stepkit("status", "--json", cwd=tmp_path)
    assert done.returncode == 0
    assert json.loads(done.stdout) == {
        "plans_dir": "plans",
        "next": None,
        "steps": [],
        "problems": [],
        "paused_runs": [],
        "run_store": str(tmp_path / ".stepkit"),
        "run_dir": None,
        "worktree_runs": [],
        "unmerged_branches": [],
    }
    table = stepkit("status", cwd=tmp_path)
    assert "next: none (no in-progress or pending step)" in table.stdout
    assert "No problems." in table.stdout


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        (
            '[tool.stepkit.timeouts]\ntests = "slow"\n',
            "stepkit setting timeouts.tests: Input should be a valid number",
        ),
        (
            '[tool.stepkit.commands]\ntset = "pytest"\n',
            "stepkit setting commands.tset: unknown field",
        ),
    ],
)
def test_a_bad_setting_is_one_line_naming_the_file_and_the_key(project, table, expected):
    write(project / "pyproject.toml", table)
    done = stepkit("status", cwd=project)
    assert done.returncode == 2
    assert done.stderr.startswith(f"stepkit: error: pyproject.toml: {expected}")
    assert len(done.stderr.splitlines()) == 1
