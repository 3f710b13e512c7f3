"""stepkit.workspace.evidence.condense: the frame, the caps, the cut marker, secrets,
and what the built-in parsers make of large generated test runs."""

import pytest

from stepkit import hookimpl
from stepkit.records import Evidence
from stepkit.workspace.evidence import MAX_BYTES, MAX_LINES, condense, summary_of
from tests.support.evidence_logs import cargo_log, evidence_pm, jest_log, pytest_log


@pytest.fixture
def pm():
    return evidence_pm()


@pytest.mark.parametrize(
    ("make_log", "command", "summary"),
    [
        (pytest_log, "python -m pytest -v", "5 failed, 1995 passed"),
        (cargo_log, "cargo test", "5 failed, 1995 passed"),
        (jest_log, "npm test", "5 failed, 1995 passed, 2000 total"),
    ],
    ids=["pytest", "cargo", "jest"],
)
def test_2000_tests_with_5_failures_condense_under_5_percent(pm, make_log, command, summary):
    log, failing_ids, summary_line = make_log(2000, 5)
    found = condense(pm, "tests", command, log, 1, "/logs/tests-1.log")
    evidence = found.text
    assert len(evidence.encode()) < 0.05 * len(log.encode())
    assert all(test_id in evidence for test_id in failing_ids)
    assert summary_line in evidence
    assert summary_of(found, log) == summary
    total = log.count("\n")
    assert evidence.endswith(f" of {total} lines; full log: /logs/tests-1.log]")


def test_starts_with_command_and_exit_code_and_keeps_short_output_whole(pm):
    found = condense(pm, "build", "make all", "cc -o app main.c\nok\n", 0, "/l/build-1.log")
    evidence = found.text
    assert evidence == "$ make all\nexit code: 0\ncc -o app main.c\nok"


def test_note_follows_the_exit_code(pm):
    found = condense(pm, "tests", "sleep 9", "", None, "/l/t.log", note="timed out after 1 s")
    evidence = found.text
    assert evidence.split("\n")[:3] == ["$ sleep 9", "exit code: none", "timed out after 1 s"]


def test_many_failures_are_capped_but_keep_the_summary_and_the_marker(pm):
    failures = [f"FAILED tests/test_x.py::test_{i} - assert {i} == -1" for i in range(600)]
    output = "\n".join(failures + ["=== 600 failed, 10 passed in 3.00s ==="]) + "\n"
    found = condense(pm, "tests", "pytest", output, 1, "/l/tests-2.log")
    evidence = found.text
    lines = evidence.split("\n")
    assert len(lines) <= MAX_LINES
    assert len(evidence.encode()) <= MAX_BYTES
    assert "FAILED tests/test_x.py::test_0 - assert 0 == -1" in evidence
    assert "summary: 600 failed, 10 passed" in lines
    assert any(line.startswith("[... ") and line.endswith(" lines omitted ...]") for line in lines)
    kept = int(lines[-1].split()[1])
    assert lines[-1] == f"[kept {kept} of 601 lines; full log: /l/tests-2.log]"


def test_huge_lines_are_clipped_within_the_byte_cap(pm):
    output = "\n".join("é" * 5000 for _ in range(50))
    found = condense(pm, "build", "webpack", output, 2, None)
    evidence = found.text
    assert len(evidence.encode()) <= MAX_BYTES
    assert "… [+4500 chars]" in evidence
    assert evidence.endswith("full log: (none)]")


def test_head_and_tail_input_counts_all_lines(pm):
    output = "start\n[... 1000 bytes omitted ...]\nend\n"
    found = condense(pm, "build", "gen", output, 0, "/l/b.log", total_lines=5000)
    evidence = found.text
    assert evidence.endswith("[kept 2 of 5000 lines; full log: /l/b.log]")


def test_secrets_never_reach_the_evidence(pm):
    output = "using key sk-ant-api03-abcdefghijklmnop\nexport DEPLOY_TOKEN=9f8e7d6c5b4a3f2e\n"
    found = condense(pm, "tests", "DEPLOY_TOKEN=9f8e7d6c5b4a3f2e ./t.sh", output, 1, None)
    evidence = found.text
    assert "sk-ant-api03" not in evidence
    assert "9f8e7d6c5b4a3f2e" not in evidence
    assert "[REDACTED]" in evidence


class _Broken:
    @hookimpl(tryfirst=True)
    def stepkit_condense_output(self, output):
        raise RuntimeError("parser bug")


class _Custom:
    @hookimpl
    def stepkit_condense_output(self, command, output):
        return "custom view\nsummary: all good" if command.startswith("mytool") else None


def test_a_broken_parser_falls_back_to_the_raw_output(pm):
    pm.register(_Broken(), name="broken")
    found = condense(pm, "tests", "x", "line one\n", 1, None)
    evidence = found.text
    assert "[evidence parser failed: RuntimeError: parser bug; raw output follows]" in evidence
    assert "line one" in evidence


def test_a_registered_parser_answers_before_the_builtins(pm):
    pm.register(_Custom(), name="custom")
    found = condense(pm, "tests", "mytool run", "lots\nof\noutput\n", 0, "/l/t.log")
    evidence = found.text
    assert evidence.startswith("$ mytool run\nexit code: 0\ncustom view\nsummary: all good\n[kept ")
    assert summary_of(found, "x") == "all good"


def test_summary_falls_back_to_the_last_output_line():
    said_none = Evidence(text="$ x\nexit code: 0\nfoo")
    assert summary_of(said_none, "a\n\x1b[1mlast words\x1b[0m\n\n") == "last words"
    assert summary_of(Evidence(), "") == ""


def test_a_parser_that_finds_nothing_failing_in_a_failed_run_passes_it_on(pm):
    # make check: ruff passed, then pytest failed; ruff's parser must not claim the run
    output = (
        "ruff check .\nAll checks passed!\npytest -q\n.F.\n"
        "=== short test summary info ===\nFAILED tests/test_a.py::test_b - assert 1 == 2\n"
        "1 failed, 2 passed in 0.05s\nmake: *** [Makefile:4: check] Error 1\n"
    )
    found = condense(pm, "tests", "make check", output, 2, "/l/t.log")
    evidence = found.text
    assert "FAILED tests/test_a.py::test_b - assert 1 == 2" in evidence
    assert summary_of(found, output) == "1 failed, 2 passed"


def test_clip_middle_keeps_head_and_tail_at_line_boundaries():
    from stepkit.workspace.evidence import clip_middle

    text = "".join(f"line {i}\n" for i in range(1000))
    clipped = clip_middle(text, 300, "log")
    assert len(clipped) < 400
    assert clipped.startswith("line 0\n") and clipped.endswith("line 999\n")
    assert "[... log: " in clipped and " lines, " in clipped
    assert all(line.startswith(("line ", "[... log")) for line in clipped.splitlines())
    assert clip_middle("short", 300) == "short"
