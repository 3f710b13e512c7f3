"""What stepkit knows about each test runner: how to ask it for a
machine-readable report, and how to run just some of its tests again.

:func:`report_invocation` is how the tests gate runs its command: the runner
it recognises is asked for a report written into a directory of the run's
logs (never the project tree) — pytest through ``PYTEST_ADDOPTS``, so it
works through ``make``, ``tox``, ``uv run`` and the like; node's test
runner through ``NODE_OPTIONS`` (also behind ``npm test``); jest, vitest,
ctest and ``dotnet test`` by flags added to the command when it is the
command's last one (also behind ``npm test`` when the ``test`` script is
that runner); surefire and gradle write their reports anyway; go and cargo
print every test's result.  :func:`rerun_invocation` selects the failing
ids only (pytest ``-k``, jest/vitest ``-t``, ``go test -run`` per package,
cargo's ``--exact`` filters, ctest ``-R``, maven ``-Dtest``, gradle
``--tests``, dotnet ``--filter``), or says it cannot.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from stepkit import quoting
from stepkit.workspace import testresults as tr
from stepkit.workspace.faults import tests_ran
from stepkit.workspace.loglines import LogLines
from stepkit.workspace.testresults import TestResults

#: Wrappers in front of a runner, skipped to find it (``uv run pytest``).
_WRAPPERS = frozenset(
    {
        "uv",
        "poetry",
        "pipenv",
        "pdm",
        "hatch",
        "run",
        "exec",
        "npx",
        "bunx",
        "dlx",
        "pnpx",
        "env",
        "time",
        "nice",
        "-m",
        "--",
        "python",
        "python3",
        "node",
    }
)
#: Why a tests gate that exited 0 is NOT RUN when nothing shows a test ran.
NO_RUNNER_SEEN = "no test runner's summary or report in its output"


def _jest_flags(path: Path) -> list[str]:
    return ["--json", f"--outputFile={path}"]


def _vitest_flags(path: Path) -> list[str]:
    return ["--reporter=default", "--reporter=json", f"--outputFile.json={path}"]


@dataclass
class TestInvocation:
    """A tests command as stepkit runs it.

    :ivar command: the shell command to run.
    :ivar env: variables added to the environment.
    :ivar runner: the runner recognised (``pytest``, ``jest`` …), None if none.
    :ivar note: one line for the evidence saying what stepkit asked for.
    :ivar report: the report the recognised runner writes whenever it runs
        (None: none is required); a run that exits 0 without it verified no
        test (:meth:`ran_no_test`).
    """

    __test__ = False

    command: str
    env: dict[str, str] = field(default_factory=dict)
    runner: str | None = None
    note: str | None = None
    reader: Callable[[tr.Output, str], TestResults | None] | None = None
    report: Path | None = None
    #: where the runner writes its report: the one place of the run store a
    #: confined tests command may write
    report_dir: Path | None = None

    def ran_no_test(self, output: str, results: TestResults | None) -> str | None:
        """Why a run that exited 0 verified no test (None: it did): it printed
        nothing, its runner never wrote the report it was asked for (it was
        stopped before reporting, or replaced), the report of the runner
        the command is holds no test that passed, or nothing shows that a
        test ran at all — no report with a test in it and no runner's
        closing summary in the output (a linter or a type checker chosen
        for the tests gate: its name proves nothing)."""
        if self.report is not None and not _written(self.report):
            return (
                f"{self.runner} wrote no report (stepkit asked for {self.report.name}): "
                "it stopped before reporting, so no test it ran can be verified"
            )
        if not output.strip():
            return "the command printed nothing (exit 0)"
        counts = results.counts() if results is not None else None
        ran = counts is not None and bool(counts["passed"] or counts["failed"] or counts["errored"])
        if results is not None and counts is not None and results.complete and self.runner:
            if ran:
                return None
            if counts["skipped"]:
                return f"{results.source}: every test was skipped ({counts['skipped']} skipped, 0 passed)"
            return f"{results.source}: the report lists no test"
        # a command stepkit does not know may run more than a report saw: its runner's word will do
        if ran or tests_ran(output):
            return None
        return NO_RUNNER_SEEN

    def results(self, output: tr.Output, evidence: str) -> TestResults | None:
        """The per-test results of the run: the report (or the runner's
        per-test text), else the failing ids of the condensed evidence."""
        found = self.reader(output, evidence) if self.reader is not None else None
        return found or tr.read_evidence(evidence)


@dataclass
class _Shape:
    """The command's last simple command, split, and where the runner is in it."""

    words: list[str]
    runner: str | None
    at: int = 0
    #: the runner sits behind ``npm test``: flags go after ``--``
    via_script: str | None = None

    def arguments(self) -> list[str]:
        return self.words[self.at + 1 :]


