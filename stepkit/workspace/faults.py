"""What a gate's exit code cannot tell: an environment fault, a test run that
ran no test, or a formatter that had nothing to format.

A missing tool behind ``make``, ``uv run``, ``poetry run`` or ``npx`` makes
the wrapper exit 1 or 2, like a failing check; a runner that found no test
exits 0 (cargo, go, ctest) or with its own code (pytest 5, jest 1).  Both
are told here from the tools' own messages, the ones they really print, so
that the gate runner records ``error`` (the machine, not the code: no fix
attempt is spent on it) or ``not_run`` (NOT evidence that tests passed).

The same holds for a service the tests need that is not running (a
refused connection to this machine), a Gradle or Maven wrapper that cannot
download its distribution, a package manager refusing this Node or its own
version switch (``engines``, corepack's ``packageManager``), a tool missing
behind ``pdm run``, and a src-layout package that is not installed: each is
set-up, not code.  The first and last are told even though the test runner
reports failures, but only when every failure it names is that one.

Each tool's own messages are its declaration's: a test runner's
(:class:`~stepkit.workspace.runners.TestRunner`), or another tool's
(:class:`~stepkit.workspace.tools.Tool`, whose fault signatures are
matched in one pass over the output's last lines); the mechanisms are here.

Conservative by design: a message counts only in the output's last lines
(where these tools put them), only with the exit code the tool gives it, and
never when a test runner in the same output reports failing tests, so a
test that prints "command not found" and fails stays a failure.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import AnyStr

from stepkit.lazyregex import lazy_compile
from stepkit.regexneeds import needs
from stepkit.text import strip_ansi, terminal_line
from stepkit.workspace.runners import Runners, runners
from stepkit.workspace.tools import Tools, builtin_tools

#: How many non-blank lines at the end of the output a fault message may be in.
TAIL_LINES = 40
#: Said of every test gate that ran no test.
NO_TEST_NOTE = "the command ran no test. This is NOT evidence that tests passed"
_MISSING = "not installed or not on PATH"


#: A runner's rule for "no test ran": (who says it, pattern, exit codes, what it says).
_Rule = tuple[str, re.Pattern[str], frozenset[int], str]

#: Words every line a runner's failure pattern matches holds (lower case):
#: only those lines are searched, so a megabyte of passing output costs little.
_FAILURE_WORDS = ("fail", "error")
_FAILURE_BYTES = tuple(word.encode() for word in _FAILURE_WORDS)


@dataclass(frozen=True)
class _Output:
    """A gate's output as the rules read it: its lines as a terminal shows
    them (never changed: shared by every rule), and those lines joined and
    lower-cased, for one search over the whole text where a rule only needs
    to know whether a word is there."""

    lines: list[str]
    text: str
    lower: str

    @functools.cached_property
    def encoded(self) -> bytes:
        """The text in UTF-8, for RE2 (a byte that was not UTF-8 stays as it came)."""
        return self.text.encode("utf-8", "surrogatepass")


@functools.lru_cache(maxsize=1)
def _read(output: str) -> _Output:
    """``output`` read once for every rule: a failed tests gate asks for its
    faults and for whether it ran a test, each over the same tens of
    thousands of kept lines."""
    lines = [terminal_line(line) for line in strip_ansi(output).split("\n")]
    text = "\n".join(lines)
    return _Output(lines, text, text.lower())


def _with_words(out: _Output, words: tuple[str, ...]) -> str:
    """The lines that hold one of ``words`` (any case), joined."""
    return "\n".join(_lines_with_words(out, words))


def _present(out: _Output, words: tuple[str, ...]) -> tuple[str, ...]:
    """Those of ``words`` the lower-cased output holds."""
    lower = out.lower
    if len(lower) > _ONE_PASS_CHARS and not _any_word(words).search(
        lower.encode("utf-8", "surrogatepass")
    ):
        return ()
    return tuple(word for word in words if word in lower)


def _lines_with_words(out: _Output, words: tuple[str, ...]) -> Iterator[str]:
    """The lines that hold one of ``words`` (any case), in order."""
    text, lower = out.text, out.lower
    if len(lower) != len(text):  # a character whose lower case is longer: positions differ
        yield from (line for line in out.lines if any(word in line.lower() for word in words))
        return
    # found in the whole text, not by a lower() and a scan per line: the
    # kept output of a big gate is tens of thousands of lines; only the words
    # it holds are looked for
    spans = _line_spans(lower, _present(out, words), "\n")
    yield from (text[start : spans[start]] for start in sorted(spans))


def _line_spans(lower: AnyStr, words: tuple[AnyStr, ...], newline: AnyStr) -> dict[int, int]:
    """Start → end of each line of ``lower`` that holds one of ``words``,
    found word by word by ``find`` (memchr speed), not a regex tried at
    every character."""
    spans: dict[int, int] = {}
    for word in words:
        at = lower.find(word)
        while at != -1:
            end = lower.find(newline, at)
            end = len(lower) if end == -1 else end
            spans[lower.rfind(newline, 0, at) + 1] = end
            at = lower.find(word, end)
    return spans


def failure_lines(data: bytes, many: bool = False) -> list[bytes]:
    """The lines of ``data`` (whole lines of output) that may name a failure,
    in order: those holding a word every runner's failure line holds
    (``fail``, ``error``, any case), but a line of one base64 word (a key
    block's).  Found by ``find`` (memchr speed), not a regex per line; with
    ``many`` (most lines are expected to hold a word: a run failing
    thousands of tests), by splitting the lines once and asking each, which
    is cheaper there than a find, a line start and a line end per word."""
    lower = data.lower()
    one_word = _base64_word().fullmatch
    if many:
        fail, error = _FAILURE_BYTES
        return [
            line
            for line, low in zip(data.split(b"\n"), lower.split(b"\n"), strict=True)
            if (fail in low or error in low) and not one_word(line.strip())
        ]
    spans = _line_spans(lower, _FAILURE_BYTES, b"\n")
    lines = (data[start : spans[start]] for start in sorted(spans))
    return [line for line in lines if not one_word(line.strip())]


@functools.cache
def _base64_word() -> re.Pattern[bytes]:
    """A line that is one base64 word (compiled on first use, as every pattern here)."""
    return re.compile(rb"[A-Za-z0-9+/=]+")


def _runner_failed(out: _Output, table: Runners) -> bool:
    """A test runner in the output reports failing tests.  Line by line, so
    that the first such line ends the search: in a failed run's output
    nearly every line may hold "fail"."""
    return any(table.failures.search(line) for line in _distinct_with_words(out, _FAILURE_WORDS))


def _distinct_with_words(out: _Output, words: tuple[str, ...]) -> Iterator[str]:
    """Each distinct line that holds one of ``words`` (any case), once: for
    asking whether any such line matches a pattern, where a line a big
    output repeats thousands of times is searched once."""
    seen: set[str] = set()
    for line in _lines_with_words(out, words):
        if line not in seen:
            seen.add(line)
            yield line


def _distinct_from_end(out: _Output, words: tuple[str, ...]) -> Iterator[str]:
    """Each distinct line that holds one of ``words`` (any case), once, from
    the last line up: as many lines are read as it takes (a runner's closing
    summary ends its output), each line a big output repeats only once."""
    seen: set[str] = set()
    for line in reversed(out.lines):
        if line not in seen:
            seen.add(line)
            low = line.lower()
            if any(word in low for word in words):
                yield line


#: Characters above which whether a text holds any of a rule's words is
#: asked of one RE2 pass (a millisecond or two per MB) before ``in`` asks
#: word by word, a pass each (about as long each).
_ONE_PASS_CHARS = 256 * 1024


@functools.cache
def _any_word(words: tuple[str, ...]):
    """An RE2 regex matching any of ``words`` in UTF-8 bytes."""
    import re2

    return re2.compile("|".join(map(re.escape, words)).encode())


def _tail(lines: list[str]) -> list[str]:
    tail: list[str] = []
    for line in reversed(lines):
        if line.strip():
            tail.append(line)
            if len(tail) == TAIL_LINES:
                break
    return tail[::-1]


# -- environment faults -----------------------------------------------------

# "/bin/sh: 1: clang-format: not found" (dash), "bash: line 1: mypy: command not found",
# "sh: mypy: not found" (busybox), "./ci.sh: line 3: tox: command not found",
# "zsh: command not found: mypy", "make: clang-format: No such file or directory"
_SHELL_MISSING = lazy_compile(
    r"^(?:\S*\b(?:sh|bash|dash|ksh)|\S+\.sh): (?:(?:line )?\d+: )?(?P<tool>[^:\s][^:]*): (?:command )?not found$"
    r"|^zsh: command not found: (?P<ztool>\S+)$"
)
_MAKE_MISSING = lazy_compile(
    r"^make(?:\[\d+\])?: (?P<tool>[^:*\s][^:*]*): (?:No such file or directory|Command not found)$"
)
_NOT_EXECUTABLE = lazy_compile(
    r"^(?:\S*\b(?:sh|bash|dash)|make(?:\[\d+\])?): (?:(?:line )?\d+: )?(?P<tool>[^:]+): Permission denied$"
)
# "make: *** [Makefile:2: lint] Error 127", "make[1]: *** [lint] Error 127"
_MAKE_ERROR = lazy_compile(r"^make(?:\[(?P<level>\d+)\])?: \*\*\* \[.*\] Error (?P<code>\d+)$")


def environment_fault(
    output: str, exit_code: int | None, judged_by: Runners | None = None
) -> str | None:
    """The environment fault a failed gate's output names, as a one-line cause.

    :param output: the gate's output (stdout and stderr merged).
    :param exit_code: its exit code; a command that succeeded has no fault.
    :return: e.g. ``uv: failed to spawn mypy (not installed)``,
        ``make: clang-format: command not found (not installed or not on
        PATH)``; None when the output shows no fault, or shows failing tests.
    :param judged_by: the declared runners (default: the built-in ones),
        whose fault signatures are asked after the machine's own, and their
        tools (:attr:`~stepkit.workspace.runners.Runners.tools`), whose
        signatures are asked of the output's last lines.
    """
    if exit_code in (0, None):
        return None
    table = judged_by or runners()
    out = _read(output)
    reasons = _failure_reasons(out.lines, table)
    cause = _service_down(out, reasons) or next(
        (c for fault in table.faults if (c := fault(out.lines, out.text, reasons))), None
    )
    if cause:
        return cause
    if _runner_failed(out, table):
        return None
    lines = _tail(out.lines)
    if exit_code in (126, 127):
        return _shell_fault(lines, exit_code)
    make_cause = _make_fault(lines)
    if make_cause:
        return make_cause
    return _tool_fault(lines, table.tools)


def _tool_fault(lines: list[str], tools: Tools) -> str | None:
    """The first declared fault signature (in the tools' order) that a line
    of ``lines`` holds and whose cause applies.  The lines are passed over
    once by every signature at once; only those it matches are asked of
    each signature in turn."""
    held = [at for at, line in enumerate(lines) if tools.any_fault.search(line)]
    for pattern, cause in tools.faults:
        for at in held:
            m = pattern.search(lines[at])
            found = cause(m, lines, at) if m else None
            if found:
                return found
    return None


# -- failures every one of which is the machine's ---------------------------------

#: A refused connection to this machine, as the clients print it: node (``connect ECONNREFUSED
#: 127.0.0.1:6379``), go (``dial tcp 127.0.0.1:5432: connect: connection refused``), redis-py
#: (``Error 111 connecting to localhost:6379. Connection refused.``), libpq (``connection to server at
#: "localhost" (127.0.0.1), port 5432 failed: Connection refused``), MySQL (``Can't connect to MySQL
#: server on 'localhost' ([Errno 111] Connection refused)``).
_LOCAL = r"(?:localhost|127\.0\.0\.1|\[?::1\]?|0\.0\.0\.0)"
_REFUSED_AT = lazy_compile(
    rf"ECONNREFUSED {_LOCAL}:(?P<p1>\d+)"
    rf"|dial tcp {_LOCAL}:(?P<p2>\d+): connect: connection refused"
    rf"|Error 111 connecting to {_LOCAL}:(?P<p3>\d+)"
    rf'|connection to server at "?{_LOCAL}"? \([^)]*\), port (?P<p4>\d+) failed: Connection refused'
    rf"|Can't connect to MySQL server on '{_LOCAL}'(?::(?P<p5>\d+))?"
    r"|(?P<bare>ConnectionRefusedError: \[Errno 111\] Connection refused)"
)
_SERVICES = {
    "5432": "PostgreSQL",
    "3306": "MySQL",
    "6379": "Redis",
    "27017": "MongoDB",
    "11211": "memcached",
    "9200": "Elasticsearch",
    "5672": "RabbitMQ",
    "9092": "Kafka",
    "2181": "ZooKeeper",
    "4222": "NATS",
}
_REFUSAL_WORDS = lazy_compile(
    r"ConnectionRefused|Connection r|ECONNREFUSED|connection to server at|Error 111|"
    r"OperationalError|ConnectionError|Can't connect"
)


def _failure_reasons(lines: list[str], table: Runners) -> list[str]:
    """Each failing test's one-line reason, as its runner gives it (empty: none)."""
    reasons = []
    for line in lines:
        for pattern in table.failure_reasons:
            if m := pattern.match(line):
                reasons.append(m["why"] or "")
                break
    return reasons


def _service_down(out: _Output, reasons: list[str]) -> str | None:
    """A service the tests connect to on this machine is not running: a
    client's "connection refused" to a local address, and every failing test
    (when the runner names them) failed so."""
    if "refused" not in out.lower and "Can't connect" not in out.text:
        return None
    lines = out.lines
    refused = next(
        (
            m
            for line in lines
            if "refused" in line.lower() or "Can't connect" in line
            if (m := _REFUSED_AT.search(line))
        ),
        None,
    )
    if refused is None:
        return None
    if reasons and not all(_REFUSAL_WORDS.search(why) for why in reasons):
        return None  # some test failed for another reason: the code's
    if refused["bare"] and not reasons:
        return None  # no address and no failing test to tie it to
    port = next((p for p in refused.groups()[:5] if p), None)
    if port is None:
        return "a service the tests need is not running (connection refused on this machine)"
    service = _SERVICES.get(port, "a service")
    return f"{service} is not running on this machine (connection to port {port} refused); the tests need it"


def _shell_fault(lines: list[str], exit_code: int) -> str | None:
    """A command the shell itself could not find (127) or run (126)."""
    for line in reversed(lines):
        if exit_code == 127 and (m := _SHELL_MISSING.match(line) or _MAKE_MISSING.match(line)):
            return f"{_tool(m)}: command not found ({_MISSING})"
        if exit_code == 126 and (m := _NOT_EXECUTABLE.match(line)):
            return f"{m['tool']}: permission denied (not executable)"
    return None


def _tool(m: re.Match[str]) -> str:
    """The missing tool's name from a shell's or make's "not found" line."""
    found = m.groupdict()
    return found.get("tool") or found["ztool"]


def _make_fault(lines: list[str]) -> str | None:
    """make reporting that a recipe's command was not found (``Error 127``).

    Only when that is why make stopped: every ``Error N`` it reports is 127,
    or the 2 an outer make reports for an inner one."""
    errors = [
        (int(m["level"] or 0), int(m["code"])) for line in lines if (m := _MAKE_ERROR.match(line))
    ]
    missing = [level for level, code in errors if code in (126, 127)]
    if not missing or any(
        code not in (126, 127) and not (code == 2 and level < max(missing))
        for level, code in errors
    ):
        return None
    for line in reversed(lines):
        m = _MAKE_MISSING.match(line) or _SHELL_MISSING.match(line)
        if m:
            return f"make: {_tool(m)}: command not found ({_MISSING})"
        if d := _NOT_EXECUTABLE.match(line):
            return f"make: {d['tool']}: permission denied (not executable)"
    return f"make: a recipe's command was not found (Error {127 if 127 in dict(errors).values() else 126})"


# -- test runs that ran no test ---------------------------------------------


def no_tests_reason(
    output: str, exit_code: int | None, judged_by: Runners | None = None
) -> str | None:
    """Why a test gate's command ran no test, read from its runner's output.

    :param output: the tests gate's output.
    :param exit_code: its exit code: 0, or the code the runner gives "no
        tests" (pytest 5, jest 1, ctest 8 …), also through ``make``.
    :return: e.g. ``pytest: no tests collected (exit 5)``, ``go: no test
        files in any package``; None when a test ran, a test failed, or the
        output shows no runner saying it found none.
    :param judged_by: the declared runners (default: the built-in ones).
    """
    if exit_code is None:
        return None
    table = judged_by or runners()
    out = _read(output)
    reason, codes = _no_tests_said(out, exit_code, table)
    if reason is None or not _exit_allowed(exit_code, codes, out.lines):
        return None
    if _ran(out, table):
        return None  # another runner in the same output ran tests, or some failed
    return reason


def tests_ran(output: str, judged_by: Runners | None = None) -> bool:
    """Some test runner's closing summary in the output says it ran a test
    (``5 passed in 0.1s``, ``running 3 tests``, ``ok  pkg  0.1s`` …): the
    evidence a tests gate needs when it has no report to read."""
    return _ran(_read(output), judged_by or runners())


def _ran(out: _Output, table: Runners) -> bool:
    """A runner in the output reports failing tests, or says a test ran.

    The lines holding a run word are looked at from the last one up: a
    runner's closing summary ends its output, so a run is seen in its last
    lines, not after a regex pass over every kept line (2 MB of ``PASSED``
    lines took 0.3 s that way)."""
    if _runner_failed(out, table):
        return True
    return any(table.ran.search(line) for line in _distinct_from_end(out, table.words))


def _no_tests_said(
    out: _Output, exit_code: int, table: Runners
) -> tuple[str | None, frozenset[int]]:
    """What the runners in the output said about finding no test, and the
    exit codes they give it (none said: ``(None, ∅)``)."""
    maybe = _may_match(out, table.no_tests)
    said = _with_words(out, table.words) if maybe else ""
    found = [rule for rule in maybe if rule[1].search(said)]
    if found:
        name, _pattern, _codes, what = found[0]
        return f"{name}: {what} (exit {exit_code})", frozenset().union(*(r[2] for r in found))
    for rule in table.no_tests_in:
        said_by_lines = rule(out.lines, out.text)
        if said_by_lines is not None:
            return said_by_lines[0], frozenset(said_by_lines[1])
    return None, frozenset()


def prepare(table: Runners) -> None:
    """Work judging an output by ``table`` would do first, done now (while a
    gate's command runs, its verdict then does not wait for it): the texts
    its no-test patterns need (:func:`_may_match`; each computed once a process)."""
    for rule in table.no_tests:
        needs(rule[1].pattern, re.MULTILINE)


def _may_match(out: _Output, rules: tuple[_Rule, ...]) -> list[_Rule]:
    """Those of ``rules`` (in order) whose pattern may match in the output:
    a pattern cannot match where the text every match of it holds
    (:func:`~stepkit.regexneeds.needs`) is nowhere, which one RE2 pass says
    of them all at once for most outputs (a regex tried at every character
    of 2 MB took 10 ms a rule)."""
    wanted = [needs(rule[1].pattern, re.MULTILINE) for rule in rules]
    texts = tuple(dict.fromkeys(t for w in wanted for t in w))
    if texts and len(out.text) > _ONE_PASS_CHARS and not _any_word(texts).search(out.encoded):
        return [rule for rule, w in zip(rules, wanted, strict=True) if not w]
    return [
        rule
        for rule, w in zip(rules, wanted, strict=True)
        if not w or any(t in out.text for t in w)
    ]


def _exit_allowed(exit_code: int, codes: frozenset[int], lines: list[str]) -> bool:
    """The exit code is the runner's for "no tests", or make's 2 around it."""
    if exit_code in codes:
        return True
    errors = [
        (int(m["level"] or 0), int(m["code"])) for line in lines if (m := _MAKE_ERROR.match(line))
    ]
    inner = [level for level, code in errors if code in codes]
    return (
        exit_code == 2
        and bool(inner)
        and all(code in codes or (code == 2 and level < max(inner)) for level, code in errors)
    )


# -- formatters that had nothing to format ----------------------------------


def nothing_to_format_reason(
    output: str, exit_code: int | None, tools: Tools | None = None
) -> str | None:
    """Why a format gate's command formatted nothing: the formatter's own
    message that it found no file (``nothing to format: …``); None when it
    does not say so.

    :param tools: the declared tools (default: the built-in ones), whose
        words for "no file to format" are read."""
    if exit_code is None:
        return None
    found = (tools or builtin_tools()).nothing_to_format.search(_read(output).text)
    if found is None:
        return None
    return f"nothing to format: {found.group(0).strip()} (exit {exit_code})"
