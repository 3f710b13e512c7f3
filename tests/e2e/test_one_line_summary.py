"""A one-line summary is one printable line: no carriage return, no colour
code, no control byte, whatever the gate printed or the plan says."""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata

from stepkit.records import GateResult
from stepkit.text import one_line
from tests.support import cli
from tests.support.e2e import clean_env

#: a last line as a progress bar and a coloured runner print it
NOISY = r"print('progress 10%\r50%\r\x1b[32m3 passed\x1b[0m\x07 in\t0.01s\x00\u202e!')"


def control_free(text: str) -> bool:
    return not any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in text)


def stepkit(*args: str, cwd) -> subprocess.CompletedProcess:
    return cli.stepkit(*args, cwd=cwd, env=clean_env())


def test_a_gate_summary_and_its_status_line_are_one_printable_line(tmp_path):
    (tmp_path / "noisy.py").write_text(NOISY + "\n")
    (tmp_path / "stepkit.toml").write_text(f'[commands]\ntest = "{sys.executable} noisy.py"\n')

    done = stepkit("verify", "--project-dir", str(tmp_path), "--json", cwd=tmp_path)

    tests = json.loads(done.stdout)["gates"][-1]
    assert tests["summary"] == "3 passed in 0.01s !"  # what the terminal shows last
    assert control_free(tests["summary"])
    line = GateResult.model_validate(tests).status_line()
    assert control_free(line) and line.endswith("— 3 passed in 0.01s !")


def test_summaries_set_by_a_plugin_are_cleaned_too():
    gate = GateResult(
        name="lint", status="fail", command="lint\r\n--strict", summary="2 errors\r\n\x1b[2Jboom"
    )
    assert gate.summary == "2 errors boom"
    assert gate.status_line() == "lint: FAIL (`lint --strict`, exit none, 0.0s) — 2 errors boom"
    assert one_line("a\u2028b\x85c") == "a b c"


def test_status_shows_a_plan_title_as_one_printable_line(tmp_path):
    steps = tmp_path / "plans" / "steps"
    steps.mkdir(parents=True)
    (steps / "01-one.md").write_text(
        '---\ntitle: "Add \\e[31mmul\\e[0m\\x07 now\\e]0;pwned\\x07\\t"\n---\n'
    )

    done = stepkit("status", cwd=tmp_path)
    data = json.loads(stepkit("status", "--json", cwd=tmp_path).stdout)

    assert data["steps"][0]["title"] == "Add mul now"
    assert all(control_free(line) for line in done.stdout.splitlines())
