"""Task-runner plugin: Taskfile, justfile and Makefile targets that really exist."""

import os
import re
import shutil
import subprocess

import pytest

from stepkit.plugins.projects._shared import justfile_recipes, makefile_targets
from stepkit.testing import resolve_gates

TR = "stepkit.plugins.projects.taskrunners"

# Every construct the reader must get right, next to real rules.
TRICKY_MAKEFILE = """\
include rules.mk
-include missing.mk
.PHONY: test lint all
CFLAGS := -O2
X ::= y
NAME = app
export PATH := $(PATH)
override Y = 1
all: build
build: main.o
\t$(CC) -o $(NAME) main.o
%.o: %.c
\t$(CC) -c $<
test: VAR = 1
test: build
\t./app --test  # a: colon in a recipe
define RECIPE
fake: thing
endef
lint format \\
   fmt:
\t@echo lint
export-data:
\ttrue
$(OUT): x
"""


def test_makefile_reader_agrees_with_make(stepkit_project):
    project = stepkit_project({"Makefile": TRICKY_MAKEFILE, "rules.mk": "check::\n\t@true\n"})
    expected = {"all", "build", "test", "lint", "format", "fmt", "export-data", "check"}
    assert makefile_targets(project / "Makefile") == expected
    if shutil.which("make"):  # the same answer as make's own database
        db = subprocess.run(
            ["make", "-pRrq", ":"], cwd=project, capture_output=True, text=True, check=False
        ).stdout
        made, not_target = set(), False
        for line in db.splitlines():
            match = re.match(r"^([^#\t.%$][^=:]*?):(?!=)", line)
            if match and not not_target:
                made |= set(match.group(1).split())
            not_target = line.startswith("# Not a target")
        assert made - {"main.o", "Makefile", "rules.mk", "missing.mk"} == expected


def test_makefile_targets_answer_each_gate(stepkit_project):
    project = stepkit_project({"Makefile": TRICKY_MAKEFILE, "rules.mk": "check::\n\t@true\n"})
    assert resolve_gates(project) == {
        "format": ("make format", TR),
        "lint": ("make lint", TR),
        "build": ("make build", TR),
        "tests": ("make test", TR),
    }


def test_make_check_is_the_gnu_test_target(stepkit_project):
    project = stepkit_project({"makefile": "check:\n\t@true\nall:\n\t@true\n"})
    gates = resolve_gates(project)
    assert gates["tests"] == ("make check", TR)
    assert gates["build"] == (None, None)  # 'all' is never guessed to be the build


def test_a_phony_declaration_alone_is_not_a_target(stepkit_project):
    project = stepkit_project({"Makefile": ".PHONY: test lint\nhelp:\n\t@echo help\n"})
    assert all(answer == (None, None) for answer in resolve_gates(project).values())


JUSTFILE = """\
set shell := ["bash", "-c"]
alias t := test
version := "1.0"
export RUST_LOG := "info"

# Run the tests
test *args: build
    cargo test {{args}}

@fmt:
    cargo fmt

[private]
build target='debug':
    cargo build
"""


def test_justfile_recipes_by_reading_the_file(stepkit_project, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")  # no `just` to ask: the reader parses
    project = stepkit_project({"justfile": JUSTFILE})
    assert set(justfile_recipes(project / "justfile")) == {"test", "fmt", "build"}


def test_justfile_recipes_from_just_summary_when_just_exists(
    stepkit_project, tmp_path, monkeypatch
):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "just"  # a real executable standing in for just, printing a summary
    fake.write_text('#!/bin/sh\necho "$@" > "$(dirname "$0")/args"\necho "imported::lint test"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    project = stepkit_project({"Justfile": "import 'more.just'\ntest:\n    true\n"})
    assert set(justfile_recipes(project / "Justfile")) == {"imported::lint", "test"}
    assert "--summary" in (bindir / "args").read_text()


TASKFILE = """\
version: '3'
tasks:
  lint:
    cmds: [golangci-lint run]
  test:
    cmds: [go test ./...]
"""


def test_runner_order_is_per_gate_taskfile_then_just_then_make(stepkit_project, monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    project = stepkit_project(
        {
            "Taskfile.yml": TASKFILE,
            "justfile": "fmt:\n    gofmt -w .\ntest:\n    go test\n",
            "Makefile": "build:\n\tgo build\ntest:\n\tgo test\nlint:\n\tvet\n",
        }
    )
    assert resolve_gates(project) == {
        "format": ("just fmt", TR),
        "lint": ("task lint", TR),
        "build": ("make build", TR),
        "tests": ("task test", TR),
    }


def test_detected_type_is_the_first_runner_with_a_gate_target(stepkit_project, stepkit_pm):
    from stepkit.workspace.gate_commands import project_types

    project = stepkit_project(
        {
            "Taskfile.yaml": "version: '3'\ntasks:\n  deploy: {cmds: [echo]}\n",
            "Makefile": "test:\n\ttrue\n",
        }
    )
    assert project_types(stepkit_pm(project), project) == ["make"]


@pytest.mark.parametrize("content", ["", "tasks: [1, 2]\n", ": : :\n"])
def test_empty_or_malformed_taskfile_has_no_tasks(stepkit_project, content):
    project = stepkit_project({"Taskfile.yml": content})
    assert all(answer == (None, None) for answer in resolve_gates(project).values())


@pytest.mark.skipif(not shutil.which("make"), reason="needs make")
def test_a_chosen_make_target_really_runs(stepkit_project):
    project = stepkit_project({"Makefile": "test:\n\t@echo ran-the-tests\n"})
    command, _ = resolve_gates(project)["tests"]
    done = subprocess.run(
        command, shell=True, check=False, cwd=project, capture_output=True, text=True, timeout=30
    )
    assert (done.returncode, done.stdout.strip()) == (0, "ran-the-tests")