def report_invocation(
    command: str, project_dir: Path, report_dir: Path, base_env: Mapping[str, str] | None = None
) -> TestInvocation:
    """``command`` as the tests gate runs it, asking its runner for a report in
    ``report_dir`` (created here).

    :param base_env: the environment the command would get (default: this
        process's), whose ``PYTEST_ADDOPTS`` is kept.
    """
    report_dir.mkdir(parents=True, exist_ok=True)
    started = time.time() - 1
    project = Path(project_dir)
    shape = _shape(command, project)
    junit = report_dir / "pytest-junit.xml"
    env = _pytest_env(junit, [], base_env)

    def pytest_report(output: tr.Output, evidence: str) -> TestResults | None:
        return tr.read_junit([junit], project, "pytest") if junit.is_file() else None

    invocation = TestInvocation(
        command,
        env,
        "pytest" if shape.runner == "pytest" else None,
        reader=pytest_report,
        report=junit if shape.runner == "pytest" else None,
        report_dir=report_dir,
    )
    runner = shape.runner
    if runner in ("jest", "vitest"):
        path = report_dir / f"{runner}.json"
        flags = (_jest_flags if runner == "jest" else _vitest_flags)(path)
        invocation.command = _append(command, shape, flags)
        invocation.reader = _either(pytest_report, lambda o, e: tr.read_jest_json(path, project))
        invocation.note = f"stepkit asked {runner} for a JSON report: {quoting.shell(flags)}"
    elif runner == "ctest":
        path = report_dir / "ctest-junit.xml"
        flags = ["--output-junit", str(path)]
        invocation.command = _append(command, shape, flags)
        invocation.reader = lambda o, e: tr.read_junit([path], project, "name")
        invocation.note = f"stepkit asked ctest for a junit report: {quoting.shell(flags)}"
    elif runner == "dotnet":
        flags = ["--logger", "trx", "--results-directory", str(report_dir / "trx")]
        invocation.command = _append(command, shape, flags)
        invocation.reader = lambda o, e: tr.read_trx(sorted((report_dir / "trx").rglob("*.trx")))
        invocation.note = f"stepkit asked dotnet test for a trx report: {quoting.shell(flags)}"
    elif runner == "go":
        words = shape.arguments()
        invocation.reader = (
            (lambda o, e: tr.read_go_json(o))
            if "-json" in words
            else (lambda o, e: tr.read_go_text(o, verbose="-v" in words))
        )
    elif runner == "cargo":
        invocation.reader = _either(
            lambda o, e: tr.read_libtest(o),
            lambda o, e: _fresh_junit(_nextest_reports(project, shape), started, project, "name"),
        )
    elif runner in ("maven", "gradle"):
        patterns = (
            [
                "target/surefire-reports/TEST-*.xml",
                "*/target/surefire-reports/TEST-*.xml",
                "target/failsafe-reports/TEST-*.xml",
            ]
            if runner == "maven"
            else ["build/test-results/*/*.xml", "*/build/test-results/*/*.xml"]
        )
        invocation.reader = lambda o, e: _fresh_junit(
            [p for pattern in patterns for p in project.glob(pattern)], started, project, "jvm"
        )
    elif runner == "node-test":
        script = _test_script(project) if shape.via_script else None
        _node_reports(invocation, f"{command}\n{script or ''}", report_dir, project, base_env)
    if runner is not None:
        invocation.runner = runner
    return invocation


