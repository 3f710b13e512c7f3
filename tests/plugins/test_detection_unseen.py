"""Detection measured against CI on real projects it was not tuned on.

The fixtures under tests/fixtures/ci_unseen/ are what detection reads of 32
real projects at pinned commits, abridged and retyped (see its README).
Line numbers in the CI column are the projects' own.  For each project
and gate, :data:`EXPECTED` says what its CI runs for a push to the default
branch on Linux and which detected commands agree with it or are
acceptable; anything else is wrong.  The measured verdicts must be the ones
docs/detection.md's table "Projects detection was not tuned on" shows, and
its closing rate line their count, so the table cannot drift from what
detection does.  Detection runs in-process on a fixed machine (Python
3.11, Node 20, no Go, stable Rust 1.95 with a nightly beside it), since
which CI line can run here depends on the machine.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import NamedTuple

import pytest

from stepkit.api import detect_gates
from stepkit.plugins.projects import machine

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ci_unseen"
DOC = Path(__file__).resolve().parents[2] / "docs" / "detection.md"
SECTION = "## Projects detection was not tuned on"
GATES = ("format", "lint", "build", "tests")

#: The machine the table is measured on.
RUST = machine.Rust(
    "1.95.0", "stable", frozenset({"stable", "nightly"}), frozenset({"x86_64-unknown-linux-gnu"})
)
VERSIONS = {"python": "3.11.7", "node": "20.20.2", "go": None}

#: No command: the gate is NOT RUN.
NONE = "—"


class Gate(NamedTuple):
    """What CI runs for one gate, and the detected commands that agree with it
    or are acceptable (regular expressions, matched whole; ``NONE`` for no command)."""

    ci: str
    agree: tuple[str, ...] = ()
    acceptable: tuple[str, ...] = ()


def _g(ci: str, agree: str | tuple[str, ...] = (), acceptable: str | tuple[str, ...] = ()) -> Gate:
    return Gate(ci, _tuple(agree), _tuple(acceptable))


def _tuple(patterns: str | tuple[str, ...]) -> tuple[str, ...]:
    return (patterns,) if isinstance(patterns, str) else patterns


#: No gate in CI, and none detected.
NO = _g("—", NONE)

#: a tool run from the project's environment manager, as a command or as a module
RUN = r"(?:\w+ run (?:--frozen )?(?:python -m )?)?"
RUFF_FMT = RUN + r"ruff format --force-exclude \{files:\.py,\.pyi\}"
RUFF = RUN + r"ruff check"


def hook(hook_id: str) -> str:
    """The project's own pre-commit or prek hook ``hook_id``: CI's gate itself."""
    return RUN + rf"(?:pre-commit|prek|pre_commit) run {hook_id} --(?:files \{{files\}}|all-files)"


PYTEST = r".*(?:pytest|tox (?:run )?-e (?:py|3\.11|py311)\b|nox -s tests?\b).*"

EXPECTED: dict[str, tuple[str, dict[str, Gate]]] = {
    "pypa+packaging": (
        "Python (nox)",
        {
            "format": _g(
                "`ruff-format` hook, in `nox -s lint` (lint.yml:44)", hook("ruff-format"), RUFF_FMT
            ),
            "lint": _g(
                "`pipx run nox -s lint` — pre-commit (lint.yml:44)", r".*nox -s lint.*", RUFF
            ),
            "build": _g("`mypy` hook, in `nox -s lint` (lint.yml:44)", (), r"mypy"),
            "tests": _g("`pipx run nox -s tests` (test.yml:60)", r".*nox -s tests", PYTEST),
        },
    ),
    "python-poetry+tomlkit": (
        "Python (poetry)",
        {
            "format": _g("`ruff-format` hook (pre-commit.ci)", hook("ruff-format"), RUFF_FMT),
            "lint": _g("`ruff` hook (pre-commit.ci)", (), RUFF),
            "build": _g("— (mypy configured in pyproject.toml)", NONE, RUN + r"mypy"),
            "tests": _g(
                "`poetry run pytest -q tests` (tests.yml:68)",
                r"poetry run pytest -q tests",
                # integration.yml runs it in poetry's checkout: the same command, another tree
                r"poetry run pytest -q tests/",
            ),
        },
    ),
    "pdm-project+pdm": (
        "Python (pdm)",
        {
            "format": _g("`ruff-format` hook (pre-commit.ci)", hook("ruff-format"), RUFF_FMT),
            "lint": _g("`ruff` hook (pre-commit.ci)", (), RUFF),
            "build": _g("`mypy` hook (pre-commit.ci)", (), RUN + r"mypy src/pdm"),
            "tests": _g(
                "`pdm run pytest -n auto --cov=pdm … tests` (ci.yml:92)",
                r"pdm run pytest -n auto .*",
            ),
        },
    ),
    "tox-dev+platformdirs": (
        "Python (tox, hatch)",
        {
            "format": _g("`ruff-format` hook (pre-commit.ci)", hook("ruff-format"), RUFF_FMT),
            "lint": _g("`ruff-check` hook (pre-commit.ci)", (), RUFF),
            "build": _g(
                "`tox run --skip-pkg-install -e type` (check.yaml:148, matrix `tox_env`)",
                r"tox run .*-e type",
            ),
            "tests": _g(
                "`tox run --skip-pkg-install -e 3.11` (check.yaml:55–60)",
                (r"tox run (?!.*--notest).*-e 3\.11", r"tox -e 3\.11"),
                PYTEST,
            ),
        },
    ),
    "python-attrs+attrs": (
        "Python (uv, tox)",
        {
            "format": _g("`ruff format`, in `tox run -f lint` (ci.yml:192)", (), RUFF_FMT),
            "lint": _g("`tox run -f lint` (ci.yml:192)", r".*tox run -f lint", RUFF),
            "build": _g(
                "`tox run -f typing` (ci.yml:208)",
                r".*tox run -f typing",
                r".*mypy src/attr src/attrs",
            ),
            "tests": _g(
                "`tox run --installpkg dist/*.whl -e $PYTHON-tests` (`3.11-tests`) on another job's sdist (ci.yml:77)",
                r".*tox (?:run )?-e 3\.11-tests",
                PYTEST,
            ),
        },
    ),
    "encode+starlette": (
        "Python (hatch, scripts)",
        {
            "format": _g(
                "`ruff format --check`, in `scripts/check` (test-suite.yml:28)",
                (),
                r".*ruff format.*",
            ),
            "lint": _g(
                "`ruff check`, in `scripts/check` (test-suite.yml:28)",
                (),
                r"(?:scripts/check|ruff check)",
            ),
            "build": _g(
                "`mypy`, in `scripts/check` (test-suite.yml:28)", (), r"scripts/check|mypy .*"
            ),
            "tests": _g("`scripts/test` (test-suite.yml:33)", r"scripts/test"),
        },
    ),
    "fastapi+typer": (
        "Python (uv)",
        {
            "format": _g(
                "`ruff-format` hook, prek (pre-commit.yml:58)", hook("local-ruff-format"), RUFF_FMT
            ),
            "lint": _g("`ruff` hook, prek (pre-commit.yml:58)", hook("local-ruff-check"), RUFF),
            "build": _g("`mypy` in `scripts/lint.sh`, a prek hook", (), RUN + r"mypy typer"),
            "tests": _g(
                "`uv run bash scripts/test.sh` (test.yml:71)", r"uv run bash scripts/test\.sh"
            ),
        },
    ),
    "pmndrs+zustand": (
        "TypeScript (pnpm, vitest)",
        {
            "format": _g(
                "`pnpm run test:format` — prettier (test.yml:25)",
                r"pnpm run test:format",
                r"pnpm exec prettier .*",
            ),
            "lint": _g("`pnpm run test:lint` (test.yml:27)", r"pnpm run test:lint"),
            "build": _g(
                "`pnpm run test:types`, `pnpm run build` (test.yml:26, 29)",
                r"pnpm run (?:test:types|build)",
            ),
            "tests": _g("`pnpm run test:spec` (test.yml:28)", r"pnpm run test:spec"),
        },
    ),
    "vuejs+pinia": (
        "TypeScript (pnpm workspace, vitest)",
        {
            "format": _g("prettier, in `pnpm run lint` (ci.yml:27)", (), r"pnpm exec prettier .*"),
            "lint": _g("`pnpm run lint` (ci.yml:27)", r"pnpm run lint"),
            "build": _g("`pnpm run test:types` (ci.yml:28)", r"pnpm run test:types"),
            "tests": _g("`pnpm run test:vitest` (ci.yml:30)", r"pnpm run test:vitest"),
        },
    ),
    "honojs+hono": (
        "TypeScript (Bun, vitest)",
        {
            "format": _g("`bun run format` — `prettier --check` (ci.yml:49)", r"bun run format"),
            "lint": _g("`bun run lint` (ci.yml:50)", r"bun run lint"),
            "build": _g("`bun run build` (ci.yml:52)", r"bun run build"),
            "tests": _g("`bun run test` (ci.yml:53)", r"bun run test"),
        },
    ),
    "dsherret+dax": (
        "TypeScript (Deno)",
        {
            "format": _g("`dprint/check` action (ci.yml:35)", (), r"dprint .*"),
            "lint": _g("`deno lint` (ci.yml:40)", r"deno lint"),
            "build": _g("`deno check` (ci.yml:44)", r"deno check"),
            "tests": _g("`deno test -P` (ci.yml:47)", r"deno test -P"),
        },
    ),
    "immerjs+immer": (
        "JavaScript (yarn, jest)",
        {
            "format": _g("— (`.prettierrc`)", NONE, r"yarn prettier .*"),
            "lint": NO,
            "build": _g("— (`yarn build` in release.yml:30)", NONE, r"yarn build"),
            "tests": _g("`yarn test` (test.yml:24)", r"yarn test"),
        },
    ),
    "unjs+ofetch": (
        "TypeScript (pnpm, vitest)",
        {
            "format": _g("prettier -c, in `pnpm lint` (ci.yml:16)", (), r"pnpm exec prettier .*"),
            "lint": _g("`pnpm lint` (ci.yml:16)", r"pnpm (?:run )?lint"),
            "build": _g("`pnpm build` (ci.yml:17)", r"pnpm build"),
            "tests": _g("`pnpm vitest --coverage` (ci.yml:18)", r"pnpm vitest --coverage"),
        },
    ),
    "dtolnay+thiserror": (
        "Rust (workspace)",
        {
            "format": NO,
            "lint": _g(
                "`cargo clippy --tests --workspace -- -Dclippy::all -Dclippy::pedantic` on nightly (ci.yml:102)",
                r"cargo clippy --tests --workspace -- -Dclippy::all -Dclippy::pedantic",
                r"cargo clippy .*",
            ),
            "build": _g("`cargo check` (ci.yml:62)", r"cargo check", r"cargo build .*"),
            "tests": _g(
                "`cargo test --workspace --exclude thiserror_no_std_test` (ci.yml:41)",
                r"cargo test --workspace --exclude thiserror_no_std_test",
                r"cargo test --workspace",
            ),
        },
    ),
    "rayon-rs+rayon": (
        "Rust (workspace)",
        {
            "format": _g("`cargo fmt --all --check` (merge queue, ci.yaml:115)", (), r"rustfmt .*"),
            "lint": NO,
            "build": _g(
                "`cargo build --verbose` (main.yaml:21)",
                r"cargo build --verbose",
                r"cargo check --verbose",
            ),
            "tests": _g(
                "`cargo test --verbose --package rayon` (main.yaml:22)",
                r"cargo test --verbose --package rayon",
            ),
        },
    ),
    "BurntSushi+memchr": (
        "Rust",
        {
            "format": _g(
                "`cargo fmt --all -- --check` (ci.yml:320)",
                r"rustfmt --edition 2021 \{files:\.rs\}",
            ),
            "lint": NO,
            "build": _g("`cargo build --verbose` (ci.yml:121)", r"cargo build --verbose"),
            "tests": _g("`cargo test --verbose` (ci.yml:127)", r"cargo test --verbose"),
        },
    ),
    "spf13+cobra": (
        "Go (make)",
        {
            "format": _g("— (`make fmt` in the Makefile)", NONE, r"make fmt"),
            "lint": _g(
                "`golangci/golangci-lint-action` (test.yml:50)",
                r"golangci-lint run.*",
                r"make lint",
            ),
            "build": NO,
            "tests": _g("`make richtest` (test.yml:93)", r".*make richtest", r"make test"),
        },
    ),
    "sirupsen+logrus": (
        "Go",
        {
            "format": NO,
            "lint": _g("`golangci/golangci-lint-action` (ci.yaml:34)", r"golangci-lint run.*"),
            "build": _g("`go build ./...` per target (ci.yaml:48–52)", (), r"go build \./\.\.\."),
            "tests": _g("`go test -race -v ./...` (ci.yaml:73)", r"go test -race -v \./\.\.\."),
        },
    ),
    "google+go-cmp": (
        "Go",
        {
            "format": _g(
                "`gofmt -d .` must print nothing (test.yml:23)", r"gofmt -l -w \{files:\.go\}"
            ),
            "lint": NO,
            "build": NO,
            "tests": _g("`go test -v -race ./...` (test.yml:20)", r"go test -v -race \./\.\.\."),
        },
    ),
    "jnunemaker+httparty": (
        "Ruby",
        {
            "format": NO,
            "lint": NO,
            "build": NO,
            "tests": _g("`bundle exec rake` (ci.yml:24)", r"bundle exec rake"),
        },
    ),
    "rails+thor": (
        "Ruby",
        {
            "format": NO,
            "lint": _g("`bundle exec rubocop` (lint.yml:12)", r"bundle exec rubocop"),
            "build": NO,
            "tests": _g(
                "`bundle exec thor spec` (tests.yml:17)",
                r"bundle exec thor spec",
                r"bundle exec rspec",
            ),
        },
    ),
    "Seldaek+monolog": (
        "PHP",
        {
            "format": _g(
                "— (`.php-cs-fixer.php`, but composer.json installs no php-cs-fixer)", NONE
            ),
            "lint": _g("`php -l` on every file (lint.yml:37)", (), NONE),
            "build": _g("`composer phpstan` (phpstan.yml:48)", r"composer phpstan"),
            "tests": _g(
                "`composer exec phpunit -- --exclude-group …` (continuous-integration.yml:89)",
                r"composer exec phpunit -- --exclude-group .*",
            ),
        },
    ),
    "guzzle+psr7": (
        "PHP",
        {
            "format": _g(
                "`vendor/bin/php-cs-fixer fix --diff --dry-run` (static.yml:58)",
                r"vendor/bin/php-cs-fixer fix --path-mode=intersection \{files:\.php\}",
            ),
            "lint": _g("— (psalm, a type checker, static.yml:82)", NONE),
            "build": _g(
                "`vendor/bin/phpstan analyze --no-progress` (static.yml:34)",
                r"vendor/bin/phpstan analyze --no-progress",
            ),
            "tests": _g(
                '`vendor/bin/phpunit --testsuite "Guzzle PSR-7 Unit Test Suite"` (ci.yml:58)',
                r'vendor/bin/phpunit --testsuite "Guzzle PSR-7 Unit Test Suite"',
            ),
        },
    ),
    "vlucas+phpdotenv": (
        "PHP",
        {
            "format": NO,
            "lint": NO,
            "build": _g(
                "`vendor/bin/phpstan analyze --no-progress` (static.yml:40)",
                r"vendor/bin/phpstan analyze --no-progress",
            ),
            "tests": _g("`vendor/bin/phpunit` (tests.yml:38)", r"vendor/bin/phpunit"),
        },
    ),
    "google+gson": (
        "Java (Maven)",
        {
            "format": _g("spotless, in `mvn verify` (build.yml:50)", (), r"mvn -q spotless:apply"),
            "lint": NO,
            "build": _g(
                "`mvn compile animal-sniffer:check@… -Dmaven.test.skip …` (check-android-compatibility.yml:38)",
                r"mvn compile animal-sniffer:check@check-android-compatibility .*",
                r"mvn -q test-compile",
            ),
            "tests": _g(
                "`mvn verify javadoc:jar` (build.yml:50)",
                r"mvn verify javadoc:jar\s*",
                r"mvn -q verify",
            ),
        },
    ),
    "apache+commons-lang": (
        "Java (Maven)",
        {
            "format": NO,
            "lint": _g(
                "checkstyle, in the pom's default goal (maven.yml:62)",
                (),
                r"mvn -q checkstyle:check",
            ),
            "build": _g("— (the default goal compiles)", NONE, r"mvn -q test-compile"),
            "tests": _g(
                "`mvn --errors … -Ddoclint=all`, the default goal (maven.yml:62)",
                (),
                r"mvn -q verify",
            ),
        },
    ),
    "square+kotlinpoet": (
        "Kotlin (Gradle)",
        {
            "format": _g(
                "spotless, in `./gradlew build` (build.yml:39)", (), r"\./gradlew spotlessApply"
            ),
            "lint": _g(
                "`spotlessCheck`, in `./gradlew build` (build.yml:39)",
                (),
                r"\./gradlew spotlessCheck",
            ),
            "build": _g("— (`./gradlew build` builds)", NONE, r"\./gradlew assemble"),
            "tests": _g("`./gradlew build` (build.yml:39)", r"\./gradlew build"),
        },
    ),
    "fmtlib+fmt": (
        "C++ (CMake)",
        {
            "format": _g(
                "`clang-format-21 -i` on include/ and src/ (lint.yml:28, pull requests)",
                r"clang-format -i \{files:.*\}",
            ),
            "lint": NO,
            "build": _g(
                "`cmake … -DFMT_WERROR=ON` then `cmake --build .` in `build/` (linux.yml:194–210)",
                (),
                r"cmake -S \. -B build && cmake --build build",
            ),
            "tests": _g(
                "`ctest -C Debug` in `build/` (linux.yml:214)",
                (),
                r"cmake -S \. -B build && .*ctest .*",
            ),
        },
    ),
    "jarro2783+cxxopts": (
        "C++ (CMake)",
        {
            "format": _g("— (`.clang-format`)", NONE, r"clang-format -i \{files:.*\}"),
            "lint": NO,
            "build": _g(
                "`cmake ..` then `make` in `build/` (build.yml:20–22)",
                (),
                r"cmake -S \. -B build && cmake --build build",
            ),
            "tests": _g(
                "`cd build; ctest` after CI's `mkdir build` (build.yml:24)",
                (),
                r"cmake -S \. -B build && .*ctest .*",
            ),
        },
    ),
    "leethomason+tinyxml2": (
        "C++ (CMake)",
        {
            "format": NO,
            "lint": NO,
            "build": _g(
                "`cmake -G Ninja -S . -B build-static-dbg …` then `cmake --build build-static-dbg` (test.yml:43–45)",
                (),
                r"cmake -S \. -B build && cmake --build build",
            ),
            "tests": _g(
                "`ctest --output-on-failure` in `build-static-dbg` (test.yml:47)",
                (),
                (r"make test", r"cmake -S \. -B build && .*ctest .*"),
            ),
        },
    ),
    "michalmuskala+jason": (
        "Elixir",
        {
            "format": NO,
            "lint": NO,
            "build": _g(
                "`mix compile --warnings-as-errors` (ci.yml:67)",
                r"mix compile --warnings-as-errors",
            ),
            "tests": _g("`mix test` (ci.yml:69)", r"mix test"),
        },
    ),
    "elixir-plug+plug": (
        "Elixir",
        {
            "format": _g(
                "`mix format --check-formatted` (ci.yml:47)", r"mix format \{files:\.ex,\.exs\}"
            ),
            "lint": NO,
            "build": _g("— (`mix test` compiles)", NONE, r"mix compile --warnings-as-errors"),
            "tests": _g("`mix test` (ci.yml:55)", r"mix test"),
        },
    ),
}


def verdict(expected: Gate, command: str | None) -> str:
    """``agree``, ``acceptable`` or ``wrong``: the detected ``command`` against CI's gate."""
    shown = command if command is not None else NONE
    if any(re.fullmatch(pattern, shown) for pattern in expected.agree):
        return "agree"
    if any(re.fullmatch(pattern, shown) for pattern in expected.acceptable):
        return "acceptable"
    return "wrong"


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> dict[str, dict[str, str | None]]:
    """Each project's detected command per gate, on the table's machine."""
    patch = pytest.MonkeyPatch()
    patch.setattr(machine, "rust", lambda: RUST)
    patch.setattr(machine, "version", VERSIONS.get)
    found = {}
    try:
        for name in EXPECTED:
            project = tmp_path_factory.mktemp("unseen") / name
            shutil.copytree(FIXTURES / name, project)
            found[name] = {g["name"]: g["command"] for g in detect_gates(project)["gates"]}
    finally:
        patch.undo()
    return found


