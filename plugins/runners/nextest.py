"""cargo nextest: recognised before cargo test (its command is cargo's); its
results from libtest's lines when it prints them, else the junit file its
profile configures (``[profile.P.junit] path`` in ``.config/nextest.toml``);
no re-run by id; its "no tests to run" error."""

from __future__ import annotations

import tomllib
from pathlib import Path

from stepkit.plugins.runners.cargo import is_cargo_test, read_libtest
from stepkit.workspace import testresults as tr
from stepkit.workspace.runners import Call, NoTests, Report, TestRunner
from stepkit.workspace.testrunners import either, fresh_junit


def _reports(call: Call) -> list[Path]:
    """The junit file the nextest profile configures (``[profile.P.junit] path``)."""
    words = call.arguments()
    profile = words[words.index("--profile") + 1] if "--profile" in words[:-1] else "default"
    try:
        config = tomllib.loads(
            (call.project / ".config" / "nextest.toml").read_text(encoding="utf-8")
        )
    except (OSError, ValueError):
        return []
    junit = ((config.get("profile") or {}).get(profile) or {}).get("junit") or {}
    path = junit.get("path")
    return [call.project / "target" / "nextest" / profile / path] if isinstance(path, str) else []


def _report(call: Call, ambient: Report) -> Report:
    return Report(
        call.command,
        ambient.env,
        either(
            lambda o, e: read_libtest(o),
            lambda o, e: fresh_junit(_reports(call), call.started, call.project, tr.junit_name),
        ),
        None,
        ambient.note,
    )


RUNNERS = (
    TestRunner(
        name="cargo nextest",
        command=lambda words: is_cargo_test(words) and "nextest" in words,
        before=("cargo",),
        report=_report,
        words=("no test",),
        no_tests=(NoTests(r"^\s*error: no tests to run$", (4,), "no tests to run"),),
    ),
)