def _node_reports(
    invocation: TestInvocation,
    command: str,
    report_dir: Path,
    project: Path,
    base_env: Mapping[str, str] | None,
) -> None:
    """node's test runner reports every test into ``report_dir`` (asked
    through ``NODE_OPTIONS``, so it works behind ``npm test``; the spec
    reporter keeps the output readable), unless the command (or the ``test``
    script behind it) picks its reporters or sets ``NODE_OPTIONS`` itself:
    then its output is read."""
    if "--test-reporter" in command or "NODE_OPTIONS" in command:
        junit_reader = invocation.reader
        assert junit_reader is not None, "report_invocation gave it the pytest report's reader"
        invocation.reader = _either(junit_reader, lambda o, e: tr.read_node_output(o, project))
        return
    reporter = report_dir / "stepkit-reporter.mjs"
    reporter.write_text(NODE_REPORTER, encoding="utf-8")
    events = report_dir / "node-test.jsonl"
    flags = [
        f"--test-reporter={reporter}",
        f"--test-reporter-destination={events}",
        "--test-reporter=spec",
        "--test-reporter-destination=stdout",
    ]
    invocation.env["NODE_OPTIONS"] = quoting.extend_variable("NODE_OPTIONS", flags, base_env)

    def read(output: tr.Output, evidence: str) -> TestResults | None:
        return tr.read_node_events(LogLines(events), project) if events.is_file() else None

    invocation.reader = read
    invocation.report = events
    invocation.note = (
        "stepkit asked node's test runner for a report of every test: "
        f"NODE_OPTIONS={quoting.node_options(flags)}"
    )


#: A reporter for node's test runner: one JSON line per test started,
#: passed or failed, with its file and nesting (node's own reporters name no
#: file for a passing test).
NODE_REPORTER = """export default async function* stepkitReporter(source) {
  for await (const event of source) {
    const type = {"test:start": "start", "test:pass": "pass", "test:fail": "fail"}[event.type];
    if (!type) continue;
    const d = event.data;
    yield JSON.stringify({type, name: d.name, nesting: d.nesting, file: d.file, skip: Boolean(d.skip),
                          todo: Boolean(d.todo), kind: d.details && d.details.type}) + "\\n";
  }
}
"""
#: The longest ``--deselect`` list put in PYTEST_ADDOPTS (beyond: ``-k``).
_DESELECT_CHARS = 100_000


