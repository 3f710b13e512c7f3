"""The issue's headline, through the real ``stepkit verify`` and the real ruff:
a lint-only ``[tool.ruff]`` project is not reformatted, and a project that
formats with ruff gets only its changed file formatted."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support.coder import init_repo
from tests.support.detect import need, tool_env

UGLY = "x = {  'a':1 }\n"


def verify(project):
    done = subprocess.run([sys.executable, "-m", "stepkit", "verify", "--json", "--project-dir", str(project)],
                          capture_output=True, text=True, timeout=120, check=False, env=tool_env())
    return done.returncode, {gate["name"]: gate for gate in json.loads(done.stdout)["gates"]}


def test_a_lint_only_ruff_project_is_not_reformatted(tmp_path):
    need("ruff")
    project = init_repo(tmp_path / "repo", {"pyproject.toml": '[project]\nname = "demo"\n\n[tool.ruff]\n',
                                            "old.py": UGLY})
    (project / "new.py").write_text(UGLY)
    code, gates = verify(project)
    assert code == 0
    assert (gates["format"]["command"], gates["format"]["status"]) == (None, "not_run")
    assert gates["lint"]["command"] == "ruff check"
    assert (project / "old.py").read_text() == UGLY and (project / "new.py").read_text() == UGLY


def test_a_project_that_formats_with_ruff_gets_only_its_changed_file_formatted(tmp_path):
    need("ruff")
    project = init_repo(tmp_path / "repo", {"pyproject.toml": '[project]\nname = "demo"\n\n[tool.ruff.format]\n',
                                            "old.py": UGLY})
    (project / "new.py").write_text(UGLY)
    code, gates = verify(project)
    assert code == 0
    assert gates["format"]["changed_files"] == ["new.py"]
    assert (project / "new.py").read_text() == 'x = {"a": 1}\n'
    assert (project / "old.py").read_text() == UGLY  # committed, untouched by the step