def _doc_rows() -> list[list[str]]:
    text = DOC.read_text(encoding="utf-8").split(SECTION, 1)[1].split("\n## ", 1)[0]
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in text.splitlines()
        if line.startswith("| ")
    ]
    assert rows[0] == ["project", "commit", "language", "gate", "stepkit", "CI", "verdict"]
    return rows[1:]


def _shown(command: str | None) -> str:
    return f"`{command}`" if command is not None else NONE


def test_every_fixture_has_an_expectation_and_the_doc_names_its_commit():
    # Only project directories: pytest leaves a __pycache__ beside the conftest here.
    projects = [p.name for p in FIXTURES.iterdir() if p.is_dir() and not p.name.startswith("_")]
    assert sorted(projects) == sorted(EXPECTED)
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    commits = {row[0]: row[1] for row in _doc_rows()}
    for name in EXPECTED:
        commit = commits[name.replace("+", "/")]
        assert re.search(rf"`{re.escape(name)}/`.* {commit}[0-9a-f]* \|", readme), name


@pytest.mark.slow
def test_the_table_shows_what_detection_does_and_its_verdicts(measured):
    rows = _doc_rows()
    want = [
        [
            name.replace("+", "/"),
            gate,
            _shown(measured[name][gate]),
            verdict(gates[gate], measured[name][gate]),
        ]
        for name, (_, gates) in EXPECTED.items()
        for gate in GATES
    ]
    assert [[row[0], row[3], row[4], row[6]] for row in rows] == want


def test_the_rate_line_is_the_count_of_the_table():
    rows = _doc_rows()
    right = sum(row[-1] in ("agree", "acceptable") for row in rows)
    text = DOC.read_text(encoding="utf-8").split(SECTION, 1)[1].split("\n## ", 1)[0]
    rate = re.search(
        r"\*\*Agreement: (\d+) of (\d+) gates right or acceptable \((\d+) %\)\.\*\*", text
    )
    assert rate, "the closing rate line is missing"
    assert (int(rate[1]), int(rate[2]), int(rate[3])) == (
        right,
        len(rows),
        round(100 * right / len(rows)),
    )
    assert len(rows) == 4 * len(EXPECTED) >= 4 * 30
