"""The process runner on its own: stdin, no log, the stream callback, a big
log (whole, its cache hints, a full disk), the subreaper, group safety and
exit-code interpretation.  Limits, group kills and bounded logs are
exercised through the gates and coders that use it."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from stepkit.workspace import process, supervision
from stepkit.workspace.process import ProcessResult, own_group, signal_name, signal_of


def result(exit_code: int | None, expired: str | None = None) -> ProcessResult:
    return ProcessResult(
        command="tool --go",
        exit_code=exit_code,
        expired=expired,
        start_error=None,
        output="",
        lines=0,
        size=0,
        duration_s=0.0,
        log=None,
    )


def test_stdin_text_reaches_the_command_and_no_log_is_written(tmp_path):
    run = process.run("tr a-z A-Z", cwd=tmp_path, stdin_text="hello\nworld")
    assert (run.exit_code, run.output, run.lines, run.size, run.log) == (
        0,
        "HELLO\nWORLD",
        2,
        11,
        None,
    )
    assert list(tmp_path.iterdir()) == []


def test_on_text_sees_what_memory_does_not_keep(tmp_path):
    seen = []
    command = "seq 1 20000; echo 'marker line'; seq 1 20000"
    run = process.run(
        command,
        cwd=tmp_path,
        log_path=tmp_path / "out.log",
        on_text=seen.append,
        head_bytes=1000,
        tail_bytes=1000,
    )
    assert "marker line" not in run.output and "bytes omitted ...]" in run.output
    assert any("marker line\n" in text for text in seen)
    assert "".join(seen) == (tmp_path / "out.log").read_text()
    assert run.lines == 40001


def test_a_big_output_reaches_the_log_whole_and_in_order(tmp_path, monkeypatch):
    # megabyte reads of plain lines: masked, written and counted apart from the
    # reading, the written part dropped from the cache behind the writer many times
    monkeypatch.setattr(process, "_DROP_WINDOW", 64 * 1024)
    run = process.run("seq 1 1000000", cwd=tmp_path, log_path=tmp_path / "out.log")
    expected = "".join(f"{n}\n" for n in range(1, 1_000_001))
    assert (tmp_path / "out.log").read_text() == expected
    assert (run.lines, run.size) == (1_000_000, len(expected))
    assert run.output.endswith("999999\n1000000\n")


@pytest.mark.skipif(not hasattr(os, "posix_fadvise"), reason="no cache hints on this system")
@pytest.mark.parametrize("stalls", [False, True])
def test_cache_hints_stop_once_one_waits_for_the_disk(tmp_path, monkeypatch, stalls):
    given = []
    monkeypatch.setattr(process, "_DROP_WINDOW", 64 * 1024)
    monkeypatch.setattr(
        process, "_HINT_STALL_S", -1.0 if stalls else 60.0
    )  # -1: every hint took too long
    monkeypatch.setattr(process.os, "posix_fadvise", lambda *args: given.append(args))
    process.run("seq 1 1000000", cwd=tmp_path, log_path=tmp_path / "out.log")
    # two hints at each window: a few windows into 6.9 MB, or only the first when it stalled
    assert len(given) == 2 if stalls else len(given) > 2
    assert (tmp_path / "out.log").stat().st_size == 6_888_896


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_log_that_cannot_be_written_fails_the_run(tmp_path):
    # a full disk is the caller's failure, not a shorter log
    with pytest.raises(OSError):
        process.run("seq 1 1000000; printf end", cwd=tmp_path, log_path=Path("/dev/full"))


def test_the_subreaper_is_set_while_a_command_runs_and_restored_after(tmp_path):
    before = supervision.SUBREAPER._prctl(37)
    during = []
    process.run(
        "echo x", cwd=tmp_path, on_text=lambda _: during.append(supervision.SUBREAPER._prctl(37))
    )
    assert during == [1]
    assert supervision.SUBREAPER._prctl(37) == before


def test_a_fake_process_is_never_signalled_as_a_group(tmp_path, fp, monkeypatch):
    signalled = []
    monkeypatch.setattr(os, "killpg", lambda group, sig: signalled.append(group))
    fp.register("claude -p", stdout="done\n", returncode=3)
    run = process.run("claude -p", cwd=tmp_path, stdin_text="prompt", timeout=30)
    assert (run.exit_code, run.output) == (3, "done\n")
    assert signalled == []


def test_only_our_own_new_group_is_ours(tmp_path):
    assert own_group(1) is None and own_group(0) is None
    ours = subprocess.Popen(["sleep", "30"], start_new_session=True)
    shared = subprocess.Popen(["sleep", "30"])
    try:
        assert own_group(ours.pid) == ours.pid
        assert own_group(shared.pid) is None
    finally:
        for proc in (ours, shared):
            proc.kill()
            proc.wait()


AUTOGROUPS = Path("/proc/self/autogroup").exists()
#: Reads its session's autogroup once its stdin says the spawn is done.
READS = "read go; cat /proc/self/autogroup"


def from_a_thread_at(niceness: int, work):
    """``work()`` run in a new thread at ``niceness`` (a thread's own, on Linux)."""
    done = []

    def lowered():
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), niceness)
        done.append(work())

    thread = threading.Thread(target=lowered)
    thread.start()
    thread.join()
    return done[0]


