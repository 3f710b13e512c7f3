"""Node plugin: only scripts that exist, run with the lockfile's package manager."""

import json

import pytest

from stepkit.testing import resolve_gates

NODE = "stepkit.plugins.projects.node"


def package(scripts, **fields):
    return json.dumps({"name": "demo", "version": "1.0.0", "scripts": scripts, **fields})


def test_only_existing_scripts_answer(stepkit_project):
    project = stepkit_project(
        {
            "package.json": package({"lint": "eslint .", "test": "vitest run"}),
            "package-lock.json": "{}",
        }
    )
    assert resolve_gates(project) == {
        "format": (None, None),
        "lint": ("npm run lint", NODE),
        "build": (None, None),
        "tests": ("npm run test", NODE),
    }


@pytest.mark.parametrize(
    ("lockfile", "manager"),
    [
        ("pnpm-lock.yaml", "pnpm"),
        ("yarn.lock", "yarn"),
        ("bun.lockb", "bun"),
        ("bun.lock", "bun"),
        ("package-lock.json", "npm"),
        ("npm-shrinkwrap.json", "npm"),
    ],
)
def test_the_lockfile_chooses_the_package_manager(stepkit_project, lockfile, manager):
    project = stepkit_project({"package.json": package({"test": "jest"}), lockfile: ""})
    assert resolve_gates(project)["tests"] == (f"{manager} run test", NODE)


def test_package_manager_field_beats_the_lockfile(stepkit_project):
    project = stepkit_project(
        {
            "package.json": package({"build": "tsc"}, packageManager="pnpm@9.1.0"),
            "package-lock.json": "{}",
        }
    )
    assert resolve_gates(project)["build"] == ("pnpm run build", NODE)


def test_no_lockfile_means_npm(stepkit_project):
    project = stepkit_project({"package.json": package({"format": "prettier -w ."})})
    assert resolve_gates(project)["format"] == ("npm run format", NODE)


def test_script_name_variants_in_preference_order(stepkit_project):
    project = stepkit_project(
        {
            "package.json": package(
                {"fmt": "prettier -w .", "typecheck": "tsc --noEmit", "tsc": "tsc"}
            ),
        }
    )
    gates = resolve_gates(project)
    assert gates["format"] == ("npm run fmt", NODE)
    assert gates["build"] == ("npm run typecheck", NODE)


def test_npm_init_placeholder_is_not_a_test_suite(stepkit_project):
    placeholder = 'echo "Error: no test specified" && exit 1'
    project = stepkit_project({"package.json": package({"test": placeholder})})
    assert resolve_gates(project)["tests"] == (None, None)


def test_malformed_package_json_is_node_without_commands(stepkit_project, stepkit_pm):
    from stepkit.workspace.gate_commands import project_types

    project = stepkit_project({"package.json": "{not json"})
    assert project_types(stepkit_pm(project), project) == ["node"]
    assert all(answer == (None, None) for answer in resolve_gates(project).values())


@pytest.mark.parametrize(
    ("fields", "dirs"),
    [
        ({"devDependencies": {"typescript": "^5"}}, [["node_modules"]]),
        ({"optionalDependencies": {"fsevents": "^2"}}, [["node_modules"]]),
        ({"dependencies": {}}, [[]]),
        ({}, [[]]),
    ],
)
def test_node_modules_is_a_dependency_dir_when_the_package_names_a_dependency(
    stepkit_project, stepkit_pm, fields, dirs
):
    # a --worktree run links it from the user's tree (stepkit.worktrees.prepare)
    project = stepkit_project({"package.json": package({}, **fields)})
    assert stepkit_pm(project).hook.stepkit_dependency_dirs(project_dir=project) == dirs
