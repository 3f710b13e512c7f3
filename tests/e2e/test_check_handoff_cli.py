"""`stepkit check-handoff PATH [--json]` as a real process."""

import json

from stepkit.protocol.handoff.render import render_handoff
from stepkit.records import GateResult
from tests.support import cli


def stepkit(*args, cwd):
    return cli.stepkit("check-handoff", *args, cwd=cwd)


def valid_handoff() -> str:
    gates = [
        GateResult(name="tests", status="pass", command="pytest -q", exit_code=0),
        GateResult(name="build", status="not_run"),
    ]
    return render_handoff(
        step=1, title="One", result="complete", prose={"summary": "ok"}, gates=gates
    )


def test_valid_file_exits_0(tmp_path):
    path = tmp_path / "01-one.md"
    path.write_text(valid_handoff())
    done = stepkit(str(path), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"path": str(path), "ok": True, "problems": []}


def test_problems_exit_1_one_per_line(tmp_path):
    path = tmp_path / "01-one.md"
    path.write_text(
        valid_handoff()
        .replace("result: complete", "result: done")
        .replace("## Evidence", "## Proof")
    )
    done = stepkit("01-one.md", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        "frontmatter result is 'done'; expected complete, partial or blocked",
        "missing section '## Evidence'",
    ]
    as_json = json.loads(stepkit("01-one.md", "--json", cwd=tmp_path).stdout)
    assert as_json["ok"] is False and len(as_json["problems"]) == 2


def test_not_run_gate_claimed_as_passing_is_caught_without_a_run(tmp_path):
    path = tmp_path / "01-one.md"
    path.write_text(valid_handoff().replace("## Summary\n\nok", "## Summary\n\nThe build passed."))
    done = stepkit(str(path), cwd=tmp_path)
    assert done.returncode == 1
    assert done.stdout.strip() == (
        "the build gate did not run but the handoff says it passed: The build passed."
    )


def test_unreadable_file_exits_2_with_one_line(tmp_path):
    done = stepkit(str(tmp_path / "missing.md"), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"stepkit: error: cannot read handoff {tmp_path / 'missing.md'}: No such file or directory"
    ]
