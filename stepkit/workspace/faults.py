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

Conservative by design: a message counts only in the output's last lines
(where these tools put them), only with the exit code the tool gives it, and
never when a test runner in the same output reports failing tests, so a
test that prints "command not found" and fails stays a failure.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from stepkit.lazyregex import lazy_compile
from stepkit.text import strip_ansi, terminal_line
from stepkit.workspace.runners import Runners, runners

#: How many non-blank lines at the end of the output a fault message may be in.
TAIL_LINES = 40
#: Said of every test gate that ran no test.
NO_TEST_NOTE = "the command ran no test. This is NOT evidence that tests passed"
_MISSING = "not installed or not on PATH"


def _any_of(*patterns: str) -> re.Pattern[str]:
    """One multi-line pattern matching any of ``patterns``."""
    return lazy_compile("|".join(f"(?:{pattern})" for pattern in patterns), re.MULTILINE)


#: Words every line a runner's failure pattern matches holds (lower case):
#: only those lines are searched, so a megabyte of passing output costs little.
_FAILURE_WORDS = ("fail", "error")


@dataclass(frozen=True)
class _Output:
    """A gate's output as the rules read it: its lines as a terminal shows
    them (never changed: shared by every rule), and those lines joined and
    lower-cased, for one search over the whole text where a rule only needs
    to know whether a word is there."""

    lines: list[str]
    text: str
    lower: str


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


def _lines_with_words(out: _Output, words: tuple[str, ...]) -> Iterator[str]:
    """The lines that hold one of ``words`` (any case), in order."""
    text, lower = out.text, out.lower
    if len(lower) != len(text):  # a character whose lower case is longer: positions differ
        yield from (line for line in out.lines if any(word in line.lower() for word in words))
        return
    # one search over the whole text, not a lower() and a scan per line: the
    # kept output of a big gate is tens of thousands of lines; only the words
    # it holds are searched for
    if len(lower) > _ONE_PASS_CHARS and not _any_word(words).search(
        lower.encode("utf-8", "surrogatepass")
    ):
        return
    present = tuple(word for word in words if word in lower)
    if present:
        yield from (text[m.start() : m.end()] for m in _words_pattern(present).finditer(lower))


def failure_lines(data: bytes) -> list[bytes]:
    """The lines of ``data`` (whole lines of output) that may name a failure,
    in order: those holding a word every runner's failure line holds
    (``fail``, ``error``, any case), but a line of one base64 word (a key
    block's).  Found by ``find`` (memchr speed), not a regex per line."""
    lower = data.lower()
    starts: dict[int, int] = {}
    for word in _FAILURE_WORDS:
        at = lower.find(word.encode())
        while at != -1:
            start = lower.rfind(b"\n", 0, at) + 1
            end = lower.find(b"\n", at)
            end = len(lower) if end == -1 else end
            starts[start] = end
            at = lower.find(word.encode(), end)
    lines = (data[start : starts[start]] for start in sorted(starts))
    return [line for line in lines if not _base64_word().fullmatch(line.strip())]


@functools.cache
def _base64_word() -> re.Pattern[bytes]:
    """A line that is one base64 word (compiled on first use, as every pattern here)."""
    return re.compile(rb"[A-Za-z0-9+/=]+")


def _runner_failed(out: _Output, table: Runners) -> bool:
    """A test runner in the output reports failing tests.  Line by line, so
    that the first such line ends the search: in a failed run's output
    nearly every line may hold "fail"."""
    return any(table.failures.search(line) for line in _lines_with_words(out, _FAILURE_WORDS))


#: Characters above which whether a text holds any of a rule's words is
#: asked of one RE2 pass (a millisecond or two per MB) before ``in`` asks
#: word by word, a pass each (about as long each).
_ONE_PASS_CHARS = 256 * 1024


@functools.cache
def _any_word(words: tuple[str, ...]):
    """An RE2 regex matching any of ``words`` in UTF-8 bytes."""
    import re2

    return re2.compile("|".join(map(re.escape, words)).encode())


@functools.cache
def _words_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    """Each whole line that holds one of ``words`` (in lower-case text)."""
    return re.compile(rf"(?m)^[^\n]*?(?:{'|'.join(map(re.escape, words))})[^\n]*")


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


@dataclass(frozen=True)
class _Rule:
    """A tool's own message for an environment fault, and the cause it names."""

    pattern: re.Pattern[str]
    #: the cause from the match, the tail lines and the match's line; None when
    #: the tail lacks the tool's context for this message
    cause: Callable[[re.Match[str], list[str], int], str | None]


