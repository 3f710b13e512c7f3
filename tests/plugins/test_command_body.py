"""``stepkit_command_body``: what a task-runner or script call runs, as the
CI reader reads it, and the scripts behind it on the verification surface.
Real plugins on real files in a tmp project."""

from __future__ import annotations

import pytest

from stepkit.config import Config
from stepkit.pluginmanager import get_plugin_manager
from stepkit.workspace.surface import gate_scripts, rule_for, surface_rules
from tests.support.gitrepo import write_files

FILES = {
    "Makefile": "test:\n\tsh scripts/test\n\tpython tools/check.py\n",
    "package.json": '{"name": "x", "version": "1.0.0", "scripts": {"lint": "bash ci/lint.sh --strict"}}',
    "scripts/test": "#!/bin/sh\nexec python -m pytest\n",
    "tools/check.py": "print('ok')\n",
    "ci/lint.sh": "#!/bin/sh\nexec node tools/lint.js\n",
    "tools/lint.js": "// lints\n",
}


@pytest.fixture
def project(tmp_path):
    write_files(tmp_path, FILES)
    return tmp_path


@pytest.mark.parametrize(
    ("command", "body"),
    [
        ("make test", "sh scripts/test\npython tools/check.py"),
        ("npm run lint", "bash ci/lint.sh --strict"),
        ("sh scripts/test", "#!/bin/sh\nexec python -m pytest\n"),
        ("make nothing", None),
        ("pytest -q", None),
    ],
)
def test_the_ci_reader_says_what_a_call_runs(project, command, body):
    pm = get_plugin_manager(project)
    assert pm.hook.stepkit_command_body(command=command, project_dir=project) == body


def test_the_scripts_behind_a_runner_target_are_on_the_surface(project):
    pm = get_plugin_manager(project)
    rules = surface_rules(
        pm, project, Config(), gate_scripts(pm, project, ["make test", "npm run lint"])
    )
    on_surface = [rel for rel in FILES if rule_for(rules, rel) is not None]
    # one level down: the target's scripts, not what those scripts run in turn
    assert sorted(on_surface) == [
        "Makefile",
        "ci/lint.sh",
        "package.json",
        "scripts/test",
        "tools/check.py",
    ]
