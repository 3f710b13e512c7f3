"""The gates run in the order the project's CI runs them when CI builds
before it formats or lints: a real node project (tests/fixtures/build_first)
whose format and lint scripts read what its build generates, verified on a
fresh checkout, where the build's output does not exist yet."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from stepkit.cli import main
from tests.support.gitrepo import init_repo

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "build_first"

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None, reason="needs node and npm"
)


@pytest.fixture
def checkout(tmp_path):
    """A fresh git checkout of the fixture: no dist/ yet."""
    project = tmp_path / "build_first"
    shutil.copytree(FIXTURE, project)
    return init_repo(project, message="fixture")


def verify(capsys, project: Path, *extra: str) -> tuple[int, dict]:
    code = main(["verify", "--project-dir", str(project), "--json", *extra])
    return code, json.loads(capsys.readouterr().out)


def test_a_format_and_a_lint_that_need_the_build_run_after_it(checkout, capsys):
    code, data = verify(capsys, checkout, "--fix")
    ran = [(g["name"], g["status"], g["command"]) for g in data["gates"]]
    assert ran == [
        ("build", "pass", "npm run build"),
        ("format", "pass", "npm run format"),
        ("lint", "pass", "npm run lint"),
        ("tests", "pass", "npm test"),
    ], ran
    assert code == 0


def test_a_lint_that_needs_the_build_fails_only_on_its_own_findings(checkout, capsys):
    (checkout / "src" / "tokens.txt").write_text("red=#ff0000\nblue=navy\n")
    code, data = verify(capsys, checkout)
    by_name = {g["name"]: g for g in data["gates"]}
    assert [g["name"] for g in data["gates"]] == ["build", "format", "lint", "tests"]
    assert by_name["build"]["status"] == "pass"
    assert (
        by_name["lint"]["status"] == "fail"
        and "blue: navy is not a colour" in by_name["lint"]["evidence"]
    )
    assert code == 1


def test_without_such_a_ci_job_the_gates_keep_the_protocol_order(checkout, capsys):
    workflow = checkout / ".github" / "workflows" / "ci.yml"
    workflow.write_text(
        workflow.read_text().replace("      - run: npm run build\n", "")
        + "  build:\n    runs-on: ubuntu-latest\n    steps:\n      - run: npm run build\n"
    )
    _, data = verify(capsys, checkout, "--fix")
    assert [g["name"] for g in data["gates"]] == ["format", "lint", "build", "tests"]
    assert data["gates"][0]["status"] == "fail"  # no dist/ yet: what CI's order avoids


def test_a_build_that_fails_leaves_the_format_and_lint_that_need_it_not_run(checkout, capsys):
    (checkout / "scripts" / "build.js").write_text('throw new Error("the generator is broken");\n')
    code, data = verify(capsys, checkout, "--fix")
    by_name = {g["name"]: g for g in data["gates"]}
    assert [g["name"] for g in data["gates"]] == ["build", "format", "lint", "tests"]
    assert by_name["build"]["status"] == "fail"
    for gate in ("format", "lint"):  # not failed for a file the broken build never wrote
        assert by_name[gate]["status"] == "not_run", by_name[gate]
        assert "the build failed" in by_name[gate]["summary"], by_name[gate]
        assert "ENOENT" not in by_name[gate]["evidence"]
    assert by_name["tests"]["status"] == "pass"
    assert code == 1


# -- a whole step --------------------------------------------------------------

STEP = (
    "---\nstep: 1\ntitle: Add green\ndepends_on: []\nstatus: pending\n---\n\n"
    "## Objective\nAdd a green token.\n\n## Tasks\n- Add green to src/tokens.txt.\n\n"
    "## Acceptance criteria\n- `npm test` passes.\n\n## Test commands\n- `npm test`\n\n"
    "## Edge cases\n- None.\n\n## Out of scope\n- Everything else.\n"
)


def step_project(tmp_path: Path, checkout: Path, *actions: dict):
    """The fixture as a stepkit project with a one-step plan and the command coder."""
    from tests.support.e2e import CODER, HANDOFF, Project

    for rel, text in {
        "plans/NOTES.md": "# Notes\n\n- tokens are generated.\n",
        "plans/steps/01-green.md": STEP,
    }.items():
        (checkout / rel).parent.mkdir(parents=True, exist_ok=True)
        (checkout / rel).write_text(text)
    subprocess.run(["git", "add", "-A"], cwd=checkout, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "plan"],
        cwd=checkout,
        check=True,
    )
    state_dir = tmp_path / "e2e-state"
    state_dir.mkdir()
    (state_dir / "coder.py").write_text(CODER)
    project = Project(checkout, state_dir)
    project.allow_writes(state_dir)  # the coder script's counters, in the sandbox
    project.coder_actions(*actions)
    handoff = {**HANDOFF, "acceptance_criteria": [{"criterion": "`npm test` passes.", "tests": []}]}
    return project, project.script(write_handoff=handoff)


GREEN = {
    "write": {"src/tokens.txt": "red=#ff0000\nblue=#0000ff\ngreen=#00ff00\n"},
    "sentinel": "CODER_COMPLETE",
}


def gate_events(project, run_dir: str) -> list[tuple[str, str]]:
    events = [
        json.loads(line) for line in (Path(run_dir) / "events.jsonl").read_text().splitlines()
    ]
    return [
        (e["gate"] if e["event"] == "gate_reused" else e["name"], e["event"])
        for e in events
        if e["event"] in ("gate", "gate_reused")
    ]


@pytest.mark.slow
def test_a_whole_step_runs_the_build_before_the_format_and_lint_that_need_it(tmp_path, checkout):
    project, engine = step_project(tmp_path, checkout, GREEN)
    result = project.run(engine=engine)
    assert result.code == 5, (
        result.stdout + result.stderr
    )  # paused at the final approval: every gate passed
    assert project.coder_calls() == 1  # no fix attempt spent on a lint that ran before the build
    ran = gate_events(project, result.data["run_dir"])
    # the build node reuses the build the format and lint followed: same command, same tree
    assert ran == [
        ("build", "gate"),
        ("format", "gate"),
        ("lint", "gate"),
        ("build", "gate_reused"),
        ("tests", "gate"),
    ], ran


@pytest.mark.slow
def test_a_step_that_breaks_the_build_is_sent_back_for_the_build(tmp_path, checkout):
    broken = {
        "write": {
            "src/tokens.txt": "red=#ff0000\nblue=#0000ff\ngreen=#00ff00\n",
            "scripts/build.js": 'throw new Error("the generator is broken");\n',
        },
        "sentinel": "CODER_COMPLETE",
    }
    fixed = {
        "write": {"scripts/build.js": (FIXTURE / "scripts" / "build.js").read_text()},
        "sentinel": "CODER_COMPLETE",
    }
    project, engine = step_project(tmp_path, checkout, broken, fixed)
    result = project.run(engine=engine)
    assert result.code == 5, result.stdout + result.stderr
    assert project.coder_calls() == 2
    assert "The build gate failed after your change." in project.coder_prompt(1)
    ran = [name for name, _ in gate_events(project, result.data["run_dir"])]
    assert ran[:3] == ["build", "format", "lint"], ran