def _after(lines: list[str], at: int, pattern: str, span: int = 8) -> re.Match[str] | None:
    """The first match of ``pattern`` in the ``span`` lines after ``at``."""
    return next(
        (m for line in lines[at + 1 : at + 1 + span] if (m := re.search(pattern, line))), None
    )


def _uv_spawn(m: re.Match[str], lines: list[str], at: int) -> str:
    # uv 0.13: "error: Failed to spawn: mypy" / "  cause: No such file or directory (os error 2)";
    # older: "error: Failed to spawn: `mypy`" / "  Caused by: No such file or directory (os error 2)"
    denied = _after(lines, at, r"(?:Caused by|cause): Permission denied")
    return f"uv: failed to spawn {m['tool']} ({'not executable' if denied else 'not installed'})"


def _no_module(m: re.Match[str], lines: list[str], at: int) -> str:
    # `python -m TOOL` in the project's environment (uv, poetry, pdm, hatch or pipenv run), which
    # runs that environment's TOOL or stops here, never the one on PATH
    tool = m["module"]
    return (
        f"{tool} is not installed in the project's environment ({m['python']}: No module named "
        f"{tool}): add it to the project's development dependencies, or set the gate's command "
        "in stepkit.toml [commands]"
    )


def _uv_network(m: re.Match[str], lines: list[str], at: int) -> str:
    causes = [
        c["why"]
        for line in lines[at + 1 : at + 12]
        if (c := re.match(r"^\s*(?:Caused by|cause): (?P<why>.+)$", line))
    ]
    url = next(
        (
            u["url"]
            for why in causes
            if (
                u := re.search(r"(?:Failed to fetch:|for url) `?\(?(?P<url>https?://[^`)\s]+)", why)
            )
        ),
        "",
    )
    where = f" at {url}" if url else ""
    return f"uv: package index unreachable{where} ({causes[-1] if causes else m.group(0)})"


def _npm_network(m: re.Match[str], lines: list[str], at: int) -> str:
    request = _after(lines, at, r"network request to (?P<url>\S+) failed, reason: (?P<why>.+)$")
    detail = f"{request['why']}" if request else m["code"]
    return f"npm: registry unreachable ({detail})"


def _cargo_network(m: re.Match[str], lines: list[str], at: int) -> str | None:
    # "error: failed to get `serde` as a dependency of package …" / … / "Caused by:" /
    # "  [6] Could not resolve hostname (Could not resolve host: index.crates.io)"
    if not any(
        re.match(r"^error: failed to (?:get|download|load|query|update|fetch)\b", line)
        for line in lines
    ):
        return None
    return f"cargo: registry unreachable ({m['why']})"


def _pip_network(m: re.Match[str], lines: list[str], at: int) -> str | None:
    # urllib3's retry warning counts only when pip then gave up on the requirement
    if not any(
        re.match(r"^ERROR: (?:Could not find a version|No matching distribution)", line)
        for line in lines
    ):
        return None
    return f"pip: package index unreachable ({m['why'].strip()})"


def _maven_transfer(m: re.Match[str], lines: list[str], at: int) -> str:
    why = re.search(
        r"(Unknown host [^:\s]+|Connection refused|Connect timed out|Network is unreachable"
        r"|No route to host|Read timed out)",
        m["why"],
    )
    return f"maven: repository {m['repo']} ({m['url']}) unreachable ({why.group(1) if why else m['why'][:80]})"


def _wrapper_download(m: re.Match[str], lines: list[str], at: int) -> str | None:
    # gradlew / mvnw on a machine without their distribution: "Downloading https://services.gradle.org/…",
    # then the JVM's network exception, with org.gradle.wrapper (org.apache.maven.wrapper) in its stack
    wrapper = next(
        (
            w
            for line in lines
            for w, package in (
                ("gradle", "org.gradle.wrapper"),
                ("maven", "org.apache.maven.wrapper"),
            )
            if package in line
        ),
        None,
    )
    if wrapper is None:
        return None
    url = next(
        (
            d["url"]
            for line in lines
            if (d := re.match(r"^Downloading (?P<url>https?://\S+)", line))
        ),
        "",
    )
    what = f" {url}" if url else ""
    return f"{wrapper} wrapper: cannot download its distribution{what} ({m['exc']}: {m['why'] or 'no detail'})"


def _npm_engine(m: re.Match[str], lines: list[str], at: int) -> str:
    # npm 10/11: "npm error notsup Required: {"node":">=99"}" / "npm error notsup Actual:   {…}"
    found = {
        k["key"]: k["value"]
        for line in lines[at : at + 12]
        if (
            k := re.match(
                r"^npm (?:error|ERR!) notsup (?P<key>Required|Actual):\s+(?P<value>.+)$", line
            )
        )
    }
    if not found:
        return "npm: unsupported engine (the project's engines refuse this Node or npm)"
    return f"npm: the project's engines need {found.get('Required', '?')}; this machine has {found.get('Actual', '?')}"


