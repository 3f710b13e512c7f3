"""How a test runner is judged, as its plugin declares it.

A :class:`TestRunner` says, for one tool, what the core would otherwise
have to know about it: how to recognise its command, which report to ask
it for and how to read that report, how to run its failing ids again, the
lines of its output that mean a test failed, that tests ran, or that none
did, the one-line reason it gives a failing test, the causes outside the
code it names (its fault signatures) and the markers that skip one of its
tests.  Plugins give them through ``stepkit_test_runners``
(``stepkit.plugins.runners`` holds one module per built-in runner).

The core keeps the mechanisms and reads the declarations through the
:class:`Runners` table: the tests gate's report and rerun
(:mod:`stepkit.workspace.testrunners`), the no-test and fault rules
(:mod:`stepkit.workspace.faults`, every declaration's patterns compiled
into one pass), the stall check and the tamper flags.  No module of
``stepkit/workspace`` names a tool.
"""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stepkit import quoting
from stepkit.lazyregex import lazy_compile
from stepkit.workspace.tools import Tools, builtin_tools, tools

if TYPE_CHECKING:  # the readers' types: importing the fault reader builds no model
    from stepkit.records import Evidence
    from stepkit.workspace.testresults import Output, TestResults

#: Reads a run's per-test results from its output (text or lines) and its
#: condensed evidence; None: nothing to read.
Reader = Callable[["Output", "Evidence"], "TestResults | None"]

#: The built-in plugin whose runners a call without a plugin manager uses.
BUILTIN_RUNNERS = "stepkit.plugins.runners"


@dataclass
class Report:
    """A tests command as stepkit runs it, with the report its runner is asked for.

    :ivar command: the shell command to run.
    :ivar env: variables added to the environment.
    :ivar reader: reads the run's per-test results (None: none).
    :ivar report: the report the runner writes whenever it runs (None: none
        is required); a run that exits 0 without it verified no test.
    :ivar note: one line for the evidence saying what stepkit asked for.
    """

    command: str
    env: dict[str, str] = field(default_factory=dict)
    reader: Reader | None = None
    report: Path | None = None
    note: str | None = None


@dataclass
class Listing:
    """A tests command asked to list its tests without running them.

    :ivar command: the shell command to run.
    :ivar env: variables added to the environment.
    :ivar read: the test ids its output names, every one of them (None: the
        output is no complete list, and nothing may be judged from it).
    """

    command: str
    env: dict[str, str]
    read: Callable[[str], list[str] | None]


@dataclass(frozen=True)
class Call:
    """A tests command as a runner's declaration sees it.

    :ivar command: the whole command.
    :ivar words: its last simple command, split.
    :ivar at: where the runner's first word is in ``words``.
    :ivar via_script: the script runner (``npm`` …) whose ``test`` script is
        the runner; None: the runner is in the command itself.
    :ivar pass_on: how the script runner passes words on to its script (see
        :attr:`TestRunner.pass_on`); None: words are appended as they are.
    :ivar project: the project dir.
    :ivar report_dir: a directory of the run's logs for reports (it exists).
    :ivar base_env: the environment the command would get (None: this process's).
    :ivar started: when the run starts (seconds; a report older is a previous run's).
    """

    command: str
    words: list[str]
    at: int
    via_script: str | None
    pass_on: Callable[[str, list[str], list[str]], list[str]] | None
    project: Path
    report_dir: Path
    base_env: Mapping[str, str] | None
    started: float

    def arguments(self) -> list[str]:
        """The words after the runner's first."""
        return self.words[self.at + 1 :]

    def append(self, words: list[str], to: str | None = None) -> str:
        """``to`` (default: the command) with ``words`` after its last simple
        command (behind ``npm test`` after ``--``, which npm needs to pass
        them on)."""
        command = self.command if to is None else to
        if self.via_script is not None and self.pass_on is not None:
            words = self.pass_on(self.via_script, last_words(command) or [], words)
        return f"{command.rstrip()} {quoting.shell(words)}"


@dataclass(frozen=True)
class Rerun:
    """A run of only the failing ids, as a runner's declaration is asked for it.

    :ivar call: the tests command as it was recognised.
    :ivar base: the command with its report asked for (:attr:`TestRunner.report`).
    :ivar failing: the ids to run again.
    :ivar suite: every id of the run (may be empty).
    """

    call: Call
    base: Report
    failing: list[str]
    suite: list[str]


