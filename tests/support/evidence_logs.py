"""Generated test-run logs in the real formats of pytest, cargo test and jest,
for the evidence parser tests and ``bench/evidence_size.py``, and the helpers
those tests share.

Each generator returns ``(log_text, failing_ids, summary_line)``; the failing
tests are spread evenly over the run.
"""

from __future__ import annotations


def _failing_positions(total: int, failing: int) -> list[int]:
    step = total // (failing + 1)
    return [step * (k + 1) for k in range(failing)]


def pytest_log(
    total: int = 2000, failing: int = 5, per_file: int = 50
) -> tuple[str, list[str], str]:
    """``pytest -v`` output: one line per test, a FAILURES section with a
    traceback per failure, the short test summary and the final line."""
    bad = set(_failing_positions(total, failing))
    lines = [
        "=" * 29 + " test session starts " + "=" * 30,
        "platform linux -- Python 3.11.7, pytest-9.2.0, pluggy-1.7.0 -- /work/venv/bin/python3",
        "cachedir: .pytest_cache",
        "rootdir: /home/dev/project",
        "configfile: pyproject.toml",
        "plugins: subprocess-1.6.0, anyio-4.16.0",
        f"collecting ... collected {total} items",
        "",
    ]
    ids = []
    for i in range(total):
        test_id = f"tests/test_module_{i // per_file:02d}.py::test_behaviour_{i:04d}"
        outcome = "FAILED" if i in bad else "PASSED"
        if i in bad:
            ids.append(test_id)
        percent = f"[{(i + 1) * 100 // total:3d}%]"
        lines.append(f"{test_id} {outcome}".ljust(73) + percent)
    lines += ["", "=" * 35 + " FAILURES " + "=" * 35]
    for test_id in ids:
        name = test_id.split("::")[1]
        module = test_id.split("::")[0]
        number = int(name.rsplit("_", 1)[1])
        lines += [
            f"{'_' * 30} {name} {'_' * 30}",
            "",
            f"    def {name}():",
            f"        value = compute({number})",
            f">       assert value == {number + 1}",
            f"E       assert {number} == {number + 1}",
            f"E        +  where {number} = compute({number})",
            "",
            f"{module}:{number % 90 + 10}: AssertionError",
        ]
    lines.append("=" * 28 + " short test summary info " + "=" * 28)
    for test_id in ids:
        number = int(test_id.rsplit("_", 1)[1])
        lines.append(f"FAILED {test_id} - assert {number} == {number + 1}")
    summary = f"{failing} failed, {total - failing} passed in 41.27s"
    lines.append(f"{'=' * 27} {summary} {'=' * 27}")
    return "\n".join(lines) + "\n", ids, summary


def cargo_log(total: int = 2000, failing: int = 5) -> tuple[str, list[str], str]:
    """``cargo test`` output: compile lines, one line per test, the failures'
    stdout with the panic, the failures list and ``test result:``."""
    bad = set(_failing_positions(total, failing))
    lines = [
        "   Compiling demo v0.1.0 (/home/dev/demo)",
        "    Finished `test` profile [unoptimized + debuginfo] target(s) in 2.31s",
        "     Running unittests src/lib.rs (target/debug/deps/demo-3f1a2b4c5d6e7f80)",
        "",
        f"running {total} tests",
    ]
    ids = []
    for i in range(total):
        test_id = f"tests::group_{i // 100:02d}::case_{i:04d}"
        if i in bad:
            ids.append(test_id)
        lines.append(f"test {test_id} ... {'FAILED' if i in bad else 'ok'}")
    lines += ["", "failures:", ""]
    for test_id in ids:
        number = int(test_id.rsplit("_", 1)[1])
        lines += [
            f"---- {test_id} stdout ----",
            "",
            f"thread '{test_id}' (4{number}) panicked at src/lib.rs:{number % 300 + 1}:9:",
            "assertion `left == right` failed",
            f"  left: {number}",
            f" right: {number + 1}",
            "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
            "",
        ]
    lines += ["", "failures:"] + [f"    {test_id}" for test_id in ids] + [""]
    summary = (
        f"test result: FAILED. {total - failing} passed; {failing} failed; 0 ignored; 0 measured;"
        " 0 filtered out; finished in 0.84s"
    )
    lines += [summary, "", "error: test failed, to rerun pass `--lib`"]
    return "\n".join(lines) + "\n", ids, summary


