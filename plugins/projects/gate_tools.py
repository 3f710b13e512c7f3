"""Which gate a command's tools check, read from the command's text alone:
``pytest``, ``go test``, ``vitest`` … run tests; ``mypy``, ``tsc``,
``cargo check`` … build or type-check; ``ruff check``, ``eslint`` … lint;
``ruff format``, ``prettier`` … format.

CI lines (:mod:`stepkit.plugins.projects.ci`) and task-runner targets
(:mod:`stepkit.plugins.projects.taskrunners`) are read with it: a target
named ``test`` or ``check`` whose recipe runs no test runner, only a linter or a
type checker (:func:`checks_only`), is not the tests gate, whatever its name.
"""

from __future__ import annotations

import re

from stepkit.lazyregex import lazy_compile

#: The gates in the order a command is tried against their tools.
GATES = ("tests", "build", "lint", "format")


def _any(*patterns: str) -> re.Pattern[str]:
    return lazy_compile("|".join(rf"(?:(?<![\w./-]){p}(?![\w-]))" for p in patterns))


#: What each gate's tools look like, in the order a command is tried against them.
TOOLS: dict[str, re.Pattern[str]] = {
    "tests": _any(
        r"(?:python3?\s+-m\s+)?pytest",
        r"py\.test",
        r"tox",
        r"nox",
        r"cargo\s+(?:test|nextest\s+run)",
        r"go\s+test",
        r"(?:npm|yarn|pnpm|bun)\s+(?:run\s+)?test",
        r"npm\s+t",
        r"ctest",
        r"make\s+(?:test|tests|check)",
        r"\S*mvnw?\s+(?:-\S+\s+)*(?:test|verify)",
        r"\S*gradlew?\s+(?:-\S+\s+)*(?:test|check|build)",
        r"rspec",
        r"rake(?:\s+(?:test|spec)\S*)?\s*$",
        r"\S*phpunit",
        r"jest",
        r"vitest",
        r"ava",
        r"node\s+--test",
        r"deno\s+test",
        r"dotnet\s+test",
        r"mix\s+test",
        r"swift\s+test",
        r"zig\s+build\s+test",
        r"python3?\s+-m\s+unittest",
        r"hatch\s+test",
        r"composer\s+test",
    ),
    "build": _any(
        r"mypy",
        r"pyright",
        r"tsc",
        r"deno\s+check",
        r"cargo\s+(?:build|check)",
        r"go\s+build",
        r"cmake\s+--build",
        r"\S*mvnw?\s+(?:-\S+\s+)*(?:compile|test-compile|package)",
        r"\S*phpstan",
        r"\S*psalm",
        r"dotnet\s+build",
        r"swift\s+build",
        r"zig\s+build",
        r"make",
    ),
    "lint": _any(
        r"ruff\s+check",
        r"ruff(?=\s+\.)",
        r"flake8",
        r"pylint",
        r"eslint",
        r"xo",
        r"cargo\s+clippy",
        r"golangci-lint\s+run",
        r"go\s+vet",
        r"staticcheck",
        r"rubocop",
        r"standardrb",
        r"\S*phpcs",
        r"biome\s+(?:lint|check|ci)",
        r"deno\s+lint",
        r"credo",
    ),
    "format": _any(
        r"ruff\s+format",
        r"black",
        r"prettier",
        r"cargo\s+fmt",
        r"rustfmt",
        r"gofmt",
        r"go\s+fmt",
        r"clang-format",
        r"\S*php-cs-fixer",
        r"deno\s+fmt",
        r"mix\s+format",
        r"dotnet\s+format",
        r"spotless\S*",
        r"isort",
    ),
}


def tool_gate(text: str) -> str | None:
    """The first gate (in :data:`GATES` order) whose tools ``text`` runs."""
    for gate in GATES:
        if TOOLS[gate].search(text):
            return gate
    return None


def runs_a_test_runner(text: str) -> bool:
    """``text`` (a command, a recipe, a script) invokes a test runner."""
    return TOOLS["tests"].search(text) is not None


def checks_only(text: str) -> str | None:
    """The gate of what ``text`` runs when it runs no test runner but a
    type checker, a linter or a formatter (``build``, ``lint``, ``format``);
    None when it runs a test runner or nothing known.  A bare ``make`` is no
    checker: it may run anything."""
    if runs_a_test_runner(text):
        return None
    for gate in GATES[1:]:
        if any(found.group(0) != "make" for found in TOOLS[gate].finditer(text)):
            return gate
    return None