_FAULTS: tuple[_Rule, ...] = (
    _Rule(
        lazy_compile(r"toolchain '(?P<toolchain>[^']+)' is not installed"),
        lambda m, _lines, _at: f"rustup: toolchain {m['toolchain']} is not installed",
    ),
    _Rule(lazy_compile(r"^error: Failed to spawn: `?(?P<tool>[^`\s]+)`?$"), _uv_spawn),
    _Rule(
        lazy_compile(r"^(?P<python>(?:.*/)?python[\d.]*): No module named (?P<module>[\w.]+)$"),
        _no_module,
    ),
    _Rule(
        lazy_compile(r"^Command not found: (?P<tool>\S+)$"),
        lambda m, _lines, _at: (
            f"poetry: {m['tool']}: command not found (not installed in the project's environment)"
        ),
    ),
    _Rule(
        lazy_compile(r"^npm (?:error|ERR!) could not determine executable to run$"),
        lambda m, _lines, _at: (
            "npx: could not determine executable to run (the package is not installed or has no such command)"
        ),
    ),
    _Rule(
        lazy_compile(
            r"^npm (?:error|ERR!) npx canceled due to missing packages and no YES option: \[(?P<pkgs>.*)\]$"
        ),
        lambda m, _lines, _at: f"npx: {m['pkgs'].replace(chr(34), '')} not installed",
    ),
    _Rule(
        lazy_compile(
            r"^npm (?:error|ERR!) code (?P<code>ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT"
            r"|ENETUNREACH|EHOSTUNREACH)$"
        ),
        _npm_network,
    ),
    _Rule(
        lazy_compile(
            r"^error: (?:Request failed after \d+ retries|Failed to fetch|Failed to download)\b"
        ),
        _uv_network,
    ),
    _Rule(
        lazy_compile(
            r"(?P<why>Could not resolve host(?:name)?(?: \(Could not resolve host: [^)]+\)|: \S+)"
            r"|Couldn't resolve host name)"
        ),
        _cargo_network,
    ),
    _Rule(lazy_compile(r"Failed to establish a new connection: (?P<why>[^')]+)"), _pip_network),
    _Rule(
        lazy_compile(
            r"^(?:ERROR: )?Could not fetch URL (?P<url>\S+?):? (?P<why>There was a problem .+)$"
        ),
        lambda m, _lines, _at: f"pip: could not fetch {m['url']} ({m['why'][:80]})",
    ),
    _Rule(
        lazy_compile(
            r"dial tcp(?: [^:\s]+:\d+)?: (?P<why>lookup \S+(?: on \S+)?: no such host"
            r"|connect: (?:connection refused|network is unreachable)|i/o timeout)"
        ),
        lambda m, lines, _at: (
            f"go: module proxy unreachable ({m['why']})"
            if any(line.startswith("go: ") for line in lines)
            else None
        ),
    ),
    _Rule(
        lazy_compile(
            r"Could not transfer artifact \S+ from/to (?P<repo>\S+) \((?P<url>[^)]+)\): (?P<why>.+?)(?: -> \[Help \d+\])?$"
        ),
        _maven_transfer,
    ),
    _Rule(
        lazy_compile(
            r"Cannot access (?P<repo>\S+) \((?P<url>[^)]+)\) in offline mode and the artifact (?P<art>\S+) "
            r"has not been downloaded from it before"
        ),
        lambda m, _lines, _at: f"maven: offline and {m['art']} is not in the local repository",
    ),
    # docker's cli (cli/command/container/run.go): "the input device is not a TTY"
    _Rule(
        lazy_compile(r"the input device is not a TTY", re.IGNORECASE),
        lambda m, _lines, _at: (
            "the command needs a terminal (docker: the input device is not a TTY)"
        ),
    ),
    _Rule(
        lazy_compile(
            r"Cannot connect to the Docker daemon at (?P<host>\S+?)\.? Is the docker daemon running\?"
        ),
        lambda m, _lines, _at: (
            f"docker: cannot connect to the Docker daemon at {m['host']} (is it running?)"
        ),
    ),
    # pdm 2.x (cli/commands/run.py): PdmUsageError "Command 'x' is not found in your PATH."; pdm < 2.6 let
    # the FileNotFoundError through
    _Rule(
        lazy_compile(
            r"^\[(?:PdmUsageError|FileNotFoundError)\]: (?:Command '(?P<tool>[^']+)' is not found in your "
            r"PATH\.|\[Errno 2\] No such file or directory: '(?P<tool2>[^']+)')$"
        ),
        lambda m, _lines, _at: (
            f"pdm: {m['tool'] or m['tool2']}: command not found (not installed in the project's "
            "environment)"
        ),
    ),
    _Rule(
        lazy_compile(
            r"^Exception in thread \"main\" (?P<exc>java\.net\.\w+|javax\.net\.ssl\.\w+)(?:: (?P<why>.*))?$"
        ),
        _wrapper_download,
    ),
    _Rule(lazy_compile(r"^npm (?:error|ERR!) code EBADENGINE$"), _npm_engine),
    _Rule(
        lazy_compile(
            r'^error (?P<pkg>\S+): The engine "(?P<engine>[\w.-]+)" is incompatible with this module\. '
            r'Expected version "(?P<want>[^"]+)"\. Got "(?P<got>[^"]+)"$'
        ),
        lambda m, _lines, _at: (
            f"yarn: {m['pkg']} needs {m['engine']} {m['want']}; this machine has {m['got']}"
        ),
    ),
    _Rule(
        lazy_compile(r"\bERR_PNPM_(?P<code>UNSUPPORTED_ENGINE|BAD_PM_VERSION)\b\s*(?P<why>.*)$"),
        lambda m, _lines, _at: (
            f"pnpm: {m['code'].lower().replace('_', ' ')} ({m['why'].strip() or m['code']})"
        ),
    ),
    # corepack (sources/Engine.ts, sources/corepackUtils.ts)
    _Rule(
        lazy_compile(
            r"^(?:Usage Error: )?This project is configured to use (?P<pm>\w+) because (?P<file>\S+) has a "
            r'"packageManager" field$'
        ),
        lambda m, _lines, _at: (
            f"corepack: the project's packageManager is {m['pm']} ({m['file']}); another "
            "package manager was run"
        ),
    ),
    _Rule(
        lazy_compile(
            r"^(?:Internal Error: )?(?:Network access disabled by the environment; can't reach|Error when "
            r"performing the request to) (?P<url>\S+?)(?:;.*)?$"
        ),
        lambda m, _lines, _at: (
            f"corepack: cannot download the project's package manager ({m['url']})"
        ),
    ),
    _Rule(
        lazy_compile(
            r'^error This project\'s package\.json defines "packageManager": "(?P<want>[^"]+)"\. However the '
            r"current global version of Yarn is (?P<got>\S+?)\.?$"
        ),
        lambda m, _lines, _at: (
            f"yarn: the project's packageManager is {m['want']}; this machine has yarn {m['got']}"
        ),
    ),
)


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
        whose fault signatures are asked after the machine's own.
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
    for rule in _FAULTS:
        for at, line in enumerate(lines):
            m = rule.pattern.search(line)
            cause = rule.cause(m, lines, at) if m else None
            if cause:
                return cause
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
    said = list(_lines_with_words(out, table.words))
    return any(table.ran.search(line) for line in reversed(said))


