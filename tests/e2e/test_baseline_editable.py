"""The baseline of a project whose virtualenv holds it installed in editable
mode (src layout, a ``.pth`` naming ``src/``): the baseline checkout's
tests import the checkout's source, not the project's changed one.
Otherwise a test the step breaks fails on the "earlier tree" too and
passes as pre-existing."""

from __future__ import annotations

import subprocess
import sys
import sysconfig

from tests.support.e2e import CALC, make_project, sandbox_table

ADD = "tests/test_calc.py::test_add"
SUITE = """import calc


def test_add():
    assert calc.add(2, 3) == 5


def test_mul():
    assert calc.mul(2, 3) == 6
"""
BROKEN_ADD = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"


def test_a_test_the_step_breaks_is_new_though_the_venv_imports_the_projects_source(tmp_path):
    project = make_project(tmp_path, reviewer=False)
    root = project.root
    (root / "calc.py").unlink()
    files = {
        "src/calc.py": CALC,
        "tests/test_calc.py": SUITE,
        ".gitignore": ".venv/\n__pycache__/\n",
        "stepkit.toml": sandbox_table(project.state_dir)
        + '[commands]\nformat = ""\nlint = ""\nbuild = ""\n'
        'test = "python -m pytest -q -p no:cacheprovider tests"\n',
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    project.git("add", "-A")
    project.git(
        "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "src layout with tests"
    )
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / ".venv")], check=True)
    [site] = (root / ".venv" / "lib").glob("python*/site-packages")
    (site / "_calc_editable.pth").write_text(f"{root / 'src'}\n")  # what an editable install leaves
    (site / "_tools.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n"
    )  # pytest, from this environment
    project.coder_actions({"write": {"src/calc.py": BROKEN_ADD}, "sentinel": "CODER_COMPLETE"})

    result = project.run()
    [tests] = [g for g in result.data["gates"] if g["name"] == "tests"]
    assert tests["status"] == "fail", tests["evidence"]
    assert tests["new_failures"] == [ADD]
    assert result.code == 1 and result.outcome == "STEP_FAILED", result.output