def rerun_invocation(
    command: str,
    project_dir: Path,
    report_dir: Path,
    failing: list[str],
    base_env: Mapping[str, str] | None = None,
    suite: list[str] | None = None,
) -> TestInvocation | None:
    """``command`` narrowed to the ``failing`` ids, reporting into ``report_dir``;
    None when stepkit does not know how to select tests of this runner.

    The selected tests run in the suite's order.  Given ``suite`` (every id
    of the run), pytest deselects all the others by id, so exactly those
    run (``--deselect`` matches id prefixes: an id that starts with a
    deselected one is dropped too); else a selection may run a few more
    tests than asked (``-k`` matches names): only the asked ids' results are
    read from it."""
    if not failing:
        return None
    project = Path(project_dir)
    base = report_invocation(command, project, report_dir, base_env)
    shape = _shape(command, project)
    runner = shape.runner
    names = [i.rsplit("::", 1)[-1] for i in failing]
    if runner == "pytest" or (
        runner is None and all("::" in i or i.endswith(".py") for i in failing)
    ):
        junit = report_dir / "pytest-junit.xml"
        wanted = set(failing)
        others = [i for i in suite or [] if i not in wanted]
        deselect = [word for i in others for word in ("--deselect", i)]
        if (
            suite
            and wanted <= set(suite)
            and len(quoting.pytest_addopts(deselect)) <= _DESELECT_CHARS
        ):
            base.env = _pytest_env(junit, deselect, base_env)
            base.note = (
                f"stepkit re-ran {len(failing)} test(s), the other {len(others)} deselected by id"
            )
            return base
        selection = " or ".join(names)
        base.env = _pytest_env(junit, ["-k", selection], base_env)
        base.note = f"stepkit re-ran the failing tests: -k {selection!r}"
        return base
    if runner in ("jest", "vitest"):
        parts = [tr.jest_parts(i) for i in failing]
        pattern = "^(?:" + "|".join(re.escape(name) for _, name in parts) + ")$"
        files = sorted({file for file, _ in parts if file})
        base.command = _append(base.command, _shape(base.command, project), ["-t", pattern, *files])
        return base
    if runner == "go":
        by_package: dict[str, list[str]] = {}
        for test_id in failing:
            package, sep, name = test_id.rpartition(tr.GO_SEPARATOR)
            if not sep:
                return None
            by_package.setdefault(package, []).append(re.escape(name.split("/")[0]))
        base.command = " ; ".join(
            quoting.shell(
                ["go", "test", "-json", "-count=1", "-run", f"^({'|'.join(sorted(set(names)))})$"]
                + [package]
            )
            for package, names in by_package.items()
        )
        base.reader = lambda o, e: tr.read_go_json(o)
        return base
    if runner == "cargo":
        if any(" " in i for i in failing) or "nextest" in shape.words:
            return None
        words = shape.arguments()
        # pretty: one line per test even under -q, so a pass on the re-run is seen
        exact = ["--exact", "--format=pretty", *failing]
        base.command = _append(command, shape, exact if "--" in words else ["--", *exact])
        return base
    if runner == "ctest":
        pattern = "^(" + "|".join(re.escape(i) for i in failing) + ")$"
        base.command = _append(base.command, _shape(base.command, project), ["-R", pattern])
        return base
    if runner == "maven":
        methods: dict[str, list[str]] = {}
        for test_id in failing:
            cls, _, method = test_id.partition("#")
            methods.setdefault(cls, []).append(method)
        selection = ",".join(
            f"{cls}#{'+'.join(m)}" if all(m) else cls for cls, m in methods.items()
        )
        base.command = _append(
            command, shape, [f"-Dtest={selection}", "-Dsurefire.failIfNoSpecifiedTests=false"]
        )
        return base
    if runner == "gradle":
        tests = [word for i in failing for word in ("--tests", i.replace("#", "."))]
        base.command = _append(command, shape, tests)
        return base
    if runner == "dotnet":
        selection = "|".join(f"FullyQualifiedName={i}" for i in failing)
        base.command = _append(base.command, _shape(base.command, project), ["--filter", selection])
        return base
    return None


# -- recognising the runner --------------------------------------------------


