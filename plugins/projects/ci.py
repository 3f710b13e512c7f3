"""Gate commands from what the project's CI really runs.

A command CI runs is better evidence than a guess from a manifest, so this
plugin answers the lint, build and tests gates before task runners and
language plugins (and after environment overrides, ``[tool.stepkit.commands]``
and the project's own plugins).  The CI commands are
:func:`~stepkit.plugins.projects.ci_files.ci_commands`; each is given to a
gate by what it runs:

- a task-runner or script call (``make lint``, ``npm run typecheck``, ``tox
  -e py``, ``nox -s tests``, ``just test``, ``scripts/check``) by its target's
  name, else by what the target runs (the Makefile recipe, the package.json
  script, the tox env's ``commands``, the script file);
- any other command by its tool (``pytest``, ``cargo clippy``, ``mypy``,
  ``go test``, ``./mvnw verify``, ``phpunit`` …).

A command that runs in a directory a fresh checkout lacks (``cd build &&
…`` after CI's ``mkdir build``), or a ``make`` whose Makefile ``./configure``
or ``cmake ..`` would generate, is left out: the step that makes them is not
a gate.  Commands that set up or ship rather than check (installs, uploads,
publishing, deploys, logins, benchmarks, coverage reports) belong to no gate.
Per gate, the first command in :func:`ci_commands`'s order wins (CI's checks
before workflows and jobs set aside for benchmarks, releases …, then file
and line order); for the tests gate, CI's checks first, then a command that
invokes a test runner wins over one that does not, then one whose CI step
is named for the tests over one named for a lint, type or format check.  A
line read with the reason it cannot run here (``CiCommand.skipped``) is no
candidate; ``stepkit detect`` notes every line of a gate passed over and why.  A call named like the tests (``scripts/check``, ``pnpm
test:types``) whose body runs only a linter or a type checker is that
check's gate.  ``stepkit detect`` notes both.

The format gate is not answered here: CI runs a formatter's check mode on
the whole tree, where the gate formats only the step's changed files.  The
language plugins choose the formatter CI runs (see ``_shared.runs``), and
:func:`stepkit_gate_source` names the CI line that runs it.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from stepkit.gatetable import GATE_ORDER
from stepkit.hookspecs import hookimpl
from stepkit.lazyregex import lazy_compile
from stepkit.plugins.projects import _shared
from stepkit.plugins.projects.ci_files import ci_commands, read_ci
from stepkit.plugins.projects.gate_tools import TOOLS, checks_only, runs_a_test_runner, tool_gate
from stepkit.plugins.projects.interpreters import narrow

if TYPE_CHECKING:
    from stepkit.plugins.projects.ci_yaml import CiCommand


#: Words that, among a command's first three, make it set up, ship or report, which no gate does.
_NOT_A_CHECK = frozenset(
    {
        "install",
        "publish",
        "deploy",
        "login",
        "upload",
        "release",
        "push",
        "bench",
        "outdated",
        "audit",
        "sync",
        "update",
        "upgrade",
        "setup",
        "report",
        "codecov",
        "coveralls",
        "docs",
        "doc",
        "sphinx-build",
        "mkdocs",
        "twine",
        "apt-get",
        "apt",
        "brew",
        "choco",
        "pip",
        "pip3",
        "sudo",
        "curl",
        "wget",
        "echo",
        "git",
        "gh",
        "docker",
        "miri",
        "fuzz",
        "--version",
        "version",
        "export",
        "source",
        "rustup",
        "corepack",
        "nvm",
    }
)


#: Options that make a runner only set up its environment: ``tox --notest``, ``nox --install-only``.
_SETUP_ONLY = frozenset({"--notest", "--install-only"})


def _sets_up(command: str) -> bool:
    """Some part of ``command`` (``a && b; c``) sets up, ships or reports."""
    return any(
        _NOT_A_CHECK.intersection(part.split()[:3])
        or _SETUP_ONLY.intersection(part.split())
        or _NODE_INSTALL.match(part.strip())
        for part in re.split(r"&&|\|\||;", command)
    )


#: ``npm ci`` / ``npm i`` install (``npm run ci`` is the project's own script).
_NODE_INSTALL = lazy_compile(r"^(?:npm|pnpm|bun|yarn)\s+(?:ci|i)(?:\s|$)")


#: What runs a tool in the project's environment (``uv run --locked``, ``poetry run``, ``bundle exec``):
#: the tool after it says the gate.
_RUNNER_PREFIX = lazy_compile(
    r"^(?:(?:uv|poetry|pdm|hatch|pipenv|pipx)\s+run|uvx|npx|bundle\s+exec|composer\s+bin\s+[\w-]+)"
    r"(?:\s+(?:--(?:with(?:-requirements)?|from|python|extra|(?:only-|no-)?group|package|env(?:-file)?"
    r"|project|directory|index|spec)|-p)(?:=|\s+)\S+|\s+-\S+)*\s+"
)

#: A call of a task runner or script, and the target it names.
_RUNNER_CALL = lazy_compile(
    r"^(?:(?P<make>make)(?:\s+-\S+)*|(?P<just>just)|(?P<task>task)"
    r"|(?P<npm>npm|yarn|pnpm|bun)(?:\s+run)?|(?P<tox>tox)(?:\s+run)?(?:\s+-\S+)*\s+-[ef]|(?P<nox>nox)(?:\s+-\S+)*\s+-s"
    r"|hatch\s+run)\s+(?P<target>[\w:.-]+)(?:\s+.*)?$"
    r"|^(?:(?:ba)?sh\s+)?(?P<script>\.?/?(?:scripts?|bin|tools|ci)/[\w.-]+)$"
)

#: Target names per gate: a name starting with one of these (``lint:types`` is the build).
_NAMES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("build", ("typ", "mypy", "pyright", "tsc", "build", "compile")),
    ("format", ("format", "fmt", "prettier")),
    ("lint", ("lint", "clippy", "flake8", "ruff", "style")),
    ("tests", ("test", "spec", "unit")),
)
#: Test-target names that are whole words: make's ``check``, tox's ``py``/``py312``/``py3.12``/``pypy311``.
_TEST_NAME = lazy_compile(r"^(?:check|(?:py|pypy)(?:\d+(?:\.\d+)?)?(?:-tests?)?)$")


#: A target named for rewriting the tree rather than checking it (``lint:fix``, ``fix``).
_FIXER = lazy_compile(r"(?:^|[:_-])fix$")


def _target_gate(name: str) -> str | None:
    """The gate a runner target is named for (``lint:types`` → build, ``test`` → tests)."""
    name = name.lower()
    for gate, prefixes in _NAMES:
        if any(name.startswith(prefix) for prefix in prefixes):
            return gate
    return "tests" if _TEST_NAME.match(name) else None


def _body(project_dir: Path, call: re.Match[str]) -> str:
    """What a runner call runs: the target's recipe, script, tox commands or file."""
    target = call["target"] or ""
    if call["make"]:
        path = _shared.first_file(project_dir, _shared.MAKEFILE_NAMES)
        return _shared.makefile_recipes(path).get(target, "") if path else ""
    if call["just"]:
        path = _shared.first_file(project_dir, _shared.JUSTFILE_NAMES)
        return _shared.justfile_recipes(path).get(target, "") if path else ""
    if call["task"]:
        path = _shared.first_file(project_dir, _shared.TASKFILE_NAMES)
        return _shared.taskfile_tasks(path).get(target, "") if path else ""
    if call["npm"]:
        return _shared.package_scripts(project_dir / "package.json").get(target, "")
    if call["tox"]:
        tox = _shared.read_ini(project_dir / "tox.ini")
        section = f"testenv:{target}"
        return tox.get(section, "commands", fallback="") if tox.has_section(section) else ""
    if call["nox"]:
        return _nox_session(_shared.read_text(project_dir / "noxfile.py"), target)
    if call["script"]:
        return _shared.read_text(project_dir / call["script"])
    return ""


