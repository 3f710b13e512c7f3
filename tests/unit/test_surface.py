"""The verification surface: what the built-in project types and a project's
own plugin declare through ``stepkit_verification_surface``, and which of a
step's changes are changes of it (real git repos, the real plugin manager)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stepkit.config import load_config
from stepkit.pluginmanager import get_plugin_manager
from stepkit.workspace.scope import take_snapshot
from stepkit.workspace.surface import rule_for, surface_changes, surface_rules
from tests.support.gitrepo import init_repo

PYPROJECT = (
    '[project]\nname = "x"\nversion = "0.1"\ndependencies = []\n\n[tool.ruff]\nline-length = 100\n'
)


def repo(tmp_path: Path, files: dict[str, str]) -> Path:
    return init_repo(tmp_path / "project", files)


def rules_of(root: Path):
    config = load_config(root)
    return surface_rules(get_plugin_manager(root, config, []), root, config)


def kind(rules, rel: str) -> str | None:
    rule = rule_for(rules, rel)
    return rule.kind if rule else None


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        ("tests/test_calc.py", "tests"),
        ("pkg/test_x.py", "tests"),
        ("conftest.py", "config"),
        ("tests/a/b/conftest.py", "config"),
        ("tests/pytest.ini", "config"),
        ("setup.cfg", "config"),
        ("pytest.toml", "config"),
        ("sub/.pytest.toml", "config"),
        ("pytest.py", "startup"),
        ("src/pytest.py", None),
        ("sitecustomize.py", "startup"),
        ("lib/usercustomize.py", "startup"),
        ("x.pth", "startup"),
        ("stepconf.py", "config"),
        (".github/workflows/ci.yml", "config"),
        ("Makefile", "config"),
        ("calc.py", None),
    ],
)
def test_python_surface_kinds(tmp_path, rel, expected):
    rules = rules_of(repo(tmp_path, {"pyproject.toml": PYPROJECT}))
    assert kind(rules, rel) == expected


@pytest.mark.parametrize(
    ("files", "rel", "expected"),
    [
        ({"package.json": "{}"}, "src/add.test.js", "tests"),
        ({"package.json": "{}"}, "jest.config.js", "config"),
        ({"package.json": "{}"}, ".eslintrc.json", "config"),
        ({"package.json": "{}"}, "node_modules/.bin/jest", "startup"),
        ({"Cargo.toml": '[package]\nname = "x"\nversion = "0.1.0"\n'}, "tests/it.rs", "tests"),
        ({"Cargo.toml": '[package]\nname = "x"\nversion = "0.1.0"\n'}, "clippy.toml", "config"),
        ({"go.mod": "module x\n"}, "pkg/add_test.go", "tests"),
        ({"go.mod": "module x\n"}, ".golangci.yml", "config"),
        ({"go.mod": "module x\n"}, "pkg/add.go", None),
    ],
)
def test_node_rust_and_go_declare_theirs(tmp_path, files, rel, expected):
    assert kind(rules_of(repo(tmp_path, files)), rel) == expected


def test_a_local_plugin_declares_its_own_surface_and_its_module_is_on_it(tmp_path):
    root = repo(
        tmp_path,
        {
            "pyproject.toml": PYPROJECT + '\n[tool.stepkit]\nplugins = ["tools/gates.py"]\n',
            "tools/gates.py": "",
            "stepconf.py": (
                "import stepkit\n\n\n@stepkit.hookimpl\ndef stepkit_verification_surface(project_dir):\n"
                "    return {'config': ['ci/*.sh']}\n"
            ),
        },
    )
    rules = rules_of(root)
    assert kind(rules, "ci/run.sh") == "config"
    assert kind(rules, "tools/gates.py") == "config"


def test_each_pattern_is_compiled_once_and_every_call_reads_what_is_declared_now(tmp_path):
    root = repo(tmp_path, {"pyproject.toml": PYPROJECT, "ci/run.sh": ""})
    config = load_config(root)
    pm = get_plugin_manager(root, config, [])
    before = surface_rules(pm, root, config)

    now = surface_rules(pm, root, config, scripts=["ci/run.sh"])

    assert (kind(before, "ci/run.sh"), kind(now, "ci/run.sh")) == (None, "config")
    # the patterns declared both times are the same compiled rules, not compiled again
    assert [rule.pattern for rule in before] == [r.pattern for r in now if r.pattern != "ci/run.sh"]
    assert all(any(rule is again for again in now) for rule in before)


def change(tmp_path: Path, files: dict[str, str], edits: dict[str, str]):
    root = repo(tmp_path, files)
    rules = rules_of(root)
    snapshot = take_snapshot(root)
    for rel, text in edits.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return surface_changes(rules, snapshot, root)


def test_a_new_test_file_is_the_steps_own_but_a_new_conftest_is_a_change(tmp_path):
    found = change(
        tmp_path,
        {"pyproject.toml": PYPROJECT, "tests/test_a.py": "def test_a():\n    pass\n"},
        {"tests/test_b.py": "def test_b():\n    pass\n", "tests/conftest.py": "x = 1\n"},
    )
    assert [(c.path, c.kind, c.how, c.before) for c in found] == [
        ("tests/conftest.py", "config", "added", None)
    ]
    assert "+x = 1" in found[0].diff


def reached(tmp_path: Path, files: dict[str, str], edits: dict[str, str]):
    """The changes as the pristine re-check asks for them: with the project's
    answer to ``stepkit_added_file_reach`` for each test file the step added."""
    root = repo(tmp_path, files)
    pm = get_plugin_manager(root, load_config(root), [])
    rules = rules_of(root)
    snapshot = take_snapshot(root)
    for rel, text in edits.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return surface_changes(
        rules,
        snapshot,
        root,
        lambda rel, test_file: pm.hook.stepkit_added_file_reach(
            project_dir=root, path=rel, test_file=test_file, search_roots=[]
        ),
    )


def test_a_module_added_among_a_python_projects_tests_is_a_change_and_its_data_is_not(tmp_path):
    found = reached(
        tmp_path,
        {"pyproject.toml": PYPROJECT, "tests/test_a.py": "def test_a():\n    pass\n"},
        {
            "tests/test_b.py": "def test_b():\n    pass\n",
            "tests/calc.py": "x = 1\n",
            "tests/cases.json": "[]\n",
            "tests/sub/__init__.py": "",
            "tomllib.py": "",
            "helpers.py": "",
        },
    )
    assert [(c.path, c.kind, c.how, c.before) for c in found] == [
        ("tests/calc.py", "tests", "added", None),
        ("tests/sub/__init__.py", "tests", "added", None),
        ("tests/test_b.py", "tests", "added", None),
        ("tomllib.py", "startup", "added", None),
    ]
    assert found[2].line() == (
        "tests/test_b.py (tests, added: a test module, run in one process with the "
        "tests that were there before it)"
    )
    assert "in place of the code under test" in found[0].why


def test_a_test_file_added_to_a_project_whose_type_says_nothing_is_the_steps_own(tmp_path):
    found = reached(
        tmp_path,
        {"package.json": "{}", "test/a.test.js": ""},
        {"test/b.test.js": "", "test/b.py": ""},
    )
    assert found == []


def test_a_pyproject_change_outside_its_tool_tables_is_not_a_change(tmp_path):
    found = change(
        tmp_path,
        {"pyproject.toml": PYPROJECT},
        {"pyproject.toml": PYPROJECT.replace("dependencies = []", 'dependencies = ["attrs"]')},
    )
    assert found == []


def test_a_tool_table_change_is_restored_with_the_rest_of_the_file_kept(tmp_path):
    now = (
        PYPROJECT.replace("dependencies = []", 'dependencies = ["attrs"]')
        + '\n[tool.pytest.ini_options]\naddopts = ["-k", "not test_add"]\n'
    )
    (found,) = change(tmp_path, {"pyproject.toml": PYPROJECT}, {"pyproject.toml": now})
    assert found.path == "pyproject.toml" and found.how == "modified"
    restored = found.before.decode()
    assert 'dependencies = ["attrs"]' in restored and "not test_add" not in restored
    assert "[tool.ruff]\nline-length = 100" in restored


#: pytest's table moved where a line-by-line reading of the TOML does not see it
HIDDEN_TABLES = {
    "behind a dotted key before the first table": 'tool.pytest.ini_options.addopts = "-x"\n'
    + PYPROJECT,
    "behind an escaped key": PYPROJECT + '\n[tool."pytes\\u0074".ini_options]\naddopts = "-x"\n',
    "unparseable": PYPROJECT + "\n[tool.ruff\n",
}


@pytest.mark.parametrize("how", list(HIDDEN_TABLES))
def test_a_protected_table_is_compared_by_its_parsed_value(tmp_path, how):
    (found,) = change(
        tmp_path, {"pyproject.toml": PYPROJECT}, {"pyproject.toml": HIDDEN_TABLES[how]}
    )
    assert (
        found.before == PYPROJECT.encode()
    )  # the text cannot be split by meaning: all of it as it was


def test_a_reformatted_protected_table_is_no_change(tmp_path):
    now = PYPROJECT.replace(
        "[tool.ruff]\nline-length = 100\n", "[tool]\nruff = { line-length = 100 }\n"
    )
    assert change(tmp_path, {"pyproject.toml": PYPROJECT}, {"pyproject.toml": now}) == []


def test_a_module_the_pytest_configuration_collects_is_a_test_module_whatever_its_name(tmp_path):
    files = {
        "pyproject.toml": PYPROJECT + '\n[tool.pytest.ini_options]\npython_files = ["check_*.py"]\n'
    }
    (found,) = reached(tmp_path, files, {"checks/check_mul.py": "def check_mul(): pass\n"})
    assert found.path == "checks/check_mul.py" and "a test module" in found.why


def test_package_json_scripts_are_protected_and_its_dependencies_are_not(tmp_path):
    package = {"name": "x", "scripts": {"test": "node --test"}, "dependencies": {}}
    files = {"package.json": json.dumps(package)}
    assert (
        change(
            tmp_path / "deps",
            files,
            {"package.json": json.dumps({**package, "dependencies": {"a": "1"}})},
        )
        == []
    )
    (found,) = change(
        tmp_path / "scripts",
        files,
        {
            "package.json": json.dumps(
                {**package, "scripts": {"test": "echo ok"}, "dependencies": {"a": "1"}}
            )
        },
    )
    restored = json.loads(found.before)
    assert restored["scripts"] == {"test": "node --test"} and restored["dependencies"] == {"a": "1"}