@pytest.mark.skipif(not AUTOGROUPS, reason="a kernel without session autogroups")
@pytest.mark.parametrize("command", [READS, f"sh -c '{READS}'; true"], ids=["itself", "a child"])
def test_a_command_of_a_lowered_thread_leads_a_session_as_low(command, tmp_path):
    """A command leads a session of its own, so an autogroup of its own, in
    which its nice value ranks nothing against other sessions: the session
    gets the niceness too, its processes started before that as well (the
    command waits for its stdin, written once it is set)."""
    run = from_a_thread_at(19, lambda: process.run(command, cwd=tmp_path, stdin_text="go\n"))
    assert run.exit_code == 0 and run.output.split()[-2:] == ["nice", "19"]


def test_a_command_that_cannot_start(tmp_path):
    run = process.run("true", cwd=tmp_path / "missing", log_path=tmp_path / "out.log")
    assert run.exit_code is None
    assert (
        run.start_error == f"No such file or directory: {tmp_path / 'missing'} (FileNotFoundError)"
    )
    assert (tmp_path / "out.log").read_text() == f"could not start the command: {run.start_error}\n"
    assert run.crash("the coder") == f"the coder could not start: {run.start_error}"


def test_exit_codes_are_interpreted():
    assert [signal_of(code) for code in (None, 0, 1, 127, -9, 137, 255)] == [
        None,
        None,
        None,
        None,
        9,
        9,
        None,
    ]
    assert signal_name(9) == "SIGKILL (9)" and signal_name(200) == "200"
    assert result(exit_code=1).crash() is None
    assert (
        result(exit_code=127).crash()
        == "the command could not start: command not found (exit 127): tool --go"
    )
    assert (
        result(exit_code=126).crash("the coder")
        == "the coder could not start: not executable (exit 126): tool --go"
    )
    assert (
        result(exit_code=-signal.SIGTERM).crash() == "the command was killed by signal SIGTERM (15)"
    )
    assert result(exit_code=-15, expired="timed out after 2 s").crash("the reviewer") == (
        "the reviewer timed out after 2 s; its process group was killed"
    )


def test_a_secret_across_a_read_or_flush_boundary_of_a_long_line_is_masked(tmp_path):
    # one 3 MB line (longer than a read and than the line buffer) of assignments:
    # wherever the reads and flushes cut it, some assignment straddles the cut
    segment = "DB_PASSWORD=CorrectHorseBatteryStaple "
    count = 3_000_000 // len(segment)
    script = tmp_path / "long_line.py"
    script.write_text(f"import sys\nsys.stdout.write({segment!r} * {count} + 'end\\n')\n")
    seen = []
    run = process.run(
        shlex.join([sys.executable, str(script)]),
        cwd=tmp_path,
        log_path=tmp_path / "out.log",
        on_text=seen.append,
    )
    log = (tmp_path / "out.log").read_text()
    assert log == "DB_PASSWORD=[REDACTED] " * count + "end\n"
    assert len(seen) > 1  # the line was passed on in pieces, before its newline
    assert run.lines == 1


def test_a_pem_block_split_across_reads_is_masked_whole(tmp_path):
    body = "".join(
        f"MIIEpAIBAAKCAQEA1c7+9z5Pad7OejecsQ0bu3aozN3tihPmljnnudb{n:09d}\n" for n in range(40)
    )
    script = tmp_path / "pem.py"
    script.write_text(
        "import sys, time\n"
        "sys.stdout.write('start\\n-----BEGIN RSA PRIVATE KEY-----\\n'); sys.stdout.flush()\n"
        f"for line in {body.splitlines(True)!r}:\n"
        "    sys.stdout.write(line); sys.stdout.flush()\n"
        "sys.stdout.write('-----END RSA PRIVATE KEY-----\\nafter\\n')\n"
    )
    process.run(
        shlex.join([sys.executable, str(script)]), cwd=tmp_path, log_path=tmp_path / "out.log"
    )
    assert (tmp_path / "out.log").read_text() == "start\n[REDACTED]\nafter\n"