def _nox_session(noxfile: str, name: str) -> str:
    """The body of the noxfile's function named ``name``: its lines up to the next top-level line."""
    found = re.search(
        rf"^def {re.escape(name)}\(.*?(?=^\S)", noxfile + "\n.", re.MULTILINE | re.DOTALL
    )
    return found.group(0) if found else ""


class _Seen(NamedTuple):
    """What a CI line checks: its gate, whether it invokes a test runner
    (itself or in what it calls), and why its name was overruled (or None)."""

    gate: str
    runs_tests: bool
    overruled: str | None = None


def _seen(command: str, project_dir: Path) -> _Seen | None:
    """What ``command`` (a CI line) checks, or None when it checks nothing.

    A call named for the tests (``scripts/check``, ``npm run test:types``)
    whose body runs no test runner but a linter or a type checker is that
    checker's gate: a name proves nothing, what the call runs does."""
    core = re.sub(r"^(?:cd\s+\S+\s*&&\s*)+", "", command)
    core = re.sub(r"^(?:\w+=\S*\s+)+", "", core)  # VAR=value before the command
    core = _RUNNER_PREFIX.sub("", core)
    if not core or _sets_up(core):
        return None
    call = _RUNNER_CALL.match(core)
    if not call:
        gate = tool_gate(core)
        return _Seen(gate, gate == "tests") if gate else None
    if _FIXER.search(call["target"] or ""):
        return None  # `lint:fix`, `format-fix`: rewrites the tree, where a gate checks it
    body = _body(project_dir, call)
    if call["npm"] and not body:
        body = core  # no such script: pnpm, yarn and bun run the package's binary (`pnpm vitest`)
    named = _target_gate(call["target"] or Path(call["script"]).stem)
    checker = checks_only(body) if named == "tests" else None
    if checker is not None:
        return _Seen(
            checker,
            False,
            f"{checker}: `{command}` is named like the tests but runs no test runner, "
            f"only {checker} tools: it is not the tests gate",
        )
    gate = named or tool_gate(body)
    return _Seen(gate, runs_a_test_runner(body)) if gate else None


