"""The check mode of every formatter the project plugins choose (verify
rewrites nothing), and none for a project's own script."""

from __future__ import annotations

from pathlib import Path

import pytest

from stepkit.config import Config
from stepkit.plugins.projects.format_check import stepkit_format_check_command


def check(command: str) -> str | None:
    return stepkit_format_check_command(command=command, project_dir=Path("."), config=Config())


@pytest.mark.parametrize(
    "command, expected",
    [
        (
            "ruff format --force-exclude {files:.py,.pyi}",
            "ruff format --check --force-exclude {files:.py,.pyi}",
        ),
        (
            "uv run --frozen ruff format {files:.py}",
            "uv run --frozen ruff format --check {files:.py}",
        ),
        ("black {files:.py,.pyi}", "black --check {files:.py,.pyi}"),
        ("npx prettier --write {files}", "npx prettier --check {files}"),
        ("rustfmt --edition 2021 {files:.rs}", "rustfmt --check --edition 2021 {files:.rs}"),
        ("cargo fmt", "cargo fmt --check"),
        ("clang-format -i {files:.c,.h}", "clang-format --dry-run --Werror {files:.c,.h}"),
        ("deno fmt {files}", "deno fmt --check {files}"),
        ("mix format {files}", "mix format --check-formatted {files}"),
        (
            "dotnet format --include {files:.cs}",
            "dotnet format --verify-no-changes --include {files:.cs}",
        ),
        ("./mvnw -q spotless:apply", "./mvnw -q spotless:check"),
        ("./gradlew spotlessApply", "./gradlew spotlessCheck"),
        (
            "vendor/bin/php-cs-fixer fix {files:.php}",
            "vendor/bin/php-cs-fixer fix --dry-run --diff {files:.php}",
        ),
        ("swift format --in-place {files}", "swift format lint --strict {files}"),
        ("zig fmt {files:.zig}", "zig fmt --check {files:.zig}"),
        ("black . && ruff format .", "black --check . && ruff format --check ."),
    ],
)
def test_each_formatter_has_its_check_mode(command, expected):
    assert check(command) == expected


@pytest.mark.parametrize(
    "command", ["npm run format", "make fmt", "just format", "black . && ./fix-imports.sh"]
)
def test_a_command_with_no_known_check_mode_has_none(command):
    assert check(command) == ""


def test_gofmt_check_fails_and_names_the_files_when_one_would_change(tmp_path):
    import subprocess

    command = check("gofmt -l -w {files:.go}")
    fake = tmp_path / "gofmt"
    fake.write_text('#!/bin/sh\n[ "$1" = -l ] && [ "$2" = ugly.go ] && echo ugly.go\nexit 0\n')
    fake.chmod(0o755)
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin"}
    run = lambda files: subprocess.run(
        command.replace("{files:.go}", files),
        shell=True,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    ugly, tidy = run("ugly.go"), run("tidy.go")
    assert (ugly.returncode, ugly.stdout) == (1, "would reformat:\nugly.go\n")
    assert (tidy.returncode, tidy.stdout) == (0, "")


@pytest.mark.parametrize(
    "command",
    [
        "ruff format --check .",
        "black --check src",
        "npx prettier --check .",
        "prettier -c src",
        "biome format .",
        "npx @biomejs/biome check src",
        "biome ci .",
        "cargo fmt --all -- --check",
        "dotnet format --verify-no-changes",
        "ruff format --check . && black --check .",
    ],
)
def test_a_command_that_already_checks_is_its_own_check_mode(command):
    assert check(command) == command


@pytest.mark.parametrize(
    "command, expected",
    [
        ("biome format --write .", "biome format ."),
        ("npx biome check --write src", "npx biome check src"),
    ],
)
def test_biome_write_becomes_its_check(command, expected):
    assert check(command) == expected


@pytest.mark.parametrize(
    "command",
    [
        "pre-commit run black --files {files}",
        "uv run --frozen python -m pre_commit run ruff-format --files {files}",
        "prek run ruff-format --files {files}",
    ],
)
def test_a_pre_commit_hook_is_checked_by_running_it_and_undoing_its_rewrites(command, tmp_path):
    """The hook has no dry run (and `black` in its id is no black to add --check to):
    the real fix_diff runs it and puts back, and names, every file it rewrote."""
    import shlex
    import subprocess
    import sys

    checked = check(command)
    assert checked.endswith(f"-m stepkit.plugins.projects.fix_diff -- {command}")
    (tmp_path / "a.py").write_text("x=1\n")
    rewrite = f"{sys.executable} -c \"open('a.py','w').write('x = 1\\n')\" --files a.py"
    done = subprocess.run(
        [*shlex.split(checked.split(" -- ")[0]), "--", *shlex.split(rewrite)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1 and "would reformat" in done.stdout and "a.py" in done.stdout
    assert (tmp_path / "a.py").read_text() == "x=1\n"
