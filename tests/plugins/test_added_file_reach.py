"""``stepkit_added_file_reach``: which files the step adds can change what
the tests that were there before them see, as each project type's runner
loads them: test files that share the earlier tests' process, modules found
before the runner's own.  Real plugins on real files in a tmp project."""

from __future__ import annotations

import json

import pytest

from stepkit.pluginmanager import get_plugin_manager


def answer(project, path, test_file=True, search_roots=()):
    return get_plugin_manager(project).hook.stepkit_added_file_reach(
        project_dir=project, path=path, test_file=test_file, search_roots=list(search_roots)
    )


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("tests/test_new.py", "a test module, run in one process"),
        ("pkg/new_test.py", "a test module, run in one process"),
        ("tests/calc.py", "in place of the code under test"),
        ("tests/__init__.py", "in place of the code under test"),
        ("tests/_speedups.cpython-311-x86_64-linux-gnu.so", "in place of the code under test"),
        ("tests/data/cases.json", None),
        ("tests/fixtures/input.txt", None),
    ],
)
def test_python_names_every_module_added_among_the_tests(tmp_path, path, says):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0.1"\n')
    found = answer(tmp_path, path)
    assert (found is None) if says is None else (says in found), found


@pytest.mark.parametrize(
    ("path", "roots", "shadowed"),
    [
        ("tomllib.py", (), "tomllib"),
        ("json/__init__.py", (), "json"),
        ("argparse.cpython-311-x86_64-linux-gnu.so", (), "argparse"),
        ("pytest.py", (), "pytest"),
        ("iniconfig.py", (), "iniconfig"),
        ("src/pluggy/__init__.py", ("src",), "pluggy"),
        ("src/tomllib.py", ("src",), "tomllib"),
        ("src/tomllib.py", (), None),  # src/ is not on the gates' path: a module of the project
        ("pkg/json.py", (), None),  # pkg.json, a submodule
        ("calc.py", (), None),
        ("test/__init__.py", (), None),  # the standard library's regression tests are no tool's
        ("sys.py", (), None),  # built into the interpreter: never looked for on the path
    ],
)
def test_python_names_a_module_added_where_python_looks_before_its_own(
    tmp_path, path, roots, shadowed
):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0.1"\n')
    found = answer(tmp_path, path, test_file=False, search_roots=roots)
    assert (found is None) if shadowed is None else (f"in place of {shadowed} " in found), found


def test_a_module_added_outside_the_tests_is_the_steps_code(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0.1"\n')
    (tmp_path / "package.json").write_text(json.dumps({"name": "x", "scripts": {"test": "mocha"}}))
    assert answer(tmp_path, "lib/helpers.py", test_file=False) is None
    assert answer(tmp_path, "lib/helpers.js", test_file=False) is None


@pytest.mark.parametrize(
    ("scripts", "mocharc", "says"),
    [
        ({"test": "mocha"}, False, "mocha loads every test file into one process"),
        ({"test": "./node_modules/.bin/tape test/*.js"}, False, "tape loads"),
        ({"test": "npm run unit"}, True, "mocha loads"),
        ({"test": "node --test"}, False, None),
        ({"test": "jest"}, False, None),
        ({"test": "vitest run"}, False, None),
    ],
)
def test_node_names_a_module_added_where_one_process_runs_every_test_file(
    tmp_path, scripts, mocharc, says
):
    (tmp_path / "package.json").write_text(
        json.dumps({"name": "x", "version": "1.0.0", "scripts": scripts})
    )
    if mocharc:
        (tmp_path / ".mocharc.yml").write_text("spec: test/**/*.js\n")
    found = answer(tmp_path, "test/helper.js")
    assert (found is None) if says is None else (says in found), found
    assert answer(tmp_path, "test/cases.json") is None


def test_go_names_a_test_file_added_to_a_package(tmp_path):
    (tmp_path / "go.mod").write_text("module x\n")
    assert "one test binary with its package's tests" in answer(tmp_path, "pkg/add_test.go")
    assert answer(tmp_path, "pkg/testdata/case.txt") is None


def test_a_project_whose_runner_isolates_each_test_file_gets_no_answer(tmp_path):
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "x"\nversion = "0.1.0"\n')
    assert answer(tmp_path, "tests/it.rs") is None
