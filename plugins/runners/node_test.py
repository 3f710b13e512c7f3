"""node's test runner (``node --test``, also behind ``npm test``): asked for
a report of every test through ``NODE_OPTIONS`` (stepkit's reporter: one
JSON line per test, with its file), unless the command picks its reporters
itself (then its TAP or spec output is read); ``file › suite › name`` ids;
its totals (TAP ``# pass N``, spec ``ℹ pass N``) and TAP's failure reasons."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from stepkit import quoting
from stepkit.lazyregex import lazy_compile
from stepkit.plugins.runners.jest import LAUNCHERS, SEPARATOR
from stepkit.workspace import testresults as tr
from stepkit.workspace.jsonlines import json_object
from stepkit.workspace.loglines import LogLines, lines_of
from stepkit.workspace.runners import Call, NoTests, Report, TestRunner
from stepkit.workspace.testrunners import either

if TYPE_CHECKING:  # the readers' evidence type: importing a runner builds no model
    from stepkit.records import Evidence

#: A reporter for node's test runner: one JSON line per test started,
#: passed or failed, with its file and nesting (node's own reporters name no
#: file for a passing test).
REPORTER = """export default async function* stepkitReporter(source) {
  for await (const event of source) {
    const type = {"test:start": "start", "test:pass": "pass", "test:fail": "fail"}[event.type];
    if (!type) continue;
    const d = event.data;
    yield JSON.stringify({type, name: d.name, nesting: d.nesting, file: d.file, skip: Boolean(d.skip),
                          todo: Boolean(d.todo), kind: d.details && d.details.type}) + "\\n";
  }
}
"""


def _starts_tests(arguments: list[str]) -> bool:
    """node's arguments start its test runner: ``--test`` among the options
    before the script (after it, they are the script's)."""
    for word in arguments:
        if word == "--test":
            return True
        if not word.startswith("-"):
            return False
    return False


def _report(call: Call, ambient: Report) -> Report:
    """Every test reported into the report dir (asked through ``NODE_OPTIONS``,
    so it works behind ``npm test``; the spec reporter keeps the output
    readable), unless the command (or the ``test`` script behind it) picks
    its reporters or sets ``NODE_OPTIONS`` itself: then its output is read."""
    script = _test_script(call) if call.via_script else None
    command = f"{call.command}\n{script or ''}"
    if "--test-reporter" in command or "NODE_OPTIONS" in command:
        return Report(
            call.command,
            ambient.env,
            either(ambient.reader, lambda o, e: read_output(o, call.project)),
            None,
            ambient.note,
        )
    reporter = call.report_dir / "stepkit-reporter.mjs"
    reporter.write_text(REPORTER, encoding="utf-8")
    events = call.report_dir / "node-test.jsonl"
    flags = [
        f"--test-reporter={reporter}",
        f"--test-reporter-destination={events}",
        "--test-reporter=spec",
        "--test-reporter-destination=stdout",
    ]
    env = {
        **ambient.env,
        "NODE_OPTIONS": quoting.extend_variable("NODE_OPTIONS", flags, call.base_env),
    }

    def read(output: tr.Output, evidence: Evidence) -> tr.TestResults | None:
        return read_events(LogLines(events), call.project) if events.is_file() else None

    return Report(
        call.command,
        env,
        read,
        events,
        "stepkit asked node's test runner for a report of every test: "
        f"NODE_OPTIONS={quoting.node_options(flags)}",
    )


def _test_script(call: Call) -> str | None:
    from stepkit.plugins.runners.package_scripts import test_script

    return test_script(call.project)


_TAP_SUBTEST = lazy_compile(r"^(?P<indent>\s*)# Subtest: (?P<name>.*)$")
_TAP_RESULT = lazy_compile(
    r"^(?P<indent>\s*)(?P<ok>ok|not ok) \d+ - (?P<name>.*?)"
    r"(?: # (?P<directive>SKIP|TODO)\b.*)?$",
    re.IGNORECASE,
)
_TAP_LOCATION = lazy_compile(r"^\s*location: '(?P<file>.+?)(?::\d+){1,2}'$")
_TAP_SUITE = lazy_compile(r"^\s*type: 'suite'$")


def read_events(text: tr.Output, project_dir: Path) -> tr.TestResults | None:
    """Results from the JSON lines of stepkit's reporter for node's test
    runner (:data:`REPORTER`): one
    ``start``, ``pass`` or ``fail`` event per test with its file and nesting;
    ``file › suite › name`` ids, suites left out."""
    results = tr.TestResults(source="node --test report")
    stack: list[str] = []
    for line in lines_of(text):
        event = json_object(line)
        if event is None or not isinstance(event.get("nesting"), int):
            continue
        depth, name = event["nesting"], str(event.get("name", ""))
        if event.get("type") == "start":
            stack = [*stack[:depth], name]
        elif event.get("kind") != "suite":
            status: tr.TestStatus = (
                "skipped"
                if event.get("skip") or event.get("todo")
                else ("passed" if event.get("type") == "pass" else "failed")
            )
            parts = [tr.relative(str(event.get("file") or ""), project_dir), *stack[:depth], name]
            results.add(SEPARATOR.join(p for p in parts if p), status)
    return results


def read_tap(text: tr.Output, project_dir: Path) -> tr.TestResults | None:
    """Results from node's TAP reporter (``file › suite › name`` ids, the
    file from each failure's ``location``: TAP names none for a pass, so the
    list is incomplete; suites are not tests).  None: no test result in it."""
    results = tr.TestResults(source="node --test TAP", complete=False)
    stack: list[str] = []
    waiting: tuple[list[str], tr.TestStatus] | None = (
        None  # a result line whose YAML block may follow
    )
    block: list | None = None  # [file, is a suite] of the YAML block being read

    def settle(file: str | None, suite: bool) -> None:
        assert waiting is not None
        parts, status = waiting
        if not suite:
            parts[0] = tr.relative(file, project_dir) if file else ""
            results.add(SEPARATOR.join(p for p in parts if p), status)

    for line in lines_of(text):
        if waiting is not None and block is None and line.strip() == "---":
            block = [None, False]
            continue
        if block is not None:
            if line.strip() == "...":
                settle(*block)
                waiting = block = None
            elif loc := _TAP_LOCATION.match(line):
                block[0] = loc["file"]
            else:
                block[1] = block[1] or bool(_TAP_SUITE.match(line))
            continue
        if waiting is not None:
            settle(None, False)
            waiting = None
        opened = _TAP_SUBTEST.match(line)
        if opened:
            depth = len(opened["indent"]) // 4
            stack = [*stack[:depth], opened["name"]]
            continue
        m = _TAP_RESULT.match(line)
        if not m:
            continue
        depth = len(m["indent"]) // 4
        status: tr.TestStatus = (
            "skipped" if m["directive"] else ("passed" if m["ok"] == "ok" else "failed")
        )
        waiting = (["", *stack[:depth], m["name"]], status)
        stack = stack[:depth]
    if waiting is not None:
        settle(*(block or (None, False)))
    return results if results.outcomes else None


_SPEC_FAILING = lazy_compile(r"^✖ failing tests:$")
_SPEC_AT = lazy_compile(r"^test at (?P<file>.+?)(?::\d+){1,2}$")
_SPEC_NAME = lazy_compile(r"^✖ (?P<name>.+?) \([\d.]+m?s\)")


def read_spec(text: tr.Output, project_dir: Path) -> tr.TestResults | None:
    """The failing tests of node's spec reporter, from its closing ``✖
    failing tests:`` list (``file › name``): incomplete, since the passes
    are not named there."""
    results = tr.TestResults(source="node --test spec", complete=False)
    listing, file = False, None
    for raw in lines_of(text):
        line = raw.rstrip()
        if _SPEC_FAILING.match(line):
            listing = True
        elif listing and (at := _SPEC_AT.match(line)):
            file = tr.relative(at["file"], project_dir)
        elif listing and file and (name := _SPEC_NAME.match(line)):
            results.add(f"{file}{SEPARATOR}{name['name']}", "failed")
            file = None
    return results if results.outcomes else None


def read_output(text: tr.Output, project_dir: Path) -> tr.TestResults | None:
    """node's test results from its output, TAP or spec."""
    return read_tap(text, project_dir) or read_spec(text, project_dir)


NODE_TEST = TestRunner(
    name="node-test",
    command=lambda words: words[0] == "node" and _starts_tests(words[1:]),
    launchers=LAUNCHERS,
    behind_scripts=True,
    report=_report,
    ran=(r"^(?:# |ℹ )pass [1-9]",),
    words=("pass ", "pass 0"),
    # TAP's totals, or the spec reporter's: exit 0 means no failure either
    no_tests=(
        NoTests(
            r"^(?:# |ℹ )pass 0$",
            (0,),
            "no test passed (every test was skipped, or none ran)",
            said_by="node --test",
        ),
    ),
    failure_reason=r"^\s+error: '(?P<why>.*)'$",
)
RUNNERS = (NODE_TEST,)
