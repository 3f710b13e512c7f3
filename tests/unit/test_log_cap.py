"""A capped log (``[logs] max_mb``): its head, the lines naming a failure,
its tail and markers saying what was cut; what is cut is never masked, yet
nothing masked before leaks now, at the head's end, in a failure line or
across the tail's start."""

from __future__ import annotations

import re
import sys

from stepkit.workspace import process
from stepkit.workspace.redact import Redactor

SECRET = "CorrectHorseBatteryStaple"
PEM_BODY = [f"MIIEpAIBAAKCAQEA1c7+9FAiLOejecsQ0bu3aozN3tihPmljnnudb{n:09d}" for n in range(30)]


def run_script(tmp_path, body: str, limit: int) -> tuple[process.ProcessResult, str]:
    script = tmp_path / "print.py"
    script.write_text("import sys\nw = sys.stdout.write\n" + body)
    result = process.run(
        f'"{sys.executable}" "{script}"',
        cwd=tmp_path,
        log_path=tmp_path / "out.log",
        log_limit=limit,
    )
    return result, (tmp_path / "out.log").read_text()


def test_a_capped_log_keeps_head_failures_and_tail_with_markers(tmp_path):
    filler = "tests/test_a.py::test_ok PASSED" + " " * 48 + "\n"  # 80 bytes
    pem = "-----BEGIN RSA PRIVATE KEY-----\n" + "".join(f"{line}\n" for line in PEM_BODY)
    result, log = run_script(
        tmp_path,
        "w('first line\\n')\n"
        f"w({filler!r} * 25_000)\n"  # 2 MB: past the head
        f"w('DB_PASSWORD={SECRET}\\n')\n"  # cut: never written
        f"w({pem!r} + '-----END RSA PRIVATE KEY-----\\n')\n"  # a body line says FAiL
        f"w({filler!r} * 10_000)\n"
        "w('FAILED tests/test_mid.py::test_mid_fails - assert 1 == 2\\n')\n"
        f"w('ERROR auth failed: token={SECRET}\\n')\n"
        f"w({filler!r} * 40_000)\n"
        "w('= 1 failed, 75000 passed in 9.00s =\\n')\n",
        limit=1_000_000,
    )
    assert len(log.encode()) <= 1_000_000 < result.size
    assert log.startswith("first line\n")
    assert log.endswith("= 1 failed, 75000 passed in 9.00s =\n")
    opening = re.search(
        r"^\[stepkit: this log keeps 1000000 bytes at most .*\]$", log, re.MULTILINE
    )
    closing = re.search(
        r"^\[stepkit: (\d+) bytes \((\d+) lines\) of output cut here.*$", log, re.MULTILINE
    )
    assert opening and closing and opening.start() < closing.start()
    middle = log[opening.end() : closing.start()]
    assert "FAILED tests/test_mid.py::test_mid_fails - assert 1 == 2" in middle
    assert "ERROR auth failed: token=[REDACTED]" in middle
    assert SECRET not in log and "MIIE" not in log
    assert result.lines == 1 + 25_000 + 1 + 32 + 10_000 + 2 + 40_000 + 1
    assert result.size == sum(
        (11, 80 * 75_000, 13 + len(SECRET), len(pem), 30, 58, 25 + len(SECRET), 36)
    )
    assert result.output.endswith("= 1 failed, 75000 passed in 9.00s =\n")


def test_a_log_under_its_cap_is_the_whole_masked_output(tmp_path):
    result, log = run_script(tmp_path, f"w('key: x\\npassword={SECRET}\\n' * 1000)\n", 1_000_000)
    assert log == "key: x\npassword=[REDACTED]\n" * 1000
    assert result.lines == 2000


def test_a_secret_straddling_the_tail_of_a_long_line_is_masked(tmp_path):
    # one 5 MB line of assignments: wherever the head ends and the tail
    # starts, an assignment straddles the cut
    segment = f"DB_PASSWORD={SECRET} "
    count = 5_000_000 // len(segment)
    result, log = run_script(tmp_path, f"w({segment!r} * {count} + 'end\\n')\n", 1_000_000)
    kept = [line for line in log.splitlines() if not line.startswith("[stepkit:")]
    words = set(" ".join(kept).split())
    # a cut lands at a match's start: the key's first word may end the head
    assert words <= {"DB_PASSWORD=[REDACTED]", "PASSWORD=[REDACTED]", "DB_", "end"}, words
    assert result.lines == 1


def test_mask_tail_cuts_before_a_secret_that_straddles_the_start():
    text = "x" * 100_000 + f" api_key={SECRET} " + "y" * 100_000
    at = text.index(SECRET) + 5  # inside the secret
    start, masked = Redactor().mask_tail(text, at)
    assert start <= text.index("api_key") + len("api_")
    assert SECRET[5:] not in masked and "[REDACTED]" in masked


def test_mask_tail_drops_a_key_block_opened_before_its_start():
    lines = ["log line"] * 10 + ["-----BEGIN RSA PRIVATE KEY-----", *PEM_BODY]
    lines += ["-----END RSA PRIVATE KEY-----", "after"]
    text = "".join(f"{line}\n" for line in lines)
    at = text.index(PEM_BODY[15])  # in the middle of the block
    _, masked = Redactor().mask_tail(text, at)
    assert "MIIE" not in masked and masked.endswith("after\n")


def test_a_long_line_cut_at_a_key_whose_kind_is_before_the_cut_is_masked():
    # a long line passed on in pieces is cut where the match of ``key=`` starts;
    # the piece after the cut starts at ``key=``, its ``api_`` is before the cut
    from stepkit.workspace import redact

    head = "a" * redact.LINE_LIMIT + " api_key="
    after = redact._WINDOW - (len(SECRET) - 5)  # the first cut lands 5 characters into it
    text = head + SECRET + " " + "b" * (after - 1)
    redactor = Redactor(env=())
    masked = redactor.feed(text) + redactor.close()
    assert SECRET[5:] not in masked and masked.count("[REDACTED]") == 1
