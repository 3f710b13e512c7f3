"""Environment faults real projects hit, which are the machine's and not the
code's: a service the tests need that is not running, a package manager
refusing this Node or its own version switch, a wrapper that must download
its distribution, a tool missing behind ``pdm run``, a src-layout package
that is not installed.

The tools this machine has (pytest, node, npm, corepack) run for real
through the one gate runner (uv and npx are run for real in
test_gate_faults_real_tools.py); pdm, poetry, yarn, pnpm, Gradle's wrapper
and the database clients are not installed here, so their output is
recorded, in the format of the version named with each sample (from the
tool's source)."""

from __future__ import annotations

import socket
import sys

import pytest

from stepkit.workspace.faults import environment_fault
from tests.support.gitrepo import write_files
from tests.unit.test_gate_faults_real_tools import gate, pm, tool  # noqa: F401 - pm is a fixture

PY = sys.executable


def _closed_port() -> int:
    """A local port nothing listens on: bound, then closed, never listened on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -- real tools ---------------------------------------------------------------


def test_a_test_that_needs_a_local_service_that_is_down_is_an_environment_fault(pm, tmp_path):  # noqa: F811
    port = _closed_port()
    project = write_files(
        tmp_path / "p",
        {
            "test_db.py": f"import socket\n\ndef test_db():\n    socket.create_connection(('localhost', {port}))\n\n"
            "def test_other():\n    pass\n",
        },
    )
    result = gate(pm, project, f"{PY} -m pytest -rfE -p no:cacheprovider", name="tests")
    assert result.status == "error", result.evidence
    assert (
        result.summary
        == "a service the tests need is not running (connection refused on this machine)"
    )


def test_a_service_refusal_beside_a_real_failure_stays_a_failure(pm, tmp_path):  # noqa: F811
    port = _closed_port()
    project = write_files(
        tmp_path / "p",
        {
            "test_db.py": f"import socket\n\ndef test_db():\n    socket.create_connection(('localhost', {port}))\n\n"
            "def test_math():\n    assert 1 + 1 == 3\n",
        },
    )
    result = gate(pm, project, f"{PY} -m pytest -rfE -p no:cacheprovider", name="tests")
    assert result.status == "fail"


def test_node_test_refused_by_a_local_redis_names_it(pm, tmp_path):  # noqa: F811
    tool("node")
    project = write_files(
        tmp_path / "p",
        {
            "db.test.js": "const test = require('node:test'); const net = require('node:net');\n"
            "test('db', () => new Promise((ok, no) => { const s = net.connect(6379, '127.0.0.1');"
            " s.on('error', no); s.on('connect', () => { s.end(); ok(); }); }));\n",
        },
    )
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=1).close()
        pytest.skip("a Redis is listening on this machine")
    except OSError:
        pass
    result = gate(pm, project, "node --test db.test.js", name="tests")
    assert result.status == "error", result.evidence
    assert (
        result.summary
        == "Redis is not running on this machine (connection to port 6379 refused); the tests need it"
    )


def test_an_uninstalled_src_layout_package_is_an_environment_fault(pm, tmp_path):  # noqa: F811
    project = write_files(
        tmp_path / "p",
        {
            "pyproject.toml": '[project]\nname = "mypkg_unique_demo"\n',
            "src/mypkg_unique_demo/__init__.py": "",
            "tests/test_a.py": "import mypkg_unique_demo\n\ndef test_a():\n    assert mypkg_unique_demo\n",
        },
    )
    result = gate(pm, project, f"{PY} -m pytest -rfE -p no:cacheprovider", name="tests")
    assert result.status == "error", result.evidence
    assert result.summary.startswith(
        "python: the project's package mypkg_unique_demo (src/mypkg_unique_demo) is not installed"
    )


def test_a_missing_third_party_module_is_not_a_src_layout_fault(pm, tmp_path):  # noqa: F811
    project = write_files(
        tmp_path / "p",
        {
            "src/mypkg_unique_demo/__init__.py": "",
            "tests/test_a.py": "import not_a_module_anywhere_xyz\n\ndef test_a():\n    pass\n",
        },
    )
    result = gate(pm, project, f"{PY} -m pytest -rfE -p no:cacheprovider", name="tests")
    assert result.status == "fail"


def test_npm_refusing_this_node_for_the_project_engines_is_an_environment_fault(pm, tmp_path):  # noqa: F811
    tool("npm")
    project = write_files(
        tmp_path / "p",
        {
            "package.json": '{"name": "demo", "version": "1.0.0", "engines": {"node": ">=99"}}\n',
            ".npmrc": "engine-strict=true\n",
        },
    )
    result = gate(
        pm,
        project,
        "npm install --offline --no-audit --no-fund",
        name="build",
        env={"npm_config_cache": str(tmp_path / "cache")},
    )
    assert result.status == "error", result.evidence
    assert result.summary.startswith(
        'npm: the project\'s engines need {"node":">=99"}; this machine has {"node":"v'
    )


@pytest.mark.parametrize(
    ("runner", "summary"),
    [
        (
            "corepack pnpm test",
            "corepack: the project's packageManager is yarn ({pkg}); another package manager was run",
        ),
        (
            "corepack yarn test",
            (
                "corepack: cannot download the project's package manager "
                "(https://repo.yarnpkg.com/4.1.0/packages/yarnpkg-cli/bin/yarn.js)"
            ),
        ),
    ],
)
def test_corepack_refusing_or_unable_to_get_the_package_manager_is_an_environment_fault(
    pm,  # noqa: F811
    tmp_path,
    runner,
    summary,
):
    tool("corepack")
    project = write_files(
        tmp_path / "p",
        {
            "package.json": '{"name": "demo", "packageManager": "yarn@4.1.0", "scripts": {"test": "node -e 1"}}\n',
        },
    )
    result = gate(
        pm,
        project,
        runner,
        name="tests",
        env={"COREPACK_ENABLE_NETWORK": "0", "COREPACK_HOME": str(tmp_path / "corepack")},
    )
    assert result.status == "error", result.evidence
    assert result.summary == summary.format(pkg=project / "package.json")


# -- recorded output of tools this machine lacks ----------------------------------

RECORDED = {
    "pdm 2.22 `pdm run pytest`, pytest not in the project's environment": (
        "[PdmUsageError]: Command 'pytest' is not found in your PATH.\n",
        1,
        "pdm: pytest: command not found (not installed in the project's environment)",
    ),
    "pdm 2.5 `pdm run mypy`": (
        "[FileNotFoundError]: [Errno 2] No such file or directory: 'mypy'\n",
        1,
        "pdm: mypy: command not found (not installed in the project's environment)",
    ),
    "poetry 1.8 `poetry run mypy`, mypy not in the project's environment": (
        "Command not found: mypy\n",
        1,
        "poetry: mypy: command not found (not installed in the project's environment)",
    ),
    "gradle 8.5 wrapper, offline": (
        (
            "Downloading https://services.gradle.org/distributions/gradle-8.5-bin.zip\n\n"
            'Exception in thread "main" java.net.UnknownHostException: services.gradle.org\n'
            "\tat java.base/sun.nio.ch.NioSocketImpl.connect(NioSocketImpl.java:567)\n"
            "\tat java.base/java.net.Socket.connect(Socket.java:633)\n"
            "\tat org.gradle.wrapper.Download.downloadInternal(Download.java:129)\n"
            "\tat org.gradle.wrapper.Install.forceFetch(Install.java:171)\n"
            "\tat org.gradle.wrapper.WrapperExecutor.execute(WrapperExecutor.java:107)\n"
            "\tat org.gradle.wrapper.GradleWrapperMain.main(GradleWrapperMain.java:63)\n"
        ),
        1,
        (
            "gradle wrapper: cannot download its distribution https://services.gradle.org/distributions/gradle-8.5-bin.zip"
            " (java.net.UnknownHostException: services.gradle.org)"
        ),
    ),
    "yarn 1.22 `yarn install`, engines.node >=22": (
        (
            "yarn install v1.22.19\n[1/4] Resolving packages...\n"
            'error demo@1.0.0: The engine "node" is incompatible with this module. Expected version ">=22". Got "20.20.2"\n'
            "error Found incompatible module.\ninfo Visit https://yarnpkg.com/en/docs/cli/install for documentation.\n"
        ),
        1,
        "yarn: demo@1.0.0 needs node >=22; this machine has 20.20.2",
    ),
    "yarn 1.22 in a project whose packageManager is yarn 4": (
        (
            'error This project\'s package.json defines "packageManager": "yarn@4.1.0". However the current global '
            "version of Yarn is 1.22.19.\n"
        ),
        1,
        "yarn: the project's packageManager is yarn@4.1.0; this machine has yarn 1.22.19",
    ),
    "pnpm 9 `pnpm install`, engines.node >=22": (
        (
            " ERR_PNPM_UNSUPPORTED_ENGINE  Unsupported environment (bad pnpm and/or Node.js version)\n\n"
            'Your Node version is incompatible with "/home/dev/demo".\n'
        ),
        1,
        "pnpm: unsupported engine (Unsupported environment (bad pnpm and/or Node.js version))",
    ),
    "psycopg2 2.9 under pytest 8, no PostgreSQL": (
        (
            'E   psycopg2.OperationalError: connection to server at "localhost" (127.0.0.1), port 5432 failed: '
            "Connection refused\n=== short test summary info ===\n"
            'ERROR tests/test_db.py::test_insert - psycopg2.OperationalError: connection to server at "localhost" '
            "(127.0.0.1), port 5432 failed: Connection ...\n=== 1 passed, 1 error in 0.31s ===\n"
        ),
        1,
        "PostgreSQL is not running on this machine (connection to port 5432 refused); the tests need it",
    ),
    "redis-py 5 under pytest 8, no Redis": (
        (
            "E   redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379. Connection refused.\n"
            "FAILED tests/test_cache.py::test_get - redis.exceptions.ConnectionError: Error 111 connecting to localh...\n"
            "=== 1 failed, 3 passed in 0.12s ===\n"
        ),
        1,
        "Redis is not running on this machine (connection to port 6379 refused); the tests need it",
    ),
    "go 1.22 test, no MySQL": (
        (
            "--- FAIL: TestStore (0.00s)\n    store_test.go:14: dial tcp 127.0.0.1:3306: connect: connection refused\n"
            "FAIL\nFAIL\texample.com/demo\t0.004s\n"
        ),
        1,
        "MySQL is not running on this machine (connection to port 3306 refused); the tests need it",
    ),
}


@pytest.mark.parametrize("sample", RECORDED, ids=list(RECORDED))
def test_recorded_environment_faults_are_named(sample):
    output, code, cause = RECORDED[sample]
    assert environment_fault(output, code) == cause


def test_a_refused_remote_host_is_not_a_local_service_fault():
    output = (
        'E   psycopg2.OperationalError: connection to server at "db.example.com" (10.0.0.5), port 5432 '
        "failed: Connection refused\nFAILED t.py::test - AssertionError\n=== 1 failed in 0.1s ===\n"
    )
    assert environment_fault(output, 1) is None
