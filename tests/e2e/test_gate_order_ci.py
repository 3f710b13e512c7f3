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

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "build_first"

pytestmark = pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None,
                                reason="needs node and npm")


@pytest.fixture
def checkout(tmp_path):
    """A fresh git checkout of the fixture: no dist/ yet."""
    project = tmp_path / "build_first"
    shutil.copytree(FIXTURE, project)
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "fixture"]):
        subprocess.run(["git", *args], cwd=project, check=True)
    return project


def verify(capsys, project: Path, *extra: str) -> tuple[int, dict]:
    code = main(["verify", "--project-dir", str(project), "--json", *extra])
    return code, json.loads(capsys.readouterr().out)


def test_a_format_and_a_lint_that_need_the_build_run_after_it(checkout, capsys):
    code, data = verify(capsys, checkout, "--fix")
    ran = [(g["name"], g["status"], g["command"]) for g in data["gates"]]
    assert ran == [("build", "pass", "npm run build"), ("format", "pass", "npm run format"),
                   ("lint", "pass", "npm run lint"), ("tests", "pass", "npm test")], ran
    assert code == 0


def test_a_lint_that_needs_the_build_fails_only_on_its_own_findings(checkout, capsys):
    (checkout / "src" / "tokens.txt").write_text("red=#ff0000\nblue=navy\n")
    code, data = verify(capsys, checkout)
    by_name = {g["name"]: g for g in data["gates"]}
    assert [g["name"] for g in data["gates"]] == ["build", "format", "lint", "tests"]
    assert by_name["build"]["status"] == "pass"
    assert by_name["lint"]["status"] == "fail" and "blue: navy is not a colour" in by_name["lint"]["evidence"]
    assert code == 1


def test_without_such_a_ci_job_the_gates_keep_the_protocol_order(checkout, capsys):
    workflow = checkout / ".github" / "workflows" / "ci.yml"
    workflow.write_text(workflow.read_text().replace("      - run: npm run build\n", "")
                        + "  build:\n    runs-on: ubuntu-latest\n    steps:\n      - run: npm run build\n")
    _, data = verify(capsys, checkout, "--fix")
    assert [g["name"] for g in data["gates"]] == ["format", "lint", "build", "tests"]
    assert data["gates"][0]["status"] == "fail"  # no dist/ yet: what CI's order avoids