def _no_tests_said(
    out: _Output, exit_code: int, table: Runners
) -> tuple[str | None, frozenset[int]]:
    """What the runners in the output said about finding no test, and the
    exit codes they give it (none said: ``(None, ∅)``)."""
    said = _with_words(out, table.words)
    found = [rule for rule in table.no_tests if rule[1].search(said)]
    if found:
        name, _pattern, _codes, what = found[0]
        return f"{name}: {what} (exit {exit_code})", frozenset().union(*(r[2] for r in found))
    for rule in table.no_tests_in:
        said_by_lines = rule(out.lines, out.text)
        if said_by_lines is not None:
            return said_by_lines[0], frozenset(said_by_lines[1])
    return None, frozenset()


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

#: A formatter's own words for "no file to format" (black, ruff format, prettier).
_NOTHING_TO_FORMAT = _any_of(
    r"^No Python files are present to be formatted\. Nothing to do",  # black
    r"^warning: No Python files found under the given path\(s\)",  # ruff format
    r"^\[error\] No files matching the pattern were found",  # prettier
    r"^\[warn\] No files matching the pattern were found",  # prettier --no-error-on-unmatched-pattern
)


def nothing_to_format_reason(output: str, exit_code: int | None) -> str | None:
    """Why a format gate's command formatted nothing: the formatter's own
    message that it found no file (``nothing to format: …``); None when it
    does not say so."""
    if exit_code is None:
        return None
    found = _NOTHING_TO_FORMAT.search(_read(output).text)
    if found is None:
        return None
    return f"nothing to format: {found.group(0).strip()} (exit {exit_code})"