def gate_of(command: str, project_dir: Path) -> str | None:
    """The gate ``command`` (a CI line) checks, or None when it checks nothing."""
    seen = _seen(command, project_dir)
    return seen.gate if seen else None


#: A pipe (``pytest | tee log``): without pipefail its exit code is the last command's, so a failing
#: check would pass the gate.
_PIPE = lazy_compile(r"(?<!\|)\|(?![|&])")


def _runs_in_the_checkout(command: str, project_dir: Path) -> bool:
    """``command`` can run in a fresh checkout: the directories it ``cd``s into
    exist, a ``make`` has its Makefile there (not one an earlier CI step —
    ``./configure``, ``cmake ..`` — generates), and a ``cmake --build DIR`` or
    ``ctest --test-dir DIR`` has its build tree (or configures it with ``-B DIR`` first)."""
    where, rest = project_dir, command
    while cd := re.match(r"cd\s+(\S+)\s*(?:&&|;)\s*", rest):
        where, rest = where / shlex.split(cd[1])[0], rest[cd.end() :]
    if not where.is_dir():
        return False
    runs_make = re.search(r"(?:^|[\s;&|(])make(?![\w-])", rest) is not None
    if runs_make and _shared.first_file(where, _shared.MAKEFILE_NAMES) is None:
        return False
    return all(
        (where / built[1]).is_dir() or re.search(rf"-B\s*{re.escape(built[1])}(?!\S)", rest)
        for built in _BUILD_DIR.finditer(rest)
    )


#: A build tree a command works in: ``cmake --build DIR``, ``ctest --test-dir DIR``.
_BUILD_DIR = lazy_compile(r"(?:cmake\s+--build|ctest\s+(?:\S+\s+)*?--test-dir)\s+([^\s;&|$]+)")


#: What a CI step's name says it does: tests, or a check that is not one.
_TITLE_TESTS = lazy_compile(r"(?i)\b(?:unit[ -]?)?(?:tests?|testing|specs?)\b")
_TITLE_CHECKS = lazy_compile(
    r"(?i)\b(?:lint\w*|check\w*|types?|typing|type-?check\w*|format\w*|fmt|style)\b"
)


#: How a tests-gate candidate is weighed: its workflow and job are for checking changes, it
#: invokes a test runner, CI's name for its step says tests, that name says no other check.
_Rank = tuple[bool, bool, bool, bool]


def _tests_rank(seen: _Seen, found: CiCommand) -> _Rank:
    """How well a tests-gate candidate shows it runs the tests of a change."""
    return (
        not found.aside,
        seen.runs_tests,
        _TITLE_TESTS.search(found.title) is not None,
        _TITLE_CHECKS.search(found.title) is None,
    )


def _why(rank: _Rank) -> str:
    if rank[1]:
        return "runs a test runner"
    return "CI names its step for the tests" if rank[2] else "runs no test runner stepkit knows"


def _cannot_run(found: CiCommand, project_dir: Path) -> str:
    """Why ``found`` cannot be a gate's command here ("" when it can)."""
    if found.skipped:
        return found.skipped
    terminal = _shared.needs_terminal(found.command)
    if terminal is not None:
        return f"it runs `{terminal}`, which needs a terminal; a gate has none"
    if _PIPE.search(found.command):
        return "it pipes its output: its exit code is the last command's, not the check's"
    if not _runs_in_the_checkout(found.command, project_dir):
        return "it needs what an earlier CI step generates (a directory or Makefile the checkout lacks)"
    return ""


