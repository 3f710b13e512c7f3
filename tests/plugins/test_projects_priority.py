"""Priority between plugins: overrides > local plugins > task runners > language manifests."""

from stepkit.testing import resolve_gates

PY = "stepkit.plugins.projects.python"
TR = "stepkit.plugins.projects.taskrunners"
OV = "stepkit.plugins.overrides"
PYPROJECT = '[project]\nname = "demo"\n\n[tool.ruff.format]\n\n[tool.mypy]\nfiles = ["demo"]\n'
MAKEFILE = "test:\n\tpython -m pytest -x\nlint:\n\truff check .\n"


def test_makefile_targets_win_python_fills_the_rest(stepkit_project):
    project = stepkit_project(
        {"Makefile": MAKEFILE, "pyproject.toml": PYPROJECT, "tests/test_a.py": ""}
    )
    assert resolve_gates(project) == {
        "format": ("ruff format --force-exclude {files:.py,.pyi}", PY),
        "lint": ("make lint", TR),
        "build": ("mypy", PY),
        "tests": ("make test", TR),
    }


def test_environment_override_beats_everything(stepkit_project, monkeypatch):
    project = stepkit_project(
        {
            "Makefile": MAKEFILE,
            "pyproject.toml": PYPROJECT + '\n[tool.stepkit.commands]\ntest = "tox"\n',
            "stepconf.py": "import stepkit\n\n@stepkit.hookimpl\ndef stepkit_test_command():\n    return 'local'\n",
        }
    )
    monkeypatch.setenv("TEST_CMD", "  ./ci/tests.sh  ")
    assert resolve_gates(project)["tests"] == ("./ci/tests.sh", OV)


def test_config_commands_beat_detection_and_local_plugins(stepkit_project):
    project = stepkit_project(
        {
            "Makefile": MAKEFILE,
            "pyproject.toml": PYPROJECT
            + '\n[tool.stepkit.commands]\nlint = "flake8"\nbuild = ""\n',
            "stepconf.py": "import stepkit\n\n@stepkit.hookimpl\ndef stepkit_lint_command():\n    return 'local'\n",
        }
    )
    gates = resolve_gates(project)
    assert gates["lint"] == ("flake8", OV)
    assert gates["build"] == (None, OV)  # "" = this gate has no command; mypy is not asked
    assert gates["tests"] == ("make test", TR)


def test_stepkit_toml_commands(stepkit_project):
    project = stepkit_project(
        {
            "stepkit.toml": '[commands]\nformat = "npx prettier -w ."\n',
            "pyproject.toml": PYPROJECT,
        }
    )
    assert resolve_gates(project)["format"] == ("npx prettier -w .", OV)


def test_an_empty_environment_override_means_no_command(stepkit_project, monkeypatch):
    project = stepkit_project(
        {"Makefile": MAKEFILE, "pyproject.toml": '[tool.stepkit.commands]\nlint = "x"\n'}
    )
    monkeypatch.setenv("LINT_CMD", "")
    assert resolve_gates(project)["lint"] == (None, OV)


def test_stepconf_beats_task_runners(stepkit_project):
    project = stepkit_project(
        {
            "Makefile": MAKEFILE,
            "stepconf.py": "import stepkit\n\n@stepkit.hookimpl\ndef stepkit_test_command(project_dir):\n"
            "    return f'./run-tests {project_dir.name}'\n",
        }
    )
    assert resolve_gates(project)["tests"] == (f"./run-tests {project.name}", "stepconf")


def test_rust_answers_before_node_and_python(stepkit_project, stepkit_pm):
    from stepkit.workspace.gate_commands import project_types

    project = stepkit_project(
        {
            "Cargo.toml": '[package]\nname = "x"\nversion = "0.1.0"\n',
            "package.json": '{"scripts": {"test": "jest", "format": "prettier -w ."}}',
            "pyproject.toml": PYPROJECT,
        }
    )
    assert project_types(stepkit_pm(project), project) == ["rust", "node", "python"]
    assert resolve_gates(project)["tests"] == ("cargo test", "stepkit.plugins.projects.rust")


def test_each_gate_asked_through_pluggy_gives_the_first_answer(stepkit_project, stepkit_pm):
    from stepkit.config import load_config
    from stepkit.workspace.gate_commands import resolve_commands

    project = stepkit_project(
        {
            "Makefile": "fmt:\n\ttrue\n",
            "pyproject.toml": PYPROJECT,
            "stepconf.py": "import stepkit\n\n@stepkit.hookimpl\ndef stepkit_build_command():\n    return 'local-build'\n",
        }
    )
    pm, config = stepkit_pm(project), load_config(project)
    assert {
        gate: command for gate, (command, _) in resolve_commands(pm, project, config).items()
    } == {
        "format": "make fmt",
        "lint": "ruff check",
        "build": "local-build",
        "tests": None,
    }
    assert pm.hook.stepkit_detect_project(project_dir=project) == ["make", "python"]


def test_a_cargo_workspace_stub_does_not_outrank_a_root_deno_json(stepkit_project, stepkit_pm):
    from stepkit.workspace.gate_commands import project_types

    project = stepkit_project(
        {
            "Cargo.toml": '[workspace]\nmembers = ["ext"]\n',
            "ext/Cargo.toml": '[package]\nname = "ext"\nversion = "0.1.0"\n',
            "deno.json": '{"tasks": {"test": "deno test -A"}}',
        }
    )
    assert project_types(stepkit_pm(project), project) == ["deno"]
    assert resolve_gates(project)["tests"] == ("deno task test", "stepkit.plugins.projects.deno")
