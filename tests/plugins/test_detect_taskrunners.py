"""Task-runner targets that need a terminal are passed over, and ``stepkit
detect`` says so (``stepkit_detect_notes``)."""

from __future__ import annotations

import pytest

from stepkit.testing import resolve_gates
from tests.support.cli import stepkit
from tests.support.detect import detect_json

PHP = "stepkit.plugins.projects.php"
TR = "stepkit.plugins.projects.taskrunners"
COMPOSER = '{"require-dev": {"phpunit/phpunit": "^10"}}'


def test_a_docker_run_it_test_target_gives_way_to_phpunit_and_detect_says_why(stepkit_project):
    project = stepkit_project(
        {
            "Makefile": "test:\n\tdocker run --rm -it -v $(PWD):/app php:8.3 vendor/bin/phpunit\n"
            "lint:\n\tvendor/bin/phpcs\n",
            "composer.json": COMPOSER,
            "phpunit.xml": "<phpunit/>",
        }
    )
    data = detect_json(project)
    gates = {gate["name"]: (gate["command"], gate["plugin"]) for gate in data["gates"]}
    assert gates["tests"] == ("vendor/bin/phpunit", PHP)
    assert gates["lint"] == ("make lint", TR)  # a target that needs no terminal still answers
    assert data["notes"] == [
        "tests: skipped `make test`: it runs `docker run --rm -it`, which needs a terminal; a gate has none"
    ]
    text = stepkit("detect", "--project-dir", str(project), check=True).stdout
    assert "note:   tests: skipped `make test`" in text


@pytest.mark.parametrize(
    ("recipe", "skipped"),
    [
        ("docker compose run app pytest", True),
        ("docker-compose run --rm app pytest", True),
        ("docker compose run -T app pytest", False),
        ("docker exec -it db psql -c 'select 1'", True),
        ("podman run -ti img make check", True),
        ("docker run --rm img pytest", False),
        ("docker build -t demo .", False),
    ],
)
def test_which_container_commands_need_a_terminal(stepkit_project, recipe, skipped):
    project = stepkit_project({"justfile": f"test:\n    {recipe}\n"})
    assert resolve_gates(project)["tests"] == ((None, None) if skipped else ("just test", TR))


def test_a_prerequisite_that_needs_a_terminal_skips_the_target(stepkit_project):
    project = stepkit_project(
        {
            "Makefile": "test: up\n\tpytest\nup:\n\tdocker compose run web migrate\n",
            "Taskfile.yml": "version: '3'\ntasks:\n  test:\n    cmds:\n"
            "      - cmd: docker run -t img go test ./...\n",
        }
    )
    assert resolve_gates(project)["tests"] == (None, None)


def test_stepkit_detect_notes_is_empty_without_anything_skipped(stepkit_project, stepkit_pm):
    project = stepkit_project({"Makefile": "test:\n\tpytest\n"})
    answers = stepkit_pm(project).hook.stepkit_detect_notes(project_dir=project)
    assert [note for answer in answers for note in answer] == []


def test_a_test_target_that_only_type_checks_is_passed_over_with_a_note(stepkit_project):
    project = stepkit_project(
        {
            "pyproject.toml": '[project]\nname = "demo"\n',
            "Makefile": "test:\n\tmypy --strict src\n\nlint:\n\truff check .\n",
            "tests/test_a.py": "def test_a():\n    pass\n",
        }
    )
    data = detect_json(project)
    tests = {g["name"]: g for g in data["gates"]}["tests"]
    assert tests["command"] != "make test" and "pytest" in tests["command"], tests
    assert "tests: skipped `make test`: it runs no test runner, only build tools" in data["notes"]