def _lost(gate: str, found: CiCommand, rank: _Rank, winner: CiCommand, its: _Rank) -> str:
    """Why ``found``, which could run here, is not ``gate``'s command: ``winner`` is."""
    chosen = f"`{winner.command}` ({winner.source})"
    if found.aside and not winner.aside:
        return f"{found.aside}; {chosen} is from CI's checks"
    if gate == "tests" and rank != its:
        return f"{chosen} {_why(its)}, this {_why(rank)}"
    return f"CI runs {chosen} for this gate first"


def _chosen(project_dir: Path) -> tuple[dict[str, CiCommand], list[str]]:
    """Each gate's CI command, and a note for every CI line of a gate passed over and why.

    Per gate the first command in :func:`ci_commands`'s order wins (CI's
    checks before what is set aside: benchmarks, releases …), except for the
    tests gate: there a command that invokes a test runner beats one that
    does not, then one whose CI step is named for the tests beats one named
    for a lint, type or format check."""
    chosen: dict[str, CiCommand] = {}
    ranks: dict[str, _Rank] = {}
    candidates: list[tuple[str, CiCommand, _Rank]] = []
    notes: list[str] = []
    for found in ci_commands(project_dir):
        seen = _seen(found.command, project_dir)
        if seen is None:
            continue
        why = _cannot_run(found, project_dir)
        if why:
            notes.append(f"{seen.gate}: passed over `{found.command}` ({found.source}): {why}")
            continue
        if seen.overruled:
            notes.append(f"{seen.overruled} ({found.source})")
        rank = _tests_rank(seen, found) if seen.gate == "tests" else (not found.aside,) * 4
        candidates.append((seen.gate, found, rank))
        if seen.gate not in chosen or rank > ranks[seen.gate]:
            chosen[seen.gate], ranks[seen.gate] = found, rank
    notes += [
        f"{gate}: passed over `{found.command}` ({found.source}): "
        + _lost(gate, found, rank, chosen[gate], ranks[gate])
        for gate, found, rank in candidates
        if found != chosen[gate]
    ]
    return chosen, notes


def _first_per_gate(project_dir: Path) -> dict[str, CiCommand]:
    """Each gate's CI command, a tox or nox one narrowed to this machine's
    interpreter (:func:`~stepkit.plugins.projects.interpreters.narrow`)."""
    return {
        gate: found._replace(command=narrow(found.command, project_dir, gate).command)
        for gate, found in _chosen(project_dir)[0].items()
    }


#: The gates CI answers for (not the format gate: see the module's docstring).
_ANSWERED = frozenset({"lint", "build", "tests"})


@hookimpl
def stepkit_gate_command(gate: str, project_dir: Path) -> str | None:
    """The command CI runs for ``gate``; None: none, or a gate CI does not answer."""
    found = _first_per_gate(project_dir).get(gate) if gate in _ANSWERED else None
    return found.command if found else None


@hookimpl
def stepkit_detect_notes(project_dir: Path) -> list[str]:
    """Each CI line of a gate passed over and why, each call named for the
    tests given another gate, and what of CI stepkit cannot read."""
    return [*read_ci(project_dir).notes, *_chosen(project_dir)[1]]


@hookimpl
def stepkit_command_body(command: str, project_dir: Path) -> str | None:
    """What a task-runner or script call runs (:func:`_body`); None: no such call."""
    call = _RUNNER_CALL.match(command.strip())
    return (_body(project_dir, call) or None) if call else None


@hookimpl
def stepkit_gate_source(gate: str, command: str, project_dir: Path) -> str | None:
    """The CI line ``command`` came from; for the format gate, the CI line
    that runs the same formatter (in its check mode, on the whole tree)."""
    found = _first_per_gate(project_dir).get(gate)
    if found is None:
        return None
    if found.command == command:
        return found.source
    if gate == "format":
        tool = TOOLS["format"].search(found.command)
        words = shlex.split(tool.group(0)) if tool else []
        if words and TOOLS["format"].search(command) and Path(words[0]).name in command:
            return found.source
    return None


@hookimpl
def stepkit_gate_order(project_dir: Path) -> list[str] | None:
    """The gates in the order CI runs them, when one CI job builds before
    it formats or lints (that step may need the build's output); else None."""
    chosen = _first_per_gate(project_dir)
    build = chosen.get("build")
    if build is None:
        return None

    def line(found: CiCommand) -> int:
        return int(found.source.rsplit(":", 1)[1])

    after = [
        gate
        for gate in ("format", "lint")
        if gate in chosen and chosen[gate].job == build.job and line(chosen[gate]) > line(build)
    ]
    if not after:
        return None
    order = [gate for gate in GATE_ORDER if gate not in after]
    build_at = order.index("build") + 1
    return [*order[:build_at], *after, *order[build_at:]]