def jest_log(total: int = 2000, failing: int = 5, per_file: int = 40) -> tuple[str, list[str], str]:
    """``jest --verbose`` output: a PASS/FAIL block per file with a line per
    test, each failure's message and code frame, and the summary block."""
    bad = set(_failing_positions(total, failing))
    lines: list[str] = []
    ids = []
    failures: list[tuple[str, str, int]] = []
    files = (total + per_file - 1) // per_file
    for f in range(files):
        path = f"src/feature{f:02d}.test.js"
        members = range(f * per_file, min(total, (f + 1) * per_file))
        has_bad = any(i in bad for i in members)
        lines.append(f"{'FAIL' if has_bad else 'PASS'} {path}")
        lines.append(f"  feature {f}")
        for i in members:
            mark = "✕" if i in bad else "✓"
            lines.append(f"    {mark} handles case {i} ({i % 7 + 1} ms)")
            if i in bad:
                ids.append(f"{path} › feature {f} › handles case {i}")
                failures.append((path, f"feature {f} › handles case {i}", i))
        lines.append("")
        for fail_path, name, i in failures:
            if fail_path != path:
                continue
            lines += [
                f"  ● {name}",
                "",
                "    expect(received).toBe(expected) // Object.is equality",
                "",
                f"    Expected: {i + 1}",
                f"    Received: {i}",
                "",
                f"      {i % 50 + 10} | test('handles case {i}', () => {{",
                f"    > {i % 50 + 11} |   expect(compute({i})).toBe({i + 1});",
                "         |                     ^",
                f"      {i % 50 + 12} | }});",
                "",
                f"      at Object.toBe ({path}:{i % 50 + 11}:21)",
                "",
            ]
    bad_files = len({p for p, _, _ in failures})
    summary = f"Tests:       {failing} failed, {total - failing} passed, {total} total"
    lines += [
        f"Test Suites: {bad_files} failed, {files - bad_files} passed, {files} total",
        summary,
        "Snapshots:   0 total",
        "Time:        12.482 s",
        "Ran all test suites.",
    ]
    return "\n".join(lines) + "\n", ids, summary


def evidence_pm():
    """A plugin manager with only the built-in evidence parsers."""
    from stepkit.pluginmanager import DEFAULT_PLUGINS, get_plugin_manager

    return get_plugin_manager(builtins=[m for m in DEFAULT_PLUGINS if ".evidence." in m])


def condenser(module):
    """``parse(command, output, exit_code=1)``: the text of ``module``'s
    ``stepkit_condense_output`` called on its own, as pluggy would call it.
    Every answer is also checked against the parser's markers: an output it
    answers for is one its lazy stand-in lets through to it
    (``_shared.may_answer``), so each parser test checks its markers too."""
    from stepkit.plugins.evidence._shared import may_answer

    def parse(command: str, output: str, exit_code: int | None = 1) -> str | None:
        answer = module.stepkit_condense_output(command=command, output=output, exit_code=exit_code)
        assert answer is None or may_answer(
            module.__name__, {"command": command, "output": output}
        ), f"{module.__name__} answered for output its MARKERS would not let it see"
        return None if answer is None else answer.text

    return parse


def condenser_found(module):
    """``found(command, output, exit_code=1)``: the typed
    :class:`~stepkit.records.Evidence` ``module``'s condenser answers."""

    def parse(command: str, output: str, exit_code: int | None = 1):
        return module.stepkit_condense_output(command=command, output=output, exit_code=exit_code)

    return parse
