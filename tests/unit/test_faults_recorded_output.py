"""Environment faults and no-test runs of tools this machine lacks, from
their output in the format of the version named with each sample (written
from the tool's source and documentation), and the guards that keep a real
failure a failure.  The tools this machine has are run for real in
test_gate_faults_real_tools.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from stepkit.workspace.faults import environment_fault, no_tests_reason

# -- tests that ran no test ------------------------------------------------------

NO_TESTS = {
    "go 1.22 `go test ./...`, no package has a test file": (
        "?   \texample.com/demo\t[no test files]\n?   \texample.com/demo/internal/util\t[no test files]\n",
        0,
        "go: no test files in any of 2 packages",
    ),
    "go 1.22 `go test -run TestNothing ./...`": (
        "testing: warning: no tests to run\nok  \texample.com/demo\t0.002s [no tests to run]\n",
        0,
        "go: no test files in any of 1 package",
    ),
    "jest 29, no test file": (
        (
            "No tests found, exiting with code 1\nRun with `--passWithNoTests` to exit with code 0\nIn /home/dev/demo\n"
            "  3 files checked.\n  testMatch: **/__tests__/**/*.[jt]s?(x), **/?(*.)+(spec|test).[tj]s?(x) - 0 matches\n"
        ),
        1,
        "jest: no tests found (exit 1)",
    ),
    "vitest 1.6, no test file": (
        (
            "No test files found, exiting with code 1\n\ninclude: **/*.{test,spec}.?(c|m)[jt]s?(x)\n"
            "exclude:  **/node_modules/**, **/dist/**\n"
        ),
        1,
        "vitest: no test files found (exit 1)",
    ),
    "unittest of Python 3.12": (
        "\n----------------------------------------------------------------------\nRan 0 tests in 0.000s\n\nNO TESTS RAN\n",
        5,
        "unittest: ran 0 tests (exit 5)",
    ),
    "gradle 8.7, a --tests filter that matches nothing": (
        (
            "> Task :test FAILED\n\nFAILURE: Build failed with an exception.\n\n* What went wrong:\n"
            "Execution failed for task ':test'.\n> No tests found for given includes: [com.example.CalcTest](--tests filter)\n"
        ),
        1,
        "gradle: no tests found (exit 1)",
    ),
    "gradle 8.7 --console=plain, no test source": (
        (
            "> Task :compileJava\n> Task :classes\n> Task :compileTestJava NO-SOURCE\n> Task :test NO-SOURCE\n\n"
            "BUILD SUCCESSFUL in 1s\n"
        ),
        0,
        "gradle: the test task has no source (exit 0)",
    ),
    "dotnet 8 test (vstest), no test discovered": (
        (
            "No test is available in /home/dev/demo/bin/Debug/net8.0/Demo.Tests.dll. Make sure that test discoverer & "
            "executors are registered and platform & framework version settings are appropriate and try again.\n"
        ),
        0,
        "dotnet: no test is available (exit 0)",
    ),
    "mix test of Elixir 1.16, no test": (
        (
            "Running ExUnit with seed: 1234, max_cases: 4\n\n\nFinished in 0.01 seconds (0.00s async, 0.00s sync)\n"
            "0 tests, 0 failures\n"
        ),
        0,
        "mix: there are no tests to run (exit 0)",
    ),
    "phpunit 10.5, no test": (
        "PHPUnit 10.5.0 by Sebastian Bergmann and contributors.\n\nNo tests executed!\n",
        0,
        "phpunit: no tests executed (exit 0)",
    ),
    "rspec 3.13, no spec": (
        "No examples found.\n\nFinished in 0.00028 seconds (files took 0.06 seconds to load)\n0 examples, 0 failures\n",
        0,
        "rspec: 0 examples (exit 0)",
    ),
    "deno 1.44 test, no test module": (
        "error: No test modules found\n",
        1,
        "deno: no test modules found (exit 1)",
    ),
    "swift 5.10 test, no test target": (
        "error: no tests found; create a target in the 'Tests' directory\n",
        1,
        "swift: no tests found (exit 1)",
    ),
}


@pytest.mark.parametrize("sample", NO_TESTS)
def test_a_runner_that_found_no_test_is_recognised(sample):
    output, code, reason = NO_TESTS[sample]
    assert no_tests_reason(output, code) == reason


RAN_TESTS = {
    "go: one package has tests": (
        "?   \texample.com/demo\t[no test files]\nok  \texample.com/demo/calc\t0.002s\n",
        0,
    ),
    "cargo: unit tests ran, the doc-tests had none": (
        (
            "running 2 tests\ntest tests::a ... ok\ntest tests::b ... ok\n\n"
            "test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n"
            "   Doc-tests demo\n\nrunning 0 tests\n\n"
            "test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n"
        ),
        0,
    ),
    "make runs two pytest suites, one without tests": (
        "no tests ran in 0.01s\n3 passed in 0.05s\n",
        0,
    ),
    "jest: a suite failed, another matched nothing": (
        "Tests:       1 failed, 2 passed, 3 total\nNo tests found, exiting with code 1\n",
        1,
    ),
    "pytest exit 5 with another exit code": ("no tests ran in 0.01s\n", 1),
}


@pytest.mark.parametrize("sample", RAN_TESTS)
def test_output_where_a_test_ran_or_failed_is_not_no_tests(sample):
    output, code = RAN_TESTS[sample]
    assert no_tests_reason(output, code) is None


# -- environment faults ------------------------------------------------------------

FAULTS = {
    "uv 0.4 (older message)": (
        "error: Failed to spawn: `mypy`\n  Caused by: No such file or directory (os error 2)\n",
        2,
        "uv: failed to spawn mypy (not installed)",
    ),
    "GNU make 4.2, a recipe make runs itself": (
        "clang-format -i src/x.c\nmake: clang-format: Command not found\nmake: *** [Makefile:2: lint] Error 127\n",
        2,
        "make: clang-format: command not found (not installed or not on PATH)",
    ),
    "npm 6 behind an unreachable registry": (
        (
            "npm ERR! code ENOTFOUND\nnpm ERR! errno ENOTFOUND\nnpm ERR! network request to https://registry.npmjs.org/left-pad "
            "failed, reason: getaddrinfo ENOTFOUND registry.npmjs.org\n"
        ),
        1,
        "npm: registry unreachable (getaddrinfo ENOTFOUND registry.npmjs.org)",
    ),
    "go 1.22 without the module proxy": (
        (
            "go: downloading github.com/pkg/errors v0.9.1\ngo: github.com/pkg/errors@v0.9.1: Get "
            '"https://proxy.golang.org/github.com/pkg/errors/@v/v0.9.1.mod": dial tcp: lookup proxy.golang.org on '
            "127.0.0.53:53: no such host\n"
        ),
        1,
        "go: module proxy unreachable (lookup proxy.golang.org on 127.0.0.53:53: no such host)",
    ),
    "pre-commit 4.7 that cannot fetch a hook's repository (no network)": (
        (
            "[INFO] Initializing environment for https://github.com/astral-sh/ruff-pre-commit.\n"
            "An unexpected error has occurred: CalledProcessError: command: "
            "('/usr/bin/git', 'fetch', 'origin', '--tags')\nreturn code: 128\nstdout: (none)\n"
            "stderr:\n    fatal: unable to access 'https://github.com/astral-sh/ruff-pre-commit/': "
            "Could not resolve host: github.com\nCheck the log at /home/dev/.cache/pre-commit/pre-commit.log\n"
        ),
        3,
        (
            "pre-commit: cannot set up its hooks (fatal: unable to access "
            "'https://github.com/astral-sh/ruff-pre-commit/': Could not resolve host: github.com)"
        ),
    ),
    # packaging's `prek run ruff-format --files …` (its hooks' repositories on GitHub)
    "prek 0.6 that cannot clone a hook's repository (no network)": (
        (
            "error: Failed to init hooks\n"
            "  caused by: Failed to clone repo `https://github.com/pre-commit/pre-commit-hooks`\n"
            "  caused by: Command `/usr/bin/git fetch origin --tags` exited with an error:\n\n"
            "[status]\nexit status: 128\n\n[stderr]\n"
            "fatal: unable to access 'https://github.com/pre-commit/pre-commit-hooks/': "
            "Could not resolve host: github.com\n"
        ),
        2,
        (
            "prek: cannot set up its hooks (fatal: unable to access "
            "'https://github.com/pre-commit/pre-commit-hooks/': Could not resolve host: github.com)"
        ),
    ),
    # immer's `yarn prettier --check …` after its install failed
    "yarn 1.22 running a tool its node_modules lacks": (
        (
            "yarn run v1.22.22\nwarning package.json: No license field\n"
            'error Command "prettier" not found.\n'
            "info Visit https://yarnpkg.com/en/docs/cli/run for documentation about this command.\n"
        ),
        1,
        "prettier: command not found (not installed in the project's node_modules)",
    ),
    "pnpm 11 running a tool its node_modules lacks": (
        'Error: ERR_PNPM_RECURSIVE_EXEC_FIRST_FAIL\n\n  × Command "prettier" not found\n',
        1,
        "prettier: command not found (not installed in the project's node_modules)",
    ),
    "zsh running a missing tool": (
        "zsh: command not found: mypy\n",
        127,
        "mypy: command not found (not installed or not on PATH)",
    ),
}


@pytest.mark.parametrize("sample", FAULTS)
def test_an_environment_fault_is_named(sample):
    output, code, cause = FAULTS[sample]
    assert environment_fault(output, code) == cause


def test_bash_through_make_names_the_missing_tool(tmp_path: Path):
    (tmp_path / "Makefile").write_text(
        "SHELL := /bin/bash\nlint:\n\tcd . && no-such-linter-2c7 --check\n"
    )
    run = subprocess.run(
        ["make", "lint"], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert (
        "command not found" in run.stderr
    )  # bash's wording: "bash: line 1: no-such-linter-2c7: command not found"
    assert environment_fault(run.stdout + run.stderr, run.returncode) == (
        "make: no-such-linter-2c7: command not found (not installed or not on PATH)"
    )


NOT_FAULTS = {
    "a pytest test that prints 'command not found' and fails": (
        (
            "F\n=================================== FAILURES ===================================\n"
            "__________________________________ test_tool ___________________________________\n"
            "----------------------------- Captured stdout call -----------------------------\n"
            "/bin/sh: 1: clang-format: not found\n"
            "FAILED test_x.py::test_tool - assert False\n1 failed in 0.02s\n"
        ),
        1,
    ),
    "a test that fails on a network error": (
        (
            "E   requests.exceptions.ConnectionError: HTTPConnectionPool(host='api.invalid', port=80): Max retries "
            "exceeded (Caused by NewConnectionError('Failed to establish a new connection: [Errno -2] Name or service "
            "not known'))\nFAILED tests/test_api.py::test_fetch\n1 failed in 0.30s\n"
        ),
        1,
    ),
    "urllib3's warning without pip giving up": (
        (
            "WARNING: Retrying after connection broken by 'NewConnectionError('Failed to establish a new connection: "
            "[Errno -2] Name or service not known')'\nSuccessfully installed left-pad-1.0\n"
        ),
        1,
    ),
    "make -k: one recipe failed, another's tool is missing": (
        (
            "make: *** [Makefile:2: test] Error 1\nmake: clang-format: No such file or directory\n"
            "make: *** [Makefile:4: lint] Error 127\n"
        ),
        2,
    ),
    "mypy's own errors under make": (
        (
            "src/a.py:1: error: Name 'x' is not defined  [name-defined]\nFound 1 error in 1 file\n"
            "make: *** [Makefile:2: types] Error 1\n"
        ),
        2,
    ),
    "a passing command": ("error: Failed to spawn: `mypy`\n", 0),
}


@pytest.mark.parametrize("sample", NOT_FAULTS)
def test_a_failure_of_the_code_is_never_an_environment_fault(sample):
    output, code = NOT_FAULTS[sample]
    assert environment_fault(output, code) is None
