"""Evidence from Maven: the first real ``[ERROR]`` cause (not the help links
Maven prints after it), compiler errors, surefire's failing tests and its
``Tests run:`` totals line."""

from __future__ import annotations

from stepkit.hookspecs import hookimpl
from stepkit.lazyregex import lazy_compile
from stepkit.plugins.evidence._shared import clean_lines, mentions, render, unique
from stepkit.records import Evidence

_ERROR = lazy_compile(r"^\[ERROR\] ?(?P<text>.*)$")
# what Maven adds after the cause: "-> [Help 1]", "To see the full stack trace …", the links
_NOISE = lazy_compile(
    r"^(?:-> \[Help \d+\]|To see the full stack trace|Re-run Maven using|For more information about the errors"
    r"|\[Help \d+\] https?://|After correcting the problems|mvn <args> -rf |COMPILATION ERROR :?$"
    r"|Failures:$|Errors:$|Tests run:|There are test failures|Please refer to |See dump files"
    r"|Crashed tests:$|BUILD FAILURE|.*<<< (?:FAILURE|ERROR)!$|$)"
)
_COMPILE = lazy_compile(
    r"^(?P<file>\S+\.(?:java|kt|scala|groovy)):\[(?P<line>\d+),(?P<col>\d+)\] (?P<msg>.+)$"
)
# surefire's list under "[ERROR] Failures:" / "[ERROR] Errors:": "[ERROR]   CalcTest.testAdd:12 expected: <5> …"
_FAILED_TEST = lazy_compile(r"^\[ERROR\]\s{2,}(?P<id>[\w.$]+(?:\.\w+)?(?::\d+)?)(?: (?P<msg>.*))?$")
_TOTALS = lazy_compile(
    r"^(?:\[(?:INFO|ERROR|WARNING)\] )?(?P<line>Tests run: \d+, Failures: \d+, Errors: \d+, Skipped: \d+)$"
)
_FAILED_GOAL = lazy_compile(
    r"^Failed to execute goal (?P<goal>\S+) (?:\([^)]*\) )?on project (?P<project>\S+): (?P<why>.+)$"
)


@hookimpl
def stepkit_condense_output(command: str, output: str, exit_code: int | None) -> Evidence | None:
    """Condense Maven output; None when it is not Maven's."""
    lines = clean_lines(output)
    if not (
        mentions(command, "mvn", "mvnw", "./mvnw")
        or any(line.startswith("[INFO] BUILD ") for line in lines)
    ):
        return None
    errors = [m["text"].strip() for line in lines if (m := _ERROR.match(line))]
    causes = unique(text for text in errors if not _NOISE.match(text))
    compile_errors = unique(text for text in causes if _COMPILE.match(text))
    failed = [m for line in lines if (m := _FAILED_TEST.match(line))]
    failing = unique(" ".join(filter(None, (m["id"], m["msg"]))) for m in failed)
    totals = [m["line"] for line in lines if (m := _TOTALS.match(line))]
    verdict = next(
        (line.removeprefix("[INFO] ") for line in lines if line.startswith("[INFO] BUILD ")), None
    )
    if not (causes or totals or verdict):
        return None
    listed = failing or compile_errors
    goal = next((_first_cause([text]) for text in causes if _FAILED_GOAL.match(text)), None)
    tool_summary = [
        *totals[-1:],
        *([goal] if listed and goal else []),
        *([verdict] if verdict else []),
    ]
    return render(
        failing=listed,
        tests=dict.fromkeys((m["id"] for m in failed), "failed"),
        failing_label="failing tests" if failing else "compile errors",
        errors=None if listed or not causes else [("first error", [_first_cause(causes)])],
        tool_summary=tool_summary,
        summary=_summary(causes, compile_errors, failing, totals, verdict),
    )


def _first_cause(causes: list[str]) -> str:
    """The first cause, with a "Failed to execute goal …" line cut to its reason."""
    first = causes[0]
    goal = _FAILED_GOAL.match(first)
    return f"{goal['goal']}: {goal['why']}" if goal else first


def _summary(
    causes: list[str],
    compile_errors: list[str],
    failing: list[str],
    totals: list[str],
    verdict: str | None,
) -> str | None:
    if failing and totals:
        return f"{totals[-1]}; first: {failing[0]}"
    if compile_errors:
        more = f" (+{len(compile_errors) - 1} more)" if len(compile_errors) > 1 else ""
        return compile_errors[0] + more
    if causes:
        return _first_cause(causes)
    if totals:
        return totals[-1]
    return verdict
