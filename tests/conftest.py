"""Settings every test process needs, whoever started the suite.

A suite started in the background by a non-interactive shell (``pytest … &``
in a script, a CI step that backgrounds it) inherits SIGINT ignored, and so
does every ``stepkit`` a test starts; stepkit leaves an ignored SIGINT
ignored (as under ``nohup``), so a Ctrl-C test would wait for an interrupt
that never comes.  A handler (unlike an ignore) is reset by ``exec``: the
commands the tests start get SIGINT's default again.  The same for SIGHUP,
which ``nohup`` ignores: the suite itself still outlives a hangup.

The ``stepkit`` processes the tests start read stepkit's bytecode, as an
install's do: with ``PYTHONDONTWRITEBYTECODE`` set (as some machines and CI
images set it) an editable checkout has none, and every one of them would
compile stepkit from source again (about 0.1 s each, thousands of times).
For the same reason the test processes keep pytest's rewritten test modules
(in ``__pycache__``, ignored by git): each xdist worker would otherwise
rewrite all of them at every start, about 4 s of each worker's collection.

The default suite (``pytest`` with no paths and no ``-m``) leaves out the
tests marked ``slow`` or ``bench``: the whole-step runs repeated over many
variants and the benchmarks' smoke runs, which would take it past five
minutes on two cores.  ``-m "slow or bench"`` runs them (CI runs both
suites), and so does naming their files or folders.
"""

import compileall
import os
import re
import signal
import sys
from pathlib import Path

import pytest

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:  # under nohup: the suite still ignores a
    signal.signal(
        signal.SIGHUP, lambda signum, frame: None
    )  # hangup; the stepkits it starts do not


@pytest.fixture(autouse=True, scope="session")
def _projects_pytest_without_the_suites_plugins():
    """The tmp projects' own pytest runs (their gates) load only the plugins
    they name, not the ones this suite installed (xdist, pytest-subprocess):
    a project under test has neither, and loading them was 0.3 s of every
    gate's pytest on two cores.  Set where tests run, after that process's
    own plugins are loaded (an xdist worker, or the one process without
    xdist), never before the workers start: they need theirs.  A test of an
    attack through a plugin's entry point takes it out of its run's
    environment (tests/e2e/test_hostile_unseen.py)."""
    os.environ.setdefault("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    yield


def pytest_configure(config):
    from tests.support.edge_coverage import EdgeCoverage

    config.pluginmanager.register(EdgeCoverage(), "edge-coverage")
    sys.dont_write_bytecode = (
        False  # this process only: the commands it starts keep the environment's setting
    )
    if not hasattr(config, "workerinput"):  # once, in the process that starts the workers
        root = Path(__file__).resolve().parents[1]
        for package in ("stepkit", "plugins"):  # not the demo project stepkit ships as data
            compileall.compile_dir(root / package, quiet=1, rx=re.compile(r"/examples/"))


#: Marks the default suite leaves out (see the module docstring).
NOT_BY_DEFAULT = ("slow", "bench")


def pytest_collection_modifyitems(config, items):
    if config.option.markexpr or config.args_source is pytest.Config.ArgsSource.ARGS:
        return  # a -m expression or the paths the user named decide
    kept, left_out = [], []
    for item in items:
        (
            left_out if any(item.get_closest_marker(mark) for mark in NOT_BY_DEFAULT) else kept
        ).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept


@pytest.fixture
def unconfined(tmp_path, monkeypatch):
    """stepkit runs the coder and the gates unconfined, as on a machine whose
    bubblewrap cannot create namespaces (the run's approval is flagged): for
    the defences that hold where there is no sandbox, whose attacks the
    sandbox would stop before they are seen."""
    from tests.support.e2e import unconfined_env

    monkeypatch.setenv("PATH", unconfined_env(tmp_path)["PATH"])


@pytest.fixture
def project(request, tmp_path):
    """The suite's end-to-end project (:func:`tests.support.e2e.make_project`):
    a git repository with calc.py, real gate commands, a three-step plan and
    a scripted coder and reviewer.  A test or module picks a variant with the
    ``project`` mark: ``pytest.mark.project(reviewer=False)``, or
    ``files={...}`` for more files in its first commit.  A module whose
    project needs more than that overrides ``project``, taking this one."""
    from tests.support.e2e import make_project

    mark = request.node.get_closest_marker("project")
    return make_project(tmp_path, **(mark.kwargs if mark else {}))


@pytest.fixture
def project_dir(tmp_path):
    """An empty folder for a test's project, ``tmp_path / "project"``."""
    path = tmp_path / "project"
    path.mkdir()
    return path
