"""``stepkit verify`` on real tox and nox projects runs the one environment
of this machine's Python, and reports a matrix with none for it as an
environment fault without running it (real tox exits 1 on a missing
interpreter, a false code failure; real nox skips it and exits 0, a false
pass)."""

from __future__ import annotations

import json
import os
import subprocess
import venv
from pathlib import Path

import pytest

from stepkit.plugins.projects import machine
from tests.support.cli import stepkit
from tests.support.gitrepo import init_repo

#: this machine's Python as tox and nox name it, and one it certainly lacks
HERE = ".".join((machine.version("python") or "3.0").split(".")[:2])
OTHER = "2.7"
TEST = "import os\n\ndef test_mode():\n    assert os.environ['DEMO_MODE'] == 'on'\n"


def verify(project: Path, path: str | None = None) -> tuple[int, dict]:
    env = {**os.environ, "PATH": path} if path else None
    done = stepkit("verify", "--json", "--project-dir", str(project), env=env, timeout=900)
    return done.returncode, json.loads(done.stdout)


def gate_of(report: dict) -> dict:
    return next(g for g in report["gates"] if g["name"] == "tests")


@pytest.mark.parametrize(
    ("files", "command"),
    [
        (
            {
                "tox.ini": f"[tox]\nenv_list = py{OTHER.replace('.', '')}\n[testenv]\n"
                "set_env =\n    DEMO_MODE = on\ncommands = python -m pytest -q\n"
            },
            f"tox -e py{OTHER.replace('.', '')}",
        ),
        (
            {
                "noxfile.py": f"import nox\n\n@nox.session(python=['{OTHER}'])\n"
                "def tests(session):\n    session.env['DEMO_MODE'] = 'on'\n"
                "    session.run('pytest')\n"
            },
            "nox -s tests",
        ),
    ],
    ids=["tox", "nox"],
)
def test_a_matrix_without_this_machines_python_is_an_environment_fault_not_run(
    tmp_path, files, command
):
    project = init_repo(
        tmp_path / "proj",
        {**files, "setup.py": "", "tests/test_mode.py": TEST, "stepkit.toml": "[commands]\n"},
    )
    code, report = verify(project)
    gate = gate_of(report)
    assert (gate["command"], gate["status"]) == (command, "error"), gate
    assert f"this machine's Python {HERE}" in gate["summary"]
    assert "[commands] test = " in gate["summary"]
    assert report["ok"] is False and code != 0
    assert not (project / ".tox").exists() and not (project / ".nox").exists()  # never run


@pytest.fixture(scope="module")
def runners(tmp_path_factory) -> str:
    """A PATH whose first directory holds real tox, nox and pytest from the package index."""
    home = tmp_path_factory.mktemp("runners") / "venv"
    venv.create(home, with_pip=True)
    done = subprocess.run(
        [str(home / "bin" / "python"), "-m", "pip", "install", "-q", "tox", "nox", "pytest"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot install tox and nox: {done.stderr[-500:]}")
    return f"{home / 'bin'}{os.pathsep}{os.environ['PATH']}"


@pytest.mark.slow
def test_real_tox_runs_only_the_env_of_this_machines_python(tmp_path, runners):
    mine, other = f"py{HERE.replace('.', '')}", "py27"
    project = init_repo(
        tmp_path / "proj",
        {
            "tox.ini": f"[tox]\nskipsdist = true\nenv_list = {other}, {mine}\n[testenv]\n"
            "deps = pytest\nset_env =\n    DEMO_MODE = on\ncommands = python -m pytest -q tests\n",
            "tests/test_mode.py": TEST,
            ".gitignore": ".tox/\n",
        },
    )
    code, report = verify(project, runners)
    gate = gate_of(report)
    assert (gate["command"], gate["status"]) == (f"tox -e {mine}", "pass"), gate
    assert code == 0
    assert sorted(p.name for p in (project / ".tox").iterdir() if p.name.startswith("py")) == [mine]


@pytest.mark.slow
def test_real_nox_runs_the_session_of_this_machines_python_of_a_parametrised_one(tmp_path, runners):
    # the variant: a nox session parametrised over Pythons, through the same rule
    project = init_repo(
        tmp_path / "proj",
        {
            "noxfile.py": "import nox\n\nnox.options.default_venv_backend = 'venv'\n\n"
            f"@nox.session(python=['{OTHER}', '{HERE}'])\ndef tests(session):\n"
            "    session.install('pytest')\n    session.env['DEMO_MODE'] = 'on'\n"
            "    session.run('pytest', '-q', 'tests')\n",
            "tests/test_mode.py": TEST,
            ".gitignore": ".nox/\n",
        },
    )
    code, report = verify(project, runners)
    gate = gate_of(report)
    assert (gate["command"], gate["status"]) == (f"nox -s tests-{HERE}", "pass"), gate
    assert code == 0
    made = [p.name for p in (project / ".nox").iterdir() if p.is_dir()]
    assert made == [f"tests-{HERE.replace('.', '-')}"]