@dataclass(frozen=True)
class NoTests:
    """A runner's words for "no test ran", and the exit codes it gives them.

    :ivar pattern: a line of the output (multi-line regex).
    :ivar codes: the exit codes the runner gives it.
    :ivar what: what it means, after the runner's name in the reason.
    :ivar said_by: the name the reason gives (default: the runner's).
    """

    pattern: str
    codes: tuple[int, ...]
    what: str
    said_by: str | None = None


@dataclass(frozen=True)
class TestRunner:
    """What stepkit knows about one test runner (or a family of output it prints).

    :param name: its name, as a reason or note says it (``pytest``, ``cargo nextest``).
    :param command: whether the words (the first one a path's base name)
        start this runner's command; None: it is never recognised in a command.
    :param launchers: words that may stand before a runner's command and are
        skipped to find it (``uv run pytest``, ``npx jest``).
    :param script_runners: the script runners (``npm`` …) this declaration reads.
    :param script: the command behind a script runner's words (``npm test``:
        the ``test`` script) given them and the project dir; None: none.
    :param pass_on: the words to append after a script runner's command so
        that its script gets ``words`` (given its name and its command's words).
    :param behind_scripts: the runner is recognised as a script runner's ``test`` script.
    :param before: runners this one is recognised before (their commands overlap).
    :param ambient: the report asked of every tests command, whatever its
        runner (pytest's, through ``PYTEST_ADDOPTS``).
    :param report: the command, environment and reader when the command is
        this runner, given the ambient report; None: the ambient one.
    :param ambient_required: when the command is this runner, the ambient
        report is one it must write.
    :param rerun: the command narrowed to the failing ids; None (or it
        answers None): the runner's tests cannot be selected.
    :param claims: failing ids this runner reruns when no runner is recognised.
    :param runs_files: its ``rerun`` takes test files as ids and collects only
        those (pytest): the test modules a step added run alone.
    :param failed: lines (regexes) saying tests failed: an output holding one
        is never an environment fault.
    :param ran: lines saying a test ran.
    :param words: words (lower case) each line of ``failed``, ``ran`` and
        ``no_tests`` holds: only lines with one of them are searched.
    :param no_tests: its words for "no test ran".
    :param no_tests_in: a rule over every line (name given) for "no test
        ran" that a line cannot say, giving the reason and the exit codes;
        None when it does not apply.
    :param failure_reason: a failing test's line, with the reason as group
        ``why`` (empty when it gives none).
    :param faults: causes outside the code the runner names, each from the
        output's lines, its text and the failing tests' reasons (None: it
        does not apply).
    :param skip_markers: (label, regex) of a marker in a source that skips a
        test, which a step's change adding one flags (the built-in runners'
        only: the tamper flags are read where no plugin manager reaches).
    :param configs: regexes of the base names of its configuration files: a
        loosening change to one is flagged, and deleting one (the built-in
        runners' only, as ``skip_markers``).
    :param sections: regexes of the names of its sections in the files it
        shares with other settings (:attr:`Tool.shared_configs
        <stepkit.workspace.tools.Tool.shared_configs>`).
    :param plugin_group: the entry-point group of the plugins it loads: the
        installed files of every distribution with an entry point in it are
        the runner's own (:mod:`stepkit.workspace.installed`).
    :param listing: the command asked to list its tests without running them,
        naming each as its report does, and only what its report can name
        (None: it cannot be asked): the step's start is listed before it is
        measured (:mod:`stepkit.workspace.start_outcomes`).
    """

    __test__ = False

    name: str
    command: Callable[[list[str]], bool] | None = None
    launchers: tuple[str, ...] = ()
    script_runners: tuple[str, ...] = ()
    script: Callable[[list[str], Path], str | None] | None = None
    pass_on: Callable[[str, list[str], list[str]], list[str]] | None = None
    behind_scripts: bool = False
    before: tuple[str, ...] = ()
    ambient: Callable[[Call], Report] | None = None
    report: Callable[[Call, Report], Report] | None = None
    ambient_required: bool = False
    rerun: Callable[[Rerun], Report | None] | None = None
    claims: Callable[[list[str]], bool] | None = None
    runs_files: bool = False
    failed: tuple[str, ...] = ()
    ran: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    no_tests: tuple[NoTests, ...] = ()
    no_tests_in: Callable[[list[str], str], tuple[str, tuple[int, ...]] | None] | None = None
    failure_reason: str | None = None
    faults: tuple[Callable[[list[str], str, list[str]], str | None], ...] = ()
    skip_markers: tuple[tuple[str, str], ...] = ()
    configs: tuple[str, ...] = ()
    sections: tuple[str, ...] = ()
    plugin_group: str | None = None
    listing: Callable[[Call], Listing] | None = None