def _shape(command: str, project: Path, depth: int = 0) -> _Shape:
    """The command's last simple command and its runner (None when it pipes
    or the runner is not one stepkit knows)."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return _Shape([], None)
    if "|" in tokens:
        return _Shape(tokens, None)
    last: list[str] = []
    for token in tokens:
        if token in ("&&", "||", ";", "&"):
            last = []
        else:
            last.append(token)
    words = [w for w in last if not re.match(r"^\d?[<>]", w)]
    for at, word in enumerate(words):
        name = os.path.basename(word)
        following = words[at + 1] if at + 1 < len(words) else ""
        runner = (
            "node-test"
            if name == "node" and _node_test(words[at + 1 :])
            else _runner_of(name, following)
        )
        if runner is not None:
            return _Shape(words, runner, at)
        if name in ("npm", "pnpm", "yarn", "bun") and depth == 0:
            rest = [w for w in words[at + 1 :] if w != "run"]
            if rest[:1] == ["test"]:
                script = _test_script(project)
                inner = _shape(script, project, depth + 1) if script else None
                if inner is not None and inner.runner in ("jest", "vitest", "node-test"):
                    return _Shape(words, inner.runner, at, via_script=name)
            return _Shape(words, None)
        if not (name in _WRAPPERS or "=" in word or word.startswith("-") or word.isdigit()):
            return _Shape(words, None)
    return _Shape(words, None)


def _node_test(arguments: list[str]) -> bool:
    """node's arguments start its test runner: ``--test`` among the options
    before the script (after it, they are the script's)."""
    for word in arguments:
        if word == "--test":
            return True
        if not word.startswith("-"):
            return False
    return False


def _runner_of(name: str, following: str) -> str | None:
    if name in ("pytest", "py.test"):
        return "pytest"
    if name in ("jest", "vitest", "ctest"):
        return name
    if name == "go" and following == "test":
        return "go"
    if name == "cargo" and following in ("test", "nextest", "t"):
        return "cargo"
    if name in ("mvn", "mvnw"):
        return "maven"
    if name in ("gradle", "gradlew"):
        return "gradle"
    if name == "dotnet" and following == "test":
        return "dotnet"
    return None


def _test_script(project: Path) -> str | None:
    try:
        scripts = (
            json.loads((project / "package.json").read_text(encoding="utf-8")).get("scripts") or {}
        )
    except (OSError, ValueError, AttributeError):
        return None
    script = scripts.get("test")
    return script if isinstance(script, str) else None


def _append(command: str, shape: _Shape, words: list[str]) -> str:
    """``command`` with ``words`` after its last simple command (behind
    ``npm test`` after ``--``, which npm needs to pass them on)."""
    if shape.via_script == "npm" and "--" not in shape.words:
        words = ["--", *words]
    return f"{command.rstrip()} {quoting.shell(words)}"


def _written(report: Path) -> bool:
    """The report exists and holds something."""
    try:
        return report.stat().st_size > 0
    except OSError:
        return False


def _pytest_env(
    junit: Path, words: list[str], base_env: Mapping[str, str] | None
) -> dict[str, str]:
    """The variables that ask pytest for a junit report at ``junit``, with
    ``words`` (after the ``PYTEST_ADDOPTS`` of ``base_env``)."""
    path, env = quoting.pytest_path(junit)
    options = [f"--junitxml={path}", *words]
    return {**env, "PYTEST_ADDOPTS": quoting.extend_variable("PYTEST_ADDOPTS", options, base_env)}


def _either(
    *readers: Callable[[tr.Output, str], TestResults | None],
) -> Callable[[tr.Output, str], TestResults | None]:
    def read(output: tr.Output, evidence: str) -> TestResults | None:
        for reader in readers:
            found = reader(output, evidence)
            if found is not None:
                return found
        return None

    return read


def _fresh_junit(
    paths: list[Path], since: float, project: Path, flavour: str
) -> TestResults | None:
    """JUnit files written by this run (older ones are a previous run's)."""
    fresh = []
    for path in paths:
        try:
            if path.stat().st_mtime >= since:
                fresh.append(path)
        except OSError:
            continue
    return tr.read_junit(sorted(fresh), project, flavour) if fresh else None


def _nextest_reports(project: Path, shape: _Shape) -> list[Path]:
    """The junit file a nextest profile configures (``[profile.P.junit] path``)."""
    import tomllib

    if "nextest" not in shape.words:
        return []
    words = shape.arguments()
    profile = words[words.index("--profile") + 1] if "--profile" in words[:-1] else "default"
    try:
        config = tomllib.loads((project / ".config" / "nextest.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    junit = ((config.get("profile") or {}).get(profile) or {}).get("junit") or {}
    path = junit.get("path")
    return [project / "target" / "nextest" / profile / path] if isinstance(path, str) else []
