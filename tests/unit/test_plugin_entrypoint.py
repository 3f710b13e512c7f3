"""A third-party plugin installed with an entry point, and a project's stepconf.py,
each override a gate command, and ``stepkit detect`` names the plugin that answered.

The plugin package is really built and installed (pip, into a throw-away
target directory put on PYTHONPATH so importlib.metadata finds its
dist-info); stepkit runs as a real process.
"""

import json
import os
import subprocess
import sys

import pytest

from tests.support import cli

pytest_plugins = ["stepkit.testing"]

PLUGIN_PYPROJECT = """\
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "myplug"
version = "1.2.3"

[project.entry-points.stepkit]
myplug = "myplug"
brokenplug = "myplug.broken"
gatekeeper = "gatekeeper_hooks"

[tool.setuptools]
packages = ["myplug"]
py-modules = ["gatekeeper_hooks"]
"""
PLUGIN_MODULE = """\
import stepkit


@stepkit.hookimpl
def stepkit_test_command(project_dir):
    return "myplug-tests --all"
"""
BROKEN_MODULE = "raise ImportError('libfoo is not installed')\n"
# A module whose name is not its distribution's: its version comes from the entry point.
GATEKEEPER_MODULE = """\
import stepkit


@stepkit.hookimpl
def stepkit_detect_project(project_dir):
    return None
"""
STEPCONF = """\
import stepkit


@stepkit.hookimpl
def stepkit_test_command(project_dir, config):
    return "./project-tests.sh"
"""


@pytest.fixture(scope="module")
def site_dir(tmp_path_factory):
    """The plugin package, built and installed into its own site directory."""
    root = tmp_path_factory.mktemp("myplug")
    src = root / "src"
    (src / "myplug").mkdir(parents=True)
    (src / "pyproject.toml").write_text(PLUGIN_PYPROJECT)
    (src / "myplug" / "__init__.py").write_text(PLUGIN_MODULE)
    (src / "myplug" / "broken.py").write_text(BROKEN_MODULE)
    (src / "gatekeeper_hooks.py").write_text(GATEKEEPER_MODULE)
    site = root / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(site),
            str(src),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    assert (site / "myplug-1.2.3.dist-info" / "entry_points.txt").is_file()
    return site


def stepkit(command, project, site, *flags, **env):
    environment = {k: v for k, v in os.environ.items() if not k.startswith("STEPKIT_")}
    environment.update(PYTHONPATH=str(site), **env)
    return cli.stepkit(command, "--project-dir", str(project), *flags, env=environment)


def detect(project, site, *flags, **env):
    return stepkit("detect", project, site, *flags, **env)


def the_tests_gate(done):
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    return next(g for g in data["gates"] if g["name"] == "tests"), data


def test_entry_point_plugin_answers_and_detect_says_so(stepkit_project, site_dir):
    project = stepkit_project({"Makefile": "test:\n\ttrue\n"})
    gate, data = the_tests_gate(detect(project, site_dir, "--json"))
    assert gate == {
        "name": "tests",
        "command": "myplug-tests --all",
        "plugin": "myplug",
        "source": None,
        "fault": None,
        "candidates": [
            {
                "command": "make test",
                "plugin": "stepkit.plugins.projects.taskrunners",
                "source": None,
            }
        ],
    }
    assert "libfoo is not installed" in data["load_errors"]["brokenplug"]


def test_stepconf_beats_the_entry_point_plugin(stepkit_project, site_dir):
    project = stepkit_project({"Makefile": "test:\n\ttrue\n", "stepconf.py": STEPCONF})
    gate, _ = the_tests_gate(detect(project, site_dir, "--json"))
    assert gate == {
        "name": "tests",
        "command": "./project-tests.sh",
        "plugin": "stepconf",
        "source": None,
        "fault": None,
        "candidates": [
            {"command": "myplug-tests --all", "plugin": "myplug", "source": None},
            {
                "command": "make test",
                "plugin": "stepkit.plugins.projects.taskrunners",
                "source": None,
            },
        ],
    }


def test_empty_allow_list_disables_entry_points(stepkit_project, site_dir):
    project = stepkit_project({"Makefile": "test:\n\ttrue\n"})
    gate, data = the_tests_gate(detect(project, site_dir, "--json", STEPKIT_LOAD_PLUGINS=""))
    assert gate["plugin"] == "stepkit.plugins.projects.taskrunners"
    assert data["load_errors"] == {}


def test_allow_list_naming_the_plugin_keeps_it(stepkit_project, site_dir):
    project = stepkit_project({"Makefile": "test:\n\ttrue\n"})
    gate, data = the_tests_gate(detect(project, site_dir, "--json", STEPKIT_LOAD_PLUGINS="myplug"))
    assert gate["plugin"] == "myplug"
    assert data["load_errors"] == {}


def test_dash_p_no_disables_the_plugin(stepkit_project, site_dir):
    project = stepkit_project({"Makefile": "test:\n\ttrue\n"})
    gate, _ = the_tests_gate(detect(project, site_dir, "--json", "-p", "no:myplug"))
    assert gate == {
        "name": "tests",
        "command": "make test",
        "plugin": "stepkit.plugins.projects.taskrunners",
        "source": None,
        "fault": None,
        "candidates": [],
    }


def test_text_output_names_the_plugin_and_the_load_error(stepkit_project, site_dir):
    project = stepkit_project({})
    done = detect(project, site_dir)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(
        line.startswith("tests") and "myplug-tests --all" in line and "[myplug]" in line
        for line in lines
    )
    assert any(line.startswith("lint") and "NOT RUN" in line for line in lines)
    assert (
        "plugin brokenplug failed to load and was skipped: ImportError: libfoo is not installed"
        in lines
    )


def test_versions_come_from_the_entry_points_distribution(stepkit_project, site_dir):
    from stepkit import __version__

    done = stepkit("plugins", stepkit_project({"stepconf.py": STEPCONF}), site_dir, "--json")
    assert done.returncode == 0, done.stderr
    plugins = {p["name"]: p for p in json.loads(done.stdout)["plugins"]}
    assert plugins["myplug"]["version"] == "1.2.3"
    assert (
        plugins["gatekeeper"]["version"] == "1.2.3"
    )  # module gatekeeper_hooks, distribution myplug
    assert plugins["gatekeeper"]["origin"] == "entry point gatekeeper_hooks"
    assert plugins["stepkit.plugins.ask"]["version"] == __version__
    assert plugins["stepconf"]["version"] is None