def _any_of(patterns: Iterable[str]) -> re.Pattern[str]:
    """One multi-line pattern matching any of ``patterns`` (one pass over a line)."""
    return lazy_compile("|".join(f"(?:{p})" for p in patterns) or r"(?!)", re.MULTILINE)


class Runners:
    """The declared runners, in the order they are recognised, and the
    patterns of them all, each kind compiled into one; and the tools
    declared beside them (:attr:`tools`), whose output a gate's is judged
    by too (default: the built-in ones)."""

    def __init__(self, declared: Iterable[TestRunner], declared_tools: Tools | None = None):
        self.tools = declared_tools or builtin_tools()
        self.declared: tuple[TestRunner, ...] = tuple(_ordered(list(declared)))
        self.launchers = frozenset(w for r in self.declared for w in r.launchers)
        self.words = tuple(dict.fromkeys(w for r in self.declared for w in r.words))
        self.failures = _any_of(p for r in self.declared for p in r.failed)
        self.ran = _any_of(p for r in self.declared for p in r.ran)
        self.no_tests = tuple(
            (
                rule.said_by or r.name,
                lazy_compile(rule.pattern, re.MULTILINE),
                frozenset(rule.codes),
                rule.what,
            )
            for r in self.declared
            for rule in r.no_tests
        )
        self.no_tests_in = tuple(r.no_tests_in for r in self.declared if r.no_tests_in)
        self.failure_reasons = tuple(
            lazy_compile(r.failure_reason) for r in self.declared if r.failure_reason
        )
        self.faults = tuple(rule for r in self.declared for rule in r.faults)
        self.skip_markers = tuple(
            (label, lazy_compile(pattern))
            for r in self.declared
            for label, pattern in r.skip_markers
        )

    def named(self, name: str | None) -> TestRunner | None:
        """The runner called ``name`` (None: none is)."""
        return next((r for r in self.declared if r.name == name), None)

    def of_command(self, words: list[str]) -> TestRunner | None:
        """The runner whose command starts at ``words[0]``."""
        return next((r for r in self.declared if r.command is not None and r.command(words)), None)

    def script_runner(self, name: str) -> TestRunner | None:
        """The declaration that reads the script runner ``name`` (None: none)."""
        return next((r for r in self.declared if name in r.script_runners), None)


def _ordered(declared: list[TestRunner]) -> list[TestRunner]:
    """``declared`` in their order, but each runner before those it names in
    :attr:`TestRunner.before` (a stable sort: nothing else moves)."""
    ordered: list[TestRunner] = []
    for runner in declared:
        at = next(
            (i for i, placed in enumerate(ordered) if placed.name in runner.before), len(ordered)
        )
        ordered.insert(at, runner)
    return ordered


def runners(pm: Any = None) -> Runners:
    """The runners the plugins of ``pm`` declare (``stepkit_test_runners``,
    the last registered first), with the tools they declare
    (:func:`~stepkit.workspace.tools.tools`); ``pm`` None: the built-in ones.

    The built-in runners always judge: a manager without their plugin (a
    host's own list of built-ins, ``-p no:``) gets them after its own, so
    that no choice of plugins weakens what a gate's output is judged by."""
    if pm is None:
        return builtin_runners()
    declared = [r for answer in pm.hook.stepkit_test_runners() for r in answer or ()]
    if pm.get_plugin(BUILTIN_RUNNERS) is None:
        declared.extend(builtin_runners().declared)
    return Runners(declared, tools(pm))


@functools.cache
def builtin_runners() -> Runners:
    """The built-in runners, through the built-in plugin's hook (for a caller
    that has no plugin manager: a unit of the core, a fix loop's stall check)."""
    from stepkit.lazyplugins import builtin_plugin

    return Runners(builtin_plugin(BUILTIN_RUNNERS).stepkit_test_runners())


def last_words(command: str) -> list[str] | None:
    """The words of ``command``'s last simple command, redirections left out;
    None when it does not split or pipes (no runner is recognised in it)."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return None
    if "|" in tokens:
        return None
    last: list[str] = []
    for token in tokens:
        if token in ("&&", "||", ";", "&"):
            last = []
        else:
            last.append(token)
    return [w for w in last if not re.match(r"^\d?[<>]", w)]
